"""Which JVM options make the embedded DynamoDB Local fastest, against the null endpoint.

One Locust process (``loadgen run counter --design sharded --client fast --users 20``, as
`bench_target.py` drives it) is pointed at the null endpoint, then at the embedded target
(the emulator with DynamoDB Local, started as ``loadgen run`` starts it) once per choice of
JVM options and warm-up length. For each choice it prints the startup time, the rate the
warm-up measured, and the rate of two runs one after the other (the first run's early seconds
are where a JVM still compiling loses), each as a ratio to the null endpoint's rate measured
in the same sitting, and the target's CPU per request (the emulator and its JVM, read from
/proc): on a machine shared with other work the rates move with the others' load, the CPU
per request much less.

A class-data sharing archive of DynamoDB Local's own classes cannot be made: the JVM refuses
to dump one (``-XX:ArchiveClassesAtExit``: "Cannot have non-empty directory in paths"),
because DynamoDBLocal.jar's manifest puts the jar's own directory on the class path. The JDK's
default archive (its own classes) is in use either way.

    .venv/bin/python benchmarks/bench_jvm.py [--seconds 15] [--rounds 1] [--choices 1,3]

Figures move with the machine's load: quote the ratios, measured side by side in one run.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_target import run_load
from null_server import null_endpoint

from loadgen.emulator.embedded import EmbeddedEmulator

QUICK = "-XX:TieredStopAtLevel=1"
SERIAL = "-XX:+UseSerialGC"


def choices() -> list[tuple[str, str, int]]:
    """(label, JVM options, warm-up requests per round)."""
    return [
        ("quick compiler only, warm-up 400", f"{QUICK} {SERIAL}", 400),
        ("tiered compiler, warm-up 400", SERIAL, 400),
        ("tiered compiler, warm-up 4,000", SERIAL, 4000),
        ("tiered compiler, JVM's own collector, warm-up 4,000", "", 4000),
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=15.0, help="length of each run")
    parser.add_argument("--rounds", type=int, default=1, help="times to measure every choice")
    parser.add_argument(
        "--choices",
        help="which choices to measure, by their number in the table (1-based, comma-separated)",
    )
    args = parser.parse_args()
    if args.seconds <= 0 or args.rounds < 1:
        raise SystemExit("error: --seconds must be more than 0 and --rounds at least 1")
    every = choices()
    try:
        numbers = [int(n) for n in args.choices.split(",")] if args.choices else []
        picked = [every[n - 1] for n in numbers if n >= 1] if numbers else every
        if len(picked) != len(numbers or every):
            raise IndexError
    except (ValueError, IndexError):
        raise SystemExit(f"error: --choices takes numbers 1 to {len(every)}") from None
    print(f"## Embedded DynamoDB Local by JVM options ({args.seconds:g} s runs, 20 users)")
    print()
    print(
        "| choice | start s | warm-up rate | run 1 requests/s | of null | CPU us/request "
        "| run 2 requests/s | of null | CPU us/request |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for _round in range(args.rounds):
        with null_endpoint() as null_url:
            null = run_load(null_url, args.seconds)["rate"]
        print(f"| null endpoint | - | - | {null:,.0f} | 100% | - | - | - | - |", flush=True)
        for label, options, requests in picked:
            extra = [f"--jvm-options={options}", f"--warm-up-requests={requests}"]
            with EmbeddedEmulator(
                engine="dynamodb-local", scale=10.0, extra_args=extra, startup_timeout=300
            ) as emulator:
                runs = [
                    run_load(emulator.endpoint_url, args.seconds, target_pid=emulator.pid)
                    for _ in range(2)
                ]
            cells = " | ".join(
                f"{r['rate']:,.0f} | {r['rate'] / null:.2f} | {r['target_us']:.0f}" for r in runs
            )
            print(
                f"| {label} | {emulator.startup_seconds:.1f} | "
                f"{emulator.engine_rate or 0:,.0f} | {cells} |",
                flush=True,
            )


if __name__ == "__main__":
    main()
