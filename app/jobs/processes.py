"""Which process runs a job, and whether that process is still alive.

A job records the host, the pid and the pid's start time of the process running it. After a
crash, a restart on the same host finds its predecessor's jobs at once: the pid is gone, or
belongs to another process (containers restart as pid 1 again, so the start time decides).
Jobs of other hosts are left to the heartbeat (``SERIALPUB_STALLED_AFTER``).

"Host" is the host name and the pid namespace: containers that share a host name (host
networking, a fixed ``hostname:``) but not their pids must never judge each other's pids.
"""

from __future__ import annotations

import os
import socket
from dataclasses import dataclass

import psutil

__all__ = ["ProcessIdentity", "current_process", "is_dead_here"]

#: Start times are read from the kernel in clock ticks; equal processes agree to well under this.
_SAME_START_S = 1.0


@dataclass(frozen=True, slots=True)
class ProcessIdentity:
    host: str
    pid: int
    started: float


def _started(pid: int) -> float | None:
    try:
        return float(psutil.Process(pid).create_time())
    except (psutil.NoSuchProcess, psutil.ZombieProcess):
        return None
    except psutil.AccessDenied:
        # It exists, we may not look at it: treat it as alive (never requeue a live job).
        return -1.0


def _host() -> str:
    try:
        namespace = os.readlink("/proc/self/ns/pid")  # "pid:[4026531836]" on Linux
    except OSError:
        return socket.gethostname()
    return f"{socket.gethostname()}/{namespace}"


def current_process() -> ProcessIdentity:
    pid = os.getpid()
    return ProcessIdentity(_host(), pid, _started(pid) or 0.0)


def is_dead_here(host: str | None, pid: int | None, started: float | None) -> bool:
    """``True`` only when that process ran on this host and is certainly gone."""
    if host is None or pid is None or started is None or host != _host():
        return False
    now_started = _started(pid)
    if now_started is None:
        return True
    if now_started < 0:
        return False
    return abs(now_started - started) > _SAME_START_S
