"""Does the verdict of a rate run depend on its concurrency? It should not.

    .venv/bin/python benchmarks/bench_rate_verdict.py [--duration 10s] [--caps 20,200]

Runs each workload's launch traffic (``examples/launch/<workload>.yaml``) on the embedded
target, for its bad and its good design, once per ``--max-in-flight`` cap, and gates each
run with ``examples/thresholds/<workload>.yaml``. Prints one row per run: the load offered
and achieved, whether it was delivered, the throttled share of the calls, the verdict of
the throttle gates (``max_throttled_ratio``) and the whole gate's exit code. The throttle
verdict of a design should be the same at every cap: in the open model the load is set by
the rate, not by how many operations may run at once.

Every server runs on 127.0.0.1; nothing leaves the machine.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from loadgen.verdict.checks import FAIL, evaluate  # noqa: E402
from loadgen.verdict.thresholds import load_thresholds  # noqa: E402

DESIGNS = {"counter": ("single", "sharded"), "orders": ("hot-status", "sharded-status")}


def run(workload: str, design: str, cap: int, duration: str, out: Path) -> dict[str, Any]:
    result = subprocess.run(
        [
            sys.executable, "-m", "loadgen", "run", workload, "--design", design,
            "--config", str(ROOT / "examples" / "launch" / f"{workload}.yaml"),
            "--duration", duration, "--max-in-flight", str(cap), "--out", str(out),
        ],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    if result.returncode != 0:
        raise SystemExit(f"{workload} {design} --max-in-flight {cap}: {result.stderr[-2000:]}")
    data: dict[str, Any] = json.loads(out.read_text())
    return data


def row(workload: str, design: str, cap: int, results: dict[str, Any]) -> str:
    outcome = evaluate(
        results, load_thresholds(ROOT / "examples" / "thresholds" / f"{workload}.yaml")
    )
    throttle = [c for c in outcome.checks if c.gate.name == "max_throttled_ratio"]
    verdict = "FAIL" if any(c.status == FAIL for c in throttle) else "pass"
    load, totals = results["load"], results["totals"]
    throttled = totals["throttled_attempts"] / max(totals["requests"], 1)
    return (
        f"{workload:<8} {design:<15} {cap:>5}  {load['offered_per_s']:>8.1f} "
        f"{load['achieved_per_s']:>8.1f}  {load['dropped']:>7}  "
        f"{'yes' if load['delivered'] else 'NO':<9} {throttled:>9.2%}  {verdict:<8} "
        f"{outcome.exit_code}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--duration", default="10s")
    parser.add_argument("--caps", default="20,200", help="--max-in-flight values")
    parser.add_argument("--workloads", default="counter,orders")
    args = parser.parse_args()
    caps = [int(c) for c in args.caps.split(",")]
    print(
        "workload design           cap  offered/s achieved/s dropped  delivered "
        "throttled  throttle gate"
    )
    with tempfile.TemporaryDirectory() as tmp:
        for workload in args.workloads.split(","):
            for design in DESIGNS[workload]:
                for cap in caps:
                    out = Path(tmp) / f"{workload}-{design}-{cap}.json"
                    results = run(workload, design, cap, args.duration, out)
                    print(row(workload, design, cap, results), flush=True)


if __name__ == "__main__":
    main()
