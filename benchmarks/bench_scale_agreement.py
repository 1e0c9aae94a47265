"""Whether a run's verdict holds across scales: each shipped design at its launch traffic.

For each workload (counter, sensor, orders), its bad and its good design, at its launch
traffic (``examples/launch/<workload>.yaml``) and at scales 0.1, 0.03 and 0.01, one short
``loadgen run`` against a fresh embedded target gives two figures: the throttled share
(throttled attempts over all attempts) and the hottest key's share of its table's requests.
The figures of one design agree when every scale's is within 10% of the largest (within one
percentage point, where shares are that small).

    .venv/bin/python benchmarks/bench_scale_agreement.py [--seconds 12] [--scales 0.1,0.03,0.01]
        [--workloads counter,sensor,orders] [--engine auto]

A scaled run offers the launch rate times the scale, so its figures come from fewer requests:
at 0.01 a counter run of 12 s sends about 200.
"""

from __future__ import annotations

import argparse
import json
import os
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
        command += ["--out", str(out)]
        done = subprocess.run(command, cwd=ROOT, env=ENV, capture_output=True, text=True)
        if done.returncode not in (0, 1) or not out.exists():  # 1: the load was not delivered
            raise SystemExit(f"{' '.join(command)} failed:\n{done.stderr[-2000:]}")
        results = json.loads(out.read_text())
    totals = results["totals"]
    attempts = totals["requests"] + totals["retries"]
    hot = results["hot_keys"]
    return {
        "throttled": totals["throttled_attempts"] / attempts if attempts else 0.0,
        "hottest": hot[0]["share"] if hot else 0.0,
        "requests": totals["requests"],
        "delivered": (results.get("load") or {}).get("delivered"),
    }


def agree(values: list[float]) -> bool:
    """Within 10% of the largest, or within one percentage point."""
    spread = max(values) - min(values)
    return spread <= 0.10 * max(values) or spread <= 0.01


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=12.0, help="length of each run")
    parser.add_argument("--scales", default="0.1,0.03,0.01", help="scales, comma-separated")
    parser.add_argument("--workloads", default=",".join(DESIGNS), help="comma-separated")
    parser.add_argument("--engine", default="auto", help="embedded engine (default auto)")
    args = parser.parse_args()
    scales = [float(s) for s in args.scales.split(",")]
    workloads = args.workloads.split(",")
    unknown = [w for w in workloads if w not in DESIGNS]
    if unknown or args.seconds <= 0 or not all(s > 0 for s in scales):
        raise SystemExit(
            f"error: workloads are {', '.join(DESIGNS)}; --seconds and scales above 0 "
            f"(got {args.workloads!r}, {args.seconds:g}, {args.scales!r})"
        )
    heads = " | ".join(f"{s:g}" for s in scales)
    print(f"## Verdicts across scales ({args.seconds:g} s runs at launch traffic)")
    print()
    print(f"| workload | design | figure | {heads} | agree |")
    print("|---|---|---|" + "---|" * len(scales) + "---|")
    for workload in workloads:
        for design in DESIGNS[workload]:
            runs = [measure(workload, design, s, args.seconds, args.engine) for s in scales]
            for figure, label in (("throttled", "throttled share"), ("hottest", "hottest key")):
                values = [run[figure] for run in runs]
                cells = " | ".join(
                    f"{v:.1%}" + ("" if run["delivered"] is not False else " (not delivered)")
                    for v, run in zip(values, runs, strict=True)
                )
                verdict = "yes" if agree(values) else "no"
                print(f"| {workload} | {design} | {label} | {cells} | {verdict} |", flush=True)
            sent = ", ".join(f"{run['requests']:,}" for run in runs)
            print(f"| {workload} | {design} | requests | {sent} | |", flush=True)


if __name__ == "__main__":
    main()
