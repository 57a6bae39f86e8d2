# SplitLab: one Streamlit process per container. Build and run:
#   docker build -t splitlab .
#   docker run --rm -p 8501:8501 -e STREAMLIT_SERVER_COOKIE_SECRET="$(openssl rand -hex 32)" splitlab
# Several replicas: same image, same cookie secret, sticky sessions in the proxy (docs/deploy.md).
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

WORKDIR /app

# Dependencies first: this layer is rebuilt only when requirements.txt changes.
COPY requirements.txt .
RUN pip install -r requirements.txt

# An unprivileged user runs the app; the code stays root-owned and read-only to it.
RUN useradd --create-home --uid 10001 --shell /usr/sbin/nologin splitlab
COPY . .
USER splitlab

EXPOSE 8501

# python:3.11-slim has no curl; Python's urllib does the same probe without an extra package.
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
  CMD ["python", "-c", "import sys, urllib.request; sys.exit(urllib.request.urlopen('http://localhost:8501/_stcore/health', timeout=4).read() != b'ok')"]

# .streamlit/config.toml (copied above) sets the rest: XSRF on, upload limit, no file watcher,
# no usage stats, postScriptGC off.
ENTRYPOINT ["streamlit", "run", "app.py", "--server.port=8501", "--server.address=0.0.0.0", "--server.headless=true"]
