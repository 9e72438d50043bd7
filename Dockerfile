# ServiceBench + Support Queue: the OpenEnv environment server, as a Hugging Face Docker Space.
#
#   docker build -t servicebench-support-queue .
#   docker run --rm -p 8000:8000 servicebench-support-queue
#
# tests/test_dockerfile.py checks the facts below and scripts/replay_dockerfile.py
# replays these steps outside Docker, so keep both in mind when editing.
FROM python:3.11-slim

# uv from PyPI, the version .ci/run uses.
ARG UV_VERSION=0.13.9
RUN pip install --no-cache-dir "uv==${UV_VERSION}"

# Spaces run the container as uid 1000: that user owns the app and everything it installs.
RUN useradd --create-home --uid 1000 --user-group user \
    && mkdir /app \
    && chown user:user /app
USER 1000
WORKDIR /app

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    UV_COMPILE_BYTECODE=1 \
    UV_LINK_MODE=copy \
    UV_PYTHON_DOWNLOADS=never \
    UV_PYTHON_PREFERENCE=only-system \
    UV_CACHE_DIR=/tmp/uv-cache \
    PATH="/app/.venv/bin:$PATH" \
    HOST=0.0.0.0 \
    PORT=8000

# Dependencies from the lock file alone, so that editing the source keeps this layer cached.
COPY --chown=1000:1000 pyproject.toml uv.lock ./
RUN --mount=type=cache,target=/tmp/uv-cache,uid=1000,gid=1000 \
    uv sync --frozen --no-dev --no-install-project

# Then the source (.dockerignore keeps tests, caches and local venvs out) and the project itself.
COPY --chown=1000:1000 . .
RUN --mount=type=cache,target=/tmp/uv-cache,uid=1000,gid=1000 \
    uv sync --frozen --no-dev

EXPOSE 8000
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s --retries=3 \
    CMD ["python", "-c", "import json, os, sys, urllib.request; r = urllib.request.urlopen('http://127.0.0.1:%s/health' % os.environ.get('PORT', '8000'), timeout=4); sys.exit(0 if json.load(r).get('status') == 'healthy' else 1)"]

# One worker by default: with EPISODE_STORE=memory episodes live in the process. With SQLite or
# Redis, WEB_CONCURRENCY=N (uvicorn's --workers) runs N workers that share every episode.
# --http and --ws put the door's protocols in front of the app (server/protocols/): deadlines for
# request heads, a head size limit, the connection cap, WebSocket messages limited to twice
# MAX_BODY_BYTES decompressed (they read the same environment variables as the app).
CMD ["sh", "-c", "exec uvicorn servicebench_support_queue.server.app:app --host \"${HOST:-0.0.0.0}\" --port \"${PORT:-8000}\" --http servicebench_support_queue.server.protocols:HttpProtocol --ws servicebench_support_queue.server.protocols:WebSocketProtocol"]
