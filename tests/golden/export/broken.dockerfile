# syntax=docker/dockerfile:1.4
# The environment of envlock lock
# sha256:7676d45a1fcbda098638acdf923a2d771407d5179171846242a09c4e7714dacb,
# for a host whose own setup cannot be changed. Written by envlock export
# --format dockerfile; build it anywhere: docker build -t NAME - < Dockerfile
#
# The lock's CUDA toolkit has no recorded version, so no nvidia/cuda tag can be chosen.
# The lock names no Ubuntu or Debian release: ubuntu:22.04 is a guess.
FROM ubuntu:22.04
LABEL envlock.lock-id="sha256:7676d45a1fcbda098638acdf923a2d771407d5179171846242a09c4e7714dacb"
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
# created-by: envlock export of lock sha256:7676d45a1fcbda098638acdf923a2d771407d5179171846242a09c4e7714dacb
@EXPLICIT
https://repo.anaconda.com/pkgs/main/linux-64/python-3.8.10-h12debd9_8.conda#5238524924e47054e5d9140096b54a8c
ENVLOCK_EOF
RUN /opt/conda/bin/conda create -y -p /opt/conda/envs/envlock --file /envlock/conda-explicit.txt
ENV PATH=/opt/conda/envs/envlock/bin:$PATH

COPY <<'ENVLOCK_EOF' /envlock/requirements.txt
mmcv-full==1.3.0
requests==2.31.0
ENVLOCK_EOF
RUN pip install --no-cache-dir --no-deps -r /envlock/requirements.txt

WORKDIR /workspace

# Compare the image with the lock: envlock save -o image.lock.json,
# then envlock diff <the lock> image.lock.json
