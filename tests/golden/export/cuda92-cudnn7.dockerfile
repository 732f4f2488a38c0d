# syntax=docker/dockerfile:1.4
# The environment of envlock lock
# sha256:3fcb4f8839132677f34cd39a204b2dd19df4de4e1f29fbfcacb36bf26f73957d,
# for a host whose own setup cannot be changed. Written by envlock export
# --format dockerfile; build it anywhere: docker build -t NAME - < Dockerfile
#
# The lock has CUDA 9.2.148 (toolkit), cuDNN 7.6.5 on Ubuntu 18.04.6 LTS.
# No published nvidia/cuda tag matches it:
# NVIDIA publishes no image of CUDA 9.2 with cuDNN (the tags of CUDA 10 and older were deleted).
# Closest published tag: CUDA 11.0.3, cuDNN 8, Ubuntu 18.04.
# Frameworks bring their own CUDA runtime, but code compiled in this image
# (mmcv ops, custom kernels) is built with its nvcc, not the lock's.
FROM nvidia/cuda:11.0.3-cudnn8-devel-ubuntu18.04
LABEL envlock.lock-id="sha256:3fcb4f8839132677f34cd39a204b2dd19df4de4e1f29fbfcacb36bf26f73957d"
ENV DEBIAN_FRONTEND=noninteractive LANG=C.UTF-8
RUN apt-get update && apt-get install -y --no-install-recommends ca-certificates curl bzip2 git python3 python3-pip python3-venv \
 && rm -rf /var/lib/apt/lists/*

# The system's Python, as in the lock (Python 3.6.9 there; the image's python3
# is the base image's). pip may install into it (PEP 668's marker notwithstanding).
ENV PIP_BREAK_SYSTEM_PACKAGES=1

# Installed by the system's package manager on the saved machine, not by pip:
# python-apt 1.6.5ubuntu0.7 PyYAML 3.12 six 1.11.0 wheel 0.30.0
COPY <<'ENVLOCK_EOF' /envlock/requirements.txt
future==0.18.3
numpy==1.19.5
torch==1.4.0
ENVLOCK_EOF
RUN python3 -m pip install --no-cache-dir --no-deps -r /envlock/requirements.txt

WORKDIR /workspace

# Compare the image with the lock: envlock save -o image.lock.json,
# then envlock diff <the lock> image.lock.json
