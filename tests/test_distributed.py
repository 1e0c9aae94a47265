"""Locust's distributed mode: a master and two workers on loopback, plain ``locust -f``.

Workers send their throttle counts and hot-key sketches with Locust's own worker reports;
the master's results must count every request once.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.mark.slow
def test_master_merges_two_workers(tmp_path: Path, moto_endpoint: str) -> None:
    port = _free_port()
    out = tmp_path / "results.json"
    locust = [sys.executable, "-m", "locust", "-f", "workloads/counter.py"]
    common = ["--design", "single", "--mix", "increment=1,read=0", "--keys", "50"]
    master = subprocess.Popen(
        [
            *locust, "--master", "--headless", "--master-bind-host", "127.0.0.1",
            "--master-bind-port", str(port), "--expect-workers", "2", "--users", "4",
            "--spawn-rate", "4", "--run-time", "5s", "--host", moto_endpoint,
            "--results-file", str(out), "--only-summary", *common,
        ],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )  # fmt: skip
    workers = [
        subprocess.Popen(
            [*locust, "--worker", "--master-host", "127.0.0.1", "--master-port", str(port)],
            cwd=ROOT,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        for _ in range(2)
    ]
    try:
        output, _ = master.communicate(timeout=90)
    finally:
        for worker in workers:
            worker.wait(timeout=30)
        master.kill()
    assert master.returncode == 0, output[-3000:]
    results = json.loads(out.read_text())
    totals = results["totals"]
    assert totals["requests"] > 20
    assert totals["failures"] == 0
    (hot,) = results["hot_keys"]
    # Every increment touches GLOBAL_COUNTER once: the merged sketch must count each request
    # exactly once, neither dropping a worker's reports nor adding them twice.
    assert hot["key"] == "GLOBAL_COUNTER"
    assert hot["requests"] == totals["requests"]
    assert hot["share"] == 1.0
