"""Whether a run's verdict holds across scales: each shipped design at its launch traffic.

For each workload (counter, sensor, orders), its bad and its good design, at its launch
traffic (``examples/launch/<workload>.yaml``) and at three scales (0.1, 0.03 and 0.01; orders
0.2, 0.1 and 0.06, see below), ``--repeats`` short ``loadgen run``s against a fresh embedded
target each give these figures:

- **throttled share, target**: throttled attempts over attempts, as the partition model
  answered them (``target_answers`` of the results file). The one judged: every attempt
  counts, those of calls the run's end cut off included.
- throttled share, calls done: the same over the calls that ended within the run, as
  Locust reports them (``totals``). In an overloaded run a third to two thirds of the calls
  are still retrying at the end, and they are the most throttled: a biased sample, shown
  beside the judged figure.
- first-attempt share: calls done whose first attempt was throttled, over calls done: the
  offered load against the ceiling before the SDK retries (biased as above).
- hottest key: the hottest key's share of its table's requests (judged).

A cell is the median of the repeats, with their range. A scale whose repeats do not agree
among themselves (range over 10% of the median and over one point) is *unsteady*: the machine
did not serve it alike twice, or the figure is a draw of too few requests. It is shown and
left out. The figures of one design agree when every steady scale's median is within 10% of
the largest (within one percentage point, where shares are that small); where they do not,
"within noise" says that the medians' spread is within the repeats' own.

A scale at which the workload's largest request takes more than a tenth of one partition's
scaled second (`LARGEST_PARTITION_UNITS`) is outside what a scaled run models: a partition
admits a request while its bucket is not empty and takes it whole, so a second may carry its
ceiling plus one request; beyond a tenth that is more than the 10% the figures are held to.
Such a scale is run and shown, marked "outside", and left out of the agreement. Orders'
largest request (6 units) is outside below 0.06, so its own scales are 0.2, 0.1 and 0.06.

    .venv/bin/python benchmarks/bench_scale_agreement.py [--seconds 12] [--repeats 3]
        [--scales 0.1,0.03,0.01] [--workloads counter,sensor,orders] [--engine auto]

A scaled run offers the launch rate times the scale, so its figures come from fewer requests:
at 0.01 a counter run of 12 s sends about 200.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
DESIGNS = {
    "counter": ("single", "sharded"),
    "sensor": ("by-time", "per-sensor"),
    "orders": ("hot-status", "sharded-status"),
}
"""Each workload's bad design, then its good one (docs/workloads.md)."""
LARGEST_PARTITION_UNITS = {"counter": 1.0, "sensor": 1.0, "orders": 6.0}
"""Write units the workload's largest request takes on one partition, at AWS scale: a small
item's UpdateItem or PutItem; an order's TransactWriteItems puts up to 3 line items (small,
transactional: 2 units each) under one ``ORDER#`` partition key."""
PARTITION_WRITE_UNITS = 1000.0
OUTSIDE = 0.1
SCALES = {"counter": (0.1, 0.03, 0.01), "sensor": (0.1, 0.03, 0.01), "orders": (0.2, 0.1, 0.06)}
"""Each workload's scales: orders' largest request is outside below 0.06."""
"""Largest request over a partition's scaled second beyond which a scale is not modelled."""
ENV = {
    **os.environ,
    "AWS_ACCESS_KEY_ID": "local",
    "AWS_SECRET_ACCESS_KEY": "local",
    "AWS_DEFAULT_REGION": "us-east-1",
}


def measure(
    workload: str, design: str, scale: float, seconds: float, engine: str
) -> dict[str, Any]:
    """One run's throttled share, hottest-key share and whether its load was delivered."""
    with tempfile.TemporaryDirectory() as scratch:
        out = Path(scratch, "r.json")
        command = [sys.executable, "-m", "loadgen", "run", workload, "--design", design]
        command += ["--config", str(ROOT / "examples" / "launch" / f"{workload}.yaml")]
        command += ["--scale", str(scale), "--duration", f"{seconds:g}s", "--engine", engine]
        # The in-flight bound is a count, not scaled: at 0.1 an overloaded design's calls
        # retrying would fill 1,000 and drop arrivals that 0.01 would launch.
        command += ["--max-in-flight", "100000", "--out", str(out)]
        done = subprocess.run(command, cwd=ROOT, env=ENV, capture_output=True, text=True)
        if done.returncode not in (0, 1) or not out.exists():  # 1: the load was not delivered
            raise SystemExit(f"{' '.join(command)} failed:\n{done.stderr[-2000:]}")
        results = json.loads(out.read_text())
    totals = results["totals"]
    attempts = totals["requests"] + totals["retries"]
    hot = results["hot_keys"]
    load = results.get("load") or {}
    calls = totals["requests"]
    answers = results.get("target_answers") or {}
    answered = answers.get("forwarded", 0) + answers.get("throttled", 0)
    return {
        "target": answers.get("throttled", 0) / answered if answered else 0.0,
        "throttled": totals["throttled_attempts"] / attempts if attempts else 0.0,
        "first": totals.get("throttled_first_attempts", 0) / calls if calls else 0.0,
        "hottest": hot[0]["share"] if hot else 0.0,
        "requests": calls,
        "cut_off": load.get("offered", 0) - load.get("achieved", 0) - load.get("dropped", 0),
        "dropped": load.get("dropped", 0),
        "delivered": load.get("delivered"),
    }


def outside(workload: str, scale: float) -> bool:
    """Whether the workload's largest request overfills a partition's second at ``scale``."""
    return LARGEST_PARTITION_UNITS[workload] > OUTSIDE * PARTITION_WRITE_UNITS * scale


def _close(values: list[float], reference: float) -> bool:
    """Within 10% of ``reference``, or within one percentage point."""
    spread = max(values) - min(values)
    return spread <= 0.10 * reference or spread <= 0.01


def agree(values: list[float]) -> bool:
    """Within 10% of the largest, or within one percentage point."""
    return _close(values, max(values))


def steady(values: list[float]) -> bool:
    """Whether a scale's repeats agree among themselves (a range within 10% of the median)."""
    return _close(values, statistics.median(values))


def verdict(cells: list[list[float]], modelled: list[bool]) -> str:
    """Whether the modelled scales' medians agree; "within noise" when they do not but their
    spread is no more than the widest range of one scale's own repeats."""
    judged = [c for c, inside in zip(cells, modelled, strict=True) if inside]
    if len(judged) < 2:
        return "-"  # nothing to agree with: one scale modelled at most
    medians = [statistics.median(c) for c in judged]
    if agree(medians):
        return "yes"
    noise = max(max(c) - min(c) for c in judged)
    return "within noise" if max(medians) - min(medians) <= noise else "no"


def cell(values: list[float], inside: bool) -> str:
    text = f"{statistics.median(values):.1%}"
    if len(values) > 1:
        text += f" ({min(values):.1%}-{max(values):.1%})"
    if not inside:
        return text + " outside"
    return text if steady(values) else text + " unsteady"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=12.0, help="length of each run")
    parser.add_argument("--repeats", type=int, default=3, help="runs per design and scale")
    parser.add_argument(
        "--scales", help="scales, comma-separated (default: each workload's, SCALES)"
    )
    parser.add_argument("--workloads", default=",".join(DESIGNS), help="comma-separated")
    parser.add_argument("--engine", default="auto", help="embedded engine (default auto)")
    args = parser.parse_args()
    try:
        chosen = [float(s) for s in args.scales.split(",")] if args.scales else None
    except ValueError:
        chosen = [0.0]
    workloads = args.workloads.split(",")
    unknown = [w for w in workloads if w not in DESIGNS]
    bad_scales = chosen is not None and not all(s > 0 for s in chosen)
    if unknown or args.seconds <= 0 or args.repeats < 1 or bad_scales:
        raise SystemExit(
            f"error: workloads are {', '.join(DESIGNS)}; --seconds, --repeats and scales above "
            f"0 (got {args.workloads!r}, {args.seconds:g}, {args.repeats}, {args.scales!r})"
        )
    print(
        f"## Verdicts across scales ({args.seconds:g} s runs at launch traffic, "
        f"median of {args.repeats} (range))"
    )
    print()
    print("| workload | design | figure | scales | agree |")
    print("|---|---|---|---|---|")
    for workload in workloads:
        scales = chosen or list(SCALES[workload])
        modelled = [not outside(workload, s) for s in scales]
        repeats = range(args.repeats)
        for design in DESIGNS[workload]:
            runs = [
                [measure(workload, design, s, args.seconds, args.engine) for _ in repeats]
                for s in scales
            ]
            for figure, label in (
                ("target", "**throttled share, target**"),
                ("throttled", "throttled share, calls done"),
                ("first", "first-attempt share"),
                ("hottest", "**hottest key**"),
            ):
                cells = [[run[figure] for run in repeats] for repeats in runs]
                shown = "; ".join(
                    f"{s:g}: {cell(c, inside)}"
                    for s, c, inside in zip(scales, cells, modelled, strict=True)
                )
                said = verdict(cells, modelled)
                if not label.startswith("**"):
                    said = f"({said})"  # shown, not judged
                print(f"| {workload} | {design} | {label} | {shown} | {said} |", flush=True)
            sent = "; ".join(
                f"{s:g}: " + ", ".join(f"{r['requests']:,} ({r['cut_off']:,} cut off)" for r in rs)
                for s, rs in zip(scales, runs, strict=True)
            )
            print(f"| {workload} | {design} | calls done | {sent} | |", flush=True)


if __name__ == "__main__":
    main()
