"""Time and memory per draw for every key distribution, at 1e3, 1e6 and 1e7 keys.

Constant cost per draw shows as rows that stay flat as the key count grows: no draw does work
in proportion to n, and no setup builds an n-entry table (peak memory stays in KiB).

    .venv/bin/python benchmarks/bench_distributions.py [--draws 200000]
"""

from __future__ import annotations

import argparse
import time
import tracemalloc

from loadgen.design.keys import NAMES, parse

SIZES = (1_000, 1_000_000, 10_000_000)
MEMORY_DRAWS = 10_000  # tracemalloc slows every allocation; enough draws to show a peak


def ns_per_draw(spec: str, n: int, scramble: bool, draws: int) -> float:
    next_key = parse(spec, n, seed=1, scramble=scramble).next
    start = time.perf_counter_ns()
    for _ in range(draws):
        next_key()
    return (time.perf_counter_ns() - start) / draws


def setup_us(spec: str, n: int, scramble: bool, repeats: int = 20) -> float:
    """Best of `repeats` constructions, in microseconds."""
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter_ns()
        parse(spec, n, seed=1, scramble=scramble)
        best = min(best, (time.perf_counter_ns() - start) / 1000)
    return best


def peak_kib(spec: str, n: int, scramble: bool) -> float:
    """Peak traced memory over setup and `MEMORY_DRAWS` draws."""
    tracemalloc.start()
    try:
        keys = parse(spec, n, seed=1, scramble=scramble)
        for _ in range(MEMORY_DRAWS):
            keys.next()
        return tracemalloc.get_traced_memory()[1] / 1024
    finally:
        tracemalloc.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--draws", type=int, default=200_000, help="timed draws per cell")
    args = parser.parse_args()

    sizes = [f"n={n:.0e}" for n in SIZES]
    print(f"{args.draws} timed draws per cell; peak memory over setup and {MEMORY_DRAWS} draws")
    print(
        f"{'distribution':<34}"
        + "".join(f"{'ns/draw ' + s:>18}" for s in sizes)
        + f"{'setup us n=1e+07':>18}"
        + "".join(f"{'peak KiB ' + s:>19}" for s in sizes)
    )
    for name in NAMES:
        for scramble in (False, True):
            if name == "uniform" and scramble:
                continue  # scramble does nothing to a uniform distribution
            spec = parse(name, 1).spec
            label = spec + (" scrambled" if scramble else "")
            times = [ns_per_draw(spec, n, scramble, args.draws) for n in SIZES]
            setup = setup_us(spec, SIZES[-1], scramble)
            peaks = [peak_kib(spec, n, scramble) for n in SIZES]
            print(
                f"{label:<34}"
                + "".join(f"{t:>18.0f}" for t in times)
                + f"{setup:>18.1f}"
                + "".join(f"{p:>19.1f}" for p in peaks)
            )


if __name__ == "__main__":
    main()
