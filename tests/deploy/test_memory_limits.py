"""The default upload caps fit the shipped container limits: a 206 MiB upload within earlier
caps (1.9M lines, 18.1M terms) peaked at 4.0 GiB in the compute child and 2.7 GiB in the API,
against limits of 2 GiB and 1 GiB. A consistency check, not a timed test: the documented memory
per term times the default term cap (per body byte for JSON in the API), plus each process's
floor, with a 15% margin, stays under each container's limit."""

from __future__ import annotations

import re

import yaml

from app.settings import MEMORY_FLOOR_MIB, MEMORY_PER_JSON_BYTE, MEMORY_PER_TERM, Settings
from tests.support.database import ROOT

MIB = 1 << 20
MARGIN = 1.15


def _limit_mib(value: str) -> float:
    number, unit = re.fullmatch(r"([\d.]+)([kmg])b?", value.lower()).groups()  # type: ignore[union-attr]
    return float(number) * {"k": 1 / 1024, "m": 1, "g": 1024}[unit]


def test_default_caps_fit_the_compose_memory_limits() -> None:
    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    services = compose["services"]
    limits = {
        name: _limit_mib(services[name]["deploy"]["resources"]["limits"]["memory"])
        for name in ("app", "worker")
    }
    settings = Settings(_env_file=None)  # type: ignore[call-arg]
    terms = settings.max_terms_per_release
    concurrency = int(services["worker"]["environment"].get("SERIALPUB_WORKER_CONCURRENCY", 1))
    # Text is parsed as it streams (bytes a term); JSON whole (bytes a body byte).
    parse = max(terms * MEMORY_PER_TERM["api"], settings.max_json_bytes * MEMORY_PER_JSON_BYTE)
    api = MEMORY_FLOOR_MIB["api"] + parse / MIB
    # Each running job: its compute child, and the worker's share (the release it stores).
    per_job = terms * (MEMORY_PER_TERM["compute_child"] + MEMORY_PER_TERM["worker"]) / MIB
    worker = MEMORY_FLOOR_MIB["worker"] + concurrency * per_job
    assert services["app"]["environment"]["SERIALPUB_IN_PROCESS_WORKER"] == "false"
    assert api * MARGIN <= limits["app"], (api, limits)
    assert worker * MARGIN <= limits["worker"], (worker, limits)
    # A transaction cap the term cap does not already bind would let more rows through than
    # the rule sizes: each line holds at least one term.
    assert settings.max_transactions <= terms
