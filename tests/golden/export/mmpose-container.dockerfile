# syntax=docker/dockerfile:1.4
# The environment of envlock lock
# sha256:834be6ac9e5bf36fe0a26eb0bafab328eb88eeacb872e21409184edc434ff79b,
# for a host whose own setup cannot be changed. Written by envlock export
# --format dockerfile; build it anywhere: docker build -t NAME - < Dockerfile
#
# Matches the lock: CUDA 11.8, cuDNN 8, Ubuntu 22.04.
FROM nvidia/cuda:11.8.0-cudnn8-devel-ubuntu22.04
LABEL envlock.lock-id="sha256:834be6ac9e5bf36fe0a26eb0bafab328eb88eeacb872e21409184edc434ff79b"
ENV DEBIAN_FRONTEND=noninteractive LANG=C.UTF-8
RUN apt-get update && apt-get install -y --no-install-recommends ca-certificates curl bzip2 git python3 python3-pip python3-venv \
 && rm -rf /var/lib/apt/lists/*

# A virtual environment where the lock had one; the lock's Python is 3.10.12,
# the image's python3 is the base image's.
RUN python3 -m venv /opt/venv
ENV PATH=/opt/venv/bin:$PATH

COPY <<'ENVLOCK_EOF' /envlock/requirements.txt
# inferred by envlock, pip records no index: mmcv 2.1.0
--find-links https://download.openmmlab.com/mmcv/dist/cu118/torch2.1/index.html
# inferred by envlock, pip records no index: torch 2.1.2+cu118, torchvision 0.16.2+cu118
--extra-index-url https://download.pytorch.org/whl/cu118
addict==2.4.0
chumpy==0.70
filelock==3.13.1
fsspec==2023.12.2
Jinja2==3.1.3
json_tricks==3.17.3
MarkupSafe==2.1.4
matplotlib==3.8.2
mmcv==2.1.0
mmdet==3.2.0
mmengine==0.10.3
mmpose @ git+https://github.com/open-mmlab/mmpose.git@cede793811a9119a1995290e42d960ce6eb74ea3
mpmath==1.3.0
munkres==1.1.4
networkx==3.2.1
numpy==1.26.3
opencv-python==4.9.0.80
packaging==23.2
pillow==10.2.0
pip==23.3.2
pycocotools==2.0.7
PyYAML==6.0.1
rich==13.7.0
scipy==1.11.4
setuptools==59.6.0
shapely==2.0.2
six==1.16.0
sympy==1.12
termcolor==2.4.0
terminaltables==3.1.10
torch==2.1.2+cu118
torchvision==0.16.2+cu118
tqdm==4.66.1
triton==2.1.0
typing_extensions==4.9.0
xtcocotools==1.14.3
yapf==0.40.2
ENVLOCK_EOF
RUN pip install --no-cache-dir --no-deps -r /envlock/requirements.txt

WORKDIR /workspace

# Compare the image with the lock: envlock save -o image.lock.json,
# then envlock diff <the lock> image.lock.json
