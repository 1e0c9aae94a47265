"""Cost of the web UI's live view on the Locust process that serves it, by run length.

The view (`loadgen.webui.view.heat_view`) is built from the results of the run so far:
the heat matrix of every lane (`HeatMap.matrix`), the top keys, the diagnosis. It runs on
the Locust process's gevent loop (the master's in distributed mode), at most once a second
however many pages poll, so its time is time that loop does not serve anything else. This
measures, for runs of 60 s to 900 s (the timeline's width before columns double) of an
orders-like shape (a table read and written, two GSIs written; 256 buckets; 200 key touches
a second spread over 5,000 keys with one hot GSI key):

- ``matrix``: the heat matrix of the results (what ``results_of`` spends on the heat);
- ``view``: the whole view (all tables, the four heat fields at 64 rows, the diagnosis),
  built once per refresh, whose parts the other queries of that refresh share;
- ``page``: one table's grid of one field, what the heatmap page asks when the colour or
  the table is changed between refreshes;
- the JSON sizes of the whole view and of one table and field (what the heatmap page polls).

    .venv/bin/python benchmarks/bench_webui.py [--seconds 60,300,900] [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import random
import time
from collections.abc import Callable
from typing import Any

from loadgen.heat.heatmap import HeatConfig, HeatMap
from loadgen.webui.view import heat_view

T0 = 1_800_000_000


def heat_of(seconds: int, per_second: int = 200, keys: int = 5_000) -> HeatMap:
    rng = random.Random(1)
    heat = HeatMap(HeatConfig(buckets=256, capacity_source="reported"))
    for second in range(seconds):
        for _ in range(per_second):
            key = f"ORDER#{rng.randrange(keys)}"
            write = rng.random() < 0.6
            context = {
                "table": "orders",
                "partition_keys": [key],
                "throttled_attempts": 1 if write and rng.random() < 0.1 else 0,
                "consumed_capacity": {"TableName": "orders", "CapacityUnits": 1.0},
                "index_keys": {"status": ["STATUS#PLACED"], "user": [f"USER#{rng.randrange(500)}"]}
                if write
                else {},
            }
            heat.record("PutItem" if write else "GetItem", context, {}, start_time=T0 + second)
    return heat


def results_of(heat: HeatMap, seconds: int) -> dict[str, Any]:
    row = {
        "operation": "PutItem", "name": "orders.create", "requests": 1, "failures": 0,
        "requests_per_s": 1.0, "avg_ms": 1, "max_ms": 1, "throttled_attempts": 0,
        "retries": 0, "unprocessed_items": 0, "errors": {}, "p50_ms": 1, "p95_ms": 1,
        "p99_ms": 1,
    }  # fmt: skip
    return {
        "schema_version": 1,
        "run": dict(
            workload="bench",
            design="d",
            distribution="uniform",
            keys=5000,
            seed=1,
            target="bench",
            scale=0.1,
        ),
        "duration_s": float(seconds),
        "operations": [row],
        "totals": {**row, "operation": "", "name": "Aggregated"},
        "hot_keys": [],
        "top_keys": heat.top_keys_dict(),
        "heat": heat.matrix(),
    }


def best_ms(action: Callable[[], Any], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        action()
        times.append(time.perf_counter() - start)
    return min(times) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", default="60,300,900")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    print(f"{'run':>6} {'lanes':>5} {'matrix ms':>10} {'view ms':>8} {'page ms':>7} "
          f"{'view JSON':>10} {'one field JSON':>15}")  # fmt: skip
    for seconds in (int(s) for s in args.seconds.split(",")):
        heat = heat_of(seconds)
        results = results_of(heat, seconds)
        matrix = best_ms(heat.matrix, args.repeat)
        view = best_ms(lambda: heat_view(results), args.repeat)  # noqa: B023
        memo: dict[object, object] = {}
        heat_view(results, memo=memo)
        page = best_ms(
            lambda: heat_view(results, scope="orders/status", fields=("read_units",), memo=memo),  # noqa: B023
            args.repeat,
        )
        whole = len(json.dumps(heat_view(results)))
        one = len(json.dumps(heat_view(results, scope="orders/status", fields=("requests",))))
        print(
            f"{seconds:>5}s {len(heat.lanes):>5} {matrix:>10.0f} {view:>8.0f} {page:>7.0f} "
            f"{whole / 1e6:>8.2f}MB {one / 1e3:>13.0f}kB"
        )


if __name__ == "__main__":
    main()
