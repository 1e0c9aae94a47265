"""``loadgen simulate WORKLOAD|DESIGN_FILE``: the command's arguments and what it runs.

A shipped workload's name reads its design file, ``examples/designs/<name>.yaml``: the
workloads' designs are the variants of those files, so a simulation and a run share one
description of a workload. Without ``--rate`` or ``--profile`` it runs the file's launch rates
(each pattern's declared rate) for ``--duration``, `LAUNCH_S` by default: the same run
``loadgen check`` asks of the model.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from typing import Any

from loadgen.design.loader import Design, is_design_file, load_design
from loadgen.design.values import rate_per_s, span_s
from loadgen.errors import ConfigError, InvalidSetting
from loadgen.heat.results import write_results
from loadgen.pricing import add_price_flags, load_prices
from loadgen.refusals import MODELLED_MODES, modelled
from loadgen.simulate.cost import cost_lines, needs_replay, profile_cost, provisioned_replay
from loadgen.simulate.engine import Settings, simulate
from loadgen.simulate.launch import LAUNCH_S, launch_profile, report_of
from loadgen.simulate.output import build_results, timeline_lines
from loadgen.simulate.profile import Profile, constant, load_profile

__all__ = ["add_parser", "design_path", "run_simulate"]

SHIPPED = ("counter", "sensor", "orders")
"""Workloads whose design files ship in ``examples/designs`` (inside the installed package)."""

_FLAGS = {"seed": "--seed", "scale": "--scale", "attempts": "--attempts", "clients": "--clients"}
"""The flag each of the simulation's settings is given by."""


def design_path(workload: str) -> str:
    """The design file a workload name or a path stands for: a shipped workload's is the
    installed package's (`loadgen.shipped`), whatever the current directory holds."""
    if is_design_file(workload):
        return workload
    if workload in SHIPPED:
        from loadgen import shipped

        candidate = shipped(f"examples/designs/{workload}.yaml")
        if not candidate.is_file():
            raise ConfigError(
                f"design file of workload {workload!r} missing from the package ({candidate}): "
                "reinstall partition-heat"
            )
        return str(candidate)
    raise ConfigError(
        f"unknown workload {workload!r} (expected one of {', '.join(SHIPPED)} or a design file "
        ".yaml, .yml or .json)"
    )


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """The ``simulate`` subcommand's arguments."""
    simulate_parser = commands.add_parser(
        "simulate",
        help="hours of launch traffic through the partition model on a virtual clock, in seconds",
        description="Put a workload's or design file's access patterns, at AWS's own figures "
        "(scale 1), through the partition model on a virtual clock: no server, no requests. "
        "Prints a per-minute timeline per table, index and pattern, the first minute each "
        "pattern fails and why, and what the profile costs per hour and in total, on demand "
        "and provisioned with auto scaling (the profile simulated again provisioned, unless it "
        "ran so); --out writes a results file for loadgen report and gate.",
    )
    simulate_parser.add_argument("workload", help=f"{', '.join(SHIPPED)} or a design file")
    simulate_parser.add_argument("--design", help="one variant of the file (default: the first)")
    simulate_parser.add_argument(
        "--rate",
        help="executions per second over every pattern, split by the design's mix (default: "
        "the file's launch rates, each pattern at its own)",
    )
    simulate_parser.add_argument(
        "--duration",
        help=f"how long at --rate or the launch rates, e.g. 1h, 30m (default {LAUNCH_S // 60}m)",
    )
    simulate_parser.add_argument(
        "--profile", help="YAML list of steps, ramps, holds, spikes (e.g. '0 -> 20k/s over 10m')"
    )
    simulate_parser.add_argument("--out", help="write the results file (loadgen report, gate)")
    simulate_parser.add_argument(
        "--attempts",
        type=int,
        default=None,
        help="attempts per request (1: no retries); default: the retry mode's, 3 in the "
        "standard mode, 10 in the legacy mode",
    )
    simulate_parser.add_argument(
        "--retry-mode",
        choices=MODELLED_MODES,
        default="standard",
        help="how the SDK waits between attempts: standard (jittered, with a retry quota; "
        "most SDKs' default) or legacy (botocore's default: 50 ms doubling, no quota, as "
        "loadgen run's clients retry without --retry-mode) (default %(default)s)",
    )
    simulate_parser.add_argument(
        "--warm-writes", type=float, help="raise on-demand warm throughput to these write units/s"
    )
    simulate_parser.add_argument(
        "--warm-reads", type=float, help="raise on-demand warm throughput to these read units/s"
    )
    simulate_parser.add_argument(
        "--auto-scaling",
        action="store_true",
        help="provisioned tables and GSIs track 70%% utilisation (up to 40,000 units/s)",
    )
    simulate_parser.add_argument(
        "--clients",
        type=int,
        default=1,
        help="SDK clients sending the load, each with standard mode's retry quota (default 1)",
    )
    simulate_parser.add_argument("--distribution", default="zipf:0.99", help="default skew")
    simulate_parser.add_argument(
        "--seed", type=int, default=1, help="seed of each second's random counts (default 1)"
    )
    simulate_parser.add_argument(
        "--scale",
        type=float,
        default=1.0,
        help="draw the counts as a loadgen run --scale S meets them: they fluctuate "
        "1/sqrt(S) times more, its retry quota lasts 1/S times longer (default 1: AWS)",
    )
    simulate_parser.add_argument(
        "--every", default="1m", help="print every Nth minute of the timeline (default 1m)"
    )
    add_price_flags(simulate_parser)


def _profile(args: argparse.Namespace, design: Design) -> Profile:
    if args.profile is not None:
        if args.rate is not None or args.duration is not None:
            raise ConfigError("give --profile, or --rate and --duration, not both")
        return load_profile(args.profile)
    duration: float = LAUNCH_S
    if args.duration is not None:
        try:
            duration = span_s(args.duration)
        except ValueError as e:
            raise ConfigError(f"--duration: {e}") from None
        if not duration >= 1:
            raise ConfigError(f"--duration must be at least 1s (got {args.duration!r})")
    if args.rate is None:
        return launch_profile(design, round(duration))
    try:
        rate = rate_per_s(_number_or_text(args.rate))
    except ValueError as e:
        raise ConfigError(f"--rate: {e}") from None
    return constant(rate, duration)


def _number_or_text(value: str) -> float | str:
    try:
        return float(value)
    except ValueError:
        return value


def run_simulate(
    args: argparse.Namespace, conclude: Callable[[dict[str, Any]], list[str]] | None = None
) -> int:
    """Run ``loadgen simulate``; 0 when no pattern fails, 1 when one does.

    ``conclude`` (the command layer's: the per-pattern verdicts) reads the results before
    they are written, may add to them, and returns lines to print after the timeline.
    """
    design = load_design(design_path(args.workload), args.design)
    profile = _profile(args, design)
    try:
        every = max(1, round(span_s(args.every) / 60))
    except ValueError as e:
        raise ConfigError(f"--every: {e}") from None
    try:
        settings = Settings(
            seed=args.seed,
            distribution=args.distribution,
            retry_mode=args.retry_mode,
            attempts=modelled(args.retry_mode, args.attempts)[1],
            clients=args.clients,
            auto_scaling=args.auto_scaling,
            warm_write_units=args.warm_writes,
            warm_read_units=args.warm_reads,
            scale=args.scale,
        )
    except InvalidSetting as error:
        raise error.named(_FLAGS) from None
    prices = load_prices(args.prices, region=args.prices_region)  # a bad file: before the run
    for note in design.notes:  # what check and run state too (an index nothing writes)
        print(f"Design: {note}", file=sys.stderr, flush=True)
    result = simulate(design, profile, settings)
    print("\n".join(timeline_lines(result, every)), flush=True)
    results = build_results(result)
    if args.profile is None and args.rate is None:
        # The file's launch rates, as check asks them: its answer names the diagnosis's
        # figures, as a design run's does.
        results["design"]["check"] = report_of(result).to_dict()
    if conclude is not None:
        print("\n".join(conclude(results)), flush=True)
    # Provisioned with auto scaling, as the simulation scales it: the profile again with the
    # on-demand tables provisioned, unless they ran provisioned and auto scaled already.
    twin = simulate(design, profile, provisioned_replay(result)) if needs_replay(result) else None
    section = profile_cost(result, twin, prices)
    print("", *cost_lines(section), sep="\n", flush=True)
    results["simulation"]["cost"] = section
    if args.out:
        write_results(results, args.out)
        print(f"\nResults written to {args.out}", file=sys.stderr)
    verdicts = results.get("verdicts")
    if verdicts is not None:
        # As a run and check judge it: a pattern fails over its attempts, not in one minute
        # (the timeline's first failures name the minutes).
        return 1 if any(v["status"] == "FAIL" for v in verdicts) else 0
    return 1 if result.first_failures() else 0
