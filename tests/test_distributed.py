"""Locust's distributed mode: a master and two workers on loopback, plain ``locust -f``.

Workers send their throttle counts, hot-key sketches and heat with Locust's own worker
reports; the master's results and its /metrics must count every request once.
"""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from loadgen.heat.heatmap import key_hasher

ROOT = Path(__file__).resolve().parent.parent


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


LOCUST = [sys.executable, "-m", "locust", "-f", "workloads/counter.py"]


def start_cluster(
    port: int, out: Path, endpoint: str, run_time: str, extra: list[str]
) -> tuple[subprocess.Popen[str], list[subprocess.Popen[bytes]]]:
    """A headless master expecting two workers, and the two workers, all on loopback."""
    master = subprocess.Popen(
        [
            *LOCUST, "--master", "--headless", "--master-bind-host", "127.0.0.1",
            "--master-bind-port", str(port), "--expect-workers", "2", "--users", "4",
            "--spawn-rate", "4", "--run-time", run_time, "--host", endpoint,
            "--results-file", str(out), "--only-summary", "--design", "single",
            "--mix", "increment=1,read=0", *extra,
        ],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )  # fmt: skip
    workers = [
        subprocess.Popen(
            [*LOCUST, "--worker", "--master-host", "127.0.0.1", "--master-port", str(port)],
            cwd=ROOT,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        for _ in range(2)
    ]
    return master, workers


def _scrape(url: str) -> str | None:
    try:
        with urllib.request.urlopen(url, timeout=2) as response:
            return str(response.read().decode())
    except OSError:
        return None


def _total(text: str, family: str) -> float:
    return sum(
        float(line.rsplit(" ", 1)[1])
        for line in text.splitlines()
        if line.startswith(family + "{") or line.startswith(family + " ")
    )


@pytest.mark.slow
@pytest.mark.parametrize("kill_a_worker", [False, True], ids=["two-workers", "one-vanishes"])
def test_master_serves_the_merged_heat(
    tmp_path: Path, moto_endpoint: str, kill_a_worker: bool
) -> None:
    port, metrics_port = _free_port(), _free_port()
    out = tmp_path / "results.json"
    # Heat settings go to the master only: Locust hands them to the workers, whose reports
    # the master could not merge (other bucket count) or would show in plain text otherwise.
    master, workers = start_cluster(
        port, out, moto_endpoint, "8s",
        ["--metrics-port", str(metrics_port), "--metrics-linger", "4", "--heat-buckets", "64",
         "--hash-keys", "salt"],
    )  # fmt: skip
    url = f"http://127.0.0.1:{metrics_port}/metrics"
    last = None
    killed_at = time.monotonic() + 5
    try:
        while master.poll() is None:
            # Once the load runs (both workers joined: the master expects two, and a worker
            # killed before it joins, on a busy machine, leaves the master waiting for ever).
            running = last is not None
            if (
                kill_a_worker
                and running
                and workers[1].poll() is None
                and time.monotonic() > killed_at
            ):
                workers[1].kill()  # gone without a last report
            text = _scrape(url)
            if text and "partition_heat_requests_total{" in text:
                last = text
            time.sleep(0.3)
        output, _ = master.communicate(timeout=90)
    finally:
        for worker in workers:
            try:
                worker.wait(timeout=30)
            except subprocess.TimeoutExpired:
                worker.kill()
        master.kill()
    assert master.returncode == 0, output[-3000:]
    assert last is not None, output[-3000:]
    if kill_a_worker:
        assert workers[1].returncode == -signal.SIGKILL
    results = json.loads(out.read_text())
    requests = results["totals"]["requests"]
    assert requests > 20
    # Heat rides in the same worker report as Locust's own stats, so the master's view
    # agrees with Locust's count exactly, also when a worker vanished mid-run.
    assert _total(last, "partition_heat_requests_total") == requests
    assert _total(last, "partition_heat_bucket_requests_total") == requests
    assert "partition_heat_buckets 64.0" in last
    label = key_hasher("salt")("GLOBAL_COUNTER")
    assert (
        f'partition_heat_key_requests_total{{index="",key="{label}",table="ph-counter"}} ' in last
    )
    assert "GLOBAL_COUNTER" not in last
    assert _total(last, "partition_heat_key_requests_total") == requests
    # Every increment touches GLOBAL_COUNTER once: the merged sketch in the results must
    # count each request exactly once, neither dropping a worker's reports nor adding them
    # twice.
    assert results["totals"]["failures"] == 0
    (hot,) = results["hot_keys"]
    assert hot["key"] == label
    assert hot["requests"] == requests
    assert hot["share"] == 1.0
    (lane,) = results["heat"]["lanes"]
    assert sum(map(sum, lane["requests"])) == requests
    assert results["heat"]["buckets"] == 64 and results["heat"]["keys_hashed"]
