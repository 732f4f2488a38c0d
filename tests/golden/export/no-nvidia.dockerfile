# syntax=docker/dockerfile:1.4
# The environment of envlock lock
# sha256:16bee828bfdc44903921fa52785b49b344efd5017632222fb2ce23b6e410a884,
# for a host whose own setup cannot be changed. Written by envlock export
# --format dockerfile; build it anywhere: docker build -t NAME - < Dockerfile
#
# The lock has no CUDA toolkit.
# The base is the lock's own OS, debian:12.
FROM debian:12
LABEL envlock.lock-id="sha256:16bee828bfdc44903921fa52785b49b344efd5017632222fb2ce23b6e410a884"
ENV DEBIAN_FRONTEND=noninteractive LANG=C.UTF-8
RUN apt-get update && apt-get install -y --no-install-recommends ca-certificates curl bzip2 git python3 python3-pip python3-venv \
 && rm -rf /var/lib/apt/lists/*

# The system's Python, as in the lock (Python 3.11.2 there; the image's python3
# is the base image's). pip may install into it (PEP 668's marker notwithstanding).
ENV PIP_BREAK_SYSTEM_PACKAGES=1

# Installed by the system's package manager on the saved machine, not by pip:
# six 1.16.0
COPY <<'ENVLOCK_EOF' /envlock/requirements.txt
# inferred by envlock, pip records no index: torch 2.1.0+cpu
--extra-index-url https://download.pytorch.org/whl/cpu
filelock==3.13.1
fsspec==2023.12.2
Jinja2==3.1.3
MarkupSafe==2.1.4
mpmath==1.3.0
networkx==3.2.1
sympy==1.12
torch==2.1.0+cpu
typing_extensions==4.9.0
ENVLOCK_EOF
RUN python3 -m pip install --no-cache-dir --no-deps -r /envlock/requirements.txt

WORKDIR /workspace

# Compare the image with the lock: envlock save -o image.lock.json,
# then envlock diff <the lock> image.lock.json
