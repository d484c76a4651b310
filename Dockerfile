# syntax=docker/dockerfile:1.7
# Serialpub service image: build wheels in one stage, run as a non-root user in the next.

ARG PYTHON_IMAGE=python:3.11.11-slim-bookworm

FROM ${PYTHON_IMAGE} AS build
ENV PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1
WORKDIR /src
COPY pyproject.toml README.md ./
COPY app ./app
RUN python -m pip wheel --wheel-dir /wheels .

FROM ${PYTHON_IMAGE} AS runtime
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 SERIALPUB_ENV=production SERIALPUB_LOG_FORMAT=json \
    SERIALPUB_DATA_DIR=/var/lib/serialpub
RUN groupadd --system --gid 10001 serialpub \
    && useradd --system --uid 10001 --gid serialpub --home-dir /app --shell /usr/sbin/nologin serialpub \
    && install -d -o serialpub -g serialpub /var/lib/serialpub
COPY --from=build /wheels /wheels
RUN python -m pip install /wheels/*.whl && rm -rf /wheels
WORKDIR /app
# Migrations run from the working directory (alembic.ini points at ./migrations).
COPY --chown=serialpub:serialpub alembic.ini ./
COPY --chown=serialpub:serialpub migrations ./migrations
USER serialpub
EXPOSE 8000
HEALTHCHECK --interval=15s --timeout=3s --start-period=30s --retries=3 \
    CMD ["python", "-c", "import urllib.request, sys; sys.exit(0 if urllib.request.urlopen('http://127.0.0.1:8000/healthz', timeout=2).status == 200 else 1)"]
CMD ["serialpub", "serve", "--host", "0.0.0.0", "--port", "8000"]
