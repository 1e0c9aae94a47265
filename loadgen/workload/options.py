"""The workload options: Locust command-line arguments shared by every workload.

They are added to Locust's own parser, so ``locust -f workloads/counter.py --design sharded``
works as well as ``loadgen run counter --design sharded``, and Locust's master hands them to
its workers in distributed mode. Workload-specific options (``--shards``, ``--clock-speed``,
...) are added by the workload through `add_argument`.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from loadgen.client import CLIENTS, RETRY_MODES, RetryPolicy
from loadgen.design import keys as distributions
from loadgen.errors import ConfigError
from loadgen.refusals import DEFAULT_RETRY_MODE
from loadgen.workload.arrivals import ARRIVALS, ArrivalPlan, plan_from_parsed

__all__ = [
    "Billing",
    "WorkloadOptions",
    "add_argument",
    "add_common_arguments",
    "add_heat_arguments",
    "add_load_arguments",
    "endpoint_of",
    "parse_mix",
]


def add_argument(parser: Any, flag: str, **kwargs: Any) -> None:
    """Add ``flag`` to Locust's parser unless a workload loaded earlier already added it."""
    if flag in parser._option_string_actions:
        return
    group = _group(parser)
    group.add_argument(flag, **kwargs)


def _group(parser: Any) -> Any:
    group = getattr(parser, "_loadgen_group", None)
    if group is None:
        group = parser.add_argument_group("Partition Heat workload options")
        parser._loadgen_group = group
    return group


def add_common_arguments(parser: Any) -> None:
    """The options every workload understands."""
    add_argument(parser, "--design", default=None, help="Key design (each workload lists its own)")
    add_argument(
        parser,
        "--distribution",
        default="zipf:0.99",
        help="Key distribution: uniform, zipf:S, hotspot:DATA:OPS, latest, sequential, "
        "exponential:P (default zipf:0.99)",
    )
    add_argument(parser, "--keys", type=int, default=1000, help="Size of the key space")
    add_argument(parser, "--seed", type=int, default=1, help="Seed for key choice")
    add_argument(
        parser, "--scramble", action="store_true", help="Scatter hot ranks over the key space"
    )
    add_argument(parser, "--mix", default="", help="Operation mix, e.g. put=8,query=1")
    add_argument(parser, "--table", default=None, help="Table name (default: per workload)")
    add_argument(
        parser,
        "--create-table",
        action="store_true",
        help="Create the table when missing against real AWS (local targets always may)",
    )
    add_argument(
        parser,
        "--retry-mode",
        default=DEFAULT_RETRY_MODE,
        help=f"SDK retry mode: {', '.join(RETRY_MODES)}",
    )
    add_argument(
        parser, "--max-attempts", type=int, default=None, help="SDK attempts per call in all"
    )
    add_argument(
        parser,
        "--client",
        default="boto3",
        help=f"DynamoDB client: {' or '.join(CLIENTS)} (default boto3; fast: geventhttpclient)",
    )
    add_argument(
        parser,
        "--tasks-per-user",
        type=int,
        default=0,
        help="Stop each user after this many tasks, and the run once all have (default 0: no "
        "limit); with --seed, runs of the same options then send the same requests",
    )
    add_argument(parser, "--region", default=None, help="AWS region (default: the SDK's)")
    add_argument(
        parser,
        "--prices",
        default=None,
        metavar="FILE",
        help="Prices file of the web UI's running cost (default: the package's)",
    )
    add_argument(
        parser,
        "--prices-region",
        default=None,
        metavar="REGION",
        help="Region the web UI's running cost is priced in (default us-east-1)",
    )
    add_argument(
        parser,
        "--billing-mode",
        default=None,
        help="Billing mode of a table the workload creates: on-demand (default) or provisioned",
    )
    add_argument(
        parser,
        "--read-capacity",
        type=int,
        default=100,
        help="Provisioned read units of the table and of each GSI (provisioned only)",
    )
    add_argument(
        parser,
        "--write-capacity",
        type=int,
        default=100,
        help="Provisioned write units of the table and of each GSI (provisioned only)",
    )
    add_heat_arguments(parser)
    add_load_arguments(parser)


def add_load_arguments(parser: Any) -> None:
    """The open model's options (see `loadgen.workload.arrivals`)."""
    add_argument(
        parser,
        "--rate",
        type=float,
        default=0,
        help="Open model: launch traffic in operations/s at AWS scale, split by the mix "
        "(default 0: closed model, users as fast as they go)",
    )
    add_argument(
        parser,
        "--rates",
        default="",
        help="Open model: per-operation rates at AWS scale, e.g. increment=2000,read=200",
    )
    add_argument(
        parser,
        "--arrivals",
        default="constant",
        choices=ARRIVALS,
        help="Open model: constant gaps or a Poisson process (default constant)",
    )
    add_argument(parser, "--ramp", default="", help="Open model: climb to the rate over this span")
    add_argument(
        parser,
        "--stages",
        default="",
        help="Open model: DURATION:RATE,... move linearly to each rate in turn "
        "(e.g. 30s:1000,1m:3000)",
    )
    add_argument(
        parser,
        "--max-in-flight",
        type=int,
        default=None,
        help="Open model: operations in flight at once over the run; an arrival finding none "
        "free is dropped (default 1000)",
    )
    add_argument(
        parser,
        "--rate-scale",
        type=float,
        default=None,
        help="Open model: the target's capacity scale; the run offers the rates times it "
        "(loadgen run sets it for its emulator; default 1)",
    )
    # Set by the master when a run starts: the users that share the rate. A worker cannot
    # see the master's --users (Locust sends workers only the options it does not define).
    add_argument(parser, "--rate-drivers", type=int, default=0, help=argparse.SUPPRESS)


def add_heat_arguments(parser: Any) -> None:
    """The heat exporter's options (see `loadgen.heat.exporter`)."""
    add_argument(
        parser,
        "--metrics-port",
        type=int,
        default=None,
        help="Serve Prometheus metrics on this port (master or local runner only; default off)",
    )
    add_argument(
        parser,
        "--metrics-host",
        default="127.0.0.1",
        help="Address the metrics server binds (default 127.0.0.1, loopback only)",
    )
    add_argument(
        parser,
        "--metrics-linger",
        type=float,
        default=0.0,
        help="Keep serving metrics this many seconds after the run, for a last scrape",
    )
    add_argument(
        parser,
        "--heat-buckets",
        type=int,
        default=256,
        help="Partition-hash buckets per table and index, 1 to 1024 (default 256)",
    )
    add_argument(
        parser, "--top-keys", type=int, default=20, help="Hottest keys exported per table (20)"
    )
    add_argument(
        parser,
        "--hash-keys",
        default=None,
        metavar="SALT",
        help="Replace keys by their keyed BLAKE2 hash with this salt (stable for one salt)",
    )
    add_argument(
        parser,
        "--consumed-capacity",
        default="auto",
        choices=("auto", "reported", "computed"),
        help="Consumed units: as the target reports them, computed from item sizes, or auto "
        "(reported when present)",
    )


def parse_mix(text: str, defaults: Mapping[str, int]) -> dict[str, int]:
    """Parse ``put=8,query=1`` into weights over ``defaults``' operations.

    Operations not named keep their default weight; naming an unknown one is an error.
    """
    mix = dict(defaults)
    for part in filter(None, (p.strip() for p in text.split(","))):
        name, sep, weight = part.partition("=")
        if name not in defaults:
            raise ConfigError(
                f"unknown operation {name!r} in --mix (expected: {', '.join(sorted(defaults))})"
            )
        try:
            value = int(weight) if sep else -1
        except ValueError:
            value = -1
        if value < 0:
            raise ConfigError(f"--mix weight for {name!r} must be an integer >= 0 (got {part!r})")
        mix[name] = value
    if not any(mix.values()):
        raise ConfigError(f"--mix {text!r} leaves every operation at weight 0")
    return mix


BILLING_MODES = {"on-demand": "PAY_PER_REQUEST", "provisioned": "PROVISIONED"}


@dataclass(frozen=True)
class Billing:
    """How a table the workload creates is billed: on demand, or provisioned units."""

    mode: str = "on-demand"
    read_capacity: int = 100
    write_capacity: int = 100
    explicit: bool = False
    """Whether ``--billing-mode`` was given (a design file's tables keep their own otherwise)."""

    def __post_init__(self) -> None:
        if self.mode not in BILLING_MODES:
            raise ConfigError(
                f"unknown billing mode {self.mode!r} (expected one of: {', '.join(BILLING_MODES)})"
            )
        for name, units in (("read", self.read_capacity), ("write", self.write_capacity)):
            if units < 1:
                raise ConfigError(f"--{name}-capacity must be >= 1 (got {units})")

    def apply(self, request: dict[str, Any]) -> dict[str, Any]:
        """A CreateTable request with this billing on the table and each of its GSIs."""
        request = {**request, "BillingMode": BILLING_MODES[self.mode]}
        if self.mode == "provisioned":
            units = {
                "ReadCapacityUnits": self.read_capacity,
                "WriteCapacityUnits": self.write_capacity,
            }
            request["ProvisionedThroughput"] = units
            if "GlobalSecondaryIndexes" in request:
                request["GlobalSecondaryIndexes"] = [
                    {**index, "ProvisionedThroughput": units}
                    for index in request["GlobalSecondaryIndexes"]
                ]
        return request


def endpoint_of(host: str | None) -> str | None:
    """The DynamoDB endpoint a run targets: Locust's host, else the SDK's environment
    variables (``AWS_ENDPOINT_URL_DYNAMODB``, ``AWS_ENDPOINT_URL``); None for AWS itself."""
    endpoint = host or os.environ.get("AWS_ENDPOINT_URL_DYNAMODB") or None
    return endpoint or os.environ.get("AWS_ENDPOINT_URL") or None


@dataclass(frozen=True)
class WorkloadOptions:
    """The validated options one workload runs with."""

    design: str
    distribution: str
    keys: int
    seed: int
    scramble: bool
    mix: dict[str, int]
    table: str
    create_table: bool
    retry: RetryPolicy
    region: str | None
    endpoint_url: str | None
    billing: Billing
    client: str = "boto3"
    """Which client sends the requests (`loadgen.client.CLIENTS`)."""
    tasks_per_user: int = 0
    """Tasks each user runs before it stops; 0: no limit."""
    load: ArrivalPlan | None = None
    """The open model's plan (``--rate``); None: the closed model."""

    @classmethod
    def from_parsed(
        cls,
        parsed: Any,
        *,
        designs: tuple[str, ...],
        default_table: str,
        default_mix: Mapping[str, int],
        host: str | None = None,
    ) -> WorkloadOptions:
        """Validate Locust's parsed options for a workload; raise `ConfigError` naming the value."""
        design = parsed.design or designs[0]
        if design not in designs:
            raise ConfigError(f"unknown design {design!r} (expected one of: {', '.join(designs)})")
        if parsed.keys < 1:
            raise ConfigError(f"--keys must be >= 1 (got {parsed.keys})")
        distributions.validate_spec(parsed.distribution)
        endpoint = endpoint_of(host)
        mix = parse_mix(parsed.mix or "", default_mix)
        return cls(
            design=design,
            distribution=parsed.distribution,
            keys=parsed.keys,
            seed=parsed.seed,
            scramble=parsed.scramble,
            mix=mix,
            table=parsed.table or default_table,
            create_table=parsed.create_table or endpoint is not None,
            retry=RetryPolicy(parsed.retry_mode, parsed.max_attempts),
            region=parsed.region,
            endpoint_url=endpoint,
            billing=Billing(
                parsed.billing_mode or "on-demand",
                parsed.read_capacity,
                parsed.write_capacity,
                explicit=parsed.billing_mode is not None,
            ),
            client=_client_kind(getattr(parsed, "client", None) or "boto3"),
            tasks_per_user=_tasks_per_user(getattr(parsed, "tasks_per_user", 0) or 0),
            load=plan_from_parsed(parsed, mix),
        )

    def key_chooser(self, stream: int) -> distributions.Distribution:
        """A key generator for one user: seeded by the run seed and the user's number."""
        return distributions.parse(
            self.distribution,
            self.keys,
            seed=self.seed * 1_000_003 + stream,
            scramble=self.scramble,
        )


def _client_kind(kind: str) -> str:
    if kind not in CLIENTS:
        raise ConfigError(f"unknown --client {kind!r} (expected one of: {', '.join(CLIENTS)})")
    return kind


def _tasks_per_user(count: int) -> int:
    if count < 0:
        raise ConfigError(f"--tasks-per-user must be >= 0 (got {count})")
    return count
