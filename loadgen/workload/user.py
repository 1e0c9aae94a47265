"""The Locust user every workload derives from, and the hooks a locustfile installs.

A workload is a `DynamoUser` subclass naming its designs, its table and its operations (one
method per operation, weighted by the mix). ``register(WorkloadUser)`` at the bottom of the
locustfile adds the workload's command-line options to Locust, creates the table on the
master (or the local runner) when it is missing, records throttles, hot keys and heat, and
serves Prometheus metrics with ``--metrics-port`` (see `loadgen.heat.exporter`) and, with
Locust's web UI, the partition heat views (see `loadgen.webui`).
"""

from __future__ import annotations

import itertools
import logging
import random
import sys
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, ClassVar

import psutil
from locust import User, constant_throughput, events, task
from locust.exception import StopUser
from locust.runners import LocalRunner, MasterRunner, WorkerRunner

from loadgen import webui
from loadgen.client import BaseDynamoClient, make_client
from loadgen.client.credentials import is_local_endpoint
from loadgen.errors import HarnessError
from loadgen.heat.recorder import RunRecorder
from loadgen.heat.results import build_results, write_results
from loadgen.model.schema import TableSchema
from loadgen.targets import model_scale
from loadgen.workload import tables
from loadgen.workload.arrivals import ArrivalDriver, ArrivalPlan
from loadgen.workload.options import (
    WorkloadOptions,
    add_argument,
    add_common_arguments,
    endpoint_of,
)

if TYPE_CHECKING:
    from loadgen.heat.exporter import MetricsServer

__all__ = [
    "DynamoUser",
    "live_results",
    "prepare",
    "record",
    "register",
    "results_of",
    "serve_metrics",
    "workload_options",
]

log = logging.getLogger(__name__)


class DynamoUser(User):
    """A Locust user that runs one workload's operations against DynamoDB.

    class CounterUser(DynamoUser):
        designs = ("single", "sharded")
        default_table = "ph-counter"
        default_mix = {"increment": 9, "read": 1}

        def increment(self) -> None: ...
        def read(self) -> None: ...

    register(CounterUser)
    """

    abstract = True
    designs: ClassVar[tuple[str, ...]] = ()
    """Key designs, the first being the default."""
    default_table: ClassVar[str] = ""
    """Table name used unless --table is given."""
    default_mix: ClassVar[Mapping[str, int]] = {}
    """Operation method names and their default weights."""

    _numbers = itertools.count()

    def __init__(self, environment: Any) -> None:
        super().__init__(environment)
        self.options = workload_options(environment, type(self))
        self.db = _client(environment, self.options)
        runner = environment.runner
        worker = getattr(runner, "worker_index", 0) if runner is not None else 0
        self.number = worker * 1_000_000 + next(DynamoUser._numbers)
        self.random = random.Random(self.options.seed * 1_000_003 + self.number)
        self.keys = self.options.key_chooser(self.number)
        self._operations = [op for op, weight in self.options.mix.items() if weight > 0]
        self._weights = [self.options.mix[op] for op in self._operations]
        self._tasks_done = 0

    def wait_time(self) -> float:
        rate = float(getattr(self.environment.parsed_options, "user_rate", 0) or 0)
        if rate > 0:
            return float(constant_throughput(rate)(self))
        return 0.0

    @task
    def step(self) -> None:
        if self.options.load is not None:
            self._drive(self.options.load)  # the open model: this user launches arrivals
            return
        budget = self.options.tasks_per_user
        if budget:
            if self._tasks_done >= budget:
                self._finish()
            self._tasks_done += 1  # before the task: a failed one counts too
        operation = self.random.choices(self._operations, self._weights)[0]
        self.perform(operation)

    def perform(self, operation: str) -> None:
        """Run one operation of the mix: by default, the method of that name."""
        getattr(self, operation)()

    def _drive(self, plan: ArrivalPlan) -> None:
        """Launch this user's share of the plan's arrivals until the run stops it."""
        environment = self.environment
        user_class = type(self)

        def make_worker() -> DynamoUser:
            worker = user_class(environment)
            worker.on_start()
            return worker

        def on_error(worker: Any, error: BaseException) -> None:
            log.error("%s: %r", user_class.__name__, error, exc_info=error)
            environment.events.user_error.fire(
                user_instance=worker, exception=error, tb=error.__traceback__
            )

        # Sampled once a second as Locust samples it every five (psutil, this process).
        process = psutil.Process()
        process.cpu_percent()

        def cpu_percent() -> float:
            return float(process.cpu_percent())

        ArrivalDriver(
            plan,
            record(environment).load,
            make_worker,
            rng=random.Random(self.options.seed * 1_000_003 + self.number + 7),
            cpu_percent=cpu_percent,
            on_error=on_error,
            perform=lambda worker, operation: worker.perform(operation),
        ).run()

    def _finish(self) -> None:
        """Stop this user, its task budget spent; the last user of a local run ends the run."""
        environment = self.environment
        finished = environment.__dict__.get("_loadgen_finished_users", 0) + 1
        environment._loadgen_finished_users = finished
        runner = environment.runner
        if isinstance(runner, LocalRunner) and finished >= (runner.target_user_count or 0):
            import gevent

            gevent.spawn(runner.quit)  # from its own greenlet: quitting kills the users
        raise StopUser()

    @classmethod
    def add_arguments(cls, parser: Any) -> None:
        """Add the workload's own command-line options (override and call super)."""

    @classmethod
    def check_options(cls, parsed: Any) -> None:
        """Validate the workload's own options; raise `ConfigError` naming a bad value."""

    @classmethod
    def create_table_request(cls, options: WorkloadOptions) -> dict[str, Any]:
        """The CreateTable parameters of the workload's table, billing aside (see `Billing`)."""
        raise NotImplementedError

    @classmethod
    def describe(cls, options: WorkloadOptions, parsed: Any) -> dict[str, Any]:
        """Sections the workload adds to its results file (a design file's patterns)."""
        return {}

    @classmethod
    def create_table_requests(cls, options: WorkloadOptions) -> list[dict[str, Any]]:
        """The CreateTable parameters of every table the workload uses (by default its one)."""
        return [cls.create_table_request(options)]

    @classmethod
    def prefill_item(cls, options: WorkloadOptions, parsed: Any, number: int) -> dict[str, Any]:
        """The ``number``-th item a table of this design holds (``loadgen prefill``).

        Distinct for every number, in the design's key shape, with the workload's values: a
        table that has lived a while. ``parsed`` holds the workload's own options.
        """
        raise HarnessError(f"{cls.__name__} cannot prefill a table (no prefill_item)")


def workload_options(environment: Any, user_class: type[DynamoUser]) -> WorkloadOptions:
    """The workload's validated options, parsed once per process."""
    cache: dict[type[DynamoUser], WorkloadOptions] = environment.__dict__.setdefault(
        "_loadgen_options", {}
    )
    options = cache.get(user_class)
    if options is None:
        user_class.check_options(environment.parsed_options)
        options = cache[user_class] = WorkloadOptions.from_parsed(
            environment.parsed_options,
            designs=user_class.designs,
            default_table=user_class.default_table,
            default_mix=user_class.default_mix,
            host=environment.host,
        )
        # Now the options are final (on a worker too): settle the heat settings and give
        # the heat accounting the table's schema, to compute consumed units from item sizes.
        for request in table_requests(user_class, options):
            record(environment).heat.add_table(TableSchema.from_create_table(request))
    return options


def table_request(user_class: type[DynamoUser], options: WorkloadOptions) -> dict[str, Any]:
    """The whole CreateTable request of a workload's table, billing included."""
    return options.billing.apply(user_class.create_table_request(options))


def table_requests(user_class: type[DynamoUser], options: WorkloadOptions) -> list[dict[str, Any]]:
    """The whole CreateTable request of every table of a workload, billing included.

    A request that names its own ``BillingMode`` (a design file's table) keeps it unless
    ``--billing-mode`` was given.
    """
    return [
        request
        if "BillingMode" in request and not options.billing.explicit
        else options.billing.apply(request)
        for request in user_class.create_table_requests(options)
    ]


def _client(environment: Any, options: WorkloadOptions) -> BaseDynamoClient:
    # One client per process: it is safe to share between greenlets, and creating one costs
    # tens of milliseconds (and holds the connection pool and retry quota, as botocore's).
    client: BaseDynamoClient | None = environment.__dict__.get("_loadgen_client")
    if client is None:
        client = make_client(
            options.client,
            environment,
            endpoint_url=options.endpoint_url,
            region=options.region,
            retry=options.retry,
        )
        environment._loadgen_client = client
    return client


def register(user_class: type[DynamoUser]) -> None:
    """Install a workload's hooks on Locust's events (call once, in the locustfile)."""

    @events.init_command_line_parser.add_listener  # type: ignore[untyped-decorator]
    def _add_arguments(parser: Any, **kwargs: Any) -> None:
        add_common_arguments(parser)
        add_argument(
            parser,
            "--user-rate",
            type=float,
            default=0,
            help="Tasks per second per user (default 0: as fast as possible)",
        )
        add_argument(
            parser,
            "--results-file",
            default=None,
            help="Write the run's results (with throttles and hot keys) as JSON at the end",
        )
        user_class.add_arguments(parser)

    @events.init.add_listener  # type: ignore[untyped-decorator]
    def _on_init(environment: Any, **kwargs: Any) -> None:
        if user_class not in (environment.user_classes or []):
            return
        try:
            if isinstance(environment.runner, WorkerRunner):
                # The master's options reach a worker with its first spawn message: the
                # workload's options (and the heat settings) are read when a user starts.
                record(environment)
                return  # the master creates the table and serves the metrics
            if not environment.__dict__.get("_loadgen_prepared"):
                # Against a running `loadgen emulator`, rates read at AWS scale and the open
                # model offers launch traffic x its scale, as under `loadgen run` (which knows
                # the scale of the emulator it starts). Before the options are parsed into a
                # plan; the master's options reach its workers.
                endpoint = endpoint_of(environment.host)
                if is_local_endpoint(endpoint):
                    scale = model_scale(endpoint)
                    environment._loadgen_target_scale = scale
                    parsed = environment.parsed_options
                    if scale is not None and getattr(parsed, "rate_scale", 0) is None:
                        parsed.rate_scale = scale
                prepare(environment, user_class)
            serve_metrics(environment)
            # With Locust's web UI: the partition heat tab, heatmap, JSON and report.
            webui.install(environment, lambda: live_results(environment, user_class))
        except HarnessError as e:
            log.error("%s", e)
            sys.exit(e.exit_code)

    @events.test_start.add_listener  # type: ignore[untyped-decorator]
    def _on_test_start(environment: Any, **kwargs: Any) -> None:
        # The open model splits the rate over the run's users; tell the workers how many.
        if isinstance(environment.runner, MasterRunner) and environment.parsed_options:
            environment.parsed_options.rate_drivers = environment.runner.target_user_count

    @events.quitting.add_listener  # type: ignore[untyped-decorator]
    def _on_quitting(environment: Any, **kwargs: Any) -> None:
        path = getattr(environment.parsed_options, "results_file", None)
        if not path or isinstance(environment.runner, WorkerRunner):
            return
        if user_class not in (environment.user_classes or []):
            return
        write_results(results_of(environment, user_class), path)


def results_of(environment: Any, user_class: type[DynamoUser], **run: Any) -> dict[str, Any]:
    """The results of the environment's run so far (on the master: of all workers)."""
    options = workload_options(environment, user_class)
    stats = environment.stats
    duration = max(stats.total.last_request_timestamp or 0, 0) - stats.total.start_time
    info = {
        "workload": run.pop("workload", user_class.__name__),
        "design": options.design,
        "distribution": options.distribution,
        "keys": options.keys,
        "seed": options.seed,
        "target": options.endpoint_url or "AWS",
        "scale": environment.__dict__.get("_loadgen_target_scale"),
        # The prices the run's cost is read at (the web UI's running estimate).
        "prices_region": getattr(environment.parsed_options, "prices_region", None),
        "prices_file": getattr(environment.parsed_options, "prices", None),
        **run,
    }
    results = build_results(stats, record(environment), run=info, duration_s=max(duration, 0.0))
    try:
        results["tables"] = billing_rows(table_requests(user_class, options))
    except (StopIteration, NotImplementedError, AssertionError, HarnessError):
        results["tables"] = []  # a workload that cannot say what it created
    results.update(user_class.describe(options, environment.parsed_options))
    return results


def billing_rows(requests: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """How each table and GSI the run created was billed: what its cost a month reads for the
    throughput the run had provisioned (`loadgen.verdict.cost`)."""
    rows: list[dict[str, Any]] = []

    def row(table: str, index: str | None, mode: str, body: dict[str, Any]) -> dict[str, Any]:
        throughput = body.get("ProvisionedThroughput") or {}
        # What an on-demand table serves at once (None: AWS's default for a new table) and
        # its configured maximum: what its capacity diagnosis names.
        warm = body.get("WarmThroughput") or {}
        cap = body.get("OnDemandThroughput") or {}
        return {
            "table": table,
            "index": index,
            "billing_mode": mode,
            "read_capacity": throughput.get("ReadCapacityUnits"),
            "write_capacity": throughput.get("WriteCapacityUnits"),
            "warm_read_units": warm.get("ReadUnitsPerSecond"),
            "warm_write_units": warm.get("WriteUnitsPerSecond"),
            "max_read_units": cap.get("MaxReadRequestUnits"),
            "max_write_units": cap.get("MaxWriteRequestUnits"),
        }

    for request in requests:
        table = request["TableName"]
        mode = request.get("BillingMode", "PROVISIONED")
        rows.append(row(table, None, mode, request))
        for index in request.get("GlobalSecondaryIndexes") or ():
            rows.append(row(table, index["IndexName"], mode, index))
    return rows


def live_results(environment: Any, user_class: type[DynamoUser]) -> dict[str, Any]:
    """The results so far, named as the exporter names the run (its locustfile's name)."""
    from loadgen.heat.exporter import workload_name

    return results_of(environment, user_class, workload=workload_name(environment))


def record(environment: Any) -> RunRecorder:
    """The environment's recorder of throttles, hot keys and heat, registered once.

    Its heat settings follow the current parsed options (see `RunRecorder.of`).
    """
    return RunRecorder.of(environment)


def serve_metrics(environment: Any) -> MetricsServer | None:
    """Start the Prometheus exporter if ``--metrics-port`` was given; return its server."""
    parsed = environment.parsed_options
    port = getattr(parsed, "metrics_port", None)
    if port is None:
        return None
    from loadgen.heat import exporter

    return exporter.register(
        environment,
        port,
        getattr(parsed, "metrics_host", None) or exporter.DEFAULT_HOST,
        linger=float(getattr(parsed, "metrics_linger", 0.0) or 0.0),
    )


def prepare(environment: Any, user_class: type[DynamoUser]) -> WorkloadOptions:
    """Validate the workload's options, start recording, and create the table if missing.

    Raises `HarnessError` on bad options or an unusable target.
    """
    options = workload_options(environment, user_class)
    for request in table_requests(user_class, options):
        tables.ensure_table(
            _client(environment, options).botocore, request, create=options.create_table
        )
    environment._loadgen_prepared = True
    return options
