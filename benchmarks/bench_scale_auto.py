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
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from loadgen.design import load_design  # noqa: E402
from loadgen.emulator.embedded import EmbeddedEmulator  # noqa: E402
from loadgen.emulator.engines import AUTO_SCALES, auto_scale, smallest_faithful_scale  # noqa: E402
from loadgen.simulate.demand import largest_request  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--design-file", default="examples/designs/ticketing.yaml")
    parser.add_argument("--design", default=None)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--engine", default="auto")
    args = parser.parse_args(argv)
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
    spread = _spread(chosen)
    print(f"scales chosen: {', '.join(f'{s:g}' for s in chosen)}; {_said(spread)}")
    print(
        f"by the engine's rate alone: {', '.join(f'{s:g}' for s in alone)}; {_said(_spread(alone))}"
    )
    return 0 if spread <= 1 else 1


def _spread(scales: list[float]) -> int:
    steps = [AUTO_SCALES.index(scale) for scale in scales]
    return max(steps) - min(steps)


def _said(spread: int) -> str:
    apart = "the same" if spread == 0 else f"{spread} step(s) apart"
    return f"{apart} ({'within' if spread <= 1 else 'NOT within'} one step)"


if __name__ == "__main__":
    sys.exit(main())
