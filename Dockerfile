# The app in a container, installed by the same script as the Space build (scripts/install_runtime.sh, which CI
# runs through scripts/space_build.py), so the two cannot drift. Non-root user (UID 1000, as on a Space), the data
# in the /data volume, port 7860. Secrets (HF_TOKEN, COMPLAB_ADMIN_PASSWORD) are given at `docker run -e`, never
# baked into a layer:
#   docker build -t complab .
#   docker run -p 7860:7860 -v complab-data:/data -e COMPLAB_ADMIN_USER=lab -e COMPLAB_ADMIN_PASSWORD=... complab
FROM python:3.11-slim-bookworm

ENV PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

RUN useradd -m -u 1000 user \
    && mkdir /data \
    && chown 1000:1000 /data
WORKDIR /home/user/app

# Debian packages and Python requirements first, as root: editing the app does not reinstall them.
COPY --chown=1000:1000 packages.txt requirements.txt ./
COPY --chown=1000:1000 scripts/install_runtime.sh scripts/
RUN scripts/install_runtime.sh --python python apt pip

COPY --chown=1000:1000 . .
USER 1000
RUN scripts/install_runtime.sh --python python wordnet

# Everything the app writes (store, runs, campaigns, downloaded weights) goes to the volume.
ENV HOME=/home/user \
    COMPLAB_WORKSPACE=/data \
    HF_HOME=/data/huggingface \
    NLTK_DATA=/home/user/app/.cache/nltk_data \
    GRADIO_SERVER_NAME=0.0.0.0 \
    GRADIO_SERVER_PORT=7860 \
    GRADIO_ANALYTICS_ENABLED=False
VOLUME /data
EXPOSE 7860
HEALTHCHECK --interval=30s --timeout=10s --start-period=120s --retries=3 \
    CMD ["python", "-c", "import urllib.request; urllib.request.urlopen('http://127.0.0.1:7860/', timeout=8)"]
CMD ["python", "app.py"]
