"""A job whose compute child is killed by a signal (what the kernel's out-of-memory killer does)
is run again, as a job whose worker died is, and says which signal; past
``SERIALPUB_JOB_MAX_ATTEMPTS`` it fails ``job_interrupted`` naming it, and the same post with
the same ``Idempotency-Key`` runs again.

Before, the job failed at once with ``internal_error`` ("the publication failed
unexpectedly"), no retry, no word of the signal.

The children are forked from this process (``forked_compute``) so that they run a stand-in for
the core that kills its own process with SIGKILL; a file tells the stand-in how many runs to
kill (a forked child cannot change the test's memory).
"""

from __future__ import annotations

import os
import signal
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

from app.settings import Settings
from tests.api.conftest import create_key, create_series, wait_job
from tests.api.paper import body

pytestmark = [pytest.mark.anyio, pytest.mark.db]

URL = "/v1/series/prison-health/releases"


@pytest.fixture
def killed_runs(
    monkeypatch: pytest.MonkeyPatch, forked_compute: None, tmp_path: Path
) -> Callable[[int], Path]:
    """``killed_runs(n)``: the next ``n`` compute children are killed by SIGKILL before the
    core answers, the later ones publish; returns the file that counts the runs."""
    from app.core import pipeline

    real = pipeline.publish
    runs = tmp_path / "runs"

    def kill(n: int) -> Path:
        def publish(*args: Any, **kwargs: Any) -> Any:
            done = len(runs.read_text()) if runs.exists() else 0
            runs.write_text("x" * (done + 1))
            if done < n:
                os.kill(os.getpid(), signal.SIGKILL)
            return real(*args, **kwargs)

        monkeypatch.setattr(pipeline, "publish", publish)
        return runs

    return kill


async def test_a_job_whose_child_was_killed_runs_again_and_says_why(
    client: httpx.AsyncClient, killed_runs: Callable[[int], Path]
) -> None:
    await create_series(client)
    publisher = await create_key(client, "publisher", "prison-health")
    auditor = await create_key(client, "auditor")
    runs = killed_runs(1)
    posted = await client.post(URL, json=body(1), headers=publisher)
    assert posted.status_code == 202, posted.text
    done = await wait_job(client, posted.json()["id"], auditor)
    assert done["status"] == "succeeded" and done["release_no"] == 1, done
    assert done["error"] is None and done["attempts"] == 2
    (interruption,) = done["interruptions"]
    assert interruption["reason"] == "compute_killed" and interruption["signal"] == "SIGKILL"
    assert interruption["attempt"] == 1
    assert len(runs.read_text()) == 2
    listed = (await client.get(URL, headers=publisher)).json()
    assert [r["release_no"] for r in listed] == [1]


async def test_past_its_attempts_the_job_fails_naming_the_signal_and_may_be_posted_again(
    client: httpx.AsyncClient, settings: Settings, killed_runs: Callable[[int], Path]
) -> None:
    attempts = settings.job_max_attempts
    await create_series(client)
    publisher = await create_key(client, "publisher", "prison-health")
    headers = {**publisher, "Idempotency-Key": "upload-2023"}
    runs = killed_runs(attempts)
    failed = await client.post(f"{URL}?wait=true", json=body(1), headers=headers)
    assert failed.status_code == 422, failed.text
    error = failed.json()["error"]
    assert error["code"] == "job_interrupted"
    assert error["details"]["signal"] == "SIGKILL" and error["details"]["attempts"] == attempts
    assert "killed by SIGKILL" in error["message"] and "post it again" in error["message"]
    job = (await client.get(f"/v1/jobs/{error['details']['job']}", headers=publisher)).json()
    assert job["status"] == "failed" and job["attempts"] == attempts
    assert [i["reason"] for i in job["interruptions"]] == ["compute_killed"] * attempts
    assert len(runs.read_text()) == attempts
    assert (await client.get(URL, headers=publisher)).json() == []
    # The worker given more memory: the same post, with the same key, publishes.
    again = await client.post(f"{URL}?wait=true", json=body(1), headers=headers)
    assert again.status_code == 201, again.text
    assert again.json()["job"]["id"] != job["id"]
    assert again.json()["release"]["release_no"] == 1
    # From then on the key answers the job that published.
    replayed = await client.post(f"{URL}?wait=true", json=body(1), headers=headers)
    assert replayed.status_code == 201 and replayed.json()["job"]["id"] == again.json()["job"]["id"]
    assert [r["release_no"] for r in (await client.get(URL, headers=publisher)).json()] == [1]
