"""``loadgen prefill``: fill a table before a test, as a table that has lived a while is full.

    loadgen prefill counter --design sharded --items 1000000 --endpoint http://127.0.0.1:8000
    loadgen prefill t.jsonl.gz --items 200000 --aws --table app-staging --allow-existing

Items come from a workload's key design (its ``prefill_item``: the n-th item a table of that
design holds) or from a trace's keys and sizes (each recorded key at its largest recorded
size, then copies ``key~1``, ``key~2``, ... as ``loadgen replay --key-scale`` names them).
They are written with botocore: up to ``--concurrency`` BatchWriteItem calls of 25 items in
flight (a thread each, on one client: the calls wait on the network, not on each other),
paced to what the table takes: a throttled call or unprocessed items halve the calls in
flight, calls that go through add them back one at a time (`Pace`), and the batch waits with
full-jitter exponential backoff before it is sent again, holding its place, so the whole
prefill backs off. No SDK retries (every throttle is counted); a batch gives up only after 12
attempts in a row that wrote none of it while no other call wrote anything either. A progress
line and a summary: items/s, write units consumed and throttles.

A table is created only where ``loadgen run`` would create one (a local endpoint, or
``--aws --create-table``), and a table that holds items is refused unless
``--allow-existing``: nothing on AWS is created or changed that was not asked for.
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import os
import random
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from loadgen.design.starting import TablePlan as PrefillPlan
from loadgen.errors import ConfigError, CredentialsError, TargetError
from loadgen.model.capacity import item_size, write_units
from loadgen.targets import local as targets

__all__ = [
    "BATCH",
    "Pace",
    "PrefillPlan",
    "PrefillSummary",
    "fill",
    "plan_for_trace",
    "plan_for_workload",
    "prefill",
    "prefill_command",
]

STARTING_DATA_HEADER = "X-Partition-Heat-Starting-Data"
"""The header a ``loadgen emulator`` reads as "starting data, not traffic" (its server's
``STARTING_DATA_HEADER``; the emulator and this package share no code)."""

BATCH = 25
"""Items per BatchWriteItem, DynamoDB's most."""
MAX_ATTEMPTS = 12
"""Attempts of a batch in a row that write nothing of it while no other call writes anything
either, before prefill gives up on the target: a table that serves the other calls is not
refusing everything, and a batch may meet its bucket empty many times in a row by chance
where several calls share it."""
BACKOFF_BASE_S = 0.05
BACKOFF_CAP_S = 5.0
_THROTTLES = frozenset(
    {"ProvisionedThroughputExceededException", "ThrottlingException", "RequestLimitExceeded"}
)


@dataclass
class PrefillSummary:
    """What a prefill did."""

    items: int = 0
    seconds: float = 0.0
    write_units: float = 0.0
    """Units consumed as the target reported them (computed from item sizes when it did not)."""
    calls: int = 0
    throttled_calls: int = 0
    """BatchWriteItem calls answered with a throttling error."""
    unprocessed: int = 0
    """Items returned unprocessed (throttled within a batch), retried."""
    bytes: int = 0
    paced_to: int | None = None
    """The fewest calls the prefill was paced down to in flight (None: not yet written)."""
    concurrency: int | None = None
    started: float = field(default_factory=time.perf_counter)

    @property
    def items_per_s(self) -> float:
        return self.items / self.seconds if self.seconds > 0 else 0.0

    def line(self, table: str) -> str:
        return (
            f"Prefilled {self.items:,} items ({self.bytes / 1e6:,.1f} MB) into {table} in "
            f"{self.seconds:.1f} s: {self.items_per_s:,.0f} items/s, "
            f"{self.write_units:,.0f} write units consumed "
            f"({self.write_units / max(self.seconds, 1e-9):,.0f}/s), "
            f"{self.throttled_calls} throttled calls, {self.unprocessed} unprocessed items retried"
            + (
                f"; paced down to {self.paced_to} of {self.concurrency} calls in flight"
                if self.paced_to is not None
                and self.concurrency is not None
                and self.paced_to < self.concurrency
                else ""
            )
        )


# --- plans --------------------------------------------------------------------------------


def _without_gevent() -> None:
    """Prefill runs threads: keep gevent's patching of the standard library out of it (when
    nothing imported Locust yet; a workload's locustfile imports it)."""
    if "locust" not in sys.modules:
        os.environ.setdefault("LOCUST_SKIP_MONKEY_PATCH", "1")


def plan_for_workload(
    locustfile: Path, argv: list[str], count: int, *, endpoint_url: str | None
) -> PrefillPlan:
    """Items of a workload locustfile's key design, its options parsed from ``argv``."""
    _without_gevent()
    from locust.argument_parser import get_parser
    from locust.util.load_locustfile import load_locustfile

    from loadgen.workload import DynamoUser, WorkloadOptions
    from loadgen.workload.user import table_request

    user_classes, _ = load_locustfile(str(locustfile))
    workloads = [c for c in user_classes.values() if issubclass(c, DynamoUser)]
    if not workloads:
        raise ConfigError(f"{locustfile} defines no DynamoUser workload")
    user_class = workloads[0]
    try:
        parsed = get_parser(default_config_files=[]).parse_args(["-f", str(locustfile), *argv])
    except SystemExit:
        raise ConfigError(f"unknown prefill options {' '.join(argv)}") from None
    user_class.check_options(parsed)
    options = WorkloadOptions.from_parsed(
        parsed,
        designs=user_class.designs,
        default_table=user_class.default_table,
        default_mix=user_class.default_mix,
        host=endpoint_url,
    )
    request = table_request(user_class, options)

    def item(number: int) -> dict[str, Any]:
        return user_class.prefill_item(options, parsed, number)

    return PrefillPlan(request, item, count, f"{locustfile.stem} ({options.design})")


def plan_for_trace(path: str, count: int, *, table: str | None) -> PrefillPlan:
    """Items of a trace's keys and sizes on one of its tables (the busiest by default)."""
    from loadgen.traffic.replay import Replayer, load_trace

    trace = load_trace(path)
    sizes: dict[str, dict[tuple[str | None, str | None], int]] = {}
    for record in trace.records:
        for name, pk, sk, size in record.touches:
            if pk is not None:
                seen = sizes.setdefault(name, {})
                seen[(pk, sk)] = max(seen.get((pk, sk), 0), size)
    if table is None:
        table = max(sizes, key=lambda t: len(sizes[t]))
    if table not in sizes or table not in trace.schemas:
        raise ConfigError(
            f"table {table!r} is not in the trace {path} (expected one of: "
            f"{', '.join(sorted(sizes))})"
        )
    replayer = Replayer(trace)
    schema = trace.schemas[table]
    keys = list(sizes[table].items())
    [request] = [r for r in replayer.table_requests() if r["TableName"] == table]
    request["BillingMode"] = "PAY_PER_REQUEST"

    def item(number: int) -> dict[str, Any]:
        (pk, sk), size = keys[number % len(keys)]
        copy = number // len(keys)
        return replayer.item(schema, f"{pk}~{copy}" if copy else pk, sk, size)

    return PrefillPlan(request, item, count, f"trace {path}")


# --- writing ------------------------------------------------------------------------------


def prefill(
    plan: PrefillPlan,
    *,
    endpoint_url: str | None,
    credentials: Any = None,
    region: str | None = None,
    concurrency: int = 16,
    progress: bool = True,
    seed: int = 1,
    starting_data: bool = False,
) -> PrefillSummary:
    """Write the plan's items, ``concurrency`` BatchWriteItem calls in flight (a thread each,
    on one botocore client); the table must exist. Returns the summary.

    ``credentials`` (botocore's) sign the requests; None: the standard chain.
    ``starting_data`` marks the writes as what the table held before a run's load, which a
    ``loadgen emulator`` stores without admitting them through its partition model (other
    targets ignore the header).
    """
    if concurrency < 1:
        raise ConfigError(f"--concurrency must be >= 1 (got {concurrency})")
    import botocore.session
    from botocore.config import Config

    config = Config(
        retries={"mode": "standard", "total_max_attempts": 1},  # we retry, and count
        max_pool_connections=concurrency,
    )
    keys = {}
    if credentials is not None:
        frozen = credentials.get_frozen_credentials()
        keys = {
            "aws_access_key_id": frozen.access_key,
            "aws_secret_access_key": frozen.secret_key,
            "aws_session_token": frozen.token,
        }
    db = botocore.session.get_session().create_client(
        "dynamodb", endpoint_url=endpoint_url, region_name=region, config=config, **keys
    )
    if starting_data:

        def mark(request: Any, **kwargs: Any) -> None:
            request.headers[STARTING_DATA_HEADER] = "1"

        db.meta.events.register("before-sign.dynamodb.BatchWriteItem", mark)
    try:
        return fill(db, plan, concurrency=concurrency, rng=random.Random(seed), progress=progress)
    finally:
        db.close()


class Pace:
    """How many BatchWriteItem calls may be in flight: halved when the table throttles, one
    more per window of calls it served (additive increase, multiplicative decrease, as TCP
    paces a link), from 1 to ``most``.

    A throttle halves the window once for the calls sent before it: those in flight were sent
    at the old pace, and their throttles say nothing new. Shared by the writing threads.
    """

    def __init__(self, most: int) -> None:
        self.most = most
        self.limit = float(most)
        self.lowest = float(most)
        """The smallest window the prefill was paced to (for the summary)."""
        self.in_flight = 0
        self._changed = threading.Condition()
        self._cut_at = 0.0

    @contextlib.contextmanager
    def slot(self) -> Iterator[float]:
        """A place in flight, for one batch's attempts and its waits between them; yields
        when it was taken."""
        with self._changed:
            self._changed.wait_for(lambda: self.in_flight < max(1, int(self.limit)))
            self.in_flight += 1
        try:
            yield time.monotonic()
        finally:
            with self._changed:
                self.in_flight -= 1
                self._changed.notify_all()

    def throttled(self, sent_at: float) -> None:
        """A call sent at ``sent_at`` was throttled (or left items unprocessed)."""
        with self._changed:
            if sent_at > self._cut_at:
                self.limit = max(1.0, self.limit / 2)
                self.lowest = min(self.lowest, self.limit)
                self._cut_at = time.monotonic()

    def served(self) -> None:
        """A call wrote all it carried."""
        with self._changed:
            self.limit = min(float(self.most), self.limit + 1.0 / self.limit)
            self._changed.notify_all()


def fill(
    db: Any,
    plan: PrefillPlan,
    *,
    concurrency: int,
    rng: random.Random,
    progress: bool = False,
) -> PrefillSummary:
    """Write every item of ``plan`` through ``db`` (a botocore DynamoDB client, or anything
    with its ``batch_write_item``), ``concurrency`` threads paced to what the table takes
    (`Pace`); the summary of what was written."""
    writing = _Writing(plan, db, rng, Pace(concurrency))
    writing.summary.concurrency = concurrency
    workers = [threading.Thread(target=writing.work, daemon=True) for _ in range(concurrency)]
    reporter = threading.Thread(target=_progress, args=(writing,), daemon=True)
    try:
        for thread in workers:
            thread.start()
        if progress:
            reporter.start()
        for thread in workers:
            thread.join()
    finally:
        writing.stop.set()  # also on KeyboardInterrupt: the workers end after their call
        writing.summary.seconds = time.perf_counter() - writing.summary.started
        writing.summary.paced_to = int(writing.pace.lowest)
    if writing.failure is not None:
        raise writing.failure
    if progress:
        _show(plan, writing.summary, final=True)
    return writing.summary


class _Writing:
    """One prefill's shared state: the next item numbers, the summary, the first failure."""

    def __init__(self, plan: PrefillPlan, db: Any, rng: random.Random, pace: Pace) -> None:
        self.plan = plan
        self.db = db
        self.rng = rng
        self.pace = pace
        self.summary = PrefillSummary()
        self.stop = threading.Event()
        self.failure: TargetError | None = None
        self._numbers = iter(range(plan.count))
        self._lock = threading.Lock()

    def work(self) -> None:
        """A worker: batches of the next numbers until none is left or a worker failed."""
        while not self.stop.is_set():
            with self._lock:
                numbers = list(itertools.islice(self._numbers, BATCH))
            if not numbers:
                return
            try:
                with self.pace.slot():
                    self._write([self.plan.item(n) for n in numbers])
            except TargetError as exc:
                with self._lock:
                    self.failure = self.failure or exc
                self.stop.set()

    def _write(self, batch: list[dict[str, Any]]) -> None:
        from botocore.exceptions import BotoCoreError, ClientError

        table = self.plan.table
        summary = self.summary
        pending: dict[str, list[Any]] = {table: [{"PutRequest": {"Item": i}} for i in batch]}
        attempt = 0  # attempts in a row that wrote none of the batch: its backoff grows
        stalled = 0  # attempts in a row since whose last no call wrote anything
        written = -1  # the items written by every call at the last attempt
        while True:
            with self._lock:
                stalled = stalled + 1 if summary.items == written else 0
                written = summary.items
            if stalled == MAX_ATTEMPTS:
                break
            sent = sum(len(v) for v in pending.values())
            sent_at = time.monotonic()
            try:
                answer = self.db.batch_write_item(
                    RequestItems=pending, ReturnConsumedCapacity="TOTAL"
                )
            except ClientError as exc:
                error = exc.response.get("Error", {})
                if error.get("Code") not in _THROTTLES:
                    raise TargetError(
                        f"BatchWriteItem on {table!r} failed: {error.get('Code')}: "
                        f"{error.get('Message')}"
                    ) from None
                with self._lock:
                    summary.calls += 1
                    summary.throttled_calls += 1
                self.pace.throttled(sent_at)
                if self.stop.wait(_backoff(attempt, self.rng)):
                    return
                attempt += 1
                continue
            except BotoCoreError as exc:
                raise TargetError(f"BatchWriteItem on {table!r} failed: {exc}") from None
            left: dict[str, list[Any]] = answer.get("UnprocessedItems") or {}
            unprocessed = sum(len(v) for v in left.values())
            done = [entry for entry in pending[table] if entry not in left.get(table, ())]
            sizes = [item_size(entry["PutRequest"]["Item"]) for entry in done]
            reported = answer.get("ConsumedCapacity")
            if reported:
                units = sum(float(c.get("CapacityUnits") or 0) for c in reported)
            else:
                units = sum(write_units(size) for size in sizes)
            with self._lock:
                summary.calls += 1
                summary.items += sent - unprocessed
                summary.unprocessed += unprocessed
                summary.bytes += sum(sizes)
                summary.write_units += units
            if not unprocessed:
                self.pace.served()
                return
            self.pace.throttled(sent_at)
            attempt = 0 if unprocessed < sent else attempt + 1
            pending = left
            if self.stop.wait(_backoff(attempt, self.rng)):
                return
        raise TargetError(
            f"BatchWriteItem on {table!r} wrote nothing in {MAX_ATTEMPTS} attempts in a row, "
            f"nor did any other call, paced down to {self.pace.limit:g} call(s) in flight (the "
            "table is throttling: raise its capacity)"
        )


def _backoff(attempt: int, rng: random.Random) -> float:
    """Full jitter: a random wait up to 50 ms x 2^attempt, at most 5 s (AWS's advice)."""
    return rng.uniform(0, min(BACKOFF_CAP_S, BACKOFF_BASE_S * 2**attempt))


def _progress(writing: _Writing) -> None:
    interval = 0.5 if sys.stderr.isatty() else 2.0
    while not writing.stop.wait(interval):
        writing.summary.seconds = time.perf_counter() - writing.summary.started
        _show(writing.plan, writing.summary, final=False)


def _show(plan: PrefillPlan, summary: PrefillSummary, *, final: bool) -> None:
    share = summary.items / plan.count if plan.count else 1.0
    bar = "#" * int(share * 30)
    throttles = summary.throttled_calls + summary.unprocessed
    line = (
        f"[{bar:<30}] {summary.items:>10,}/{plan.count:,} items  "
        f"{summary.items_per_s:>8,.0f} items/s  throttles {throttles}"
    )
    tty = sys.stderr.isatty()
    end = "\n" if final or not tty else ""
    print(("\r" if tty else "") + line, end=end, file=sys.stderr, flush=True)


# --- the command --------------------------------------------------------------------------


def prefill_command(args: argparse.Namespace, extra: list[str]) -> int:
    """``loadgen prefill``: choose the target and the plan, check the table, write, summarise."""
    _without_gevent()

    import botocore.exceptions

    from loadgen.client.credentials import session_for
    from loadgen.workload.tables import ensure_table

    if args.items is not None and args.items < 1:
        raise ConfigError(f"--items must be >= 1 (got {args.items})")
    if args.aws and args.endpoint:
        raise ConfigError(f"--aws and --endpoint {args.endpoint} exclude each other")
    endpoint: str | None = args.endpoint or os.environ.get("AWS_ENDPOINT_URL_DYNAMODB")
    endpoint = endpoint or os.environ.get("AWS_ENDPOINT_URL")
    if not args.aws and not endpoint:
        raise ConfigError(
            "prefill needs a table that outlives it: --endpoint URL (a running loadgen "
            "emulator, DynamoDB Local, ...) or --aws"
        )
    if args.aws:
        endpoint = None
    plans, notes = _plans(args, extra, endpoint)
    if endpoint is not None:  # checked after the input, which needs no target
        targets.probe(endpoint, timeout=5.0)
    # The one rule for credentials: the standard chain, or local ones for a local endpoint.
    session = session_for(endpoint)
    client = session.client("dynamodb", endpoint_url=endpoint, region_name=args.region)
    where = endpoint or f"AWS region {client.meta.region_name}"
    for note in notes:
        print(f"Starting data: {note}", file=sys.stderr, flush=True)
    for plan in plans:
        try:
            ensure_table(client, plan.table_request, create=bool(endpoint) or args.create_table)
            if not args.allow_existing:
                held = client.scan(TableName=plan.table, Limit=1, Select="COUNT").get("Count", 0)
                if held:
                    raise ConfigError(
                        f"table {plan.table!r} at {where} already holds items; pass "
                        "--allow-existing to add to them"
                    )
        except botocore.exceptions.NoCredentialsError:
            raise CredentialsError("no AWS credentials found for --aws") from None
        except (botocore.exceptions.BotoCoreError, botocore.exceptions.ClientError) as exc:
            raise TargetError(f"cannot use table {plan.table!r} at {where}: {exc}") from None
        print(
            f"Prefilling {plan.table} at {where} with {plan.count:,} items of {plan.source}",
            file=sys.stderr,
            flush=True,
        )
        summary = prefill(
            plan,
            endpoint_url=endpoint,
            credentials=session.get_credentials(),
            region=args.region or client.meta.region_name,
            concurrency=args.concurrency,
            seed=args.seed,
            progress=not args.quiet,
            starting_data=args.starting_data,
        )
        print(summary.line(plan.table), flush=True)
    return 0


def _plans(
    args: argparse.Namespace, extra: list[str], endpoint: str | None
) -> tuple[list[PrefillPlan], list[str]]:
    """What to write: a design file's starting data, a trace's keys or a workload's items."""
    source = args.source
    from loadgen.design.loader import is_design_file

    if is_design_file(source) and not source.endswith(".json.gz"):
        from loadgen.design.loader import load_design
        from loadgen.design.starting import DEFAULT_LIMIT, starting_plans

        if extra or args.table:
            flags = " ".join(extra) or f"--table {args.table}"
            raise ConfigError(f"a design file takes no workload flags (got {flags})")
        design = load_design(source, args.design)
        limit = DEFAULT_LIMIT if args.items is None else args.items
        starting, notes = starting_plans(design, limit=limit, seed=args.seed)
        if not starting:
            raise ConfigError(f"{source}: no starting data (no entity has populate, no items)")
        plans = [replace(p, source=f"{design.title} ({design.name}): {p.source}") for p in starting]
        return plans, notes
    if args.items is None:
        raise ConfigError("--items N is required for a workload or a trace")
    if source.endswith((".gz", ".jsonl", ".json")) or (
        Path(source).is_file() and not source.endswith(".py")
    ):
        if extra or args.design:
            flags = " ".join(extra) or "--design"
            raise ConfigError(f"a trace takes no workload flags (got {flags})")
        return [plan_for_trace(source, args.items, table=args.table)], []
    locustfile = _locustfile(source)
    argv = list(extra)
    if args.design:
        argv += ["--design", args.design]
    if args.table:
        argv += ["--table", args.table]
    return [plan_for_workload(locustfile, argv, args.items, endpoint_url=endpoint)], []


def _locustfile(source: str) -> Path:
    if source.endswith(".py"):
        path = Path(source)
        if not path.is_file():
            raise ConfigError(f"locustfile {source!r} does not exist")
        return path
    from loadgen import shipped

    path = shipped(f"workloads/{source}.py")
    if path.is_file() and source not in ("replay", "design", "__init__"):
        return path
    raise ConfigError(
        f"unknown prefill source {source!r} (expected a workload: counter, orders, sensor; "
        "a locustfile; or a trace file)"
    )
