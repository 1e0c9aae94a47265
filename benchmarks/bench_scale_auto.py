"""Whether ``--scale auto`` picks the same scale for the same command on the same machine.

For a design file and one of its variants, it does what ``loadgen run DESIGN --scale auto``
does before its load, ``--repeats`` times: reads the launch rate and the largest request from
the file (`loadgen.simulate.demand.largest_request`), starts a fresh embedded emulator with
``--scale auto`` (which warms its engine up and measures the rate it answers at) and records
the scale it chose. It prints each choice with the engine's rate, then whether all choices
are within one step of `AUTO_SCALES` of each other. Beside each, the scale the same engine
rate gives without the file's largest request (what a design file got before it was read):
the engine's rate alone, which the machine's other work moves.

    .venv/bin/python benchmarks/bench_scale_auto.py [--design-file examples/designs/ticketing.yaml]
        [--design warm] [--repeats 5] [--engine auto]

``--deliver`` asks instead whether a run at ``--scale auto`` delivers what it offers: for
every variant of every shipped design file (or ``--designs FILE:VARIANT,...``) and the
12-pattern design of ``benchmarks/bench_check.py`` (a throttling 100-action transaction, and
the same design with a squad of 2: an 8-action transaction on the same hot match),
``--runs`` real runs of ``loadgen run FILE --design V --scale auto --duration D`` on the
embedded target, each printed with the scale and in-flight cap chosen, the load offered,
answered (first attempts answered) and achieved (operations ended) per second and its worst
5 s window's answered share (delivered: 95% at least in every window), and what the run said
held it back; then how many runs delivered.

    .venv/bin/python benchmarks/bench_scale_auto.py --deliver [--runs 3] [--duration 20s]
        [--designs game-lobby.yaml:default,counter.yaml:single]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from loadgen.design import load_design  # noqa: E402
from loadgen.emulator.embedded import EmbeddedEmulator  # noqa: E402
from loadgen.emulator.engines import (  # noqa: E402
    AUTO_SCALES,
    auto_scale,
    faithful_scales,
    smallest_faithful_scale,
)
from loadgen.simulate.demand import largest_request  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--design-file", default="examples/designs/ticketing.yaml")
    parser.add_argument("--design", default=None)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--engine", default="auto")
    parser.add_argument("--deliver", action="store_true", help="real runs: is the load delivered")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--duration", default="20s")
    parser.add_argument(
        "--designs",
        default="",
        help="FILE:VARIANT,... in examples/designs, or twelve-patterns.yaml:default and "
        "twelve-patterns-squad-2.yaml:default (written by this script)",
    )
    args = parser.parse_args(argv)
    if args.deliver:
        return deliver(args)
    design = load_design(str(ROOT / args.design_file), args.design)
    launch = sum(design.rates.values())
    found = largest_request(design)
    largest = found.units if found is not None else None
    floor = smallest_faithful_scale(largest)
    print(
        f"{args.design_file} ({design.name}): {launch:,.0f} operations/s at launch; largest "
        f"request {largest or 0:g} write units on one key (scale {floor:g} at least); "
        f"engine {args.engine}"
    )
    print(f"{'repeat':>6} {'engine rate':>12} {'scale':>6} {'rate alone':>10} {'start s':>8}")
    chosen, alone = [], []
    for repeat in range(1, args.repeats + 1):
        started = time.perf_counter()
        with EmbeddedEmulator(
            scale="auto", launch_rate=launch, largest_units=largest, engine=args.engine
        ) as emulator:
            rate = emulator.engine_rate
            chosen.append(emulator.scale)
        took = time.perf_counter() - started
        shown = f"{rate:,.0f}/s" if rate is not None else "-"
        without = auto_scale(launch, rate) if rate is not None else emulator.scale
        alone.append(without)
        print(f"{repeat:>6} {shown:>12} {emulator.scale:>6g} {without:>10g} {took:>8.1f}")
    spread = _spread(chosen, largest)
    print(f"scales chosen: {', '.join(f'{s:g}' for s in chosen)}; {_said(spread)}")
    print(
        f"by the engine's rate alone: {', '.join(f'{s:g}' for s in alone)}; {_said(_spread(alone))}"
    )
    return 0 if spread <= 1 else 1


def deliver(args: argparse.Namespace) -> int:
    """Runs at ``--scale auto``, and whether each delivered its offered load."""
    import json
    import subprocess
    import tempfile

    from bench_check import twelve_patterns

    from loadgen.design.loader import load_designs

    with tempfile.TemporaryDirectory() as folder:
        own = Path(folder) / "twelve-patterns.yaml"
        own.write_text(twelve_patterns(), encoding="utf-8")
        pair = Path(folder) / "twelve-patterns-squad-2.yaml"
        pair.write_text(twelve_patterns(squad=2), encoding="utf-8")
        written = {own.name: own, pair.name: pair}
        if args.designs:
            chosen = [
                (written.get(file) or ROOT / "examples" / "designs" / file, variant)
                for file, _, variant in (item.partition(":") for item in args.designs.split(","))
            ]
        else:
            files = sorted((ROOT / "examples" / "designs").glob("*.yaml"))
            chosen = [(path, d.name) for path in files for d in load_designs(str(path))]
            chosen += [(own, "default"), (pair, "default")]
        print(
            f"{'design':34} {'run':>3} {'scale':>6} {'cap':>5} {'offered/s':>9} "
            f"{'answered/s':>10} {'achieved/s':>10} {'worst 5 s':>9}  held back by"
        )
        delivered = total = 0
        for path, variant in chosen:
            for run in range(1, args.runs + 1):
                out = Path(folder) / f"{path.stem}-{variant}-{run}.json"
                done = subprocess.run(
                    [sys.executable, "-m", "loadgen", "run", str(path), "--design", variant,
                     "--scale", "auto", "--duration", args.duration, "--out", str(out)],
                    cwd=ROOT, capture_output=True, text=True, timeout=600, check=False,
                )  # fmt: skip
                name = f"{path.stem}:{variant}"
                if not out.exists():
                    said = (done.stderr.strip().splitlines() or ["nothing on stderr"])[-1]
                    print(f"{name:34} {run:>3} no results written: {said}", flush=True)
                    total += 1
                    continue
                results = json.loads(out.read_text())
                load = results.get("load") or {}
                worst = (load.get("worst_window") or {}).get("ratio")
                ok = bool(load.get("delivered"))
                delivered += ok
                total += 1
                shown = f"{worst:.1%}" if worst is not None else "-"
                offered, achieved = load.get("offered_per_s", 0), load.get("achieved_per_s", 0)
                print(
                    f"{name:34} {run:>3} {results['run'].get('scale') or 0:>6g} "
                    f"{load.get('max_in_flight') or 0:>5} {offered:>9,.1f} "
                    f"{load.get('answered_per_s', 0):>10,.1f} {achieved:>10,.1f} "
                    f"{shown:>9}  {'-' if ok else load.get('bottleneck') or 'not reported'}",
                    flush=True,
                )
        print(f"delivered (95% in every 5 s window): {delivered} of {total} runs")
    return 0 if delivered == total else 1


def _spread(scales: list[float], largest: float | None = None) -> int:
    """Steps apart on the scales ``--scale auto`` takes from (`faithful_scales`: the largest
    request's own floor among `AUTO_SCALES`)."""
    ladder = sorted({*AUTO_SCALES, *faithful_scales(largest)}, reverse=True)
    steps = [ladder.index(scale) for scale in scales]
    return max(steps) - min(steps)


def _said(spread: int) -> str:
    apart = "the same" if spread == 0 else f"{spread} step(s) apart"
    return f"{apart} ({'within' if spread <= 1 else 'NOT within'} one step)"


if __name__ == "__main__":
    sys.exit(main())
