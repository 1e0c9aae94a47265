"""Client CPU per request of the generic design user against the hand-written counter workload.

    .venv/bin/python benchmarks/bench_design_user.py [--rate 300] [--seconds 12] [--rounds 3]
        [--client boto3|fast]

One ``loadgen emulator`` (moto inside, scale 1: nothing throttles) on 127.0.0.1 serves both.
Against it, one after the other and ``--rounds`` times over, plain Locust runs at the same
open-model rate (increment 90%, read 10%, sharded design):

- ``counter``: ``workloads/counter.py --design sharded``, the hand-written workload;
- ``design``: ``workloads/design.py --design-file examples/designs/counter.yaml --design
  sharded``, the same access patterns read from the design file.

Each is run twice, for ``--seconds`` and for 3 s; the client's CPU per request is the
difference of the two runs' CPU (user + system, the Locust process alone, from the OS) over
the difference of their requests, so start-up and the table's creation cancel out. Printed:
per variant the median over rounds, and the ratio design/counter (the goal: within 1.10).
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
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SHORT_S = 3


def start_emulator() -> tuple[subprocess.Popen[str], str]:
    process = subprocess.Popen(
        [sys.executable, "-m", "loadgen", "emulator", "--port", "0", "--engine", "moto",
         "--scale", "1"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        cwd=ROOT,
    )  # fmt: skip
    assert process.stdout is not None
    url = process.stdout.readline().strip().split()[-1]
    return process, url


def run(
    variant: str, url: str, rate: float, seconds: int, client: str, n: int
) -> tuple[float, int]:
    """(CPU seconds, requests) of one Locust process running ``variant``."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "results.json"
        command = [
            sys.executable, "-m", "locust", "--headless", "-u", "1", "-t", f"{seconds}s",
            "-H", url, "--rates", f"increment={rate * 0.9},read={rate * 0.1}",
            "--design", "sharded", "--results-file", str(out), "--client", client,
            "--only-summary", "--loglevel", "ERROR",
        ]  # fmt: skip
        if variant == "counter":
            command += ["-f", "workloads/counter.py"]
        else:
            command += [
                "-f",
                "workloads/design.py",
                "--design-file",
                "examples/designs/counter.yaml",
            ]
        # A table of its own per run: the runs do not share items.
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        subprocess.run(
            command, cwd=ROOT, check=True, capture_output=True, env={**os.environ, "PH_RUN": str(n)}
        )
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        requests = json.loads(out.read_text())["totals"]["requests"]
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return cpu, int(requests)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rate", type=float, default=300.0, help="operations/s (default 300)")
    parser.add_argument("--seconds", type=int, default=12, help="the long run (default 12)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--client", default="boto3", choices=("boto3", "fast"))
    args = parser.parse_args()
    if args.seconds <= SHORT_S or args.rate <= 0 or args.rounds < 1:
        parser.error(f"--seconds must be more than {SHORT_S}, --rate and --rounds positive")
    emulator, url = start_emulator()
    figures: dict[str, list[float]] = {"counter": [], "design": []}
    try:
        n = 0
        for _ in range(args.rounds):
            for variant in figures:
                n += 1
                long_cpu, long_requests = run(variant, url, args.rate, args.seconds, args.client, n)
                short_cpu, short_requests = run(variant, url, args.rate, SHORT_S, args.client, n)
                per = (long_cpu - short_cpu) / max(1, long_requests - short_requests)
                figures[variant].append(per * 1e6)
                print(
                    f"{variant:<8} {long_requests - short_requests:>6} requests  "
                    f"{per * 1e6:7.0f} us CPU/request",
                    flush=True,
                )
    finally:
        emulator.terminate()
        emulator.wait(timeout=10)
    counter = statistics.median(figures["counter"])
    design = statistics.median(figures["design"])
    print()
    print(f"client {args.client}, {args.rate:g} operations/s, {args.rounds} rounds (medians):")
    print(f"  counter workload  {counter:7.0f} us CPU/request")
    print(f"  design user       {design:7.0f} us CPU/request")
    print(f"  design / counter  {design / counter:7.2f}  (goal: at most 1.10)")


if __name__ == "__main__":
    main()
