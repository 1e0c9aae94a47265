"""``loadgen emulator`` (and ``python -m loadgen.emulator``): flags, build, serve until stopped."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import logging
import math
import re
import signal
import sys
from typing import NoReturn

import uvloop

from loadgen.emulator.admission import DEFAULT_MAX_IN_FLIGHT, Admission
from loadgen.emulator.backends import Backend, MotoBackend, NullBackend, UpstreamBackend
from loadgen.emulator.capture import EmulatorCapture
from loadgen.emulator.embedded import DEFAULT_SCALE
from loadgen.emulator.engines import (
    DEFAULT_WARM_UP_REQUESTS,
    JVM_OPTIONS,
    LONG_RUN_SECONDS,
    Engine,
    auto_scale,
    choose_engine,
    jvm_choice,
    scale_argument,
    size_reason,
    warm,
)
from loadgen.emulator.quotas import DEFAULT_ACCOUNT_QUOTA, DEFAULT_TABLE_QUOTA, Quotas
from loadgen.emulator.server import (
    DEFAULT_SHADOW_ITEMS,
    MAX_REQUEST_BYTES,
    Emulator,
    EmulatorServer,
    listen,
    stop,
)
from loadgen.errors import ConfigError, HarnessError, TargetError
from loadgen.model.partitions import PartitionModel
from loadgen.targets import local as targets
from loadgen.targets.localstack import Faults, LocalStack, write_faults
from loadgen.traffic.trace import TraceWriter

__all__ = ["main"]


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        # One line, like every other loadgen error, not argparse's usage block.
        self.exit(2, f"loadgen: error: {message}\n")


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="loadgen emulator",
        description="A DynamoDB endpoint that throttles like a partitioned table. It prints the "
        "URL it listens on as its first line; GET /metrics serves Prometheus metrics.",
    )
    parser.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    parser.add_argument(
        "--port", type=int, default=8000, help="port (default 8000); 0 picks a free one"
    )
    backend = parser.add_mutually_exclusive_group()
    backend.add_argument(
        "--upstream",
        metavar="URL",
        help="forward to this DynamoDB-compatible server "
        "(DynamoDB Local, LocalStack, ...) instead of an embedded engine",
    )
    backend.add_argument(
        "--engine",
        default="auto",
        help="embedded engine: auto (default: DynamoDB Local where Java runs, else moto), "
        "dynamodb-local, moto, or localstack (LocalStack started here, installed by "
        "scripts/setup)",
    )
    backend.add_argument(
        "--null-backend",
        action="store_true",
        help="answer {} to every admitted request (measures the emulator's own cost)",
    )
    parser.add_argument(
        "--scale",
        type=scale_argument,
        default=DEFAULT_SCALE,
        help=f"factor on every AWS capacity figure (default {DEFAULT_SCALE:g}), or auto: the "
        "largest round scale at which --launch-rate offers the engine at most half of what it "
        "answered at its warm-up",
    )
    parser.add_argument(
        "--launch-rate",
        type=float,
        metavar="OPS",
        help="with --scale auto: the operations/s the clients will launch, at AWS scale",
    )
    parser.add_argument(
        "--largest-request-units",
        type=float,
        metavar="UNITS",
        help="with --scale auto: write units the largest request takes on one partition, at "
        "AWS scale; no scale is chosen at which they exceed a tenth of a partition's second",
    )
    parser.add_argument("--seed", type=int, default=0, help="seed of the partition model")
    parser.add_argument("--region", default="us-east-1", help="region in resource ARNs")
    parser.add_argument("--account", help="account id in resource ARNs (default: the backend's)")
    parser.add_argument(
        "--shadow-items",
        type=int,
        default=DEFAULT_SHADOW_ITEMS,
        help="items remembered to price writes (default %(default)s)",
    )
    parser.add_argument(
        "--upstream-timeout", type=float, default=30.0, help="seconds to wait for the upstream"
    )
    parser.add_argument(
        "--table-quota",
        type=float,
        default=DEFAULT_TABLE_QUOTA,
        help="read and write units one table or GSI may be provisioned with (default %(default)s,"
        " as AWS); beyond, CreateTable and UpdateTable answer LimitExceededException",
    )
    parser.add_argument(
        "--account-quota",
        type=float,
        default=DEFAULT_ACCOUNT_QUOTA,
        help="read and write units all provisioned tables and GSIs may add up to "
        "(default %(default)s, as AWS)",
    )
    parser.add_argument(
        "--max-in-flight",
        type=int,
        default=DEFAULT_MAX_IN_FLIGHT,
        help="requests served at once; beyond, 503 ServiceUnavailable (default %(default)s)",
    )
    parser.add_argument(
        "--partition-size",
        metavar="SIZE",
        help="data one partition holds, e.g. 1GB or 64KB: a table's size over it is the least "
        "partition count (default 10GB x --scale, as AWS's 10 GB)",
    )
    parser.add_argument(
        "--capture",
        metavar="FILE",
        help="record every data request answered (time, operation, keys, item size, units, "
        "outcome) to this trace file (gzip JSON lines) for loadgen replay and loadgen prefill",
    )
    parser.add_argument(
        "--hash-keys",
        metavar="SALT",
        help="with --capture: record keys as their BLAKE2b hash keyed with SALT (popularity "
        "and per-key order are kept, key text is not)",
    )
    long_options, long_warm_up = jvm_choice(LONG_RUN_SECONDS)
    parser.add_argument(
        "--jvm-options",
        default=" ".join(JVM_OPTIONS),
        help="options of the embedded DynamoDB Local's JVM, space-separated (default "
        "%(default)r: the quick compiler, serving in seconds; an emulator that serves for "
        f"minutes does better with {' '.join(long_options)!r} and --warm-up-requests "
        f"{long_warm_up}, as a long `loadgen run` takes; benchmarks/bench_jvm.py measures them)",
    )
    parser.add_argument(
        "--localstack-faults",
        metavar="P",
        help="with --engine localstack: LocalStack's fault injection, P (every read and write) "
        "or read=P,write=P: refusals at random, whatever the key, which the emulator passes on "
        "as LocalStack's and never counts as throttles of its own",
    )
    parser.add_argument(
        "--warm-up-requests",
        type=int,
        default=DEFAULT_WARM_UP_REQUESTS,
        help="requests each of the two warm-up rounds sends the embedded DynamoDB Local "
        "(default %(default)s)",
    )
    return parser


def unthrottled(backend: Backend) -> EmulatorServer:
    """An emulator in front of ``backend`` that throttles nothing, on a port of its own: moto
    answers in the emulator's own process, so it is measured as it will serve, through one."""
    return EmulatorServer(Emulator(backend, PartitionModel(scale=1000.0)))


def _auto_scale(args: argparse.Namespace, engine_rate: float | None) -> float:
    """Resolve ``--scale auto`` (the engine measured at warm-up where it was not yet), say so
    on stderr, and return the engine's rate."""
    launch = args.launch_rate
    if launch is None or not (math.isfinite(launch) and launch > 0):
        raise ConfigError(
            "--scale auto needs --launch-rate, the operations/s the clients will launch at AWS "
            f"scale (got {launch!r})"
        )
    if engine_rate is None:
        if args.upstream:
            engine_rate = warm(args.upstream, requests=args.warm_up_requests)
        else:
            backend = NullBackend() if args.null_backend else MotoBackend()
            with unthrottled(backend) as server:
                engine_rate = warm(server.endpoint_url, requests=args.warm_up_requests)
    args.scale = auto_scale(launch, engine_rate, args.largest_request_units)
    print(
        f"loadgen emulator: --scale auto: {args.scale:g}: {launch:,.0f} operations/s at AWS "
        f"scale offer {launch * args.scale:,.0f}/s; "
        + size_reason(launch, engine_rate, args.largest_request_units, args.scale),
        file=sys.stderr,
        flush=True,
    )
    return engine_rate


def _check(args: argparse.Namespace) -> None:
    """Refuse bad flags before an engine is started for them (a JVM takes seconds)."""
    if args.scale != "auto" and not (math.isfinite(args.scale) and args.scale > 0):
        raise ConfigError(f"--scale must be a positive number (got {args.scale!r})")
    if not 0 <= args.port <= 65535:
        raise ConfigError(f"--port must be 0..65535 (got {args.port})")
    if args.shadow_items < 0:
        raise ConfigError(f"--shadow-items must be >= 0 (got {args.shadow_items})")
    for flag, value in (
        ("--table-quota", args.table_quota),
        ("--account-quota", args.account_quota),
    ):
        if not (math.isfinite(value) and value >= 1):
            raise ConfigError(f"{flag} must be a number of units >= 1 (got {value:g})")
    if args.hash_keys is not None and not args.capture:
        raise ConfigError(f"--hash-keys {args.hash_keys!r} needs --capture FILE")
    if args.partition_size:
        _size(args.partition_size)
    if args.localstack_faults is not None:
        if args.engine != "localstack" or args.upstream or args.null_backend:
            raise ConfigError(
                f"--localstack-faults {args.localstack_faults} goes with --engine localstack"
            )
        Faults.parse(args.localstack_faults)


def _build(
    args: argparse.Namespace, engine_url: str | None = None, engine: Engine | None = None
) -> Emulator:
    _check(args)
    backend: Backend
    if args.upstream:
        backend = UpstreamBackend(args.upstream, timeout=args.upstream_timeout)
    elif engine_url is not None:
        backend = UpstreamBackend(engine_url, timeout=args.upstream_timeout)
        described = engine or choose_engine("dynamodb-local")
        backend.name = f"{described.description} at {engine_url}"
    elif args.null_backend:
        backend = NullBackend()
    else:
        backend = MotoBackend()
    model = PartitionModel(
        partition_bytes=_size(args.partition_size) if args.partition_size else None,
        scale=args.scale,
        seed=args.seed,
        region=args.region,
        account=args.account or backend.account,
    )
    quotas = Quotas(table=args.table_quota, account=args.account_quota)
    admission = Admission(max_in_flight=args.max_in_flight, largest_body=MAX_REQUEST_BYTES)
    emulator = Emulator(
        backend, model, shadow_items=args.shadow_items, quotas=quotas, admission=admission
    )
    if args.capture:
        writer = TraceWriter(
            args.capture, source="emulator", scale=args.scale, hash_keys=args.hash_keys
        )
        emulator.capture = EmulatorCapture(writer, emulator)
    return emulator


_UNITS = {"": 1, "K": 2**10, "M": 2**20, "G": 2**30, "T": 2**40}


def _size(text: str) -> float:
    """``64KB``, ``1.5GB``, ``4096`` in bytes (units are powers of 1024, as DynamoDB's GB)."""
    match = re.fullmatch(r"\s*([0-9]*\.?[0-9]+)\s*([KMGT]?)B?\s*", text, re.IGNORECASE)
    value = float(match[1]) * _UNITS[match[2].upper()] if match else 0.0
    if not (math.isfinite(value) and value >= 1):
        raise ConfigError(f"--partition-size must be a size like 10GB or 64KB (got {text!r})")
    return value


def _tune_collector() -> None:
    """Collect cyclic garbage less often, and never walk what startup built.

    A request allocates a few hundred containers and frees them by reference counting; at
    Python's default the young generation was collected every few requests and the old ones,
    which hold moto's tables and the item shadow, ever more slowly as they grow. Measured with
    moto in this process, in runs paired with and without: about 15% more requests/s.
    """
    gc.collect()
    gc.freeze()  # the modules, moto's models, the engine's connections: kept for good
    gc.set_threshold(50_000, 50, 100)


async def _serve(
    emulator: Emulator,
    host: str,
    port: int,
    engine_rate: float | None = None,
    *,
    auto: bool = False,
) -> None:
    listener = emulator.listener()
    try:
        bound = await listen(emulator, listener, host, port)
        _tune_collector()
        scale = emulator.model.scale
        print(
            f"loadgen emulator: backend {emulator.backend.name}{_carries(engine_rate)}; "
            f"scale {scale:g}: a partition "
            f"serves {3000 * scale:g} read and {1000 * scale:g} write units/s "
            "(AWS: 3000 and 1000)",
            file=sys.stderr,
            flush=True,
        )
        # The URL after the startup line: whoever waits for the URL has the line too.
        shown = f"[{host}]" if ":" in host else host
        print(f"http://{shown}:{bound}", flush=True)
        if engine_rate is not None:
            # The second line, for whoever started the emulator (`EmbeddedEmulator`).
            print(f"engine-rate {engine_rate:.0f}", flush=True)
        if auto:  # and the scale --scale auto chose
            print(f"scale {emulator.model.scale!r}", flush=True)
        if emulator.capture is not None:
            print(
                f"loadgen emulator: capturing data requests to {emulator.capture.writer.path}",
                file=sys.stderr,
                flush=True,
            )
        stopped = asyncio.Event()
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGINT, signal.SIGTERM):
            with contextlib.suppress(NotImplementedError):
                loop.add_signal_handler(signum, stopped.set)
        await stopped.wait()
    finally:
        await stop(emulator, listener)
        if emulator.capture is not None:
            emulator.capture.close()
            writer = emulator.capture.writer
            print(
                f"loadgen emulator: captured {writer.records} requests to {writer.path}"
                + (
                    f" ({writer.dropped} dropped: the writer fell behind)" if writer.dropped else ""
                ),
                file=sys.stderr,
                flush=True,
            )


def _carries(engine_rate: float | None) -> str:
    if engine_rate is None:
        return ""
    return f", which answered its warm-up at {engine_rate:,.0f} requests/s"


def main(argv: list[str] | None = None) -> int:
    """Run the emulator until SIGINT or SIGTERM; 0 on a clean stop, 2 on bad input."""
    args = _parser().parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="loadgen emulator: %(message)s")
    try:
        with contextlib.ExitStack() as stack:
            engine_url, engine_rate, engine = None, None, None
            scale_auto = args.scale == "auto"
            _check(args)
            if args.warm_up_requests < 4:
                raise ConfigError(
                    f"--warm-up-requests must be at least 4 (got {args.warm_up_requests})"
                )
            if not scale_auto and (
                args.launch_rate is not None or args.largest_request_units is not None
            ):
                raise ConfigError("--launch-rate and --largest-request-units go with --scale auto")
            if not (args.upstream or args.null_backend):
                engine = choose_engine(args.engine)
                if engine.warning is not None:
                    print(f"loadgen emulator: warning: {engine.warning}", file=sys.stderr)
                options = tuple(args.jvm_options.split())
                if engine.name == "dynamodb-local":
                    # Its own child, stopped with the emulator (and killed if the emulator dies).
                    local = stack.enter_context(targets.DynamoDBLocal(java_options=options))
                    engine_rate = warm(local.endpoint_url, requests=args.warm_up_requests)
                    engine_url = local.endpoint_url
                elif engine.name == "localstack":
                    started = stack.enter_context(LocalStack(java_options=options))
                    engine_rate = warm(started.endpoint_url, requests=args.warm_up_requests)
                    if args.localstack_faults:  # after the warm-up, which must not be refused
                        write_faults(started.endpoint_url, Faults.parse(args.localstack_faults))
                    engine_url = started.endpoint_url
            if scale_auto:
                engine_rate = _auto_scale(args, engine_rate)
            emulator = _build(args, engine_url, engine)
            if args.upstream:
                try:
                    targets.probe(args.upstream, timeout=2.0)
                except TargetError as exc:  # it may come up later: answer 500s until then
                    print(f"loadgen emulator: warning: {exc}", file=sys.stderr, flush=True)
            # uvloop: the event loop and its socket calls in C (libuv), about a third less
            # CPU per request than asyncio's own loop here.
            uvloop.run(_serve(emulator, args.host, args.port, engine_rate, auto=scale_auto))
    except HarnessError as exc:
        print(f"loadgen: error: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        return 130
    return 0
