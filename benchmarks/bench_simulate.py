"""Simulated requests per wall and CPU second of ``loadgen simulate``, by number of keys.

    .venv/bin/python benchmarks/bench_simulate.py [--hours 1] [--rate 100000] \
        [--keys 1000,100000,1000000]

For each key count, in a fresh process of its own (so its peak memory is its own): a design
of one on-demand table keyed ``USER#{user}`` over that many users (zipf:0.99), read by a
GetItem (80% of executions) and written by an UpdateItem (20%), simulated for ``--hours`` at
``--rate`` executions per second, retries included in the requests counted. Printed per key
count: the setup (key profiles: every key's probability and hash), the whole simulation's
wall and CPU seconds, simulated requests per wall and per CPU second, and the process's peak
resident memory. The issue's target: one hour of 100,000 requests/s in under 60 s on one core,
memory growing with keys, not requests. Absolute figures move with the machine's load; the
CPU seconds move less than the wall seconds on a shared machine.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def design(keys: int) -> dict[str, object]:
    return {
        "name": f"bench-{keys}",
        "tables": [
            {
                "TableName": "users",
                "BillingMode": "PAY_PER_REQUEST",
                "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}],
                "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
            }
        ],
        "generators": {"user": {"count": keys, "distribution": "zipf:0.99"}},
        "entities": {"user": {"item": {"pk": "USER#{user}", "profile": {"size": 300}}}},
        "access_patterns": [
            {"id": "get-user", "operation": "GetItem", "key": {"pk": "USER#{user}"}, "rate": 80},
            {
                "id": "count-visit",
                "operation": "UpdateItem",
                "key": {"pk": "USER#{user}"},
                "add": {"visits": 1},
                "rate": 20,
            },
        ],
    }


def one(keys: int, hours: float, rate: float) -> dict[str, float]:
    from loadgen.design.loader import load_design
    from loadgen.simulate import constant, simulate
    from loadgen.simulate.demand import pattern_demands

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "bench.yaml"
        path.write_text(yaml.safe_dump(design(keys)))
        loaded = load_design(str(path))
    started = time.perf_counter()
    for demand in pattern_demands(loaded, loaded.generators()):
        for lane in demand.lanes:
            demand.profile(lane)
    setup_s = time.perf_counter() - started
    wall, cpu = time.perf_counter(), time.process_time()
    result = simulate(loaded, constant(rate, hours * 3600))
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    peak_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return {
        "keys": keys,
        "requests": result.requests,
        "setup_s": setup_s,
        "wall_s": wall,
        "cpu_s": cpu,
        "peak_mb": peak_kb / 1024,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hours", type=float, default=1.0)
    parser.add_argument("--rate", type=float, default=100_000.0)
    parser.add_argument("--keys", default="1000,100000,1000000")
    parser.add_argument("--one", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one is not None:
        print(json.dumps(one(args.one, args.hours, args.rate)))
        return
    print(
        f"{args.hours:g} h at {args.rate:,.0f} executions/s, one process per key count\n"
        f"{'keys':>10} {'requests':>14} {'setup s':>8} {'wall s':>8} {'cpu s':>8} "
        f"{'req/wall s':>14} {'req/cpu s':>14} {'peak MB':>8}"
    )
    for keys in (int(k) for k in args.keys.split(",")):
        out = subprocess.run(
            [sys.executable, __file__, "--one", str(keys), "--hours", str(args.hours),
             "--rate", str(args.rate)],
            capture_output=True, text=True, check=True, cwd=ROOT,
        ).stdout  # fmt: skip
        row = json.loads(out.strip().splitlines()[-1])
        print(
            f"{row['keys']:>10,} {row['requests']:>14,.0f} {row['setup_s']:>8.1f} "
            f"{row['wall_s']:>8.1f} {row['cpu_s']:>8.1f} "
            f"{row['requests'] / row['wall_s']:>14,.0f} {row['requests'] / row['cpu_s']:>14,.0f} "
            f"{row['peak_mb']:>8.0f}",
            flush=True,
        )


if __name__ == "__main__":
    main()
