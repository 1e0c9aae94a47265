"""A trace as a Locust workload: its requests in order, at its own pace or at launch traffic.

``workloads/replay.py`` is the locustfile (``loadgen replay FILE`` runs it). Each operation a
Locust user (or an arrival of the open model) runs takes the trace's next request, so the
operation mix, the key popularity and the order of requests follow the trace:

- **pace**: ``--speed X`` turns the trace's request rate into the open model's stages
  (`speed_stages`), X times faster: the inter-arrival pattern at a resolution of one
  second of the replay, with ``--arrivals`` inside each second. ``--rate R`` launches the trace's
  requests at R per second at AWS scale instead. Both are `loadgen.workload.arrivals`.
- **per-key order**: a request waits for the one before it on the same item (partition and
  sort key) to be answered (`Replayer.turn`), so concurrent arrivals never reorder one
  item's requests; one item's requests are sent one at a time.
- **key scale**: ``--key-scale K`` gives every key K copies (``user#1``, ``user#1~1``, ...)
  and sends each of its requests to one of them at random: K times the keys with the same
  popularity curve, each copy taking 1/K of its key's traffic.
- **items** are synthesized at the recorded sizes: the recorded keys and a ``pad``
  attribute making up the bytes. Index keys of written items are not in the trace, so
  written items carry none; reads of an index replay with the recorded index key.

When the run outlasts the trace, it starts over from the first request.
"""

from __future__ import annotations

import base64
import itertools
import math
import random
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any

from loadgen.errors import ConfigError
from loadgen.model.itemsize import item_size
from loadgen.traffic.facts import DATA_OPERATIONS
from loadgen.traffic.trace import Trace, TraceRecord, read_trace

__all__ = ["Call", "Replayer", "create_tables", "load_trace", "speed_stages"]

PAD = "pad"
"""The attribute that brings a synthesized item to its recorded size."""


def load_trace(path: str | Path) -> Trace:
    """Read a trace for replay: its requests on tables whose keys it describes.

    Raises `ConfigError` naming the file when it holds no request to replay.
    """
    trace = read_trace(path)
    trace.records = [
        r
        for r in trace.records
        if r.op in DATA_OPERATIONS and all(t in trace.schemas for t, *_ in r.touches)
    ]
    if not trace.records:
        raise ConfigError(
            f"{path}: no request to replay (expected data requests on tables with a schema line)"
        )
    return trace


def speed_stages(trace: Trace, speed: float) -> str:
    """The open model's ``--stages`` replaying ``trace`` ``speed`` times faster.

    One stage per second of the replay (``speed`` seconds of the trace), at the rate the trace
    had then. Rates are at AWS scale (the trace's rates over the scale it was captured at), so
    a target at the same scale is offered the recorded rate times ``speed``.
    """
    if not (math.isfinite(speed) and speed > 0):
        raise ConfigError(f"--speed must be a number > 0 (got {speed!r})")
    start = trace.records[0].t
    bins = Counter(int((r.t - start) // speed) for r in trace.records)
    rates = [bins.get(i, 0) / trace.scale for i in range(max(bins) + 1)]
    # The first stage takes no time: the run starts at the first second's rate.
    return ",".join([f"0s:{rates[0]:.6g}"] + [f"1s:{rate:.6g}" for rate in rates[1:]])


def create_tables(environment: Any, user_class: Any, replayer: Replayer) -> None:
    """Create the trace's tables beyond its first (which the workload creates as any
    workload creates its table), with the run's billing, and account their heat."""
    from loadgen.model.schema import TableSchema
    from loadgen.workload.tables import ensure_table
    from loadgen.workload.user import record, workload_options

    options = workload_options(environment, user_class)
    client = environment._loadgen_client.botocore
    for request in replayer.table_requests()[1:]:
        request = options.billing.apply(request)
        ensure_table(client, request, create=options.create_table)
        record(environment).heat.add_table(TableSchema.from_create_table(request))


@dataclass(frozen=True)
class Call:
    """One request to send: `loadgen.client.BaseDynamoClient.call`'s arguments."""

    operation: str
    name: str
    table: str
    pk: str | None
    sk: str | None
    index: str | None
    partition_keys: list[str] | None
    params: dict[str, Any]


@dataclass(frozen=True)
class _Step:
    number: int
    record: TraceRecord
    replicas: tuple[int, ...]
    """The key copy each touched item goes to."""


class Replayer:
    """The trace's requests, in order, for the users of one process to take one at a time.

    replayer = Replayer(load_trace("t.jsonl.gz"), key_scale=10)
    step = replayer.next()
    with replayer.turn(step):
        client.call(**vars(replayer.call(step)))  # roughly
    """

    def __init__(self, trace: Trace, *, key_scale: int = 1, seed: int = 1) -> None:
        if not isinstance(key_scale, int) or key_scale < 1:
            raise ConfigError(f"--key-scale must be an integer >= 1 (got {key_scale!r})")
        self.trace = trace
        self.key_scale = key_scale
        self.hashed = bool(trace.header.get("hashed"))
        self._random = random.Random(seed)
        self._records = itertools.cycle(trace.records)
        self._numbers = itertools.count()
        self._last: dict[tuple[str, str | None, str | None], Any] = {}

    def table_requests(self) -> list[dict[str, Any]]:
        """CreateTable requests (billing aside) for every table the trace describes."""
        requests = []
        for name, schema in self.trace.schemas.items():
            keys = [(schema["pk"], "HASH")] + ([(schema["sk"], "RANGE")] if schema["sk"] else [])
            definitions = {attribute: kind for (attribute, kind), _ in keys}
            request: dict[str, Any] = {
                "TableName": name,
                "KeySchema": _key_schema(keys),
            }
            indexes = []
            for index_name, index in (schema.get("indexes") or {}).items():
                index_keys = [(index["pk"], "HASH")]
                if index.get("sk"):
                    index_keys.append((index["sk"], "RANGE"))
                definitions.update({attribute: kind for (attribute, kind), _ in index_keys})
                indexes.append(
                    {
                        "IndexName": index_name,
                        "KeySchema": [
                            {"AttributeName": a, "KeyType": t} for (a, _), t in index_keys
                        ],
                        "Projection": {"ProjectionType": "ALL"},
                    }
                )
            request["AttributeDefinitions"] = [
                {"AttributeName": a, "AttributeType": t} for a, t in definitions.items()
            ]
            if indexes:
                request["GlobalSecondaryIndexes"] = indexes
            requests.append(request)
        return requests

    def next(self) -> _Step:
        """The trace's next request (from the start again after the last)."""
        record = next(self._records)
        replicas = tuple(
            self._random.randrange(self.key_scale) if self.key_scale > 1 else 0
            for _ in record.touches
        )
        return _Step(next(self._numbers), record, replicas)

    @contextmanager
    def turn(self, step: _Step) -> Iterator[None]:
        """Wait until the request before ``step`` on the same item was answered, then run it.

        Items, not partition keys: requests to one partition key's different items run side
        by side, as an application's would. A batch or transaction keeps its first item's
        place; a Query or Scan reads a collection and waits for nothing.
        """
        from gevent.event import Event

        if step.record.op in ("Query", "Scan"):
            yield  # reads of a collection: no one item to keep in order
            return
        table, pk, sk, _ = step.record.touches[0]
        key = (table, self._key(pk, step.replicas[0]), sk)
        before = self._last.get(key)
        mine = Event()
        self._last[key] = mine
        try:
            if before is not None:
                before.wait()
            yield
        finally:
            mine.set()
            if self._last.get(key) is mine:
                del self._last[key]

    def call(self, step: _Step) -> Call:
        """The request to send for ``step``: its keys (with their copies) and items."""
        record = step.record
        op = record.op
        touches = [
            (t, self._key(pk, r), sk, size)
            for (t, pk, sk, size), r in zip(record.touches, step.replicas, strict=True)
        ]
        table, pk, sk, size = touches[0]
        schema = self.trace.schemas[table]
        params: dict[str, Any] = {}
        partition_keys = None
        if op in ("GetItem", "DeleteItem"):
            params["Key"] = self._keymap(schema, pk, sk)
        elif op == "PutItem":
            params["Item"] = self.item(schema, pk, sk, size)
        elif op == "UpdateItem":
            key = self._keymap(schema, pk, sk)
            pad = max(1, size - item_size(key) - len(PAD))
            params.update(
                Key=key,
                UpdateExpression="SET #pad = :pad",
                ExpressionAttributeNames={"#pad": PAD},
                ExpressionAttributeValues={":pad": {"S": "x" * pad}},
            )
        elif op in ("Query", "Scan"):
            if record.index:
                params["IndexName"] = record.index
            if record.count:
                params["Limit"] = record.count
            if op == "Query":
                owner = schema["indexes"][record.index] if record.index else schema
                if pk is None:
                    raise ConfigError(f"a Query on {table!r} without its partition key")
                params.update(
                    KeyConditionExpression="#k = :k",
                    ExpressionAttributeNames={"#k": owner["pk"][0]},
                    ExpressionAttributeValues={":k": self._typed(pk, owner["pk"][1])},
                )
        else:
            partition_keys = [p for _, p, _, _ in touches if p is not None]
            params.update(self._multi(op, touches))
        return Call(
            op,
            f"replay.{op}",
            table,
            pk,
            sk,
            record.index,
            partition_keys,
            params,
        )

    def _multi(self, op: str, touches: list[Any]) -> dict[str, Any]:
        schemas = self.trace.schemas
        if op == "BatchWriteItem":
            writes: dict[str, list[Any]] = {}
            for t, pk, sk, size in touches:
                if size:
                    entry = {"PutRequest": {"Item": self.item(schemas[t], pk, sk, size)}}
                else:
                    entry = {"DeleteRequest": {"Key": self._keymap(schemas[t], pk, sk)}}
                writes.setdefault(t, []).append(entry)
            return {"RequestItems": writes}
        if op == "BatchGetItem":
            gets: dict[str, dict[str, list[Any]]] = {}
            for t, pk, sk, _ in touches:
                gets.setdefault(t, {"Keys": []})["Keys"].append(self._keymap(schemas[t], pk, sk))
            return {"RequestItems": gets}
        if op == "TransactGetItems":
            return {
                "TransactItems": [
                    {"Get": {"TableName": t, "Key": self._keymap(schemas[t], pk, sk)}}
                    for t, pk, sk, _ in touches
                ]
            }
        actions = []
        for t, pk, sk, size in touches:
            if size:
                actions.append(
                    {"Put": {"TableName": t, "Item": self.item(schemas[t], pk, sk, size)}}
                )
            else:
                actions.append(
                    {"Delete": {"TableName": t, "Key": self._keymap(schemas[t], pk, sk)}}
                )
        return {"TransactItems": actions}

    # --- keys and items -------------------------------------------------------------------

    def _key(self, value: str | None, replica: int) -> str | None:
        """The key's copy ``replica`` (0: the key itself), as trace text."""
        if value is None or replica == 0:
            return value
        return f"{value}~{replica}"

    def _typed(self, text: str, kind: str) -> dict[str, str]:
        """A key's trace text as a DynamoDB value of its attribute type."""
        base, _, replica = text.partition("~")
        if kind == "N":
            try:
                number = int(base, 16) if self.hashed else Decimal(base)
            except (ValueError, InvalidOperation):
                raise ConfigError(f"key {text!r} of a number attribute is not a number") from None
            if replica:
                number = number * self.key_scale + int(replica)
            return {"N": str(number)}
        if kind == "B":
            raw = base.encode() if self.hashed else base64.b64decode(base)
            if replica:
                raw += int(replica).to_bytes(4, "big")
            return {"B": base64.b64encode(raw).decode("ascii")}
        return {"S": text}

    def _keymap(self, schema: dict[str, Any], pk: str | None, sk: str | None) -> dict[str, Any]:
        if pk is None:
            raise ConfigError(f"a request on {schema['name']!r} without its partition key")
        key = {schema["pk"][0]: self._typed(pk, schema["pk"][1])}
        if schema.get("sk"):
            if sk is None:
                raise ConfigError(f"a request on {schema['name']!r} without its sort key")
            key[schema["sk"][0]] = self._typed(sk, schema["sk"][1])
        return key

    def item(
        self, schema: dict[str, Any], pk: str | None, sk: str | None, size: int
    ) -> dict[str, Any]:
        """An item of a trace table (a ``schema`` line) with these keys, ``size`` bytes big."""
        item = self._keymap(schema, pk, sk)
        pad = size - item_size(item) - len(PAD)
        if pad > 0:
            item[PAD] = {"S": "x" * pad}
        return item


def _key_schema(keys: list[tuple[list[str], str]]) -> list[dict[str, str]]:
    return [{"AttributeName": attribute, "KeyType": kind} for (attribute, _), kind in keys]
