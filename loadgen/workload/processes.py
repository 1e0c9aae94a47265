"""The load generator over several processes: Locust's master in ``loadgen run``'s process
and its workers beside it, as Locust's own ``--processes`` runs them.

One Locust process runs on one core at a time (gevent, the interpreter lock). Where the
arrivals need more than one process carries and the machine has cores to spare, ``loadgen
run --processes N`` starts N workers (``locust -f LOCUSTFILE --worker``) on loopback; this
process is their master. Each worker runs one arrival driver with its share of every
pattern's rate and of ``--max-in-flight`` (`loadgen.workload.arrivals`: the distributed
mode's split), and sends its heat and load with Locust's worker reports, which the master
merges (`loadgen.heat.recorder`).

``--processes auto`` (`choose`) asks for more than one only when the offered attempts need
it and cores allow: a core is left to the embedded emulator, and one to an engine in a
process of its own (DynamoDB Local's JVM), before the load generator counts any.

    n, why = choose("auto", attempts_per_s=2_400, client="fast", cores=8, reserved=2)
    # (3, "--processes auto: 2,400 attempts/s offered, one process carries about 1,100; ...")
"""

from __future__ import annotations

import contextlib
import logging
import math
import os
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from loadgen.errors import ConfigError, HarnessError

__all__ = ["PROCESS_ATTEMPTS_PER_S", "Workers", "choose", "end_run", "parse", "workers"]

log = logging.getLogger(__name__)

PROCESS_ATTEMPTS_PER_S = {"boto3": 200.0, "fast": 1100.0}
"""Attempts per second one Locust process sends, per client, at half of its core: half of
what `benchmarks/bench_client.py` measured here against a null endpoint (411 and 2,270
requests per CPU-second, 2 shared cores), as a request to the emulator costs the client more
than one to a null server and the arrival clock needs room to keep time."""

START_TIMEOUT_S = 60.0
"""How long the workers may take to connect (each imports Locust and the workload)."""

_REPORT_INTERVAL_S = 3.0
"""Locust's worker report interval (``WORKER_REPORT_INTERVAL``)."""


def parse(value: int | str | None) -> int | str:
    """``--processes``: a count >= 1, or ``auto``; ConfigError naming the value otherwise."""
    if value is None or value == "auto":
        return "auto"
    try:
        count = int(value)
    except (TypeError, ValueError):
        count = 0
    if count < 1 or str(value).strip() != str(count):
        raise ConfigError(f"--processes must be an integer >= 1 or auto (got {value!r})")
    return count


def choose(
    asked: int | str, *, attempts_per_s: float | None, client: str, cores: int, reserved: int
) -> tuple[int, str]:
    """How many processes drive the load, and why, in words. ``asked``: a count (kept) or
    ``auto``; ``attempts_per_s``: the attempts the run offers its target (None: not known);
    ``reserved``: cores left to the target's processes on this machine."""
    if asked != "auto":
        return int(asked), f"--processes {asked}"
    free = cores - reserved
    carries = PROCESS_ATTEMPTS_PER_S.get(client, PROCESS_ATTEMPTS_PER_S["boto3"])
    if attempts_per_s is None:
        return 1, "--processes auto: the attempts offered are not known"
    offered = f"{attempts_per_s:,.0f} attempts/s offered, one process carries about {carries:,.0f}"
    needed = math.ceil(attempts_per_s / carries)
    if needed <= 1:
        return 1, f"--processes auto: {offered}"
    if free < 2:
        target = f", {reserved} left to the target," if reserved else ""
        return 1, (
            f"--processes auto: {offered}, but the machine's {cores} cores{target} leave "
            "one to the load generator"
        )
    count = min(needed, free)
    return count, f"--processes auto: {offered}; {free} cores free"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Workers:
    """The worker processes of a run, with the logs they wrote."""

    def __init__(self, processes: list[subprocess.Popen[bytes]], logs: list[Path]) -> None:
        self.processes = processes
        self.logs = logs

    @property
    def pids(self) -> tuple[int, ...]:
        return tuple(p.pid for p in self.processes)

    def failed(self) -> str | None:
        """The first worker that exited, with its log's last lines; None while all run."""
        for process, log_path in zip(self.processes, self.logs, strict=True):
            code = process.poll()
            if code is not None:
                tail = log_path.read_text(errors="replace").strip().splitlines()[-5:]
                return f"a load-generator worker exited with code {code}: " + " / ".join(tail)
        return None

    def wait_connected(self, runner: Any, timeout_s: float = START_TIMEOUT_S) -> None:
        """Until every worker has connected to ``runner`` (Locust's master); HarnessError if
        one exits or they take longer than ``timeout_s``."""
        import gevent

        deadline = time.monotonic() + timeout_s
        while runner.worker_count < len(self.processes):
            failed = self.failed()
            if failed is not None:
                raise HarnessError(failed)
            if time.monotonic() > deadline:
                raise HarnessError(
                    f"{runner.worker_count} of {len(self.processes)} load-generator workers "
                    f"connected within {timeout_s:g} s"
                )
            gevent.sleep(0.1)


@contextlib.contextmanager
def workers(locustfile: Path, count: int, environment: Any) -> Iterator[Workers]:
    """``count`` Locust workers of ``locustfile`` for a master bound now on loopback in
    ``environment`` (its runner: ``environment.runner``), stopped on the way out."""
    port = _free_port()
    environment.create_master_runner(master_bind_host="127.0.0.1", master_bind_port=port)
    folder = Path(tempfile.mkdtemp(prefix="partition-heat-workers-"))
    env = dict(os.environ)
    # The workers import this very package, installed or not, as the emulator does.
    package_root = str(Path(__file__).resolve().parents[2])
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [package_root, env.get("PYTHONPATH")]))
    command = [sys.executable, "-m", "locust", "-f", str(locustfile), "--worker",
               "--master-host", "127.0.0.1", "--master-port", str(port)]  # fmt: skip
    processes: list[subprocess.Popen[bytes]] = []
    logs = [folder / f"worker-{n + 1}.log" for n in range(count)]
    try:
        for path in logs:
            with path.open("wb") as out:
                processes.append(
                    subprocess.Popen(
                        command, stdin=subprocess.DEVNULL, stdout=out, stderr=out, env=env
                    )
                )
        yield Workers(processes, logs)
    finally:
        for process in processes:
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                log.warning("a load-generator worker did not quit: killed (pid %d)", process.pid)
                process.kill()
                process.wait()


def end_run(runner: Any, stopped: Callable[[], None] = lambda: None) -> None:
    """Stop a run, call ``stopped``, then quit it. A master waits for each worker's first
    report after it stopped, which holds everything it gathered (Locust's own quit waits
    0.5 s for a final report, which a busy machine can miss)."""
    import gevent

    if not hasattr(runner, "clients"):  # a local runner
        stopped()
        runner.quit()
        return
    reported: dict[str, float] = {}

    def on_report(client_id: str, data: dict[str, Any]) -> None:
        reported[client_id] = time.monotonic()

    events = runner.environment.events
    events.worker_report.add_listener(on_report)
    runner.stop()
    stopped()  # the workers' load has ended; they quit below, and their CPU with them
    since = time.monotonic()
    deadline = since + 3 * _REPORT_INTERVAL_S + 2.0
    while time.monotonic() < deadline and any(
        reported.get(client.id, 0.0) <= since for client in runner.clients.all
    ):
        gevent.sleep(0.1)
    events.worker_report.remove_listener(on_report)
    runner.quit()
