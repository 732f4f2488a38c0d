# syntax=docker/dockerfile:1.4
# The environment of envlock lock
# sha256:e19410a6647001d40ea9070ae7d8e4b1fd80687d7ad326580d59ffdb9f04f990,
# for a host whose own setup cannot be changed. Written by envlock export
# --format dockerfile; build it anywhere: docker build -t NAME - < Dockerfile
#
# The lock has CUDA 10.2.89 (toolkit), cuDNN 8.2.1 on Ubuntu 16.04.7 LTS.
# No published nvidia/cuda tag matches it:
# NVIDIA publishes no image of CUDA 10.2 with cuDNN (the tags of CUDA 10 and older were deleted).
# Closest published tag: CUDA 11.0.3, cuDNN 8, Ubuntu 16.04.
# Frameworks bring their own CUDA runtime, but code compiled in this image
# (mmcv ops, custom kernels) is built with its nvcc, not the lock's.
FROM nvidia/cuda:11.0.3-cudnn8-devel-ubuntu16.04
LABEL envlock.lock-id="sha256:e19410a6647001d40ea9070ae7d8e4b1fd80687d7ad326580d59ffdb9f04f990"
ENV DEBIAN_FRONTEND=noninteractive LANG=C.UTF-8
RUN apt-get update && apt-get install -y --no-install-recommends ca-certificates curl bzip2 git \
 && rm -rf /var/lib/apt/lists/*

# conda itself; every package of the environment comes from the explicit list below.
# An old base image may need an older installer: repo.anaconda.com/miniconda lists them.
ARG MINICONDA=Miniconda3-latest-Linux-x86_64.sh
RUN curl -fsSL -o /tmp/miniconda.sh https://repo.anaconda.com/miniconda/${MINICONDA} \
 && bash /tmp/miniconda.sh -b -p /opt/conda && rm /tmp/miniconda.sh
COPY <<'ENVLOCK_EOF' /envlock/conda-explicit.txt
# This file may be used to create an environment using:
# $ conda create --name <env> --file <this file>
# platform: linux-64
# created-by: envlock export of lock sha256:e19410a6647001d40ea9070ae7d8e4b1fd80687d7ad326580d59ffdb9f04f990
@EXPLICIT
https://repo.anaconda.com/pkgs/main/linux-64/_libgcc_mutex-0.1-main.conda#e75fca3d4e0074e50b74991e8a733ae8
https://repo.anaconda.com/pkgs/main/linux-64/_openmp_mutex-5.1-1_gnu.conda#0aee8fac36d48a88afbf022be6804bc9
https://repo.anaconda.com/pkgs/main/linux-64/ca-certificates-2023.01.10-h06a4308_0.conda#60739b592dacfa27580bd899ecc3e4c0
https://repo.anaconda.com/pkgs/main/linux-64/certifi-2022.12.7-py37h06a4308_0.conda#502a20503a01dd0bc33b9df7eeec30e0
https://repo.anaconda.com/pkgs/main/linux-64/cudatoolkit-10.2.89-hfd86e86_1.tar.bz2#51fa1499289f24e3b0bf48fbfc6d4f06
https://repo.anaconda.com/pkgs/main/linux-64/ld_impl_linux-64-2.38-h1181459_1.conda#b3a128f8db44809f1ee5c79d50a9ff40
https://conda.anaconda.org/conda-forge/linux-64/libblas-3.9.0-16_linux64_openblas.tar.bz2#b175f3ba18a68939726a7882ab976b0c
https://conda.anaconda.org/conda-forge/linux-64/libcblas-3.9.0-16_linux64_openblas.tar.bz2#2153fbae56d7595e78702c85221da627
https://repo.anaconda.com/pkgs/main/linux-64/libffi-3.4.2-h6a678d5_6.conda#8d0ec85d14efbef8fd63ca349e2445b8
https://repo.anaconda.com/pkgs/main/linux-64/libgcc-ng-11.2.0-h1234567_1.conda#7b96e954b279cdca12726f10dab2a9d9
https://conda.anaconda.org/conda-forge/linux-64/libgfortran-ng-12.2.0-h69a702a_19.tar.bz2#50fe237c9153da05e6c6c3b97d6728f8
https://conda.anaconda.org/conda-forge/linux-64/libgfortran5-12.2.0-h337968e_19.tar.bz2#57326a057829d00c30b1c07943c5c692
https://repo.anaconda.com/pkgs/main/linux-64/libgomp-11.2.0-h1234567_1.conda#f76c3ffec8cfdc67744c80ee776724f0
https://conda.anaconda.org/conda-forge/linux-64/liblapack-3.9.0-16_linux64_openblas.tar.bz2#4f7d0dfcbab2e7f84f0a1d1d98bc9d69
https://conda.anaconda.org/conda-forge/linux-64/libopenblas-0.3.21-pthreads_h78a6416_3.tar.bz2#364cfd7a31f8ec0b9f5950765b94177e
https://repo.anaconda.com/pkgs/main/linux-64/libstdcxx-ng-11.2.0-h1234567_1.conda#909e4ba2e9d4b43d2fdf303f9ff6122c
https://repo.anaconda.com/pkgs/main/linux-64/ncurses-6.4-h6a678d5_0.conda#1e0ba9b9f7909a54f4942aedae2300c9
https://conda.anaconda.org/conda-forge/linux-64/numpy-1.21.6-py37h976b520_0.tar.bz2#77a53a47c095a959b8ba973b9ebd179d
https://repo.anaconda.com/pkgs/main/linux-64/openssl-1.1.1t-h7f8727e_0.conda#60dddb8389e4d84ee2a03880130c9345
https://repo.anaconda.com/pkgs/main/linux-64/pip-22.3.1-py37h06a4308_0.conda#ce8aa3e35070e47af27d934ff56e33d6
https://repo.anaconda.com/pkgs/main/linux-64/python-3.7.16-h7a1cb2a_0.conda#d336981ee31add9345522d98f815a2f5
https://conda.anaconda.org/conda-forge/linux-64/python_abi-3.7-2_cp37m.tar.bz2#9b36713c4d99d2c5561361f39a883f2d
https://repo.anaconda.com/pkgs/main/linux-64/readline-8.2-h5eee18b_0.conda#59af62abb03dadf187ffd8aeccfbea6a
https://repo.anaconda.com/pkgs/main/linux-64/setuptools-65.6.3-py37h06a4308_0.conda#4b893793fceac6c7d3b6e1543a24d804
https://repo.anaconda.com/pkgs/main/linux-64/sqlite-3.40.1-h5082296_0.conda#0277a33c76736c921eec52401af3307e
https://repo.anaconda.com/pkgs/main/linux-64/tk-8.6.12-h1ccaba5_0.conda#5ccbf6d0e559c43d52dc5376a384ff75
https://repo.anaconda.com/pkgs/main/linux-64/wheel-0.38.4-py37h06a4308_0.conda#575d3f411ab8b4a7f4d9edf33bc3289f
https://repo.anaconda.com/pkgs/main/linux-64/xz-5.2.10-h5eee18b_1.conda#de41731db586f602717bb67ac267a0b0
https://repo.anaconda.com/pkgs/main/linux-64/zlib-1.2.13-h5eee18b_0.conda#af33d77e2fe97826dce17a91c5337897
ENVLOCK_EOF
RUN /opt/conda/bin/conda create -y -p /opt/conda/envs/mmdet --file /envlock/conda-explicit.txt
ENV PATH=/opt/conda/envs/mmdet/bin:$PATH

COPY <<'ENVLOCK_EOF' /envlock/requirements.txt
# inferred by envlock, pip records no index: mmcv-full 1.7.5
--find-links https://download.openmmlab.com/mmcv/dist/cu102/torch1.10/index.html
# inferred by envlock, pip records no index: torch 1.10.0+cu102, torchvision 0.11.1+cu102
--extra-index-url https://download.pytorch.org/whl/cu102
addict==2.4.0
cycler==0.11.0
fonttools==4.38.0
importlib-metadata==6.7.0
kiwisolver==1.4.5
matplotlib==3.5.3
mmcv-full==1.7.5
# Editable install with no version control (mmdet==2.25.1)
# -e /home/alice/mmdetection: that source tree is not in the image; COPY it in and pip install -e it
opencv-python==4.7.0.72
packaging==23.1
Pillow==9.5.0
platformdirs==4.0.0
pycocotools==2.0.6
pyparsing==3.1.1
python-dateutil==2.8.2
PyYAML==6.0.1
six==1.16.0
terminaltables==3.1.10
tomli==2.0.1
torch==1.10.0+cu102
torchvision==0.11.1+cu102
typing_extensions==4.7.1
yapf==0.40.1
zipp==3.15.0
ENVLOCK_EOF
RUN pip install --no-cache-dir --no-deps -r /envlock/requirements.txt

WORKDIR /workspace

# Compare the image with the lock: envlock save -o image.lock.json,
# then envlock diff <the lock> image.lock.json
