"""Partition heat: which hash buckets and which keys carry the requests, units and throttles.

Every partition key a call touches is hashed into one of B buckets with the project's one
partition hash (`loadgen.model.hashing.bucket_of`), so a bucket covers the same slice of the hash
space as a modeled partition. Per *lane* (table or index, read or write) and bucket a
`HeatMap` counts:

- requests: key touches, so a BatchGetItem of 10 keys is 10 requests on their buckets;
- consumed units: read units on read lanes, write units on write lanes, reported by the
  target or computed from item sizes (`loadgen.heat.consumed`); a call's reported units are
  spread evenly over the keys it touched in that table or index;
- throttled attempts: each key of a throttled attempt counts it.

A write's index entries are counted on the index's write lane at the index's partition key:
as the caller names them (``index_keys`` in the context), or else as the table's schema and
the request show them (`loadgen.model.index_writes`: a PutItem's item, an UpdateItem's SET of
an index key, batch and transaction puts and updates; a delete's old index keys are unknown).

Keys that are unknown (a Scan) land in an extra slot, bucket ``"none"``. Per table and index
two Space-Saving sketches keep the hottest keys by requests and by consumed units, so memory
and exported series stay flat whatever the number of distinct keys. Keys can be replaced by
a keyed BLAKE2 hash as they arrive (``hash_keys="salt"``), so no key leaves the process.

The heat also keeps a timeline, one column per second, for the results file; a run longer
than ``max_columns`` seconds doubles the column width instead of growing.

    heat = HeatMap(HeatConfig(buckets=256, top_k=20))
    heat.record("UpdateItem", context, response, start_time)   # from a request listener
    heat.top_keys("ph-counter", None, by="requests")
    heat.matrix()                                              # for the results file

In Locust's distributed mode a worker sends `to_dict` with each report and then `clear`s;
the master `merge`s: what a worker sends is what it gathered since its last report.
"""

from __future__ import annotations

import logging
import time
from array import array
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field, fields
from functools import lru_cache
from typing import Any

from loadgen.errors import ConfigError
from loadgen.heat import consumed
from loadgen.heat.sketch import HeavyHitter, SpaceSaving
from loadgen.model.hashing import bucket_of, key_hasher
from loadgen.model.index_writes import index_writes, writes_indexes
from loadgen.model.schema import TableSchema
from loadgen.refusals import scope_of_arn

__all__ = [
    "DEFAULT_BUCKETS",
    "DEFAULT_TOP_K",
    "FIELDS",
    "MAX_BUCKETS",
    "PATTERN_SKETCH_CAPACITY",
    "HeatConfig",
    "HeatMap",
    "Lane",
    "ScopeTally",
    "key_hasher",
]

log = logging.getLogger(__name__)

DEFAULT_BUCKETS = 256
"""Hash buckets per lane unless configured: finer than most tables' partition counts."""
MAX_BUCKETS = 1024
"""Most buckets a lane may have: bounds the exported series (3 per bucket and lane)."""
DEFAULT_TOP_K = 20
"""Hottest keys exported per table or index, by requests and by consumed units."""
FIELDS = 3
"""Counters per bucket: requests, consumed units, throttled attempts."""
PATTERN_SKETCH_CAPACITY = 64
"""Counters of an access pattern's own hot-key sketch: it names the pattern's hottest key, and
any key above 1/64 of the pattern's touches is held; a worker's report stays small."""
_KEY_CACHE = 1 << 14
# Hashing a key costs about 0.8 µs; hot keys repeat, so a small bounded cache of recent keys
# saves most of it while keeping memory flat under millions of distinct keys.


@dataclass(frozen=True)
class HeatConfig:
    """How heat is counted; the master and its workers must agree on ``buckets``.

    HeatConfig(buckets=512, top_k=10, hash_keys="salt", capacity_source="computed")
    """

    buckets: int = DEFAULT_BUCKETS
    """Hash buckets per lane, 1 to 1,024."""
    top_k: int = DEFAULT_TOP_K
    """Hottest keys exported per table or index, by requests and by units."""
    hash_keys: str | bytes | None = field(default=None, repr=False)
    """Salt of the keyed hash that replaces keys; None keeps keys in plain text. Kept out
    of the repr, so the salt shows in no log or error message."""
    capacity_source: str = "auto"
    """Where consumed units come from: auto, reported or computed (`loadgen.heat.consumed`)."""
    sketch_capacity: int = 1000
    """Counters per Space-Saving sketch: a count overestimates by at most total/capacity."""
    max_columns: int = 900
    """Timeline columns kept before the column width doubles."""

    def __post_init__(self) -> None:
        if not 1 <= self.buckets <= MAX_BUCKETS:
            raise ConfigError(f"heat buckets must be 1 to {MAX_BUCKETS} (got {self.buckets})")
        if not 1 <= self.top_k <= self.sketch_capacity:
            raise ConfigError(
                f"top keys must be 1 to the sketch capacity {self.sketch_capacity} "
                f"(got {self.top_k})"
            )
        if self.capacity_source not in consumed.CAPACITY_SOURCES:
            raise ConfigError(
                f"unknown consumed capacity source {self.capacity_source!r} "
                f"(expected one of: {', '.join(consumed.CAPACITY_SOURCES)})"
            )
        if self.max_columns < 2:
            raise ConfigError(f"max columns must be >= 2 (got {self.max_columns})")
        if self.hash_keys is not None:
            key_hasher(self.hash_keys)

    @classmethod
    def from_options(cls, parsed: Any, settings: Mapping[str, Any] | None = None) -> HeatConfig:
        """From Locust's parsed options (``--heat-buckets``, ``--top-keys``, ``--hash-keys``,
        ``--consumed-capacity``), overridden by ``settings`` (field names to values)."""
        options = {
            "buckets": getattr(parsed, "heat_buckets", None),
            "top_k": getattr(parsed, "top_keys", None),
            "hash_keys": getattr(parsed, "hash_keys", None),
            "capacity_source": getattr(parsed, "consumed_capacity", None),
        }
        # Options absent from the parser (a plain locustfile) keep the defaults; 0 does not.
        values = {name: value for name, value in options.items() if value is not None}
        values.update(settings or {})
        unknown = set(values) - {f.name for f in fields(cls)}
        if unknown:
            raise ConfigError(f"unknown heat settings {sorted(unknown)}")
        return cls(**values)


class Lane:
    """Counters of one table or index, reads or writes: ``FIELDS`` per bucket, plus "none".

    ``totals`` holds closed seconds, ``now`` the open one; `counts` adds them.
    """

    __slots__ = ("access", "columns", "index", "now", "sketches", "table", "totals")

    def __init__(
        self,
        table: str,
        index: str | None,
        access: str,
        buckets: int,
        sketches: tuple[SpaceSaving, SpaceSaving],
    ) -> None:
        self.table = table
        self.index = index
        self.access = access
        self.sketches = sketches
        """The sketches by requests and by units of the lane's table or index (shared by
        its read and write lanes)."""
        size = FIELDS * (buckets + 1)
        self.totals = [0.0] * size
        self.now = [0.0] * size
        self.columns: dict[int, array[float]] = {}
        """Closed columns by their first second."""

    def counts(self) -> list[float]:
        """Totals so far: requests, units, throttled attempts of bucket b at 3b, 3b+1, 3b+2."""
        return [a + b for a, b in zip(self.totals, self.now, strict=True)]


class ScopeTally:
    """One access pattern's account, per table and index: units charged and keys touched.

    `HeatMap.record` fills it with the figures it gives the lanes, so a pattern's units add up
    to the heat's. Units are ``[read, write]`` per ``(table, index)``; keys are a small
    Space-Saving sketch per ``(table, index)``, keyed as the heat keys them (hashed or not).

        tally = ScopeTally()
        heat.record("Query", context, response, tally=tally)
        tally.units[("t", "GSI1")]   # [read units, write units]
        tally.hottest()              # ("t", "GSI1", HeavyHitter("STATUS#online", ...), 0.92)
    """

    __slots__ = ("capacity", "keys", "turn", "units")

    def __init__(self, capacity: int = PATTERN_SKETCH_CAPACITY) -> None:
        self.capacity = capacity
        self.turn = 0
        """Which key of a call of several the sketch takes next."""
        self.units: dict[tuple[str, str | None], list[float]] = {}
        self.keys: dict[tuple[str, str | None], SpaceSaving] = {}

    def touched(self, table: str, index: str | None, access: str, units: float) -> SpaceSaving:
        """Note a touch of ``(table, index)`` costing ``units``; the sketch to add its keys to."""
        scope = (table, index)
        spent = self.units.get(scope)
        if spent is None:
            spent = self.units[scope] = [0.0, 0.0]
        if units:
            spent[access == "write"] += units
        sketch = self.keys.get(scope)
        if sketch is None:
            sketch = self.keys[scope] = SpaceSaving(self.capacity)
        return sketch

    def charge(self, table: str, index: str | None, access: str, units: float) -> None:
        """Add units spent on ``(table, index)`` without a key touch."""
        spent = self.units.get((table, index))
        if spent is None:
            spent = self.units[(table, index)] = [0.0, 0.0]
        spent[access == "write"] += units

    def hottest(self) -> tuple[str, str | None, HeavyHitter, float] | None:
        """The pattern's hottest key: (table, index, key, share), or None if it touched none.

        The key the pattern touched most, over its table and indexes; its share is of the
        pattern's touches of that table or index: a status key that every write of the
        pattern puts in an index has a share of 1, whatever else the writes touch.
        """
        best: tuple[str, str | None, HeavyHitter, float] | None = None
        for (table, index), sketch in self.keys.items():
            top = sketch.top(1)
            if top and sketch.total and (best is None or top[0].count > best[2].count):
                best = (table, index, top[0], top[0].count / sketch.total)
        return best

    def merge(self, other: ScopeTally) -> None:
        for scope, (read, write) in other.units.items():
            spent = self.units.setdefault(scope, [0.0, 0.0])
            spent[0] += read
            spent[1] += write
        for scope, sketch in other.keys.items():
            mine = self.keys.get(scope)
            if mine is None:
                self.keys[scope] = mine = SpaceSaving(self.capacity)
            mine.merge(sketch)

    def to_dict(self) -> dict[str, Any]:
        return {
            "units": [[t, i, read, write] for (t, i), (read, write) in self.units.items()],
            "keys": [[t, i, sketch.to_dict()] for (t, i), sketch in self.keys.items()],
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ScopeTally:
        tally = cls()
        for table, index, read, write in data.get("units", ()):
            tally.units[(table, index)] = [float(read), float(write)]
        for table, index, sketch in data.get("keys", ()):
            tally.keys[(table, index)] = SpaceSaving.from_dict(sketch)
        return tally


class HeatMap:
    """Heat per lane and bucket, hot keys per table and index, and a per-second timeline.

    >>> heat = HeatMap(HeatConfig(buckets=4))
    >>> context = {"table": "t", "partition_keys": ["k"], "throttled_attempts": 1,
    ...            "consumed_capacity": {"TableName": "t", "CapacityUnits": 0.5}}
    >>> heat.record("GetItem", context, {}, start_time=1_800_000_000)
    >>> heat.lanes[("t", None, "read")].counts()[3 * bucket_of("k", 4):][:3]
    [1.0, 0.5, 1.0]
    """

    def __init__(
        self, config: HeatConfig | None = None, tables: Iterable[TableSchema] = ()
    ) -> None:
        self.config = config or HeatConfig()
        self.tables: dict[str, TableSchema] = {}
        """Schemas by table name, for consumed units computed from item sizes and for the
        index entries a write touches."""
        self._indexed = False
        """Whether a known table has an index: else a write needs no look for index keys."""
        for schema in tables:
            self.add_table(schema)
        self.lanes: dict[tuple[str, str | None, str], Lane] = {}
        self.sketches: dict[tuple[str, str | None], tuple[SpaceSaving, SpaceSaving]] = {}
        """Per (table, index): the sketches by requests and by consumed units."""
        self.resolution = 1
        """Width of a timeline column in seconds."""
        self._second = 0
        self._warned: set[str] = set()
        buckets = self.config.buckets
        hasher = key_hasher(self.config.hash_keys) if self.config.hash_keys else None

        @lru_cache(maxsize=_KEY_CACHE)
        def locate(key: str | bytes) -> tuple[int, str]:
            label = hasher(key) if hasher else key if isinstance(key, str) else key.hex()
            return bucket_of(key, buckets), label

        self._locate = locate

    def add_table(self, schema: TableSchema) -> None:
        """Know a table's schema, to compute consumed units from item sizes and to find the
        index entries its writes touch."""
        self.tables[schema.name] = schema
        self._indexed = any(writes_indexes(known) for known in self.tables.values())

    # The per-request path: keep it lean (see benchmarks/bench_heat.py).
    def record(
        self,
        operation: str,
        context: Mapping[str, Any],
        response: Mapping[str, Any] | None = None,
        start_time: float | None = None,
        tally: ScopeTally | None = None,
    ) -> None:
        """Count one call from its Locust request-event ``context`` (see `DynamoClient`).

        ``tally``, when given, receives what the call charged and touched per table and
        index (the access pattern's own account, `ScopeTally`): the same figures the lanes get.
        """
        second = int(time.time() if start_time is None else start_time)
        if second > self._second:
            self._roll(second)
        # A request that started before the open column is counted in it: a second's
        # boundary blurs by at most a response time.
        table = context["table"]
        index = context.get("index")
        access = "read" if operation in consumed.READ_OPERATIONS else "write"
        keys = context.get("partition_keys") or (context.get("partition_key"),)
        given = context.get("index_keys")
        if given:
            # Declared by the caller: it wins over what the request shows.
            index_keys = {(table, name): ikeys for name, ikeys in given.items()}
        elif self._indexed and access == "write":
            index_keys = self._index_keys(operation, context)
        else:
            index_keys = _NO_INDEX_KEYS
        throttled = _throttled_by_scope(context, (table, index), index_keys)
        source = self.config.capacity_source
        reported = context.get("consumed_capacity")
        if source == "computed" or (source == "auto" and not reported):
            self._touch(table, index, access, keys, 0.0, throttled.get((table, index), 0), tally)
            for scope, ikeys in index_keys.items():
                self._touch(scope[0], scope[1], "write", ikeys, 0.0, throttled.get(scope, 0), tally)
            self._charge(operation, context, response or {}, tally)
        elif type(reported) is dict and reported.get("TableName") == table and _whole(reported):
            # The usual answer to ReturnConsumedCapacity=TOTAL (or INDEXES of a table without
            # indexes): one figure for one table.
            units = float(reported.get("CapacityUnits") or 0.0)
            self._touch(table, index, access, keys, units, throttled.get((table, index), 0), tally)
            for scope, ikeys in index_keys.items():
                self._touch(scope[0], scope[1], "write", ikeys, 0.0, throttled.get(scope, 0), tally)
        else:
            self._record_breakdown(
                operation, reported, table, index, access, keys, throttled, index_keys, tally
            )

    def _index_keys(
        self, operation: str, context: Mapping[str, Any]
    ) -> dict[tuple[str, str | None], list[Any]]:
        """The index entries a write's request shows it touches (`loadgen.model.index_writes`)."""
        request = context.get("request")
        if not request:
            return _NO_INDEX_KEYS
        found: dict[tuple[str, str | None], list[Any]] = {}
        for table, index, key in index_writes(operation, request, self.tables):
            found.setdefault((table, index), []).append(key)
        return found

    def _record_breakdown(
        self,
        operation: str,
        reported: Any,
        table: str,
        index: str | None,
        access: str,
        keys: Any,
        throttled: Mapping[tuple[str, str | None], float],
        index_keys: Mapping[tuple[str, str | None], Any],
        tally: ScopeTally | None,
    ) -> None:
        # Reported units of several tables, of indexes, or split into read and write.
        main = 0.0
        per_index: dict[tuple[str, str | None], float] = {}
        extra: list[tuple[str, str | None, str, Any, float]] = []
        for scope_table, scope_index, read, write in consumed.reported_units(
            operation, reported, table, index
        ):
            scope = (scope_table, scope_index)
            if scope_table == table and scope_index == index:
                main += read if access == "read" else write
                other, spent = ("write", write) if access == "read" else ("read", read)
                if spent:
                    extra.append((table, index, other, keys, spent))
            elif scope_index is not None and scope in index_keys:
                per_index[scope] = per_index.get(scope, 0.0) + write
                if read:
                    extra.append((scope_table, scope_index, "read", index_keys[scope], read))
            else:
                # Units of a table or index whose keys the call did not name.
                for kind, spent in (("read", read), ("write", write)):
                    if spent:
                        extra.append((scope_table, scope_index, kind, (None,), spent))
        self._touch(table, index, access, keys, main, throttled.get((table, index), 0), tally)
        for scope, ikeys in index_keys.items():
            spent = per_index.get(scope, 0.0)
            self._touch(scope[0], scope[1], "write", ikeys, spent, throttled.get(scope, 0), tally)
        for scope_table, scope_index, kind, scope_keys, spent in extra:
            self._touch(scope_table, scope_index, kind, scope_keys, spent, 0.0, tally, count=False)

    def _touch(
        self,
        table: str,
        index: str | None,
        access: str,
        keys: Any,
        units: float,
        throttled: float,
        tally: ScopeTally | None = None,
        *,
        count: bool = True,
    ) -> None:
        lane = self.lanes.get((table, index, access)) or self._lane(table, index, access)
        now = lane.now
        by_requests, by_units = lane.sketches
        share = units / len(keys) if keys else 0.0
        locate = self._locate
        label = None
        pattern_keys = None
        if tally is not None:
            if count:
                pattern_keys = tally.touched(table, index, access, units)
            elif units:
                tally.charge(table, index, access, units)
        for key in keys:
            if key is None:
                bucket, label = self.config.buckets, None
            else:
                bucket, label = locate(key)
            i = FIELDS * bucket
            if count:
                now[i] += 1.0
                now[i + 2] += throttled
            now[i + 1] += share
            if label is not None:
                if count:
                    by_requests.add(label)
                if share:
                    by_units.add(label, share)
        if pattern_keys is not None and tally is not None and keys:
            # The pattern's sketch takes one key a call, in turn, weighted by the call's keys:
            # its estimates stay those of every key, its cost that of one (a batch of 10 keys
            # new to a full sketch would evict 10 times).
            n = len(keys)
            if n == 1:
                if label is not None:
                    pattern_keys.add(label)
            else:
                key = keys[tally.turn % n]
                tally.turn += 1
                if key is not None:
                    pattern_keys.add(locate(key)[1], float(n))

    def _charge(
        self,
        operation: str,
        context: Mapping[str, Any],
        response: Mapping[str, Any],
        tally: ScopeTally | None,
    ) -> None:
        request = context.get("request")
        if request is None:
            self._warn_once("request", "no request parameters in the request event context")
            return
        try:
            charges = consumed.computed_charges(
                operation, request, response, context.get("error_code"), self.tables
            )
        except ConfigError as e:
            self._warn_once(operation, str(e))
            return
        for charge in charges:
            if charge.units:
                key = (charge.key,)
                self._touch(
                    charge.table,
                    charge.index,
                    charge.kind,
                    key,
                    charge.units,
                    0.0,
                    tally,
                    count=False,
                )

    def _warn_once(self, topic: str, message: str) -> None:
        if topic not in self._warned:
            self._warned.add(topic)
            log.warning("consumed units not counted: %s", message)

    def _lane(self, table: str, index: str | None, access: str) -> Lane:
        sketches = self._sketches(table, index)
        lane = Lane(table, index, access, self.config.buckets, sketches)
        self.lanes[(table, index, access)] = lane
        return lane

    def _sketches(self, table: str, index: str | None) -> tuple[SpaceSaving, SpaceSaving]:
        sketches = self.sketches.get((table, index))
        if sketches is None:
            capacity = self.config.sketch_capacity
            sketches = self.sketches[(table, index)] = (
                SpaceSaving(capacity),
                SpaceSaving(capacity),
            )
        return sketches

    def _roll(self, second: int) -> None:
        """Close the open column: it becomes part of the totals and of the timeline."""
        if self._second:
            column = self._second - self._second % self.resolution
            for lane in self.lanes.values():
                now = lane.now
                if any(now):
                    totals = lane.totals
                    for i, value in enumerate(now):
                        if value:
                            totals[i] += value
                    _add_column(lane, column, now)
                    lane.now = [0.0] * len(now)
            self._coarsen()
        self._second = second

    def _coarsen(self) -> None:
        while any(len(lane.columns) > self.config.max_columns for lane in self.lanes.values()):
            self.resolution *= 2
            for lane in self.lanes.values():
                columns, lane.columns = lane.columns, {}
                for second, values in columns.items():
                    _add_column(lane, second - second % self.resolution, values)

    def top_keys(self, table: str, index: str | None, *, by: str = "requests") -> list[HeavyHitter]:
        """The ``top_k`` hottest keys of a table or index, by ``"requests"`` or ``"units"``."""
        sketches = self.sketches.get((table, index))
        if sketches is None:
            return []
        return sketches[0 if by == "requests" else 1].top(self.config.top_k)

    def scopes(self) -> Iterator[tuple[str, str | None, SpaceSaving, SpaceSaving]]:
        """(table, index, sketch by requests, sketch by units) for every table and index seen."""
        for (table, index), (by_requests, by_units) in self.sketches.items():
            yield table, index, by_requests, by_units

    # Worker reports, merging and the results file.
    def clear(self) -> None:
        """Forget everything counted (a worker, after sending it to the master)."""
        self.lanes = {}
        self.sketches = {}

    def to_dict(self) -> dict[str, Any]:
        """A plain, msgpack-friendly form: columns are sparse ``[bucket, r, u, t, ...]`` lists."""
        self._roll(self._second)
        lanes = []
        for lane in self.lanes.values():
            columns = [[second, _sparse(values)] for second, values in lane.columns.items()]
            lanes.append([lane.table, lane.index, lane.access, columns])
        return {
            "buckets": self.config.buckets,
            "lanes": lanes,
            "sketches": [
                [table, index, by_requests.to_dict(), by_units.to_dict()]
                for table, index, by_requests, by_units in self.scopes()
            ],
        }

    def merge_dict(self, data: Mapping[str, Any]) -> None:
        """Add what `to_dict` of another heat map (a worker's report) holds."""
        if data["buckets"] != self.config.buckets:
            raise ConfigError(
                f"a worker counts heat in {data['buckets']} buckets, the master in "
                f"{self.config.buckets}: give every process the same --heat-buckets"
            )
        for table, index, access, columns in data["lanes"]:
            lane = self.lanes.get((table, index, access)) or self._lane(table, index, access)
            totals = lane.totals
            for second, sparse in columns:
                values = _dense(sparse, len(totals))
                for i, value in enumerate(values):
                    if value:
                        totals[i] += value
                _add_column(lane, second - second % self.resolution, values)
        for table, index, by_requests, by_units in data["sketches"]:
            mine_requests, mine_units = self._sketches(table, index)
            mine_requests.merge(SpaceSaving.from_dict(by_requests))
            mine_units.merge(SpaceSaving.from_dict(by_units))
        self._coarsen()

    def matrix(self) -> dict[str, Any]:
        """The per-second bucket heat matrix, for the results file.

        Per lane, ``requests[t][b]``, ``units[t][b]`` and ``throttled_attempts[t][b]`` hold
        bucket ``b`` in column ``t``, which starts at ``start + t * resolution_s`` (Unix
        seconds); ``unattributed`` holds what no key could be given for (a Scan).
        """
        self._roll(self._second)
        seconds = sorted({s for lane in self.lanes.values() for s in lane.columns})
        start = seconds[0] if seconds else 0
        width = (seconds[-1] - start) // self.resolution + 1 if seconds else 0
        buckets = self.config.buckets
        lanes = []
        for lane in self.lanes.values():
            grids: list[list[list[float]]] = [[], [], []]
            for t in range(width):
                values = lane.columns.get(start + t * self.resolution)
                for counter in range(FIELDS):
                    row = [0.0] * buckets if values is None else list(values[counter::FIELDS])
                    grids[counter].append([_number(v) for v in row[:buckets]])
            none = FIELDS * buckets
            lanes.append(
                {
                    "table": lane.table,
                    "index": lane.index,
                    "access": lane.access,
                    "requests": grids[0],
                    "units": grids[1],
                    "throttled_attempts": grids[2],
                    "unattributed": {
                        "requests": _number(lane.totals[none]),
                        "units": _number(lane.totals[none + 1]),
                        "throttled_attempts": _number(lane.totals[none + 2]),
                    },
                }
            )
        return {
            "buckets": buckets,
            "hash": "md5, first 8 bytes (loadgen.model.hashing.bucket_of)",
            "keys_hashed": self.config.hash_keys is not None,
            "resolution_s": self.resolution,
            "start": start,
            "columns": width,
            "lanes": lanes,
        }

    def top_keys_dict(self) -> list[dict[str, Any]]:
        """The top keys per table and index, by requests and by units, with error bounds."""
        rows = []
        for table, index, by_requests, by_units in self.scopes():
            for by, sketch in (("requests", by_requests), ("units", by_units)):
                rows.append(
                    {
                        "table": table,
                        "index": index,
                        "by": by,
                        "total": _number(sketch.total),
                        "error_bound": _number(sketch.min_count()),
                        "keys": [
                            {"key": h.key, "count": _number(h.count), "error": _number(h.error)}
                            for h in sketch.top(self.config.top_k)
                        ],
                    }
                )
        return rows


_NO_INDEX_KEYS: dict[tuple[str, str | None], list[Any]] = {}
# Shared, never written: a call that touches no index entry.


def _whole(reported: Mapping[str, Any]) -> bool:
    """Whether reported units are one figure for one table: ``TOTAL``, or ``INDEXES`` of a
    call that touched no index (``Table`` beside the total, nothing else)."""
    return len(reported) == 2 or (len(reported) == 3 and "Table" in reported)


def _add_column(lane: Lane, second: int, values: Any) -> None:
    column = lane.columns.get(second)
    if column is None:
        lane.columns[second] = array("d", values)
    else:
        for i, value in enumerate(values):
            if value:
                column[i] += value


def _sparse(values: Any) -> list[float]:
    flat: list[float] = []
    for bucket in range(len(values) // FIELDS):
        i = FIELDS * bucket
        if values[i] or values[i + 1] or values[i + 2]:
            flat += (bucket, values[i], values[i + 1], values[i + 2])
    return flat


def _dense(sparse: list[float], size: int) -> list[float]:
    values = [0.0] * size
    for j in range(0, len(sparse), FIELDS + 1):
        i = FIELDS * int(sparse[j])
        values[i : i + FIELDS] = sparse[j + 1 : j + 1 + FIELDS]
    return values


def _number(value: float) -> float | int:
    return int(value) if float(value).is_integer() else round(value, 6)


def _throttled_by_scope(
    context: Mapping[str, Any],
    own: tuple[str, str | None],
    index_keys: Mapping[tuple[str, str | None], Any],
) -> dict[tuple[str, str | None], float]:
    """A call's throttled attempts per table or index: where each refusal's resource says
    (a GSI short of write capacity refuses the table's write: its own keys take the heat),
    else on the call's own table or index, as a target that names no resource leaves it."""
    refusals = context.get("refusals")
    attempts = float(context.get("throttled_attempts") or 0)
    if not attempts:
        return {}
    if not refusals:
        return {own: attempts}
    found: dict[tuple[str, str | None], float] = {}
    for refusal in refusals:
        if refusal.exception.startswith("Unprocessed"):
            continue  # a batch item left over is counted as unprocessed, not as an attempt
        scope = scope_of_arn(refusal.resource)
        if scope is None or (scope != own and scope not in index_keys):
            scope = own
        found[scope] = found.get(scope, 0.0) + 1.0
    named = sum(found.values())
    if not named:
        return {own: attempts}
    # A refused batch names each refused part: shares of its attempts, not more of them.
    return {scope: attempts * n / named for scope, n in found.items()}
