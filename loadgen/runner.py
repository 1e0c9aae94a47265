"""``loadgen run``: a headless Locust run of one workload against one target.

The run is Locust itself, in this process: the workload's locustfile is loaded as
``locust -f`` would load it, its options go through Locust's own parser, and a local runner
spawns the users. Around it we choose and start the target, print a progress line, and at the
end print the summary and write the results file, also when the run is interrupted.
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import math
import os
import signal
import sys
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from loadgen.errors import ConfigError, CredentialsError, HarnessError, InvalidSetting
from loadgen.refusals import DEFAULT_RETRY_MODE as RETRY_MODE
from loadgen.refusals import modelled

if TYPE_CHECKING:
    from loadgen.simulate.launch import LaunchRequests

__all__ = [
    "EMULATOR_DEFAULTS",
    "WORKLOADS",
    "Interrupted",
    "RunConfig",
    "Target",
    "find_locustfile",
    "run",
]

log = logging.getLogger(__name__)

WORKLOADS = ("counter", "orders", "sensor", "replay")


_EMBEDDED = "embedded"


class Interrupted(Exception):
    """The run was stopped by a signal; its results were still printed and written."""

    def __init__(self, signum: int) -> None:
        super().__init__(f"interrupted by signal {signum}")
        self.exit_code = 128 + signum


@dataclass
class RunConfig:
    """Everything ``loadgen run`` needs, from flags and/or a config file."""

    workload: str
    users: int = 10
    spawn_rate: float | None = None
    duration: str = "30s"
    design: str | None = None
    distribution: str = "zipf:0.99"
    keys: int = 1000
    seed: int = 1
    out: str | None = None
    endpoint: str | None = None
    aws: bool = False
    region: str | None = None
    metrics_port: int | None = None
    """Serve Prometheus metrics on this port during the run (None: do not)."""
    metrics_host: str = "127.0.0.1"
    scale: float | str | None = None
    """The partition model's scale (default: per workload, see EMULATOR_DEFAULTS), or
    ``auto``: chosen for the launch rate and the embedded engine (`launch_rate`)."""
    emulate: bool = False
    """Put the partition model in front of ``endpoint`` too."""
    client: str = "boto3"
    """The DynamoDB client the users call through: ``boto3`` or ``fast``."""
    engine: str = "auto"
    """The embedded target's engine: ``auto`` (DynamoDB Local where Java runs), or by name."""
    localstack: bool = False
    """Run against LocalStack: one started here, or ``endpoint``'s; with ``emulate``, the
    partition model in front of it (`loadgen.targets.localstack`)."""
    localstack_faults: str | None = None
    """LocalStack's fault injection for the run: ``0.1`` or ``read=P,write=P``."""
    gate: str | None = None
    """A thresholds file to gate the results with (`loadgen.verdict.checks`) after the run."""
    report: str | None = None
    """A directory to write the run report to (`loadgen.verdict.report`) after the run."""
    locust_args: list[str] = field(default_factory=list)
    """Further flags for Locust's parser: the workload's own (``--shards 20``) and Locust's."""
    rate: float | None = None
    """The open model: launch traffic in operations/s at AWS scale (`loadgen.workload.arrivals`)."""
    rates: dict[str, float] | str | None = None
    """The open model: per-operation rates at AWS scale (``{increment: 2000, read: 200}``)."""
    arrivals: str | None = None
    """constant or poisson."""
    ramp: str | None = None
    """Climb to the rate over this span (``30s``)."""
    users_given: bool = False
    """Whether --users was given (a design file then runs as a closed-model mix)."""
    create_tables_on_aws: bool = False
    """--create-table: create a design's tables on AWS and write its starting data there."""
    stages: list[Any] | str | None = None
    """Rate stages: ``[{duration: 30s, rate: 1000}, ...]`` or ``30s:1000,1m:3000``."""
    max_in_flight: int | None = None
    """Operations in flight at once in the open model; an arrival finding none free is dropped."""
    processes: int | str | None = None
    """Load-generator processes that drive the open model's arrivals, or ``auto`` (the
    default): more than one where the attempts offered need it and cores allow
    (`loadgen.workload.processes`)."""
    rate_scale: float = 1.0
    """A design file: every pattern's launch rate times this."""
    requests_per_operation: float = 1.0
    """A design file at ``--scale auto``: requests its launch sends per operation, retries of
    throttled attempts included, as the model counts them
    (`loadgen.simulate.launch.launch_requests`)."""
    engine_work_per_operation: float = 1.0
    """A design file at ``--scale auto``: the embedded engine's work per operation, in
    requests of its warm-up (a transaction of several items is several:
    `loadgen.emulator.engines.engine_work`)."""
    retry_wait_s: float = 0.0
    """A design file at ``--scale auto``: seconds an operation waits for its retries to be
    sent, on average, as the model counts them: what holds its in-flight slot."""
    starting_data: bool = True
    """A design file: write its starting data before the load (entities' populate, items)."""
    starting_limit: int | None = None
    """A design file: at most this many starting items (default 20,000)."""
    prices: str | None = None
    """A prices file for the run's cost (default: the package's, `loadgen.pricing`)."""
    prices_region: str | None = None
    """The region whose prices the cost is read at (default: a run on AWS, its region where
    the prices file has it; else us-east-1)."""
    window: str | None = None
    """The cost's window: ``1h``, ``30m``, ``2d`` for a launch that lasts hours (default: a
    month, 730 h as AWS's Pricing Calculator counts it)."""

    def load_prices(self) -> Any:
        """The run's prices (`loadgen.pricing.Prices`); ConfigError for a bad file or region."""
        from loadgen.pricing import load_prices

        region = self.prices_region
        if region is None and self.aws:
            aws_region = (
                self.region or os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION")
            )
            if aws_region:
                try:
                    return load_prices(self.prices, region=aws_region)
                except ConfigError:
                    pass  # a region the prices file has not: its stamp names the one used
        return load_prices(self.prices, region=region)

    def cost_window(self) -> Any:
        """The window the run's cost is carried over (`loadgen.pricing.Window`)."""
        return cost_window(self.window)

    @property
    def open_model(self) -> bool:
        """Whether the run launches arrivals at a rate rather than running users."""
        return bool(self.rate or self.rates or self.stages)

    def load_argv(self, scale: float | None) -> list[str]:
        """The open model's flags for Locust's parser (none for a closed-model run)."""
        if not self.open_model:
            for name in ("arrivals", "ramp", "max_in_flight"):
                if getattr(self, name) is not None:
                    raise ConfigError(
                        f"--{name.replace('_', '-')} {getattr(self, name)} needs a rate "
                        "(--rate, or rates or stages in the config file)"
                    )
            return []
        if self.arrivals is not None and self.arrivals not in ("constant", "poisson"):
            raise ConfigError(f"--arrivals must be constant or poisson (got {self.arrivals!r})")
        if self.rate is not None and not self.rate > 0:
            raise ConfigError(f"--rate must be > 0 operations/s (got {self.rate})")
        if self.max_in_flight is not None and (
            not isinstance(self.max_in_flight, int) or self.max_in_flight < 1
        ):
            raise ConfigError(f"--max-in-flight must be an integer >= 1 (got {self.max_in_flight})")
        argv = ["--rate", str(self.rate or 0)]
        if self.rates:
            argv += ["--rates", _pairs(self.rates, "rates", "=")]
        if self.stages:
            argv += ["--stages", _stage_text(self.stages)]
        if self.arrivals:
            argv += ["--arrivals", self.arrivals]
        if self.ramp:
            argv += ["--ramp", self.ramp]
        if self.max_in_flight:
            argv += ["--max-in-flight", str(self.max_in_flight)]
        if scale is not None:
            argv += ["--rate-scale", str(scale)]
        return argv

    @property
    def design_file(self) -> bool:
        """Whether the workload is a design file (YAML or JSON) rather than a locustfile."""
        from loadgen.design.loader import is_design_file

        return is_design_file(self.workload)

    def launch_rate(self) -> float | None:
        """The open model's launch traffic at AWS scale, operations/s (the highest stage's);
        None for a closed model or rates given by file."""
        rates = self.rates if isinstance(self.rates, dict) else {}
        total = self.rate or sum(float(r) for r in rates.values())
        if self.stages and not isinstance(self.stages, str):
            total = max([total, *(float(s.get("rate", 0)) for s in self.stages)])
        return total or None

    @property
    def load_per_operation(self) -> float:
        """What ``--scale auto`` sizes a run for per operation: its requests, or the engine's
        work counted in its warm-up's requests where that is more."""
        return max(self.requests_per_operation, self.engine_work_per_operation)

    def validate(self) -> None:
        if self.workload not in WORKLOADS and not (
            self.workload.endswith(".py") or self.design_file
        ):
            raise ConfigError(
                f"unknown workload {self.workload!r} (expected one of: {', '.join(WORKLOADS)}, "
                "a path to a locustfile, or a design file: .yaml, .yml or .json)"
            )
        if not self.rate_scale > 0:
            raise ConfigError(f"--rate-scale must be more than 0 (got {self.rate_scale})")
        if self.starting_limit is not None and self.starting_limit < 0:
            raise ConfigError(f"--starting-limit must be >= 0 (got {self.starting_limit})")
        if self.users < 1:
            raise ConfigError(f"--users must be >= 1 (got {self.users})")
        if self.spawn_rate is not None and self.spawn_rate <= 0:
            raise ConfigError(f"--spawn-rate must be > 0 (got {self.spawn_rate})")
        if self.keys < 1:
            raise ConfigError(f"--keys must be >= 1 (got {self.keys})")
        if self.metrics_port is not None and not 0 <= self.metrics_port <= 65535:
            raise ConfigError(f"--metrics-port must be 0 to 65535 (got {self.metrics_port})")
        if self.scale == "auto":
            if self.launch_rate() is None:
                raise ConfigError(
                    "--scale auto chooses the scale for the launch rate: give --rate (or rates "
                    "as a mapping, or stages, in the config file)"
                )
        elif self.scale is not None and not (
            isinstance(self.scale, float | int) and self.scale > 0
        ):
            raise ConfigError(f"--scale must be > 0 or auto (got {self.scale})")
        if self.client not in ("boto3", "fast"):
            raise ConfigError(f"--client must be boto3 or fast (got {self.client!r})")
        from loadgen.emulator.engines import ENGINES

        if self.engine not in ENGINES:
            raise ConfigError(
                f"--engine must be {', '.join(ENGINES[:-1])} or {ENGINES[-1]} (got {self.engine!r})"
            )
        if self.aws and self.endpoint:
            raise ConfigError(f"--aws and --endpoint {self.endpoint} exclude each other")
        self._check_localstack()
        self.duration_s()
        self.cost_window()
        self.load_argv(None)  # the open model's settings, checked before a target starts
        from loadgen.workload.processes import parse

        if parse(self.processes) not in ("auto", 1) and not self.open_model:
            raise ConfigError(
                f"--processes {self.processes} splits the open model's arrivals: give a rate "
                "(--rate, or rates or stages in the config file)"
            )
        from loadgen.design import keys as distributions

        distributions.validate_spec(self.distribution)

    def _check_localstack(self) -> None:
        if self.localstack and self.aws:
            raise ConfigError("--localstack and --aws exclude each other")
        if self.localstack and self.engine not in ("auto", "localstack"):
            raise ConfigError(
                f"--localstack and --engine {self.engine} exclude each other (with --emulate, "
                "LocalStack is the engine behind the partition model)"
            )
        if self.localstack_faults is not None:
            from loadgen.targets.localstack import Faults

            if not (self.localstack or self.engine == "localstack"):
                raise ConfigError(
                    f"--localstack-faults {self.localstack_faults} needs LocalStack "
                    "(--localstack, or --engine localstack)"
                )
            Faults.parse(self.localstack_faults)

    def duration_s(self) -> int:
        from locust.util.timespan import parse_timespan

        try:
            seconds = int(parse_timespan(self.duration))
        except ValueError:
            seconds = 0
        if seconds < 1:
            raise ConfigError(
                f"--duration must be a time span of at least 1s like 30s, 2m or 1h30m "
                f"(got {self.duration!r})"
            )
        return seconds

    def locust_argv(self, locustfile: Path, host: str | None) -> list[str]:
        argv = [
            "-f",
            str(locustfile),
            "--headless",
            "--users",
            str(self.users),
            "--spawn-rate",
            str(self.spawn_rate or self.users),
            "--run-time",
            f"{self.duration_s()}s",
            "--distribution",
            self.distribution,
            "--keys",
            str(self.keys),
            "--seed",
            str(self.seed),
        ]
        if host:
            argv += ["--host", host]
        if self.design:
            argv += ["--design", self.design]
        if self.region:
            argv += ["--region", self.region]
        # The web UI's running estimate prices as the summary will: the same file and region.
        if self.prices:
            argv += ["--prices", self.prices]
        argv += ["--prices-region", self.load_prices().region]
        if self.metrics_port is not None:
            argv += ["--metrics-port", str(self.metrics_port), "--metrics-host", self.metrics_host]
        argv += ["--client", self.client]
        return argv + self.locust_args


def cost_window(text: str | None) -> Any:
    """``--window``: ``month`` (or none: a month) or a span (``1h``, ``90m``, ``2d``), as a
    `loadgen.pricing.Window`; ConfigError naming the value otherwise."""
    from loadgen.design.values import span_s
    from loadgen.pricing import MONTH, Window

    if text is None or str(text).strip().lower() in ("month", "1month", "a month"):
        return MONTH
    try:
        seconds = span_s(text)
    except ValueError:
        seconds = 0.0
    if not seconds > 0:
        raise ConfigError(
            f"--window must be a time span like 1h, 90m or 2d, or month (got {text!r})"
        )
    return Window(hours=seconds / 3600.0)


def _pairs(value: dict[str, Any] | str, name: str, sep: str) -> str:
    if isinstance(value, str):
        return value
    if not isinstance(value, dict):
        raise ConfigError(f"{name} must be a mapping of operation to rate (got {value!r})")
    return ",".join(f"{key}{sep}{rate}" for key, rate in value.items())


def _stage_text(stages: list[Any] | str) -> str:
    if isinstance(stages, str):
        return stages
    parts = []
    for stage in stages if isinstance(stages, list) else [stages]:
        if not isinstance(stage, dict) or set(stage) != {"duration", "rate"}:
            raise ConfigError(
                f"stages: expected entries like {{duration: 30s, rate: 1000}} (got {stage!r})"
            )
        parts.append(f"{stage['duration']}:{stage['rate']}")
    return ",".join(parts)


def find_locustfile(workload: str) -> Path:
    """The locustfile of a named workload, or the path given (a design file: the design
    workload's). A named workload's is the installed package's (`loadgen.shipped`), whatever
    the current directory holds."""
    from loadgen import shipped
    from loadgen.design.loader import is_design_file

    if is_design_file(workload):
        workload = "design"
    elif workload.endswith(".py"):
        path = Path(workload)
        if not path.is_file():
            raise ConfigError(f"locustfile {workload!r} does not exist")
        return path
    path = shipped(f"workloads/{workload}.py")
    if not path.is_file():
        raise ConfigError(
            f"the package has no workload {workload!r} ({path} is missing: reinstall "
            "partition-heat, or give the locustfile's path)"
        )
    return path


@dataclass(frozen=True)
class Target:
    """Where a run sends its requests."""

    endpoint_url: str | None
    """None for real AWS."""
    description: str
    scale: float | None = None
    """The emulator's capacity scale, when the partition model stands in front."""
    reports_capacity: bool = True
    """Whether responses carry real ConsumedCapacity (moto's are constants)."""
    engine: str | None = None
    """The embedded engine (``dynamodb-local`` or ``moto``) when the harness started one."""
    engine_rate: float | None = None
    """Requests/s the embedded engine answered its warm-up at, where it was measured."""
    scale_auto: bool = False
    """Whether ``--scale auto`` chose `scale`."""
    largest_units: float | None = None
    """With ``--scale auto``: write units the largest request takes on one partition (AWS
    scale), which bounded the scale from below; None where nothing is known of it."""
    localstack_faults: Any = None
    """LocalStack's fault injection during the run (`loadgen.targets.localstack.Faults`),
    where LocalStack answers and says; None otherwise."""
    emulator_pid: int | None = None
    """The embedded emulator's process (its engine's are its children), whose CPU the run
    measures beside the load generator's (`loadgen.heat.cpu`)."""


@dataclass(frozen=True)
class EmulatorDefaults:
    """How a workload's table is modeled by the embedded emulator unless flags say otherwise."""

    scale: float | None = None
    """None: the emulator's own default."""
    billing: tuple[str, ...] = ()
    """Billing flags for the workload's table."""
    largest_units: float | None = None
    """Write units the workload's largest request takes on one partition, at AWS scale:
    ``--scale auto`` chooses no scale at which they overfill a partition's second."""


# Settings under which each workload's bad design visibly throttles at the rate the embedded
# engine serves here (a few hundred requests/s) while its good design does not. Orders runs
# a few dozen transactions/s of many units each: a lower scale brings its hot status key
# under its ceiling, and provisioned capacity keeps the whole table clear of the on-demand
# warm throughput, so only hot keys throttle. The table and its two GSIs share the account's
# default quota of 80,000 units each way, so each gets 26,000.
EMULATOR_DEFAULTS = {
    "orders": EmulatorDefaults(
        scale=0.02,
        # An order's TransactWriteItems puts up to --items-per-order (3) small line items under
        # one ORDER# key, at 2 units each (transactional).
        largest_units=6.0,
        billing=(
            "--billing-mode", "provisioned", "--read-capacity", "26000",
            "--write-capacity", "26000",
        ),
    ),
}  # fmt: skip


@contextlib.contextmanager
def _target(
    config: RunConfig, largest_units: float | None = None, starting_items: int = 0
) -> Iterator[Target]:
    """The run's target; ``largest_units``: a design file's largest request (write units on
    one partition), which bounds ``--scale auto`` as a workload's `EmulatorDefaults` do;
    ``starting_items``: the items its starting data writes, which an emulator prices later
    writes against (`_shadow_items`)."""
    from loadgen.targets import local as targets

    endpoint = config.endpoint or os.environ.get("AWS_ENDPOINT_URL_DYNAMODB")
    endpoint = endpoint or os.environ.get("AWS_ENDPOINT_URL")
    if config.aws:
        yield Target(None, _describe_aws(config.region))
        return
    if config.localstack and (endpoint or not config.emulate):
        from loadgen.targets.localstack import Faults, localstack_target

        faults = Faults.parse(config.localstack_faults) if config.localstack_faults else None
        with localstack_target(endpoint, faults) as localstack:
            if not config.emulate:  # LocalStack's own answers, no partition model
                yield Target(
                    localstack.endpoint_url,
                    localstack.description,
                    engine="localstack",
                    localstack_faults=localstack.faults,
                )
                return
            with _emulator(
                config, localstack.endpoint_url, localstack.description, largest_units,
                starting_items,
            ) as target:  # fmt: skip
                yield dataclasses.replace(target, localstack_faults=localstack.faults)
        return
    # Clients of a local endpoint sign with local credentials when none are configured
    # (`loadgen.client.credentials`), as under plain `locust -f`.
    if endpoint and not config.emulate:
        targets.probe(endpoint, timeout=5.0)
        yield Target(endpoint, endpoint, reports_capacity=False)
        return
    if endpoint:
        targets.probe(endpoint, timeout=5.0)
    with _emulator(config, endpoint, None, largest_units, starting_items) as target:
        yield target


@contextlib.contextmanager
def _emulator(
    config: RunConfig,
    endpoint: str | None,
    behind: str | None = None,
    largest_units: float | None = None,
    starting_items: int = 0,
) -> Iterator[Target]:
    """The embedded emulator, in front of ``endpoint`` (``behind`` says what it is) or of an
    engine of its own; ``largest_units`` and ``starting_items`` as `_target` takes them."""
    from loadgen.emulator.embedded import DEFAULT_SCALE, EmbeddedEmulator

    extra: list[str] = _shadow_items(starting_items)
    faults = None
    if endpoint is None and (config.localstack or config.engine == "localstack"):
        config.engine = "localstack"  # --localstack --emulate: LocalStack behind the model
        if config.localstack_faults:
            from loadgen.targets.localstack import Faults

            faults = Faults.parse(config.localstack_faults)
            extra += ["--localstack-faults", config.localstack_faults]
    defaults = EMULATOR_DEFAULTS.get(config.workload, EmulatorDefaults())
    scale = config.scale or defaults.scale or DEFAULT_SCALE
    auto = scale == "auto"
    largest = max(
        (units for units in (defaults.largest_units, largest_units) if units is not None),
        default=None,
    )
    billing_flags = ("--billing-mode", "--read-capacity", "--write-capacity")
    if not any(arg.split("=")[0] in billing_flags for arg in config.locust_args):
        config.locust_args += defaults.billing
    embedded = EmbeddedEmulator(
        scale=scale,
        launch_rate=_launch_load(config) if auto else None,
        largest_units=largest if auto else None,
        seed=config.seed,
        upstream=endpoint,
        engine=config.engine,
        run_seconds=config.duration_s(),
        extra_args=extra,
    )
    if embedded.engine is not None and embedded.engine.warning is not None:
        print(f"Warning: {embedded.engine.warning}", file=sys.stderr, flush=True)
    with embedded as emulator:
        if not auto and largest is not None and emulator.scale is not None:
            warning = _scale_warning(emulator.scale, largest)
            if warning is not None:
                print(f"Warning: {warning}", file=sys.stderr, flush=True)
        yield Target(
            emulator.endpoint_url,
            f"{_EMBEDDED} emulator ({emulator.endpoint_url}) in front of "
            f"{behind or emulator.behind}",
            scale=emulator.scale,
            engine=None if emulator.engine is None else emulator.engine.name,
            engine_rate=emulator.engine_rate,
            scale_auto=auto,
            largest_units=largest if auto else None,
            localstack_faults=faults,
            emulator_pid=emulator.pid,
        )


def _describe_aws(region: str | None) -> str:
    """Say which account and region a real-AWS run will hit; fail early without credentials."""
    import boto3
    import botocore.exceptions

    try:
        session = boto3.session.Session(region_name=region)
    except botocore.exceptions.ProfileNotFound as e:
        raise CredentialsError(
            f"AWS profile {e.kwargs.get('profile')!r} (from AWS_PROFILE) does not "
            "exist; expected one in ~/.aws/config or ~/.aws/credentials"
        ) from None
    except botocore.exceptions.BotoCoreError as e:
        raise CredentialsError(f"cannot read the AWS configuration for --aws: {e}") from None
    if session.get_credentials() is None:
        raise CredentialsError(
            "no AWS credentials found for --aws (configure a profile, AWS_ACCESS_KEY_ID/"
            "AWS_SECRET_ACCESS_KEY, or an instance role)"
        )
    if not session.region_name:
        raise CredentialsError("no AWS region for --aws (pass --region or set AWS_REGION)")
    try:
        account = session.client("sts").get_caller_identity()["Account"]
    except (botocore.exceptions.BotoCoreError, botocore.exceptions.ClientError) as e:
        raise CredentialsError(f"cannot identify the AWS account for --aws: {e}") from None
    return f"AWS account {account}, region {session.region_name}"


def run(config: RunConfig) -> dict[str, Any]:
    """Run the load test and return its results (also written to ``config.out``)."""
    design = None
    launch_units = None
    checked = None
    if config.design_file:
        from loadgen.design.loader import load_design

        design = load_design(config.workload, config.design)  # errors before a target starts
        if config.design is None and len(design.variants) > 1:
            others = ", ".join(name for name in design.variants if name != design.name)
            print(
                f"Design: ran {design.name}, the file's first variant; not run: {others} "
                "(--design NAME runs one, --design all each in turn)",
                file=sys.stderr,
                flush=True,
            )
        config.design = design.name
        launch_units = _launch_units(design, config)
        checked = _checked(design, config)
        if not config.open_model and not config.users_given:
            # The open model at the file's launch rates: the question a design asks.
            config.rates = {pid: r * config.rate_scale for pid, r in design.rates.items()}
    config.validate()
    config.load_prices()  # a bad prices file fails before any target starts
    locustfile = find_locustfile(config.workload)
    largest = None
    if design is not None:
        from loadgen.simulate.demand import largest_request

        # The file's largest request, as the simulation's model prices it: --scale auto
        # keeps it within a tenth of a partition's scaled second, as for the workloads, and
        # a scale given below that is said to be.
        found = largest_request(design)
        if found is not None:
            largest = found.units
        if found is not None and config.scale == "auto":
            print(
                f"Design: the largest request is {found.pattern}'s, {found.units:g} write units "
                f"on one key of {found.where}: --scale auto keeps it within "
                "a tenth of a partition's scaled second",
                file=sys.stderr,
                flush=True,
            )
    starting = None if design is None else _starting_plans(config, design)
    written = 0 if starting is None or not config.starting_data else _items(starting[0])
    if design is not None and config.scale == "auto" and config.open_model:
        _expect_retries(config, design, largest)
        stored: dict[str, int] = {}
        for plan in starting[0] if starting is not None and config.starting_data else ():
            stored[plan.table] = stored.get(plan.table, 0) + plan.count
        _expect_engine_work(config, design, stored)
    with _target(config, largest, written) as target:
        print(f"Target: {target.description}", file=sys.stderr, flush=True)
        if target.scale is not None:
            print(
                f"Partition model at scale {target.scale:g}: every ceiling and capacity is "
                f"x{target.scale:g} of AWS's{_auto_reason(config, target)}",
                file=sys.stderr,
                flush=True,
            )
        if config.retry_wait_s and target.scale not in (None, _smallest_scale(largest)):
            _expect_retry_wait(config, design, target.scale)
        if starting is not None:
            _prepare_design(config, design, target, starting)
        warning = _engine_warning(config, target)
        if warning is not None:
            print(f"Warning: {warning}", file=sys.stderr, flush=True)
        if checked is not None and target.scale is not None and target.scale < 1:
            checked = {**checked, "at_scale": _at_scale(design, config, target.scale)}
        return _run_locust(config, locustfile, target, launch_units, checked)


def _starting_plans(config: RunConfig, design: Any) -> tuple[list[Any], list[str], int]:
    """A design's starting data as the run writes it: its tables' plans, a note per cut
    population, and the item cap they were cut to (0: none written)."""
    from loadgen.design.starting import DEFAULT_LIMIT, starting_plans

    limit = DEFAULT_LIMIT if config.starting_limit is None else config.starting_limit
    plans, notes = starting_plans(design, limit=limit, seed=config.seed)
    return (plans, notes, limit) if limit else ([], notes, limit)


def _items(plans: list[Any]) -> int:
    return sum(plan.count for plan in plans)


def _launch_units(design: Any, config: RunConfig) -> dict[str, Any]:
    """Per access pattern, the units one execution consumes on each table and index, asked of
    the simulation's model (`loadgen.simulate.demand.pattern_units`): what the run's cost at
    launch demand is priced from (`loadgen.verdict.cost`)."""
    from loadgen.simulate.demand import pattern_units

    return pattern_units(design, seed=config.seed, distribution=config.distribution)


def _checked(design: Any, config: RunConfig) -> dict[str, Any]:
    """``loadgen check``'s answer for the design at the run's launch rates, as ``check
    --out`` writes it (`loadgen.simulate.launch.check`): the figures the diagnosis names the
    launch's demand, its hot keys and its remedies by, so that a run and check give one."""
    from loadgen.simulate.launch import check

    report = check(_at_launch(design, config), seed=config.seed, distribution=config.distribution)
    return report.to_dict()


def _at_scale(design: Any, config: RunConfig, scale: float) -> dict[str, Any]:
    """What the model expects of a run at ``scale`` (`throttled_at_scale`), its clients
    retrying as the run's do: the throttles a scaled run's bunched seconds make, which a
    pattern's verdict tells apart from AWS's."""
    from loadgen.simulate.launch import AT_SCALE_S, throttled_at_scale

    shares = throttled_at_scale(_at_launch(design, config), scale, **_clients_modelled(config))
    return {
        "scale": scale,
        "seconds": AT_SCALE_S,
        "throttled_share": {pid: round(share, 6) for pid, share in shares.items()},
    }


def _at_launch(design: Any, config: RunConfig) -> Any:
    """The design at the run's launch rates: the file's, times ``--rate-scale``."""
    from dataclasses import replace

    if config.rate_scale == 1:
        return design
    return replace(design, rates={pid: r * config.rate_scale for pid, r in design.rates.items()})


def _prepare_design(
    config: RunConfig, design: Any, target: Target, starting: tuple[list[Any], list[str], int]
) -> None:
    """A design file's run: its rates (unless --users), and its starting data (`_starting_plans`)
    written."""
    print(
        f"Design: {design.title} ({design.name}), {len(design.patterns)} access patterns, "
        f"{sum(design.rates.values()) * config.rate_scale:,.1f} operations/s at launch"
        + (f" (x{config.rate_scale:g})" if config.rate_scale != 1 else ""),
        file=sys.stderr,
        flush=True,
    )
    for note in design.notes:
        print(f"Design: {note}", file=sys.stderr, flush=True)
    args = ["--design-file", config.workload, "--launch-scale", repr(config.rate_scale)]
    if not config.open_model and config.users_given:
        args.append("--closed")
    plans, notes, limit = starting
    items = _items(plans)
    if not config.starting_data or not plans:
        why = "--no-starting-data" if not config.starting_data else "the file gives none"
        print(
            f"Starting data: none ({why}): the tables are empty when the load begins",
            file=sys.stderr,
            flush=True,
        )
        items = 0
    elif target.endpoint_url is None and not config.create_tables_on_aws:
        print(
            "Starting data: not written on AWS (the run writes into no table it was not asked "
            "to create; use loadgen prefill DESIGN_FILE --aws)",
            file=sys.stderr,
            flush=True,
        )
        items = -1
    else:
        for note in notes:
            print(f"Starting data: {note}", file=sys.stderr, flush=True)
        _write_starting_data(config, target, limit)
    args += ["--starting-items", str(items)]
    config.locust_args += args


def _write_starting_data(config: RunConfig, target: Target, limit: int) -> None:
    """``loadgen prefill DESIGN_FILE`` in a child process: its threads stay out of this
    process, which runs Locust on gevent."""
    import subprocess

    command = [
        sys.executable, "-m", "loadgen", "prefill", config.workload,
        "--design", str(config.design), "--items", str(limit), "--seed", str(config.seed),
        "--allow-existing", "--quiet", "--starting-data",
    ]  # fmt: skip
    if target.endpoint_url is None:
        command += ["--aws", "--create-table"] + (
            ["--region", config.region] if config.region else []
        )
    else:
        command += ["--endpoint", target.endpoint_url]
    done = subprocess.run(command, capture_output=True, text=True)
    for line in (done.stderr + done.stdout).splitlines():
        if line.startswith(("Prefilled", "loadgen: error")):
            print(f"Starting data: {line}", file=sys.stderr, flush=True)
    if done.returncode != 0:
        raise ConfigError(f"starting data not written (loadgen prefill exit {done.returncode})")


def _smallest_scale(largest: float | None) -> float:
    """The smallest scale ``--scale auto`` may take, whose requests `_expect_retries` asks."""
    from loadgen.emulator.engines import faithful_scales

    return faithful_scales(largest)[-1]


def _modelled_requests(config: RunConfig, design: Any, scale: float) -> LaunchRequests:
    """`launch_requests` of the run's launch, duration and clients' retries at ``scale``."""
    from loadgen.simulate.launch import launch_requests

    try:
        return launch_requests(
            _at_launch(design, config), config.duration_s(), scale, **_clients_modelled(config)
        )
    except InvalidSetting as error:  # the run's flags: --max-attempts goes to its clients
        raise error.named({"attempts": "--max-attempts", "seed": "--seed"}) from None


def _expect_retry_wait(config: RunConfig, design: Any, scale: float) -> None:
    """The wait per operation at the scale ``--scale auto`` chose, where it is longer than at
    the smallest scale `_expect_retries` asked: the in-flight cap holds the operations waiting
    (`_size_in_flight`). Without a retry quota (the legacy mode) the waits grow with the
    scale: counter single waits 5.3 s an operation at 0.05 and 6.6 s at 0.1."""
    wait = _modelled_requests(config, design, scale).retry_wait_s
    config.retry_wait_s = max(config.retry_wait_s, wait)


def _expect_retries(config: RunConfig, design: Any, largest: float | None) -> None:
    """A design's requests per operation at launch, retries included, for ``--scale auto``:
    asked of the model at the smallest scale the run may take, where one client's retry quota
    lasts longest against the run's requests (the most retries: the scale it gives is one the
    run delivers whichever the engine's rate makes it)."""
    expected = _modelled_requests(config, design, _smallest_scale(largest))
    config.requests_per_operation = ratio = expected.per_operation
    config.retry_wait_s = expected.retry_wait_s
    if ratio > 1.0 + 1e-6:
        launch = config.launch_rate() or 0.0
        print(
            f"Design: the model expects {ratio:.2f} requests per operation at launch (a read "
            f"over every shard, the SDK's retries of throttled attempts): "
            f"{launch * ratio:,.0f} requests/s where {launch:,.0f} operations/s are asked; "
            "--scale auto sizes the run for the requests",
            file=sys.stderr,
            flush=True,
        )


def _expect_engine_work(
    config: RunConfig, design: Any, stored: Mapping[str, int] | None = None
) -> None:
    """A design's work for the embedded engine per operation at launch, in requests of its
    warm-up, for ``--scale auto``: each pattern's requests (`request_shapes`) weighed by
    `engine_work` on the engine the run will start, over the file's mix; ``stored``: the
    items of each table the run writes before its load. A throttled attempt never reaches
    the engine, so its retries are not counted here (they are in
    `RunConfig.requests_per_operation`)."""
    from loadgen.emulator.engines import engine_work
    from loadgen.simulate.demand import RequestShape, request_shapes

    stored = stored or {}
    engine = _engine_name(config)

    def work(shape: RequestShape) -> float:
        return engine_work(shape.operation, under(shape), engine=engine, index=shape.on_index)

    def under(shape: RequestShape) -> int:
        """Its items, where a Query's table holds the starting data they are of."""
        return shape.items if shape.table is None or stored.get(shape.table) else 0

    launch = _at_launch(design, config)
    shapes = request_shapes(launch, launch.generators(seed=config.seed))
    total = math.fsum(launch.rates.values())
    weighed = math.fsum(
        rate * math.fsum(count * work(shape) for shape, count in shapes[pid].items())
        for pid, rate in launch.rates.items()
    )
    config.engine_work_per_operation = ratio = weighed / total if total > 0 else 1.0
    if ratio > max(1.0, config.requests_per_operation) + 1e-6:
        queries: dict[str, int] = {}  # the most items under a Query's key, by where it reads
        others = set()
        for shape in (shape for of in shapes.values() for shape in of if work(shape) > 1.0):
            if shape.table is None:
                others.add(f"{shape.operation} of {shape.items} items")
            else:
                where = f"{'an index of ' if shape.on_index else ''}{shape.table}"
                queries[where] = max(queries.get(where, 0), under(shape))
        heavy = sorted(others) + [
            f"a Query of {where} (up to {items:,} items under its key)"
            for where, items in sorted(queries.items())
        ]
        grows = (
            "moto's work grows with a request's items, and it sorts every item under a Query's key"
            if engine == "moto"
            else "DynamoDB Local's work grows with a request's items"
        )
        print(
            f"Design: the embedded engine's work comes to {ratio:.2f} of its warm-up's "
            f"requests per operation at launch ({', '.join(heavy)}: {grows}); --scale auto "
            "sizes the run for that work",
            file=sys.stderr,
            flush=True,
        )


def _engine_name(config: RunConfig) -> str:
    """The engine an embedded target of this run starts (`choose_engine`); DynamoDB Local's
    name where it cannot tell (LocalStack's DynamoDB is DynamoDB Local's)."""
    from loadgen.emulator.engines import choose_engine

    try:
        return choose_engine(config.engine).name
    except HarnessError:
        return "dynamodb-local"


IN_FLIGHT_HEADROOM = 2.0
"""``--max-in-flight`` not given: the cap is at least this many times the operations the
model expects in flight at once (each waiting for its retries as `RunConfig.retry_wait_s`
says), so that what a design's retries hold does not drop the arrivals behind them. A model
choice: a run's throttled share varies about the model's, and with it the waits."""


def _size_in_flight(config: RunConfig, target: Target) -> None:
    """Raise the run's in-flight cap where the design's retries would fill the default one,
    and say so (``--max-in-flight`` given: left as it is)."""
    from loadgen.workload.arrivals import DEFAULT_MAX_IN_FLIGHT

    launch = config.launch_rate()
    if config.max_in_flight is not None or not config.retry_wait_s or launch is None:
        return
    waiting = launch * (target.scale or 1.0) * config.retry_wait_s
    needed = math.ceil(waiting * IN_FLIGHT_HEADROOM / 100) * 100
    if needed <= DEFAULT_MAX_IN_FLIGHT:
        return
    config.max_in_flight = needed
    print(
        f"Load generator: --max-in-flight {needed:,}: the model expects {waiting:,.0f} "
        f"operations in flight at once, each waiting {config.retry_wait_s:.2f} s on average "
        f"for the SDK's retries of its throttled attempts (the default cap is "
        f"{DEFAULT_MAX_IN_FLIGHT:,}; --max-in-flight N sets it)",
        file=sys.stderr,
        flush=True,
    )


def _clients_modelled(config: RunConfig) -> dict[str, Any]:
    """The run's clients as the model's launch figures take them (`launch_requests`,
    `throttled_at_scale`): the run's seed and key distribution, and the retry mode and
    attempts of ``--retry-mode`` and ``--max-attempts`` among the flags that go to the
    workload."""
    import argparse

    flags = argparse.ArgumentParser(add_help=False)
    flags.add_argument("--retry-mode", default=RETRY_MODE)
    flags.add_argument("--max-attempts", type=int)
    known, _ = flags.parse_known_args(config.locust_args)
    mode, attempts = modelled(known.retry_mode, known.max_attempts)
    return {
        "seed": config.seed,
        "distribution": config.distribution,
        "attempts": attempts,
        "retry_mode": mode,
    }


def _launch_requests(config: RunConfig) -> float | None:
    """Requests/s at AWS scale the run's launch sends, its retries of throttled attempts
    included: what its load-generator processes carry."""
    launch = config.launch_rate()
    return None if launch is None else launch * config.requests_per_operation


def _launch_load(config: RunConfig) -> float | None:
    """What ``--scale auto`` sizes the run for, per second at AWS scale
    (`RunConfig.load_per_operation`)."""
    launch = config.launch_rate()
    return None if launch is None else launch * config.load_per_operation


def _auto_reason(config: RunConfig, target: Target) -> str:
    """Why ``--scale auto`` chose the target's scale, or nothing."""
    launch = _launch_load(config)
    if not target.scale_auto or target.scale is None or launch is None:
        return ""
    from loadgen.emulator.engines import size_reason

    what = "operations/s"
    if config.load_per_operation > max(1.0, config.requests_per_operation):
        what = "warm-up requests' work/s"
    elif config.requests_per_operation != 1.0:
        what = "requests/s"
    offer = f" (--scale auto: {launch:,.0f} {what} at AWS scale offer "
    offer += f"{launch * target.scale:,.0f}/s, "
    if target.engine_rate is None:
        return offer + "at most half of what the engine answered at its warm-up)"
    return offer + size_reason(launch, target.engine_rate, target.largest_units, target.scale) + ")"


MAX_SHADOW_ITEMS = 1_000_000
"""Most items an embedded emulator's write-pricing shadow is sized to hold for a design's
starting data (about 600 MB of items of 260 bytes)."""


def _shadow_items(starting_items: int) -> list[str]:
    """The emulator's flag that sizes its write-pricing shadow to hold the design's starting
    data (up to `MAX_SHADOW_ITEMS`): a write to a stored item the shadow no longer holds is
    priced as a new item's, so an update that moves an index entry costs 1 index write unit
    where DynamoDB charges 2."""
    from loadgen.emulator.server import DEFAULT_SHADOW_ITEMS

    if starting_items <= DEFAULT_SHADOW_ITEMS:
        return []
    wanted = min(MAX_SHADOW_ITEMS, starting_items + starting_items // 10)
    return ["--shadow-items", str(wanted)]


def _scale_warning(scale: float, largest_units: float) -> str | None:
    """Say so when a scale given is below the smallest that models the run's largest request
    (`loadgen.emulator.engines.smallest_faithful_scale`, the bound --scale auto keeps to)."""
    from loadgen.emulator.engines import LARGEST_REQUEST_SHARE, smallest_faithful_scale

    floor = smallest_faithful_scale(largest_units)
    if scale >= floor:
        return None
    return (
        f"at scale {scale:g} the largest request, {largest_units:g} write units on one "
        f"partition, takes more than {LARGEST_REQUEST_SHARE:.0%} of a partition's scaled "
        f"second (1,000 x {scale:g} = {1000 * scale:g} units): its seconds hold a few such "
        "requests, and a key the launch asks well under a partition's ceiling may throttle "
        f"by chance; {floor:g} is the smallest scale that models it (--scale auto keeps to it)"
    )


def _engine_warning(config: RunConfig, target: Target) -> str | None:
    """Say so before the run when the rate asked (``--rate``, or per-operation rates given as
    a mapping) is near what the embedded engine answered at its warm-up."""
    if target.engine_rate is None or target.scale is None:
        return None
    rates = config.rates if isinstance(config.rates, dict) else {}
    aws = config.rate or sum(float(r) for r in rates.values())
    offered = aws * target.scale
    work = offered * config.load_per_operation
    if work < target.engine_rate / 2:
        return None
    weighed = f", {work:,.0f} of the engine's warm-up requests' work" if work > offered else ""
    return (
        f"this run offers {offered:,.0f} operations/s to the emulator (each one or more "
        f"requests{weighed}) and its engine, {target.engine}, answered its warm-up at "
        f"{target.engine_rate:,.0f} requests/s: the load may not be delivered; "
        "--engine moto answers in the emulator's own process and carries more where cores are "
        "few (docs/targets.md: The embedded engine)"
    )


def _run_locust(
    config: RunConfig,
    locustfile: Path,
    target: Target,
    launch_units: dict[str, Any] | None = None,
    checked: dict[str, Any] | None = None,
) -> dict[str, Any]:
    # Locust monkey-patches the standard library when imported: import it only here, after
    # the target (a child process) has started.
    import gevent
    import locust
    from locust.argument_parser import get_parser
    from locust.env import Environment
    from locust.util.load_locustfile import load_locustfile

    from loadgen.heat.results import format_summary, write_results
    from loadgen.verdict.summary import conclude
    from loadgen.workload import processes
    from loadgen.workload.user import DynamoUser, prepare, record, results_of, serve_metrics

    user_classes, shape_classes = load_locustfile(str(locustfile))
    workloads = [c for c in user_classes.values() if issubclass(c, DynamoUser)]
    if not workloads:
        raise ConfigError(f"{locustfile} defines no DynamoUser workload")
    parser = get_parser(default_config_files=[])
    argv = config.locust_argv(locustfile, target.endpoint_url)
    if config.open_model:
        _size_in_flight(config, target)
        argv += [*config.load_argv(target.scale), "--users", "1", "--spawn-rate", "1"]
    if not target.reports_capacity and not any(
        arg.startswith("--consumed-capacity") for arg in argv
    ):
        # moto reports constant consumed capacity, DynamoDB Local reports it by AWS's rules
        # but LocalStack may not: compute it from item sizes instead.
        argv += ["--consumed-capacity", "computed"]
    try:
        parsed = parser.parse_args(argv)
    except SystemExit:
        raise ConfigError(f"Locust rejected the options {' '.join(config.locust_args)}") from None
    environment = Environment(
        user_classes=list(user_classes.values()),
        shape_class=shape_classes[0] if shape_classes else None,
        events=locust.events,
        host=target.endpoint_url,
        parsed_options=parsed,
        locustfile=str(locustfile),
    )
    workload = workloads[0]
    prepare(environment, workload)
    metrics = serve_metrics(environment)  # before the init hooks, so errors reach the CLI
    count = _processes(config, target)
    pool = contextlib.ExitStack()
    workers = None
    runner: Any
    if count > 1:  # this process is the master of `count` workers, which drive the arrivals
        workers = pool.enter_context(processes.workers(locustfile, count, environment))
        runner = environment.runner  # Locust's master, bound on loopback
    else:
        runner = environment.create_local_runner()
    locust.events.init.fire(environment=environment, runner=runner, web_ui=None)  # type: ignore[no-untyped-call]
    recorder = record(environment)
    recorder.load.processes = count
    if metrics is not None:
        print(f"Metrics: {metrics.url}", file=sys.stderr, flush=True)
    if workers is not None:
        with _closing_on_error(pool):
            workers.wait_connected(runner)
    progress = gevent.spawn(_progress, environment, recorder)
    # One user launches the arrivals, one per worker where workers drive them.
    users = count if config.open_model else config.users
    runner.start(users, spawn_rate=config.spawn_rate or users)
    meter = _cpu_meter(target, () if workers is None else workers.pids)
    at_end: list[Any] = []  # the readings of the GSIs' write buffers as the load ends

    def end_load() -> None:
        # Its request goes out before the load stops: a buffer drains from then on, for the
        # second a master's stop takes and the seconds until its workers' last reports.
        at_end.append(gevent.spawn(_target_buffers, target))
        gevent.sleep(0)
        processes.end_run(runner, meter.hold)

    stopper = gevent.spawn_later(config.duration_s(), end_load)
    signals: list[int] = []

    def stop_early(signum: int) -> None:
        # Stop the users and fall through to the summary: results gathered are kept.
        signals.append(signum)
        gevent.spawn(end_load)

    handlers = [
        gevent.signal_handler(signum, stop_early, signum)
        for signum in (signal.SIGINT, signal.SIGTERM)
    ]
    try:
        runner.greenlet.join()
    finally:
        for handler in handlers:
            handler.cancel()
        stopper.kill()
        progress.kill()
        pool.close()  # the workers quit with the master
    interrupted = bool(signals)
    recorder.load.cpu = meter.read()
    results = results_of(
        environment,
        workload,
        workload=config.workload,
        users=None if config.open_model else config.users,
        target=target.description,
        engine=target.engine,
        engine_rate=None if target.engine_rate is None else round(target.engine_rate),
        scale=target.scale,
        interrupted=interrupted,
        **(
            {"localstack_faults": target.localstack_faults.to_dict()}
            if target.localstack_faults is not None
            else {}
        ),
    )
    answers, buffers = _target_answers(target)
    if answers is not None:
        results["target_answers"] = answers
    buffers = next((read.get() for read in at_end if read.get()), buffers)
    if buffers:
        results["gsi_buffers"] = buffers
    for pattern in (results.get("design") or {}).get("patterns") or ():
        pattern["units_per_execution"] = (launch_units or {}).get(pattern["id"])
    if checked is not None and results.get("design"):
        at_scale = checked.pop("at_scale", None)
        results["design"]["check"] = checked
        if at_scale is not None:
            results["design"]["at_scale"] = at_scale
    print(format_summary(results), flush=True)
    for line in _scale_check(target, results):
        print(line, flush=True)
    # The diagnosis; a design's verdicts; the cost a month.
    print("\n".join(conclude(results, config.load_prices(), config.cost_window())), flush=True)
    if config.out:
        write_results(results, config.out)
        print(f"\nResults written to {config.out}", file=sys.stderr)
    if metrics is not None:
        metrics.close(linger=0.0 if interrupted else float(parsed.metrics_linger or 0.0))
    if interrupted:
        raise Interrupted(signals[0])
    return results


def _processes(config: RunConfig, target: Target) -> int:
    """The load-generator processes of the run (``--processes``), said before it starts."""
    from loadgen.heat.cpu import usable_cores
    from loadgen.workload import processes

    asked = processes.parse(config.processes)
    if not config.open_model:
        return 1  # Locust's users, in this process
    launch = _launch_requests(config)  # a design's retries of throttled attempts included
    attempts = None if launch is None else launch * (target.scale or 1.0)
    reserved = (target.emulator_pid is not None) + (target.engine in _ENGINE_PROCESSES)
    count, why = processes.choose(
        asked, attempts_per_s=attempts, client=config.client, cores=usable_cores(),
        reserved=reserved,
    )  # fmt: skip
    drive = "processes drive" if count > 1 else "process drives"
    print(f"Load generator: {count} {drive} the arrivals ({why})", file=sys.stderr, flush=True)
    return count


_ENGINE_PROCESSES = frozenset({"dynamodb-local", "localstack"})
"""Embedded engines that run in a process of their own, beside the emulator's."""


@contextlib.contextmanager
def _closing_on_error(stack: contextlib.ExitStack) -> Iterator[None]:
    try:
        yield
    except BaseException:
        stack.close()
        raise


def _cpu_meter(target: Target, workers: tuple[int, ...] = ()) -> Any:
    """The CPU of the run's processes from the start of the load (`loadgen.heat.cpu`): this
    one's, its workers', and the embedded emulator's with its engine's."""
    from loadgen.heat.cpu import CpuMeter

    processes = [("load generator", pid) for pid in workers or (os.getpid(),)]
    if workers:
        processes.append(("load-generator master", os.getpid()))
    if target.emulator_pid is not None:
        processes.append(("emulator", target.emulator_pid))
    return CpuMeter(processes)


def _scale_check(target: Target, results: dict[str, Any]) -> list[str]:
    """``--scale auto`` checked against what the machine delivered, not only the engine's
    warm-up: where the run fell short, the scale it would have delivered (kept in the
    results' ``load.delivered_scale``), and that its patterns were judged on the machine."""
    load = results.get("load")
    if not target.scale_auto or target.scale is None or not load or load.get("delivered"):
        return []
    from loadgen.emulator.engines import delivered_scale

    offered, achieved = float(load["offered_per_s"]), float(load["achieved_per_s"])
    share = achieved / offered if offered else 1.0
    lower = delivered_scale(target.scale, share, target.largest_units)
    load["delivered_scale"] = lower
    what = (
        f"--scale {lower:g} is the largest it would deliver: run again with it"
        if lower is not None
        else "no faithful scale is lower (its largest request would overfill a partition's "
        "second): run on a machine with more cores, or with --rate-scale below 1"
    )
    return [
        "",
        f"Scale: --scale auto chose {target.scale:g} from the engine's warm-up, and this "
        f"machine delivered {share:.0%} of the load offered at it; {what}. What the load did "
        "not reach is not judged.",
    ]


ANSWERS_TIMEOUT_S = 5.0
"""How long a run's end waits for the emulator's ``/metrics`` before saying why it waits."""
ANSWERS_BACKLOG_S = 60.0
"""How long it then waits for them: an emulator whose engine fell behind answers the requests
the run sent before ``/metrics`` (moto in the emulator's process, a run delivering 52% of
its load with 1,000 requests in flight: 10.6 s after the run's end)."""


BUFFERS_TIMEOUT_S = 1.0
"""How long the load's end waits for the emulator's GSI buffers; one that answers later (its
engine fell behind) has them read with its counts (`_target_answers`)."""


def _target_buffers(target: Target) -> list[dict[str, Any]]:
    """The emulator's GSI write buffers as the load ends (`loadgen.emulator.metrics.buffers`):
    a buffer drains at its index's ceiling from then on, for the seconds a master takes to
    stop its workers and have their last reports (3.2 s of a two-process run here) and the
    results take. [] for a target that is not the emulator, or that does not answer within
    `BUFFERS_TIMEOUT_S`."""
    if target.scale is None or target.endpoint_url is None:
        return []
    from loadgen.emulator.metrics import buffers
    from loadgen.targets import emulator_metrics

    text = emulator_metrics(target.endpoint_url, timeout=BUFFERS_TIMEOUT_S, limit=None)
    try:
        return buffers(text) if text is not None else []
    except ValueError:
        return []


def _target_answers(target: Target) -> tuple[dict[str, int] | None, list[dict[str, Any]]]:
    """The requests the partition model answered, by outcome, as its ``/metrics`` says, and
    its GSIs' write buffers (`loadgen.emulator.metrics.buffers`).

    Every attempt counted when it was answered, the attempts of calls the run's end cut off
    included: a call is reported to Locust only once its SDK retries end, and in an
    overloaded run the calls still retrying at the end are the most throttled. None for a
    target that is not the emulator, or when it does not answer.
    """
    if target.scale is None or target.endpoint_url is None:
        return None, []
    from loadgen.emulator.metrics import answered, buffers
    from loadgen.targets import emulator_metrics

    asked = time.monotonic()
    text = emulator_metrics(target.endpoint_url, timeout=ANSWERS_TIMEOUT_S, limit=None)
    if text is None and time.monotonic() - asked >= ANSWERS_TIMEOUT_S:  # not refused: slow
        print(
            f"Target: the emulator did not answer /metrics within {ANSWERS_TIMEOUT_S:g} s "
            "(an emulator whose engine fell behind answers the requests sent before it "
            f"first); waiting up to {ANSWERS_BACKLOG_S:g} s for its counts",
            file=sys.stderr,
            flush=True,
        )
        text = emulator_metrics(target.endpoint_url, timeout=ANSWERS_BACKLOG_S, limit=None)
    try:
        if text is None:
            raise ValueError(f"{target.endpoint_url}/metrics did not answer")
        return answered(text), buffers(text)
    except ValueError as e:
        log.warning("could not read the emulator's answers from its metrics: %s", e)
        return None, []


def _progress(environment: Any, recorder: Any, interval: float = 2.0) -> None:
    import gevent

    start = time.monotonic()
    while True:
        gevent.sleep(interval)
        total = environment.stats.total
        throttled = sum(c.throttled_attempts for c in recorder.operations.values())
        print(
            f"[{time.monotonic() - start:5.0f}s] users {environment.runner.user_count:>4}  "
            f"requests {total.num_requests:>8}  req/s {total.current_rps:>7.1f}  "
            f"failures {total.num_failures:>6}  throttled attempts {throttled:>6}"
            + _load_progress(recorder.load),
            file=sys.stderr,
            flush=True,
        )


def _load_progress(ledger: Any) -> str:
    """The open model's last complete second: offered, achieved and dropped so far."""
    if ledger.plan is None or len(ledger.seconds) < 2:
        return ""
    last = sorted(ledger.seconds)[-2]
    column = ledger.seconds[last]
    dropped = sum(c.dropped for c in ledger.seconds.values())
    return f"  offered/s {column.offered:>6}  achieved/s {column.achieved:>6}  dropped {dropped:>7}"
