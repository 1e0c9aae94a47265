"""What the local targets carry, against the load generator's own ceiling, in one run.

One Locust process (``loadgen run counter --design sharded --client fast --users 20``) is
pointed in turn at:

- a null endpoint answering at once: the load generator's ceiling;
- the emulator forwarding to that null endpoint: what the emulator itself costs;
- the embedded target with each engine (``--engine moto`` and ``--engine dynamodb-local``),
  started as ``loadgen run`` starts it, at a scale where nothing throttles.

For each it prints requests/s, p50, the target's CPU per request (the emulator and its engine
process, read from /proc) beside the load generator's, and the ratios the target issue asks
for, and the added latency at half the emulator's maximum rate (open model; a probe's p50
through the emulator, and through each embedded target, minus its p50 direct to the null
endpoint). Then, per engine, rate and Query latency
against table size: the sensor workload's table is filled to 10^3 ... 2x10^5 readings
(BatchWriteItem through the emulator), and at each size a short per-sensor run gives its rate
and its query_recent median.

    .venv/bin/python benchmarks/bench_target.py [--seconds 15] [--sizes 1000,10000,100000,200000]
        [--engines moto,dynamodb-local] [--skip-rates | --skip-sizes] [--skip-latency]

Figures move with the machine's load: quote the ratios, measured side by side in one run.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from null_server import null_endpoint

from loadgen.emulator.embedded import EmbeddedEmulator
from loadgen.emulator.engines import LONG_RUN_SECONDS, DynamoConnection, pk_sk_table

ROOT = Path(__file__).resolve().parents[1]
LOADGEN = [sys.executable, "-m", "loadgen"]
TICKS = os.sysconf("SC_CLK_TCK")
ENGINE_NAMES = {"moto": "moto", "dynamodb-local": "DynamoDB Local"}
LONG_DYNAMODB_LOCAL = "dynamodb-local-long"
"""DynamoDB Local as a run of LONG_RUN_SECONDS or more starts it (tiered compiler, long
warm-up), beside it as a shorter run starts it (quick compiler): measured when
``dynamodb-local`` is."""
ENGINE_LABELS = {
    **ENGINE_NAMES,
    "dynamodb-local": "DynamoDB Local (a short run: quick compiler)",
    LONG_DYNAMODB_LOCAL: "DynamoDB Local (a long run: tiered compiler)",
}
ENV = {
    **os.environ,
    "AWS_ACCESS_KEY_ID": "local",
    "AWS_SECRET_ACCESS_KEY": "local",
    "AWS_DEFAULT_REGION": "us-east-1",
}


# --- measuring ----------------------------------------------------------------------------


def tree_cpu(pid: int) -> float:
    """CPU seconds used so far by `pid` and every process below it."""
    children: dict[int, list[int]] = {}
    times: dict[int, float] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rpartition(")")[2].split()
        except OSError:
            continue
        child, parent = int(entry.name), int(fields[1])
        children.setdefault(parent, []).append(child)
        times[child] = (int(fields[11]) + int(fields[12])) / TICKS
    total, stack = 0.0, [pid]
    while stack:
        current = stack.pop()
        total += times.get(current, 0.0)
        stack += children.get(current, [])
    return total


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run_load(
    url: str | None, seconds: float, *extra: str, target_pid: int | None = None
) -> dict[str, Any]:
    """One ``loadgen run`` against `url` (None: its own embedded target); its figures."""
    with tempfile.TemporaryDirectory() as scratch:
        out = Path(scratch, "r.json")
        command = [*LOADGEN, "run", "counter", "--design", "sharded", "--client", "fast"]
        command += ["--duration", f"{seconds:g}s", "--out", str(out), *extra]
        if not any(flag == "--rate" for flag in extra):
            command += ["--users", "20"]
        if url is not None:
            command += ["--endpoint", url]
        cpu_before = children_cpu()
        target_before = tree_cpu(target_pid) if target_pid else 0.0
        finished = subprocess.run(command, cwd=ROOT, env=ENV, capture_output=True, text=True)
        target_cpu = tree_cpu(target_pid) - target_before if target_pid else None
        loadgen_cpu = children_cpu() - cpu_before
        if finished.returncode != 0 or not out.exists():
            raise SystemExit(f"{' '.join(command)} failed:\n{finished.stderr[-2000:]}")
        results = json.loads(out.read_text())
    totals = results["totals"]
    requests = totals["requests"]
    return {
        "rate": requests / results["duration_s"],
        "p50_ms": totals["p50_ms"],
        "requests": requests,
        "loadgen_us": loadgen_cpu / requests * 1e6,
        "loadgen_cpu": loadgen_cpu,
        "target_us": None if target_cpu is None else target_cpu / requests * 1e6,
        "engine": results["run"].get("engine"),
        "delivered": (results.get("load") or {}).get("delivered"),
    }


# --- talking to a target directly ----------------------------------------------------------


SENSOR_TABLE = "ph-sensor"


def fill(connection: DynamoConnection, start: int, stop: int, sensors: int = 1000) -> None:
    """Readings start..stop-1 of the per-sensor design (``SENSOR#<id>``, a timestamp sort key
    from 2020, before the workload's clock), 25 a BatchWriteItem."""
    for first in range(start, stop, 25):
        puts = [
            {
                "PutRequest": {
                    "Item": {
                        "pk": {"S": f"SENSOR#{i % sensors}"},
                        "sk": {"S": f"2020-01-01T00:00:00.{i:09d}"},
                        "value": {"N": str(i % 997)},
                        "unit": {"S": "celsius"},
                    }
                }
            }
            for i in range(first, min(first + 25, stop))
        ]
        pending: dict[str, Any] = {SENSOR_TABLE: puts}
        while pending:
            answer = connection.call("BatchWriteItem", {"RequestItems": pending})
            pending = answer.get("UnprocessedItems") or {}
            if pending:
                time.sleep(0.05)


def sensor_run(url: str, seconds: float) -> dict[str, Any]:
    """A per-sensor run against `url`: its rate and its query_recent median."""
    with tempfile.TemporaryDirectory() as scratch:
        out = Path(scratch, "r.json")
        command = [*LOADGEN, "run", "sensor", "--design", "per-sensor", "--client", "fast"]
        command += ["--users", "20", "--duration", f"{seconds:g}s", "--out", str(out)]
        command += ["--endpoint", url]
        finished = subprocess.run(command, cwd=ROOT, env=ENV, capture_output=True, text=True)
        if finished.returncode != 0 or not out.exists():
            raise SystemExit(f"{' '.join(command)} failed:\n{finished.stderr[-2000:]}")
        results = json.loads(out.read_text())
    queries = [o for o in results["operations"] if o["name"].endswith("query_recent")]
    return {
        "rate": results["totals"]["requests"] / results["duration_s"],
        "query_p50_ms": queries[0]["p50_ms"] if queries else float("nan"),
    }


# --- the report ---------------------------------------------------------------------------


def rates(seconds: float, engines: list[str], *, latency: bool = True) -> None:
    print(f"## Rate of one Locust process (20 users, fast client, counter sharded, {seconds:g} s)")
    print()
    print(
        "| target | requests/s | p50 ms | target CPU us/request | load generator CPU us/request |"
    )
    print("|---|---|---|---|---|")
    figures: dict[str, dict[str, Any]] = {}
    with null_endpoint() as null_url:
        null_pid = _pid_listening(null_url)
        figures["null"] = run_load(null_url, seconds, target_pid=null_pid)
        with EmbeddedEmulator(upstream=null_url, scale=1000.0) as emulator:
            figures["emulator"] = run_load(emulator.endpoint_url, seconds, target_pid=emulator.pid)
            # The load generator's CPU per request without its start and stop: the difference
            # between this run and a shorter one.
            short = run_load(emulator.endpoint_url, seconds / 3, target_pid=emulator.pid)
    measured = list(engines)
    if "dynamodb-local" in engines:
        measured.append(LONG_DYNAMODB_LOCAL)
    for engine in measured:
        # A scale at which nothing throttles: the engine's rate, not the model's. A run as
        # long as LONG_RUN_SECONDS gets the JVM that compiles fully (`engines.jvm_choice`).
        long = engine == LONG_DYNAMODB_LOCAL
        with EmbeddedEmulator(
            engine="dynamodb-local" if long else engine,
            scale=10.0,
            run_seconds=LONG_RUN_SECONDS if long else seconds,
        ) as emulator:
            figures[engine] = run_load(emulator.endpoint_url, seconds, target_pid=emulator.pid)
    labels = {
        "null": "null endpoint (the load generator's ceiling)",
        "emulator": "emulator forwarding to the null endpoint",
        **{engine: f"embedded target, {ENGINE_LABELS[engine]}" for engine in measured},
    }
    for key, label in labels.items():
        f = figures[key]
        target = "-" if f["target_us"] is None else f"{f['target_us']:.0f}"
        print(f"| {label} | {f['rate']:,.0f} | {f['p50_ms']} | {target} | {f['loadgen_us']:.0f} |")
    null = figures["null"]["rate"]
    print()
    print("(load generator CPU includes its start and stop, about 2 s, spread over the run)")
    print()
    for engine in measured:
        print(f"goal 1, embedded ({engine}) / null endpoint: {figures[engine]['rate'] / null:.0%}")
    emulator_us = figures["emulator"]["target_us"]
    long, requests = figures["emulator"], figures["emulator"]["requests"] - short["requests"]
    client_us = (long["loadgen_cpu"] - short["loadgen_cpu"]) / requests * 1e6
    print(
        f"goal 3, emulator CPU / fast client CPU per request: {emulator_us / client_us:.2f}x "
        f"({emulator_us:.0f} us / {client_us:.0f} us, the client's without its start and stop)"
    )
    print()
    if latency:
        half = figures["emulator"]["rate"] / 2
        added_latency(half, seconds, engines)


def added_latency(rate: float, seconds: float, engines: list[str]) -> None:
    """p50 through each target minus p50 direct to the null endpoint, at `rate` offered.

    Locust's percentiles are whole milliseconds; so while the load runs, a probe sends one
    GetItem at a time (every 2 ms) and times each to the microsecond.
    """
    with null_endpoint() as null_url:
        direct = probed(null_url, rate, seconds)
        with EmbeddedEmulator(upstream=null_url, scale=1000.0) as emulator:
            through = {
                "emulator forwarding to the null endpoint": probed(
                    emulator.endpoint_url, rate, seconds
                )
            }
    for engine in engines:
        with EmbeddedEmulator(engine=engine, scale=10.0) as emulator:
            label = f"embedded target, {ENGINE_NAMES[engine]}"
            through[label] = probed(emulator.endpoint_url, rate, seconds)
    print(f"goal 3, added p50 at half the emulator's maximum rate ({rate:,.0f}/s offered):")
    for label, p50 in through.items():
        print(f"- {label}: {p50 - direct:+.2f} ms ({p50:.2f} ms; direct {direct:.2f} ms)")
    print()


def probed(url: str, rate: float, seconds: float) -> float:
    """The probe's p50 in ms while ``loadgen run`` offers `rate` to `url`."""
    box: dict[str, Any] = {}
    load = threading.Thread(
        target=lambda: box.update(run=run_load(url, seconds, "--rate", f"{rate:.0f}"))
    )
    load.start()
    time.sleep(min(4.0, seconds / 3))  # the table is made and the load is under way
    connection = DynamoConnection(url, timeout=30)
    timings = []
    deadline = time.monotonic() + seconds / 2
    while time.monotonic() < deadline:
        started = time.perf_counter()
        connection.call("GetItem", {"TableName": "ph-counter", "Key": {"pk": {"S": "probe"}}})
        timings.append(time.perf_counter() - started)
        time.sleep(0.002)
    connection.close()
    load.join()
    return statistics.median(timings) * 1000


def sizes(sizes: list[int], seconds: float, engines: list[str]) -> None:
    print("## Rate and Query latency against table size (sensor, per-sensor design)")
    print()
    print(
        "| engine | readings in the table | sensor requests/s | query_recent p50 ms "
        "| rate / first size |"
    )
    print("|---|---|---|---|---|")
    for engine in engines:
        # A scale at which nothing throttles: this measures the engine, not the model.
        with EmbeddedEmulator(engine=engine, scale=10.0) as emulator:
            connection = DynamoConnection(emulator.endpoint_url, timeout=60)
            connection.call("CreateTable", pk_sk_table(SENSOR_TABLE))
            filled, first_rate = 0, None
            for size in sizes:
                fill(connection, filled, size)
                filled = size
                run = sensor_run(emulator.endpoint_url, seconds)
                first_rate = first_rate or run["rate"]
                print(
                    f"| {engine} | {size:,} | {run['rate']:,.0f} | {run['query_p50_ms']} | "
                    f"{run['rate'] / first_rate:.0%} |",
                    flush=True,
                )
    print()


def _pid_listening(url: str) -> int | None:
    """The pid of the process listening on `url`'s port (from /proc/net/tcp and fds)."""
    port = urllib.parse.urlsplit(url).port
    inodes = set()
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        parts = line.split()
        if parts[3] == "0A" and int(parts[1].rpartition(":")[2], 16) == port:
            inodes.add(parts[9])
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            for fd in (entry / "fd").iterdir():
                link = os.readlink(fd)
                if link.startswith("socket:[") and link[8:-1] in inodes:
                    return int(entry.name)
        except OSError:
            continue
    return None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=15.0, help="length of each run")
    parser.add_argument(
        "--sizes",
        default="1000,10000,100000,200000",
        help="table sizes to measure at, in items (comma-separated, rising)",
    )
    parser.add_argument("--skip-rates", action="store_true", help="only the table-size part")
    parser.add_argument("--skip-sizes", action="store_true", help="only the rate part")
    parser.add_argument(
        "--skip-latency", action="store_true", help="rates without the added-latency probe"
    )
    parser.add_argument(
        "--engines",
        default=",".join(ENGINE_NAMES),
        help=f"embedded engines to measure (comma-separated; default {','.join(ENGINE_NAMES)})",
    )
    args = parser.parse_args()
    engines = [e for e in args.engines.split(",") if e]
    unknown = [e for e in engines if e not in ENGINE_NAMES]
    if unknown or not engines:
        parser.error(f"--engines takes {', '.join(ENGINE_NAMES)} (got {args.engines!r})")
    print(f"machine: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f}")
    print()
    if not args.skip_rates:
        rates(args.seconds, engines, latency=not args.skip_latency)
    if not args.skip_sizes:
        sizes([int(s) for s in args.sizes.split(",")], args.seconds, engines)


if __name__ == "__main__":
    main()
