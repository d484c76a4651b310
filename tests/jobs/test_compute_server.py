"""The compute fork server (Linux), as the worker starts it: before the first job it has
imported the core (a 40-row release spent 2.2-3.3 s in its ``ipc`` phase waiting for those
imports), and a job then forks from that same server, its child of its own gone with it."""

from __future__ import annotations

import sys
from multiprocessing import forkserver

import psutil
import pytest

from app.io.compact import CorpusBuilder, Limits
from app.jobs import compute
from app.jobs.handoff import HandOff
from app.methods.registry import get_method
from app.services.payload import encode_corpus

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.skipif(sys.platform != "linux", reason="a fork server on Linux only"),
]


def _server() -> psutil.Process:
    pid = forkserver._forkserver._forkserver_pid  # type: ignore[attr-defined]
    assert pid is not None, "no fork server"
    return psutil.Process(pid)


def _handoff() -> HandOff:
    builder = CorpusBuilder(b"secret", Limits())
    for k in range(40):
        builder.add(["arson", "theft"] if k % 2 else ["fraud", "HIV"], {"item": k})
    return HandOff(
        method="anony",
        params=get_method("anony").parse({"cluster_size": 4}),
        payload=encode_corpus(builder.build()),
        series_terms=["HIV"],
        extra_terms=[],
        private_match="casefold",
    )


def test_the_server_has_imported_the_core_when_it_is_started() -> None:
    assert compute.START_METHOD == "forkserver"
    compute.start_server()
    server = _server()
    # The compiled parts of numpy and scipy (the core's risk) are mapped in the server: it
    # imported them before it forked the child that start_server waited for.
    mapped = {m.path for m in server.memory_maps()}
    assert any("/numpy/" in path for path in mapped), sorted(mapped)
    assert any("/scipy/" in path for path in mapped), sorted(mapped)


async def test_a_job_forks_from_the_started_server() -> None:
    compute.start_server()
    server = _server()
    await compute.ready_to_compute()  # again, as the worker's start after the service's
    computed = await compute.publish_isolated(_handoff())
    assert computed.publication.release.n_rows == 40
    # The same server, still there to fork the next job.
    assert _server().pid == server.pid and server.is_running()
    assert computed.publication.release.private_terms == {"HIV"}
