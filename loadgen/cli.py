"""The ``loadgen`` command line.

    loadgen run counter --design single --users 20 --duration 30s --out results.json

Bad input is reported on one line with exit code 2, never a traceback.
"""

from __future__ import annotations

import argparse
import gc
import sys
from collections.abc import Sequence
from dataclasses import fields
from pathlib import Path
from typing import Any

from loadgen.configfile import read_yaml_or_toml
from loadgen.emulator.engines import scale_argument
from loadgen.errors import ConfigError, HarnessError
from loadgen.runner import WORKLOADS, Interrupted, RunConfig

__all__ = ["entry", "load_config_file", "main"]


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="loadgen", description="Partition Heat: load tests that show DynamoDB's hot keys."
    )
    commands = parser.add_subparsers(dest="command", required=True)
    run = commands.add_parser(
        "run",
        help="run a workload headless and print its summary",
        description="Run a workload headless with Locust. Flags not listed here go to Locust "
        "and the workload (e.g. --shards 20, --mix increment=1,read=1, --retry-mode standard).",
    )
    commands.add_parser(
        "emulator",
        add_help=False,
        help="serve a local DynamoDB endpoint that throttles like a partitioned table "
        "(loadgen emulator --help)",
    )
    commands.add_parser(
        "dashboards",
        add_help=False,
        help="rebuild the Grafana dashboards' JSON from dashboards/*.py "
        "(loadgen dashboards --help)",
    )
    gate = commands.add_parser(
        "gate",
        help="pass or fail a results file against a thresholds file (exit 0 pass, 1 fail)",
        description="Check a results file of loadgen run --out against the gates of a "
        "thresholds file (YAML or TOML). Exit 0 when every gate passes, 1 when one fails, "
        "2 for bad input.",
    )
    gate.add_argument("results", help="results file of loadgen run --out")
    gate.add_argument("--thresholds", required=True, help="YAML or TOML file of gates")
    gate.add_argument("--baseline", help="an earlier results file, for the regression gates")
    gate.add_argument("--junit", help="write a JUnit XML file, one test case per check")
    gate.add_argument("--markdown", help="write a Markdown summary (PR comment, step summary)")
    _add_prices_flags(gate)
    check = commands.add_parser(
        "check",
        help="a design file's launch asked of the partition model, limit by limit, without "
        "load (exit 0 passes, 1 a limit throttles a pattern, 2 bad input)",
        description="Read a design file (or AWS's dynamodb_data_model.json) and put its launch "
        "rates through the partition model for the first 10 minutes (as loadgen simulate "
        "does by default): each pattern's units per operation on the table and each index, "
        "each key value's units per second, and each limit of every table and index (a "
        "partition's ceiling, on-demand capacity or warm throughput, provisioned capacity, "
        "the per-table quota, the on-demand maximum; an index's limit pushes back on the "
        "table's writes) with what is asked of it and what it serves, and which patterns it "
        "throttles. No server, no load.",
    )
    check.add_argument("design_file", help="design file: .yaml, .yml or .json")
    check.add_argument("--design", help="one variant of the file, or all (default: every variant)")
    check.add_argument(
        "--out",
        metavar="FILE",
        help="write what it prints as JSON (per pattern, key and limit), for pipelines",
    )
    check.add_argument(
        "--remedy",
        metavar="OUT",
        help="write the file again to OUT with a variant V-remedied for each failing variant "
        "V (remedied for a file without variants): every remedy the check finds at once "
        "(warm throughput, provisioned units, on-demand maximums, shards for hot keys), "
        "checked again until it passes; what it cannot decide is printed and left as comments",
    )
    _add_prices_flags(check)
    _add_window_flag(check)
    report = commands.add_parser(
        "report",
        help="write an HTML page and PNG charts of a results file, with a diagnosis",
        description="Write report.html (charts embedded, opens offline) and the PNG charts: "
        "partition heat over time, top keys, throttles over time, latency percentiles.",
    )
    report.add_argument(
        "results",
        nargs="+",
        help="results file of loadgen run --out; several: a report each and one page of them "
        "side by side (verdicts, throttles and cost)",
    )
    report.add_argument("--out", default="report", help="directory to write (default: report)")
    _add_prices_flags(report)
    run.add_argument(
        "workload",
        help=f"one of {', '.join(WORKLOADS)}, a locustfile path, or a design file (.yaml, .json)",
    )
    run.add_argument(
        "--gate",
        metavar="THRESHOLDS",
        help="after the run, gate its results with this thresholds file; exit code from the gate",
    )
    run.add_argument("--report", metavar="DIR", help="after the run, write its report to DIR")
    run.add_argument("--config", help="YAML or TOML file with any of these settings")
    run.add_argument("--users", "-u", type=int, help="concurrent users (default 10)")
    run.add_argument("--spawn-rate", "-r", type=float, help="users started per second")
    run.add_argument("--duration", "-t", help="run time, e.g. 30s, 2m (default 30s)")
    run.add_argument("--design", help="key design of the workload")
    run.add_argument("--distribution", help="key distribution, e.g. zipf:1.2 (default zipf:0.99)")
    run.add_argument("--keys", type=int, help="key space size (default 1000)")
    run.add_argument("--seed", type=int, help="seed for key choice (default 1)")
    run.add_argument("--out", help="write the results as JSON to this file")
    run.add_argument(
        "--rate-scale",
        type=float,
        help="a design file: run every access pattern at its launch rate times this",
    )
    run.add_argument(
        "--no-starting-data",
        dest="starting_data",
        action="store_false",
        default=None,
        help="a design file: start on empty tables (its starting data is written otherwise)",
    )
    run.add_argument(
        "--starting-limit",
        type=int,
        help="a design file: write at most this many starting items (default 20,000)",
    )
    _add_target_flags(run)
    _add_load_flags(run)
    _add_prices_flags(run)
    _add_window_flag(run)
    _add_replay(commands)
    _add_prefill(commands)
    _add_simulate(commands)
    _add_engine(commands)
    _add_ci(commands)
    return parser


def _add_prices_flags(parser: argparse.ArgumentParser) -> None:
    """The prices the costs are read at (`loadgen.pricing`)."""
    from loadgen.pricing import add_price_flags

    add_price_flags(parser)


def _add_window_flag(parser: argparse.ArgumentParser) -> None:
    """How long the cost is carried (`loadgen.pricing.Window`)."""
    parser.add_argument(
        "--window",
        help="carry the cost over this span, for a launch that lasts hours: 1h, 90m, 2d "
        "(default: a month, 730 h as AWS's Pricing Calculator counts it)",
    )


def _add_simulate(commands: Any) -> None:
    from loadgen.simulate.command import add_parser

    add_parser(commands)


def _add_engine(commands: Any) -> None:
    from loadgen.emulator.engine_command import add_parser

    add_parser(commands)


def _add_ci(commands: Any) -> None:
    from loadgen.design.pipeline import add_parser

    add_parser(commands)


def _add_target_flags(run: argparse.ArgumentParser) -> None:
    """Where a run sends its requests, and how it reports them (run and replay)."""
    run.add_argument("--endpoint", help="DynamoDB endpoint URL (default: an embedded target)")
    run.add_argument(
        "--emulate",
        action="store_true",
        help="put the partition model in front of --endpoint too, so it throttles",
    )
    run.add_argument(
        "--scale",
        type=scale_argument,
        help="partition model scale: every ceiling and capacity times this "
        "(default 0.1; orders 0.02; a replay: the trace's); auto: the largest round scale at "
        "which --rate offers the embedded engine at most half of its warm-up rate",
    )
    run.add_argument(
        "--engine",
        help="engine of the embedded target: auto (default: DynamoDB Local where Java runs, "
        "else moto), dynamodb-local, moto or localstack",
    )
    run.add_argument("--aws", action="store_true", help="run against real DynamoDB")
    run.add_argument(
        "--localstack",
        action="store_true",
        help="run against LocalStack, started here (installed by scripts/setup) or --endpoint's: "
        "its own answers, no partition model; with --emulate, the model in front of it",
    )
    run.add_argument(
        "--localstack-faults",
        metavar="P",
        help="LocalStack's fault injection for the run: P (every read and write) or "
        "read=P,write=P; refusals at random, counted as LocalStack's, never as heat",
    )
    run.add_argument("--region", help="AWS region")
    run.add_argument(
        "--metrics-port", type=int, help="serve Prometheus metrics on this port during the run"
    )
    run.add_argument("--metrics-host", help="address of the metrics server (default 127.0.0.1)")
    run.add_argument(
        "--client",
        help="DynamoDB client: boto3 (default) or fast (geventhttpclient, several times "
        "the requests per core)",
    )


def _add_replay(commands: Any) -> None:
    replay = commands.add_parser(
        "replay",
        help="run a captured trace as a load test: its mix, keys and order, faster or at a rate",
        description="Replay a trace of loadgen emulator --capture or loadgen.capture.install "
        "as a Locust workload (workloads/replay.py). --speed X keeps the trace's pace X times "
        "faster (default 1); --rate R launches its requests at R/s at AWS scale instead.",
    )
    replay.add_argument("trace", help="trace file (gzip JSON lines)")
    replay.add_argument("--speed", type=float, help="the trace's own pace, X times faster")
    replay.add_argument(
        "--key-scale",
        type=int,
        default=1,
        help="K copies of every key with the same popularity curve (default 1)",
    )
    replay.add_argument(
        "--duration", "-t", help="run time (default: the trace's span over --speed; 30s)"
    )
    replay.add_argument("--users", "-u", type=int, help="closed model: users as fast as they go")
    replay.add_argument("--seed", type=int, help="seed of the key copies (default 1)")
    replay.add_argument("--out", help="write the results as JSON to this file")
    replay.add_argument("--gate", metavar="THRESHOLDS", help="gate the results with this file")
    replay.add_argument("--report", metavar="DIR", help="write the run report to DIR")
    replay.add_argument("--config", help="YAML or TOML file with any of these settings")
    _add_target_flags(replay)
    _add_load_flags(replay)
    _add_prices_flags(replay)


def _add_prefill(commands: Any) -> None:
    prefill = commands.add_parser(
        "prefill",
        help="fill a table with a workload's or a trace's items before a test, many batches "
        "in flight",
        description="Write N items of a workload's key design (or of a trace's keys and sizes) "
        "with BatchWriteItem, many batches in flight. Flags not listed go to the workload "
        "(--shards 20, ...).",
    )
    prefill.add_argument(
        "source", help="a workload name or locustfile, a trace file, or a design file"
    )
    prefill.add_argument(
        "--items",
        type=int,
        help="items to write (a design file: at most this many of its starting data, "
        "default 20,000)",
    )
    prefill.add_argument("--quiet", action="store_true", help="no progress line")
    prefill.add_argument(
        "--starting-data",
        action="store_true",
        help="mark the writes as a table's contents before a load: a loadgen emulator stores "
        "them without admitting them through its partition model",
    )
    prefill.add_argument("--endpoint", help="DynamoDB endpoint URL (e.g. a loadgen emulator)")
    prefill.add_argument("--aws", action="store_true", help="fill a table on real DynamoDB")
    prefill.add_argument("--region", help="AWS region")
    prefill.add_argument("--table", help="table name (default: the workload's or the trace's)")
    prefill.add_argument("--design", help="key design of the workload")
    prefill.add_argument(
        "--concurrency", type=int, default=16, help="batches in flight at once (default 16)"
    )
    prefill.add_argument("--seed", type=int, default=1, help="seed of the items' values")
    prefill.add_argument(
        "--allow-existing",
        action="store_true",
        help="write into a table that already holds items (refused otherwise)",
    )
    prefill.add_argument(
        "--create-table",
        action="store_true",
        help="create the table when missing on --aws (local targets always may)",
    )


def _add_load_flags(run: argparse.ArgumentParser) -> None:
    """The open model's flags (`loadgen.workload.arrivals`); per-operation rates and stages
    go in the config file (``rates:``, ``stages:``)."""
    run.add_argument(
        "--rate",
        type=float,
        help="open model: launch traffic in operations/s at AWS scale (x the emulator's scale "
        "against it), instead of --users",
    )
    run.add_argument("--arrivals", help="open model: constant (default) or poisson")
    run.add_argument("--ramp", help="open model: climb from 0 to the rate over this span, e.g. 30s")
    run.add_argument(
        "--max-in-flight",
        type=int,
        help="open model: operations in flight at once (default 1000); an arrival that finds "
        "none free is dropped",
    )
    run.add_argument(
        "--processes",
        metavar="N|auto",
        help="open model: load-generator processes that drive the arrivals, as Locust's own "
        "--processes (a master here, N workers): N, or auto (default: more than one only "
        "where the attempts offered need it and cores beside the target allow)",
    )


def load_config_file(path: str) -> dict[str, Any]:
    """Settings from a YAML (.yaml/.yml) or TOML (.toml) file."""
    data = read_yaml_or_toml(path, "config file") or {}
    if not isinstance(data, dict):
        raise ConfigError(f"config file {path!r} must hold a mapping of settings")
    return data


def _run_config(args: argparse.Namespace, extra: list[str]) -> RunConfig:
    settings: dict[str, Any] = {}
    if args.config:
        settings = load_config_file(args.config)
    known = {f.name for f in fields(RunConfig)} - {
        "workload",
        "locust_args",
        "users_given",
        "create_tables_on_aws",
    }
    options = settings.pop("options", {}) or {}
    for key in settings:
        if key.replace("-", "_") not in known:
            raise ConfigError(
                f"unknown setting {key!r} in {args.config} (expected: {', '.join(sorted(known))}, "
                "or an 'options' mapping of workload flags)"
            )
    values = {key.replace("-", "_"): value for key, value in settings.items()}
    for name in known:
        flag = getattr(args, name, None)
        if flag is not None and flag is not False:
            values[name] = flag
    if getattr(args, "starting_data", None) is False:
        values["starting_data"] = False
    if not isinstance(options, dict):
        raise ConfigError(f"'options' in {args.config} must be a mapping of workload flags")
    locust_args: list[str] = []
    for key, value in options.items():
        flag = "--" + str(key).replace("_", "-")
        if value is True:
            locust_args.append(flag)
        elif value is not False:
            locust_args += [flag, str(value)]
    if "users" in values and any(values.get(k) for k in ("rate", "rates", "stages")):
        raise ConfigError(
            f"--users {values['users']} and a rate exclude each other (the open model has no "
            "users: bound its concurrency with --max-in-flight)"
        )
    values["users_given"] = "users" in values
    from loadgen.design.loader import is_design_file

    if is_design_file(args.workload):
        # A design's rates are launch traffic: the client that sends the most per core, and
        # the largest scale at which the embedded engine carries them.
        values.setdefault("client", "fast")
        if not values.get("users"):
            values.setdefault("scale", "auto")
    values["create_tables_on_aws"] = "--create-table" in extra or bool(options.get("create_table"))
    try:
        return RunConfig(workload=args.workload, locust_args=locust_args + extra, **values)
    except TypeError as e:
        raise ConfigError(str(e)) from None


def _replay_config(args: argparse.Namespace, extra: list[str]) -> RunConfig:
    """``loadgen replay``: the run of workloads/replay.py over the trace, paced by it."""
    import math

    from loadgen.traffic.replay import load_trace, speed_stages

    if args.key_scale < 1:
        raise ConfigError(f"--key-scale must be an integer >= 1 (got {args.key_scale})")
    trace = load_trace(args.trace)
    if args.speed is not None and (args.rate or args.users):
        other = f"--rate {args.rate:g}" if args.rate else f"--users {args.users}"
        raise ConfigError(f"--speed {args.speed:g} and {other} exclude each other")
    speed = args.speed if args.speed is not None else (None if args.rate or args.users else 1.0)
    args.workload = "replay"
    extra = [*extra, "--trace", args.trace, "--key-scale", str(args.key_scale)]
    config = _run_config(args, extra)
    if config.scale is None and trace.header.get("scale"):
        config.scale = trace.scale  # the scale it was captured at: the same load, the same heat
    if speed is not None:
        config.stages = speed_stages(trace, speed)
        if args.duration is None:
            config.duration = f"{max(1, math.ceil(trace.span_s / speed))}s"
    return config


def _check(args: argparse.Namespace) -> int:
    """``loadgen check``: each variant's launch through the model; exit 1 where a limit
    throttles a pattern."""
    from loadgen.design.loader import load_designs
    from loadgen.pricing import format_cost, load_prices
    from loadgen.runner import cost_window
    from loadgen.simulate.launch import check_each
    from loadgen.simulate.remedy import Remedy, remedy, write_remedies

    remedies: list[Remedy] = []
    prices = load_prices(args.prices, region=args.prices_region)
    window = cost_window(args.window)
    designs = load_designs(args.design_file)
    if args.design not in (None, "all"):  # all: every variant, as run takes it
        chosen = [d for d in designs if d.name == args.design]
        if not chosen:
            names = ", ".join(d.name for d in designs)
            raise ConfigError(f"unknown design {args.design!r} (expected one of: {names}, or all)")
        designs = chosen
    failed = []
    written = []
    for i, (design, report) in enumerate(zip(designs, check_each(designs), strict=True)):
        if i:
            print()
        print("\n".join(report.lines()))
        print()
        cost = report.cost(prices, window)
        print("\n".join(format_cost(cost, title=f"{window.title}, on paper")))
        written.append({**report.to_dict(), "cost": cost})
        if report.failed:
            failed.append(design.name)
            if args.remedy:
                found = remedy(design, report=report)
                print()
                print("\n".join(found.lines()))
                remedies.append(found)
    if len(designs) > 1:
        print()
        print(
            f"Throttled at launch: {', '.join(failed)}"
            if failed
            else "No design is throttled at launch"
        )
    if args.out:
        _write_json(args.out, {"file": args.design_file, "designs": written})
        print(f"\nCheck written to {args.out}", file=sys.stderr)
    if args.remedy:
        write_remedies(args.design_file, args.remedy, remedies)
        names = ", ".join(found.name for found in remedies)
        print(
            f"\nRemedies written to {args.remedy}: {names}"
            if remedies
            else f"\nNothing to remedy: {args.remedy} is the file as it is",
            file=sys.stderr,
        )
    return 1 if failed else 0


def _write_json(path: str, data: object) -> None:
    import json

    try:
        # Its folder made as `loadgen run --out` makes it (heat-out/ in the pipeline recipes).
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        Path(path).write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
    except OSError as e:
        raise ConfigError(f"--out {path}: {e.strerror or e}") from None


def _simulation_verdicts(results: dict[str, object]) -> list[str]:
    """A simulation's diagnosis and per-pattern verdicts, judged as a design run's
    (`loadgen.verdict`, which the simulation may not import), put in its results as a run's
    are: the same reasons, so a run and a simulation of one design give one answer."""
    from loadgen.verdict.diagnosis import diagnose
    from loadgen.verdict.patterns import format_pattern_verdicts, pattern_verdicts
    from loadgen.verdict.summary import format_findings

    lines = ["", *format_findings(diagnose(results))]
    verdicts = pattern_verdicts(results)
    if verdicts:
        results["verdicts"] = [verdict.to_dict() for verdict in verdicts]
        lines += ["", *format_pattern_verdicts(verdicts)]
    return lines


def _gate_or_report(args: argparse.Namespace) -> int:
    from loadgen.pricing import load_prices
    from loadgen.verdict.analysis import load_results

    # Named prices reprice the run; without them the results' own cost section is read.
    prices = (
        load_prices(args.prices, region=args.prices_region)
        if args.prices or args.prices_region
        else None
    )
    if args.command == "gate":
        from loadgen.verdict.gate import run_gate

        return run_gate(
            args.results,
            args.thresholds,
            baseline=args.baseline,
            junit=args.junit,
            markdown=args.markdown,
            prices=prices,
        )
    from loadgen.verdict.report import write_report

    if len(args.results) == 1:
        page = write_report(load_results(args.results[0]), args.out, prices)
        print(f"Report written to {page}")
        return 0
    from loadgen.verdict.compare import compare_designs, compare_html

    runs = [load_results(path) for path in args.results]
    for number, (path, results) in enumerate(zip(args.results, runs, strict=True), 1):
        name = f"{number}-{results['run'].get('design') or Path(path).stem}"
        page = write_report(results, Path(args.out) / name, prices)
        print(f"Report written to {page}")
    lines = compare_designs(runs, prices)
    print("\n".join(lines))
    page = Path(args.out) / "compare.html"
    page.write_text(compare_html(lines, args.results), encoding="utf-8")
    print(f"Side by side written to {page}")
    return 0


def _after_run(config: RunConfig, run: Any) -> int:
    """Run, then report and gate: bad thresholds or a missing matplotlib fail before the run."""
    thresholds = None
    if config.gate:
        from loadgen.verdict.checks import refuse_other_currency
        from loadgen.verdict.thresholds import load_thresholds

        thresholds = load_thresholds(config.gate)
        prices = config.load_prices()  # a yuan budget held to a dollar limit fails before the run
        refuse_other_currency(thresholds, prices.currency, prices.region)
    if config.report:
        from loadgen.verdict.report import require_matplotlib

        require_matplotlib()
    results = run(config)
    if config.report:
        from loadgen.verdict.report import write_report

        page = write_report(results, config.report, config.load_prices())
        print(f"Report written to {page}", file=sys.stderr)
    if thresholds is not None:
        from loadgen.verdict.gate import run_gate

        print(file=sys.stdout)
        return run_gate(results, thresholds, prices=config.load_prices())
    # A design run fails where a pattern fails, as check and simulate do.
    failing = [v["id"] for v in results.get("verdicts") or () if v.get("status") == "FAIL"]
    return 1 if failing else 0


def _run_every_design(config: RunConfig, run: Any) -> int:
    """``--design all``: each variant of the design file in turn, then one table of them."""
    import copy

    from loadgen.design.loader import load_designs
    from loadgen.verdict.compare import compare_designs

    runs: list[dict[str, Any]] = []
    worst = 0

    def run_and_keep(one: RunConfig) -> dict[str, Any]:
        results: dict[str, Any] = run(one)
        runs.append(results)
        return results

    for design in load_designs(config.workload):
        one = copy.deepcopy(config)
        one.design = design.name
        if config.out:
            out = Path(config.out)
            one.out = str(out.with_name(f"{out.stem}-{design.name}{out.suffix or '.json'}"))
        if config.report:
            one.report = str(Path(config.report) / design.name)
        if runs and config.scale == "auto" and runs[0]["run"].get("scale"):
            # Every variant at the scale the first was given: compared at the same load.
            one.scale = float(runs[0]["run"]["scale"])
        print(f"\n=== design {design.name} ===", file=sys.stderr, flush=True)
        worst = max(worst, _after_run(one, run_and_keep))
    print()
    print("Designs side by side, at the same access patterns and rates:")
    print("\n".join(compare_designs(runs, config.load_prices(), config.cost_window())))
    return worst


def _dashboards(argv: list[str]) -> int:
    """``loadgen dashboards``: the generator the package ships (`loadgen.dashboards`, from the
    project's dashboards/; grafanalib, the ``dashboards`` extra)."""
    try:
        from loadgen.dashboards import build
    except ImportError as e:
        print(
            f"loadgen: error: {e} (install the extra: pip install 'partition-heat[dashboards]')",
            file=sys.stderr,
        )
        return 2
    code: int = build.main(argv, prog="loadgen dashboards")
    return code


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["emulator"]:
        from loadgen.emulator import command as emulator

        return emulator.main(argv[1:])
    if argv[:1] == ["dashboards"]:
        return _dashboards(argv[1:])
    parser = _parser()
    args, extra = parser.parse_known_args(argv)
    try:
        if args.command in ("gate", "report"):
            if extra:
                raise ConfigError(f"unrecognized arguments: {' '.join(extra)}")
            return _gate_or_report(args)
        if args.command == "check":
            if extra:
                raise ConfigError(f"unrecognized arguments: {' '.join(extra)}")
            return _check(args)
        if args.command == "simulate":
            if extra:
                raise ConfigError(f"unrecognized arguments: {' '.join(extra)}")
            from loadgen.simulate.command import run_simulate

            return run_simulate(args, _simulation_verdicts)
        if args.command == "engine":
            if extra:
                raise ConfigError(f"unrecognized arguments: {' '.join(extra)}")
            from loadgen.emulator.engine_command import run_engine

            return run_engine(args)
        if args.command == "ci":
            if extra:
                raise ConfigError(f"unrecognized arguments: {' '.join(extra)}")
            from loadgen.design.pipeline import run_ci

            return run_ci(args)
        if args.command == "prefill":
            from loadgen.traffic.prefill import prefill_command

            return prefill_command(args, extra)
        if args.command in ("run", "replay"):
            from loadgen.runner import run

            config = (
                _run_config(args, extra) if args.command == "run" else _replay_config(args, extra)
            )
            for name in ("users", "keys", "seed"):
                if not isinstance(getattr(config, name), int):
                    raise ConfigError(f"{name} must be an integer (got {getattr(config, name)!r})")
            if config.design == "all" and config.design_file:
                return _run_every_design(config, run)
            return _after_run(config, run)
    except HarnessError as e:
        print(f"loadgen: error: {e}", file=sys.stderr)
        return e.exit_code
    except Interrupted as e:
        return e.exit_code
    except KeyboardInterrupt:
        return 130
    return 0


def entry() -> None:
    """The ``loadgen`` command: `main`, then exit without the collector walking every object
    the command made (numpy's, pydantic's, the design's) to free what the exit frees anyway:
    about 0.1 s of a check's second. Exit handlers still run."""
    code = main()
    gc.freeze()
    sys.exit(code)


if __name__ == "__main__":
    entry()
