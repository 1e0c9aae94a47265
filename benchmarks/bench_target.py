"""What the local targets carry, against the load generator's own ceiling, side by side.

One Locust process (``loadgen run counter --design sharded --client fast --users 20``) is
pointed in turn at:

- a null endpoint answering at once: the load generator's ceiling. Debian's ``nginx``
  (``apt-get install nginx``; nothing else is downloaded) where it is installed, from a
  generated config, one unprivileged process on a free 127.0.0.1 port
  (``benchmarks/null_server.py``); else, or with ``--null aiohttp``, an aiohttp server;
- the emulator forwarding to that null endpoint: what the emulator itself costs;
- the embedded target with each engine (``--engine moto`` and ``--engine dynamodb-local``),
  at a scale where nothing throttles.

Each target but the null endpoint is run twice. Cold: a fresh target started by the run
itself, as a user's run starts it (no ``--endpoint``), so its first seconds (a JVM still
compiling) are in the run's own seconds. Warmed: a target the benchmark started, after one
untimed run of the same length. For each it prints requests/s, its share of the null
endpoint's in the same round, the cold run's rate in its first and second half, and the CPU
per request of each process (load generator, emulator, engine, null endpoint; read from
/proc between the run's ``Target:`` line and its summary). ``--repeat`` runs the rounds again
and prints the medians. Then the added latency at half the emulator's maximum rate (open
model; a probe's p50 through the emulator, and through each embedded target, minus its p50
direct to the null endpoint). Then, per engine, rate and Query latency against table size:
the sensor workload's table is filled to 10^3 ... 2x10^5 readings (BatchWriteItem through
the emulator), and at each size a short per-sensor run gives its rate and its query_recent
median.

    .venv/bin/python benchmarks/bench_target.py [--seconds 15] [--sizes 1000,10000,100000,200000]
        [--engines moto,dynamodb-local] [--null nginx|aiohttp] [--repeat 3]
        [--skip-rates | --skip-sizes] [--skip-latency]

Figures move with the machine's load: quote the ratios, measured side by side in one round.
"""

from __future__ import annotations

import argparse
import json
import os
import pstats
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
from collections.abc import Sequence
from pathlib import Path
from typing import Any, cast

sys.path.insert(0, str(Path(__file__).resolve().parent))
from null_server import NULL_KINDS, default_kind, null_endpoint

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


PROGRESS = re.compile(r"\[\s*(\d+)s\]\s+users\s+\d+\s+requests\s+(\d+)")
"""A run's progress line: seconds into the load, requests so far."""
ROLES = ("load generator", "emulator", "engine", "null endpoint")
"""What each process of a run is, by its command line (`role_of`)."""


def _processes() -> tuple[dict[int, list[int]], dict[int, float]]:
    """Every process's children, and the CPU seconds each has used so far (from /proc)."""
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
    return children, times


def _tree(roots: list[int], children: dict[int, list[int]]) -> list[int]:
    found, stack = [], list(roots)
    while stack:
        current = stack.pop()
        found.append(current)
        stack += children.get(current, [])
    return found


def tree_cpu(pid: int) -> float:
    """CPU seconds used so far by `pid` and every process below it."""
    children, times = _processes()
    return sum(times.get(p, 0.0) for p in _tree([pid], children))


def role_of(pid: int) -> str:
    """One of `ROLES` by the process's command line; ``other`` for anything else."""
    try:
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return "other"
    words = [a.decode(errors="replace") for a in argv if a]
    if words and Path(words[0]).name.startswith("java"):
        return "engine"
    if "loadgen.emulator" in words:
        return "emulator"
    if words and (
        Path(words[0]).name == "nginx" or any(w.endswith("null_server.py") for w in words)
    ):
        return "null endpoint"
    if words[1:3] == ["-m", "loadgen"]:
        return "load generator"
    return "other"


def cpu_by_role(roots: list[int]) -> dict[str, float]:
    """CPU seconds used so far by the processes at and below ``roots``, by `role_of`."""
    children, times = _processes()
    used: dict[str, float] = {}
    for pid in _tree(roots, children):
        role = role_of(pid)
        used[role] = used.get(role, 0.0) + times.get(pid, 0.0)
    return used


def run_load(
    url: str | None,
    seconds: float,
    *extra: str,
    target_pid: int | None = None,
    watch: Sequence[int] = (),
) -> dict[str, Any]:
    """One ``loadgen run`` against `url` (None: its own embedded target, started by the run
    as a user's is); its figures.

    CPU is read from /proc for the run's processes and ``target_pid``'s, by role, between the
    run's ``Target:`` line (its target is up) and its summary (the load has stopped): the
    run's table check and its users' start and stop are in it, the processes' own start
    and the engine's warm-up are not.
    """
    with tempfile.TemporaryDirectory() as scratch:
        out = Path(scratch, "r.json")
        command = [*LOADGEN, "run", "counter", "--design", "sharded", "--client", "fast"]
        command += ["--duration", f"{seconds:g}s", "--out", str(out), *extra]
        if not any(flag == "--rate" for flag in extra):
            command += ["--users", "20"]
        if url is not None:
            command += ["--endpoint", url]
        started = time.monotonic()
        process = subprocess.Popen(
            command, cwd=ROOT, env=ENV, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
        )
        # Bounded: the target's start (DynamoDB Local: up to 2 minutes), the run, its report.
        watchdog = threading.Timer(seconds + 300, process.kill)
        watchdog.start()
        roots = [process.pid, *([target_pid] if target_pid else []), *watch]
        before: dict[str, float] = {}
        after: dict[str, float] = {}
        startup, progress, lines = None, [], []
        assert process.stdout is not None
        for line in process.stdout:
            lines.append(line)
            if startup is None and line.startswith("Target:"):
                before, startup = cpu_by_role(roots), time.monotonic() - started
            elif not after and line.startswith("Workload "):
                after = cpu_by_role(roots)
            elif (match := PROGRESS.search(line)) is not None:
                progress.append((int(match[1]), int(match[2])))
        process.wait()
        watchdog.cancel()
        if process.returncode != 0 or not out.exists() or not after:
            tail = "".join(lines)[-2000:]
            raise SystemExit(f"{' '.join(command)} failed ({process.returncode}):\n{tail}")
        results = json.loads(out.read_text())
    totals = results["totals"]
    requests = totals["requests"]
    us = {role: (after.get(role, 0.0) - before.get(role, 0.0)) / requests * 1e6 for role in ROLES}
    target_roles = ("emulator", "engine", "null endpoint")
    return {
        "rate": requests / results["duration_s"],
        "halves": halves(progress),
        "p50_ms": totals["p50_ms"],
        "requests": requests,
        "startup_s": startup,
        "us": us,
        "loadgen_us": us["load generator"],
        "target_us": sum(us[role] for role in target_roles) if after else None,
        "engine": results["run"].get("engine"),
        "delivered": (results.get("load") or {}).get("delivered"),
    }


def halves(progress: list[tuple[int, int]]) -> tuple[float, float] | None:
    """Requests/s in a run's first and second half, from its progress lines (every 2 s)."""
    if len(progress) < 4:
        return None
    middle_s, middle = progress[len(progress) // 2]
    end_s, end = progress[-1]
    return middle / middle_s, (end - middle) / (end_s - middle_s)


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


def rates(
    seconds: float, engines: list[str], *, null: str, repeat: int, latency: bool = True
) -> None:
    print(
        f"## Rate of one Locust process (20 users, fast client, counter sharded, {seconds:g} s), "
        f"against the {null} null endpoint"
    )
    print()
    print(
        "Cold: a fresh target for each run, started by `loadgen run` itself as a user's is (no "
        "--endpoint), its first seconds in the run. Warmed: a target the benchmark started, "
        "after one untimed run of the same length. CPU per request by process (load generator"
        " / emulator / engine / null endpoint), from /proc."
    )
    rounds = []
    for number in range(1, repeat + 1):
        print()
        print(f"### Round {number} of {repeat} (load average {os.getloadavg()[0]:.1f})")
        print()
        print(
            "| target | cold requests/s | of null | cold first / second half | warmed requests/s "
            "| of null | cold CPU us/request | warmed CPU us/request |"
        )
        print("|---|---|---|---|---|---|---|---|")
        rounds.append(one_round(seconds, engines, null))
        print(f"(load average after the round {os.getloadavg()[0]:.1f})")
    figures = rounds[-1]
    print()
    print(
        f"### Medians of {repeat} rounds: each target's rate over the null endpoint's, same round"
    )
    print()
    print("| target | cold | warmed | cold requests/s | warmed requests/s |")
    print("|---|---|---|---|---|")
    for key in figures:
        cells = []
        for kind in ("cold", "warmed"):
            ratios = [
                r[key][kind]["rate"] / r["null"]["cold"]["rate"] for r in rounds if r[key][kind]
            ]
            cells.append(f"{statistics.median(ratios):.2f}" if ratios else "-")
        for kind in ("cold", "warmed"):
            rates_ = [r[key][kind]["rate"] for r in rounds if r[key][kind]]
            cells.append(f"{statistics.median(rates_):,.0f}" if rates_ else "-")
        print(f"| {LABELS.get(key, key)} | {' | '.join(cells)} |")
    print()
    emulator = figures["emulator"]["warmed"]
    emulator_us, client_us = emulator["us"]["emulator"], emulator["us"]["load generator"]
    print(
        f"emulator CPU / fast client CPU per request (warmed, last round): "
        f"{emulator_us / client_us:.2f}x ({emulator_us:.0f} us / {client_us:.0f} us)"
    )
    print()
    if latency:
        added_latency(emulator["rate"] / 2, seconds, engines, null)


LABELS = {
    "null": "null endpoint (the load generator's ceiling)",
    "emulator": "emulator forwarding to the null endpoint",
    **{engine: f"embedded target, {label}" for engine, label in ENGINE_LABELS.items()},
}


def one_round(seconds: float, engines: list[str], null: str) -> dict[str, dict[str, Any]]:
    """Each target's cold and warmed run (`rates`), a row printed as each is measured."""
    figures: dict[str, dict[str, Any]] = {}
    with null_endpoint(null) as null_url:
        null_pid = _pid_listening(null_url)
        figures["null"] = {"cold": run_load(null_url, seconds, target_pid=null_pid), "warmed": None}
        _row("null", figures)
        emulate = ("--emulate", "--scale", "1000")
        forwarding = run_load(null_url, seconds, *emulate, target_pid=null_pid)
        with EmbeddedEmulator(upstream=null_url, scale=1000.0) as emulator:
            watched = [emulator.pid, null_pid]
            figures["emulator"] = {
                "cold": forwarding,
                "warmed": warmed(emulator, seconds, watched),
            }
        _row("emulator", figures)
    for engine in engines:
        # A scale at which nothing throttles: the engine's rate, not the model's. A run as
        # long as LONG_RUN_SECONDS gets the JVM that compiles fully (`engines.jvm_choice`);
        # a cold run as short as these never does.
        long = engine == LONG_DYNAMODB_LOCAL
        named = "dynamodb-local" if long else engine
        cold = None if long else run_load(None, seconds, "--engine", named, "--scale", "10")
        with EmbeddedEmulator(
            engine=named, scale=10.0, run_seconds=LONG_RUN_SECONDS if long else seconds
        ) as emulator:
            figures[engine] = {"cold": cold, "warmed": warmed(emulator, seconds, [emulator.pid])}
        _row(engine, figures)
    return figures


def warmed(emulator: EmbeddedEmulator, seconds: float, watched: list[int | None]) -> dict[str, Any]:
    """A run against `emulator` after one untimed run of the same length."""
    reported = ("--consumed-capacity", "reported")  # as the run that starts its own target
    pids = [pid for pid in watched if pid is not None]
    run_load(emulator.endpoint_url, seconds, *reported, target_pid=pids[0])
    return run_load(emulator.endpoint_url, seconds, *reported, target_pid=pids[0], watch=pids[1:])


def _row(key: str, figures: dict[str, dict[str, Any]]) -> None:
    null = figures["null"]["cold"]["rate"]
    cells = []
    for kind in ("cold", "warmed"):
        f = figures[key][kind]
        if f is None:
            cells.append("- | -" + (" | -" if kind == "cold" else ""))
            continue
        cells.append(f"{f['rate']:,.0f} | {f['rate'] / null:.2f}")
        if kind == "cold":
            halves = f["halves"]
            cells[-1] += " | " + ("-" if halves is None else f"{halves[0]:,.0f} / {halves[1]:,.0f}")
    cpu = [_cpu(figures[key][kind]) for kind in ("cold", "warmed")]
    print(f"| {LABELS[key]} | {' | '.join(cells)} | {' | '.join(cpu)} |", flush=True)


def _cpu(f: dict[str, Any] | None) -> str:
    """CPU us per request by role: load generator / emulator / engine / null endpoint."""
    if f is None:
        return "-"
    return " / ".join(f"{f['us'][role]:.0f}" for role in ROLES)


def added_latency(rate: float, seconds: float, engines: list[str], null: str) -> None:
    """p50 through each target minus p50 direct to the null endpoint, at `rate` offered.

    Locust's percentiles are whole milliseconds; so while the load runs, a probe sends one
    GetItem at a time (every 2 ms) and times each to the microsecond.
    """
    with null_endpoint(null) as null_url:
        direct = probed(null_url, rate, seconds)
        with EmbeddedEmulator(upstream=null_url, scale=1000.0) as emulator:
            through = {
                "emulator forwarding to the null endpoint": probed(
                    emulator.endpoint_url, rate, seconds
                )
            }
    for engine in [e for e in engines if e in ENGINE_NAMES]:
        with EmbeddedEmulator(engine=engine, scale=10.0) as emulator:
            label = f"embedded target, {ENGINE_NAMES[engine]}"
            through[label] = probed(emulator.endpoint_url, rate, seconds)
    print(f"added p50 at half the emulator's maximum rate ({rate:,.0f}/s offered):")
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


PROFILED = Path(__file__).resolve().parent / "profiled_emulator.py"
PATH_PARTS = {
    "reading HTTP (httptools' parser, headers)": ("listener.py", "data_received"),
    "request JSON parsed": ("wire.py", "loads_request"),
    "validation (DynamoDB's answers to malformed requests)": ("validation.py", "validate"),
    "pricing the request (item sizes, the write shadow)": ("pricing.py", "estimate"),
    "partition model: admit": ("partitions.py", "admit"),
    "the engine: sent and answered (moto itself, or the upstream connection)": (
        "server.py",
        "_send",
    ),
    "answer JSON parsed": ("wire.py", "loads_answer"),
    "pricing the answer, the shadow and the model settled": ("server.py", "_settle"),
    "ConsumedCapacity added, answer written": ("server.py", "_with_capacity"),
}
"""The emulator's request path in parts, each by the function that does it (disjoint)."""


class _ProfiledEmulator(EmbeddedEmulator):
    """The embedded emulator run by `profiled_emulator.py`, under cProfile on CPU time."""

    def _command(self, port: int, workdir: Path) -> list[str]:
        command = super()._command(port, workdir)
        return [command[0], str(PROFILED), *command[3:]]


def profile(seconds: float, engine: str) -> None:
    """Where the emulator's CPU goes in a warmed run with `engine` behind it."""
    with tempfile.TemporaryDirectory() as scratch:
        out = Path(scratch, "emulator.prof")
        os.environ["PROFILE_OUT"] = str(out)  # the child inherits it
        with _ProfiledEmulator(engine=engine, scale=10.0, run_seconds=seconds) as emulator:
            assert emulator.pid is not None
            reported = ("--consumed-capacity", "reported")
            run_load(emulator.endpoint_url, seconds, *reported, target_pid=emulator.pid)
            os.kill(emulator.pid, signal.SIGUSR1)
            run = run_load(emulator.endpoint_url, seconds, *reported, target_pid=emulator.pid)
            os.kill(emulator.pid, signal.SIGUSR2)
            deadline = time.monotonic() + 30
            while not out.exists() and time.monotonic() < deadline:
                time.sleep(0.1)
            time.sleep(1)  # written whole
        # (file, line, function) -> (calls, primitive calls, own time, cumulative, callers)
        stats: dict[tuple[str, int, str], Any] = cast(Any, pstats.Stats(str(out))).stats
    total = sum(row[2] for row in stats.values())  # every function's own time
    print(f"## Where the emulator's CPU goes ({ENGINE_NAMES[engine]} behind it, warmed)")
    print()
    print(
        f"cProfile on CPU time over a {seconds:g} s run ({run['requests']:,} requests, "
        f"{run['rate']:,.0f}/s under the profiler; load average {os.getloadavg()[0]:.1f}):"
    )
    print()
    print("| part of the request path | share of the emulator's CPU |")
    print("|---|---|")
    shown = 0.0
    for label, (filename, function) in PATH_PARTS.items():
        cumulative = sum(
            row[3]
            for (name, _line, called), row in stats.items()
            if name.endswith(filename) and called == function
        )
        shown += cumulative
        print(f"| {label} | {cumulative / total:.0%} |")
    print(
        f"| the rest (the event loop, tasks, the listener's answering) | {1 - shown / total:.0%} |"
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
        help=f"embedded engines to measure (comma-separated: {', '.join(ENGINE_LABELS)}; "
        f"default {','.join(ENGINE_NAMES)}; {LONG_DYNAMODB_LOCAL} only in the rate part)",
    )
    parser.add_argument(
        "--null",
        choices=NULL_KINDS,
        default=default_kind(),
        help="the null endpoint: nginx (Debian's package, the default where it is installed) "
        "or aiohttp",
    )
    parser.add_argument(
        "--profile",
        metavar="ENGINE",
        choices=ENGINE_NAMES,
        help="only where the emulator's CPU goes, with this engine behind it (cProfile)",
    )
    parser.add_argument(
        "--repeat", type=int, default=1, help="rounds of the rate part (medians printed)"
    )
    args = parser.parse_args()
    engines = [e for e in args.engines.split(",") if e]
    unknown = [e for e in engines if e not in ENGINE_LABELS]
    if unknown or not engines:
        parser.error(f"--engines takes {', '.join(ENGINE_LABELS)} (got {args.engines!r})")
    if args.repeat < 1:
        parser.error(f"--repeat takes a whole number of 1 or more (got {args.repeat})")
    print(f"machine: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f}")
    print()
    if args.profile:
        profile(args.seconds, args.profile)
        return
    if not args.skip_rates:
        rates(
            args.seconds, engines, null=args.null, repeat=args.repeat, latency=not args.skip_latency
        )
    if not args.skip_sizes:
        sized = [e for e in engines if e in ENGINE_NAMES]
        sizes([int(s) for s in args.sizes.split(",")], args.seconds, sized)


if __name__ == "__main__":
    main()
