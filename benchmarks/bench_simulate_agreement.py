"""How far a simulation is from a real-time run: throttled share and hottest-key share.

    .venv/bin/python benchmarks/bench_simulate_agreement.py [--duration 60] [--scale 0.01] \
        [--engine auto] [--designs counter:single,tests/simulate/designs/delivery.yaml:default]

For each shipped design variant (or ``--designs``: NAME:VARIANT of a shipped file, or
FILE.yaml:VARIANT of any file): a real-time ``loadgen run DESIGN_FILE --design V`` of
``--duration`` seconds on the embedded target (the emulator and its partition model at
``--scale``, DynamoDB Local or moto behind it), at the design's launch rates, with the SDK's
standard retry mode; then ``loadgen simulate`` of the same design at the same rates for the same
time, 3 attempts per request and one client's retry quota (the run's one client), drawn at the
run's scale (`Settings.scale`: its counts fluctuate as the run's, its quota lasts as long), its
clock started where the run's clock started (the results file's ``design.clock``) and as fast
(the design's ``clock_speed``). Printed side by side: the throttled share of attempts and the
hottest key's share of its table's (or index's) key touches, the simulated over the real as a
ratio, and the share of the run's offered arrivals it achieved. A run that delivered under
`DELIVERED` of its arrivals did not meet the ceilings with the load asked (the machine did not
keep up): its ratios are not printed. The scale is small so that the embedded engine keeps up
on a busy machine (``--scale auto`` chooses by the engine's warm-up rate, which a shared
machine does not sustain). A run takes its duration plus the embedded engine's start; six
runs take minutes.
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

DELIVERED = 0.9
"""A run is compared only when it achieved this share of its offered arrivals."""
DESIGNS = (
    "counter:single",
    "counter:sharded",
    "sensor:by-time",
    "sensor:per-sensor",
    "orders:hot-status",
    "orders:sharded-status",
)


def shares(results: dict[str, Any]) -> tuple[float, float, str]:
    totals = results["totals"]
    throttled = totals["throttled_attempts"] / totals["attempts"] if totals["attempts"] else 0.0
    hottest = max(results["hot_keys"], key=lambda row: row["share"], default=None)
    if hottest is None:
        return throttled, 0.0, "-"
    return throttled, float(hottest["share"]), f"{hottest['table']} {hottest['key']}"


def design_file(workload: str) -> Path:
    """A shipped design's file by its name, or a design file's own path."""
    if workload.endswith((".yaml", ".yml")):
        return (ROOT / workload).resolve()
    return ROOT / "examples" / "designs" / f"{workload}.yaml"


def delivered(results: dict[str, Any]) -> float:
    """Achieved over offered arrivals of a rate run (1.0 when it kept up)."""
    operations = (results.get("load") or {}).get("operations") or []
    offered = sum(op["offered"] for op in operations)
    return sum(op["achieved"] for op in operations) / offered if offered else 1.0


def real(
    workload: str, variant: str, duration: int, out: Path, scale: str, engine: str
) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, "-m", "loadgen", "run", str(design_file(workload)),
         "--design", variant, "--duration", f"{duration}s", "--retry-mode", "standard",
         "--scale", scale, "--engine", engine, "--out", str(out)],
        cwd=ROOT, capture_output=True, text=True, timeout=duration + 600,
    )  # fmt: skip
    if not out.exists():  # the run stopped before its results: its own words say why
        said = done.stderr.strip().splitlines() or [f"exit {done.returncode}"]
        raise OSError(said[-1])
    return dict(json.loads(out.read_text()))


def simulated(workload: str, variant: str, duration: int, run: dict[str, Any]) -> dict[str, Any]:
    from loadgen.design.loader import load_design
    from loadgen.simulate import Settings, build_results, constant, simulate

    design = load_design(str(design_file(workload)), variant)
    # The run's clock as the real-time run has it: started where it started, as fast.
    settings = Settings(
        clock_speed=design.spec.clock_speed,
        start=float(run["heat"]["start"]),
        clock_start=float(run["design"]["clock"]["start"]),
        scale=float(run["run"]["scale"]),
    )
    result = simulate(design, constant(sum(design.rates.values()), duration), settings)
    return build_results(result)


def ratio(simulated_value: float, real_value: float) -> str:
    if real_value == 0:
        return "-" if simulated_value == 0 else "inf"
    return f"{simulated_value / real_value:.2f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--duration", type=int, default=60)
    parser.add_argument("--designs", default=",".join(DESIGNS))
    parser.add_argument("--scale", default="0.01", help="the runs' --scale (a number or auto)")
    parser.add_argument("--engine", default="auto", help="the runs' --engine")
    parser.add_argument("--keep", help="keep the runs' results files in this directory")
    args = parser.parse_args()
    print(
        f"{'design':<24} {'throttled real':>14} {'simulated':>10} {'ratio':>6} "
        f"{'hot key real':>12} {'simulated':>10} {'ratio':>6} {'delivered':>9}  "
        "hottest key (real | simulated)"
    )
    with tempfile.TemporaryDirectory() as scratch:
        tmp = args.keep or scratch
        Path(tmp).mkdir(parents=True, exist_ok=True)
        for item in args.designs.split(","):
            workload, _, variant = item.rpartition(":")
            if not workload or not variant:
                parser.error(f"--designs: {item!r} is not NAME:VARIANT or FILE.yaml:VARIANT")
            out = Path(tmp) / f"{Path(workload).stem}-{variant}.json"
            try:
                measured = real(workload, variant, args.duration, out, args.scale, args.engine)
            except (OSError, ValueError) as e:
                print(f"{item:<24} real run failed: {e}", flush=True)
                continue
            r_throttled, r_hot, r_key = shares(measured)
            scale = float(measured["run"]["scale"])
            simulation = simulated(workload, variant, args.duration, measured)
            s_throttled, s_hot, s_key = shares(simulation)
            kept_up = delivered(measured)
            compared = kept_up >= DELIVERED
            throttled_ratio = ratio(s_throttled, r_throttled) if compared else "n/d"
            hot_ratio = ratio(s_hot, r_hot) if compared else "n/d"
            print(
                f"{item:<24} {r_throttled:>14.3f} {s_throttled:>10.3f} {throttled_ratio:>6} "
                f"{r_hot:>12.3f} {s_hot:>10.3f} {hot_ratio:>6} {kept_up:>9.2f}  "
                f"{r_key} | {s_key} (scale {scale:g})",
                flush=True,
            )


if __name__ == "__main__":
    main()
