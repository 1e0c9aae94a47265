"""Ends a server's processes once whoever started them is gone, however it went.

A server that starts a process of its own in another session (LocalStack starts DynamoDB
Local's JVM so) leaves that process running when it dies by SIGKILL, and a parent killed so
runs no cleanup either. The processes of one start are told apart by a marker, a directory
made for that start alone, which each of them names on its command line. A reaper started
beside them, in a session of its own, waits for end of file on its standard input (a pipe
whose writing end only the starter holds, so the kernel closes it whenever the starter ends)
and then kills every process naming the marker and removes the directory.

Run as a script, with nothing of the project imported (the child may not find the package):

    python loadgen/targets/reaper.py MARKER_DIRECTORY  < pipe

`processes_naming` and `kill_naming` serve the starter's own orderly stop too.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Collection
from pathlib import Path

__all__ = ["kill_naming", "main", "processes_naming"]

_SETTLE_SECONDS = 0.5
"""A process being started as the others die names the marker only once it has exec'd:
look again after this long."""


def processes_naming(marker: str, *, exclude: Collection[int] = ()) -> list[int]:
    """Ids of the processes (this one and ``exclude`` excepted) with an argument containing
    ``marker``."""
    found = []
    for pid, arguments in _command_lines():
        if pid == os.getpid() or pid in exclude:
            continue
        if any(marker in argument for argument in arguments):
            found.append(pid)
    return found


def kill_naming(marker: str, *, exclude: Collection[int] = ()) -> list[int]:
    """SIGKILL every process naming ``marker`` (``exclude`` excepted) and, where there were
    some, those that name it `_SETTLE_SECONDS` later; their ids."""
    killed: list[int] = []
    for look in range(2):
        found = processes_naming(marker, exclude=exclude)
        if not found:
            break
        for pid in found:
            with contextlib.suppress(OSError):  # gone already, or not ours
                os.kill(pid, signal.SIGKILL)
                killed.append(pid)
        if look == 0:
            time.sleep(_SETTLE_SECONDS)
    return killed


def _command_lines() -> list[tuple[int, list[str]]]:
    proc = Path("/proc")
    if not proc.is_dir():  # not Linux: ps says the same, in one string per process
        listing = subprocess.run(
            ["ps", "-Ao", "pid=,args="], capture_output=True, text=True, check=False
        ).stdout
        rows = (line.strip().split(None, 1) for line in listing.splitlines() if line.strip())
        return [(int(row[0]), row[1:]) for row in rows]
    lines = []
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            raw = (entry / "cmdline").read_bytes()
        except OSError:  # gone meanwhile, or not ours to read
            continue
        lines.append((int(entry.name), raw.decode("utf-8", "replace").split("\0")))
    return lines


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: reaper.py MARKER_DIRECTORY < pipe", file=sys.stderr)
        return 2
    marker = argv[0]
    # Signals meant for the starter's process group are not for the reaper: it ends when the
    # starter has.
    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, signal.SIG_IGN)
    while sys.stdin.buffer.read(4096):
        pass
    kill_naming(marker)
    shutil.rmtree(marker, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
