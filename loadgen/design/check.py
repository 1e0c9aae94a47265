"""``loadgen check DESIGN_FILE``: a design's heat worked out on paper, before any load runs.

From each access pattern's launch rate, its key templates and its generators' skew, and the
item shapes' sizes, it works out the read and write units per second the hottest value of
every key receives, on the table and on each index, adds up patterns that land on the same
key, and compares them with a partition's ceilings (3,000 read and 1,000 write units/s:
one key value never gets more, whatever adaptive capacity does). A write's index entries are
worked out from the table's GSIs and the item the write carries (GSI write amplification),
and an index key over its write ceiling throttles the base-table writes too (back-pressure).

No server, no Locust: the same units rules as the emulator (`loadgen.model.capacity`), the
same generators as a run. Its figures are estimates to compare with a run's measured ones.

    report = check(load_design("examples/designs/single-table.yaml", "status-key"))
    print("\\n".join(report.lines()))
    report.hot  # True where a key is predicted over a partition's ceiling
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from loadgen.design.generators import (
    Choice,
    Draws,
    KeySpace,
    RandomId,
    Sequence,
    Shard,
    TimeValue,
    ValueGenerator,
    enumerate_values,
)
from loadgen.design.loader import Design
from loadgen.design.patterns import CompiledPattern, typed_value
from loadgen.design.templates import Template
from loadgen.design.values import format_rate
from loadgen.model.capacity import READ_UNIT_BYTES, WRITE_UNIT_BYTES, item_size
from loadgen.pricing import MONTH, Prices, Usage, Window, monthly_cost

__all__ = ["READ_CEILING", "WRITE_CEILING", "CheckReport", "KeyLoad", "check", "stored_bytes"]

READ_CEILING = 3000.0
"""Read units/s one partition, and so one key value, serves."""
WRITE_CEILING = 1000.0
"""Write units/s one partition, and so one key value, serves."""
RISK = 0.5
"""A key above this share of a ceiling is named as a risk (as the run's diagnosis does)."""
PARTITION_BYTES = 10 * 1024**3
"""About 10 GB of data per partition."""


@dataclass
class KeyLoad:
    """The units/s the hottest value of one key receives at launch, and from which patterns."""

    scope: str
    key: str
    read: float = 0.0
    write: float = 0.0
    patterns: set[str] = field(default_factory=set)

    @property
    def over(self) -> str | None:
        """``read`` or ``write`` when at or over a partition's ceiling (at it, arrivals that
        are not perfectly even already throttle)."""
        if self.write >= WRITE_CEILING:
            return "write"
        if self.read >= READ_CEILING:
            return "read"
        return None

    @property
    def risk(self) -> float:
        return max(self.read / READ_CEILING, self.write / WRITE_CEILING)


@dataclass
class PatternEstimate:
    id: str
    operation: str
    rate: float
    read_units: float
    write_units: float
    """Per execution, table and indexes together."""
    index_writes: float
    """Index entries written per execution (GSI write amplification)."""
    keys: list[tuple[str, str, float, float]]
    """(scope, hottest key, read units/s, write units/s) this pattern puts on each key."""
    verdict: str = "PASS"
    reason: str = ""
    scopes: dict[str, list[float]] = field(default_factory=dict)
    """Per execution, [read, write] units on each table and index (``table/index``): what
    the cost a month is worked out from."""


@dataclass
class CheckReport:
    design: Design
    patterns: list[PatternEstimate]
    keys: dict[tuple[str, str], KeyLoad]
    partitions: dict[str, tuple[int, int]]
    """Per table: partitions by capacity, by size."""
    stored_bytes: dict[str, int]

    @property
    def hot(self) -> bool:
        return any(load.over for load in self.keys.values())

    def usage(self) -> list[Usage]:
        """Per table and index, the units/s the patterns' launch rates consume (steady: the
        peak second is the mean)."""
        totals: dict[str, list[float]] = {}
        for estimate in self.patterns:
            for scope, (read, write) in estimate.scopes.items():
                entry = totals.setdefault(scope, [0.0, 0.0])
                entry[0] += estimate.rate * read
                entry[1] += estimate.rate * write
        provisioned = {}
        for table, schema in self.design.schemas.items():
            for scope, throughput in _provisioned_throughput(self.design, table, schema):
                provisioned[scope] = throughput
        return [
            Usage(scope, read, write, read, write, provisioned.get(scope))
            for scope, (read, write) in totals.items()
        ]

    def cost(self, prices: Prices, window: Window = MONTH) -> dict[str, Any]:
        """The design's cost at its launch rates over ``window`` (a month by default), in the
        form a run's is."""
        return monthly_cost(
            self.usage(),
            {table: float(size) for table, size in self.stored_bytes.items()},
            prices,
            basis="estimated",
            how="the file's launch rates and item sizes, steady",
            window=window,
        )

    def hottest(self, k: int = 8) -> list[KeyLoad]:
        return sorted(self.keys.values(), key=lambda load: -load.risk)[:k]

    def lines(self) -> list[str]:
        design = self.design
        out = [
            f"Design {design.title} ({design.name}): {len(self.patterns)} access patterns, "
            f"{sum(p.rate for p in self.patterns):,.1f} operations/s at launch",
            *(f"  note: {note}" for note in design.notes),
            "",
            f"{'Pattern':<22} {'Operation':<18} {'Rate':>10} {'RCU/op':>7} {'WCU/op':>7} "
            f"{'GSI w/op':>8}  Expected",
        ]
        for p in self.patterns:
            out.append(
                f"{p.id:<22} {p.operation:<18} {format_rate(p.rate):>10} {p.read_units:>7.1f} "
                f"{p.write_units:>7.1f} {p.index_writes:>8.1f}  {p.verdict}"
                + (f": {p.reason}" if p.reason else "")
            )
        out += ["", "Hottest keys at launch (units/s on one key value; a partition serves 3,000 "
                "read and 1,000 write):"]  # fmt: skip
        for load in self.hottest():
            flag = f"  OVER ({load.over})" if load.over else ("  risk" if load.risk >= RISK else "")
            out.append(
                f"  {load.scope:<24} {load.key:<36} read {load.read:>9,.0f}  "
                f"write {load.write:>8,.0f}{flag}  ({', '.join(sorted(load.patterns))})"
            )
        out += ["", "Partitions each table needs (by capacity at launch, by starting size):"]
        for table, (by_capacity, by_size) in self.partitions.items():
            size = self.stored_bytes.get(table, 0)
            out.append(
                f"  {table:<24} {by_capacity} by capacity, {by_size} by size "
                f"({size / 1e6:,.1f} MB of starting data)"
            )
        hot = [load for load in self.keys.values() if load.over]
        out.append("")
        if hot:
            worst = max(hot, key=lambda load: load.risk)
            out.append(
                f"Expected: HOT KEY. {worst.key} on {worst.scope} takes {worst.read:,.0f} read "
                f"and {worst.write:,.0f} write units/s at launch, over a partition's "
                f"{'1,000 write' if worst.over == 'write' else '3,000 read'} units/s."
            )
        else:
            out.append("Expected: no key over a partition's ceiling at launch traffic.")
        return out


def stored_bytes(design: Design, *, seed: int = 1) -> dict[str, int]:
    """Per table, the bytes of the design's starting data at launch (its entities' populate
    counts times their item sizes): what its storage costs a month is read from."""
    return dict(check(design, seed=seed).stored_bytes)


def _provisioned_throughput(
    design: Design, table: str, schema: Any
) -> list[tuple[str, tuple[float, float]]]:
    """The table's and its indexes' provisioned (read, write) units, as the file declares them."""
    request = next((r for r in design.table_requests if r.get("TableName") == table), {})
    if request.get("BillingMode", "PROVISIONED") != "PROVISIONED":
        return []
    found = []

    def units(body: Mapping[str, Any]) -> tuple[float, float] | None:
        throughput = body.get("ProvisionedThroughput")
        if not throughput:
            return None
        return (
            float(throughput.get("ReadCapacityUnits", 0)),
            float(throughput.get("WriteCapacityUnits", 0)),
        )

    own = units(request)
    if own is not None:
        found.append((table, own))
    for index in request.get("GlobalSecondaryIndexes") or ():
        got = units(index)
        if got is not None:
            found.append((f"{table}/{index['IndexName']}", got))
    return found


def _hottest(generator: ValueGenerator) -> tuple[str, float]:
    """The value a generator draws most, and its share of draws."""
    if isinstance(generator, KeySpace):
        # The hottest rank is known without sampling: rank 0 (latest: the newest).
        best = next(enumerate_values(generator, 1))
        return best, float(generator.probability(best) or 0.0)
    if isinstance(generator, Choice):
        share, value = max(zip(generator.weights, generator.choices, strict=True))
        return value, share
    if isinstance(generator, Shard):
        return "0", 1.0 / generator.shards
    if isinstance(generator, TimeValue):
        return generator.draw(), 1.0  # one bucket is current at a time: it takes all
    if isinstance(generator, Sequence | RandomId):
        return generator.draw(), 0.0  # every draw new: no value repeats
    return generator.draw(), 1.0


def _key_of(
    text: str, generators: Mapping[str, ValueGenerator], each: str | None
) -> tuple[str, float]:
    """The hottest value of a key template, and the share of executions that hit it."""
    template = Template.parse(text)
    values: dict[str, str] = {}
    share = 1.0
    for name in template.names:
        if name in values:
            continue
        value, p = _hottest(generators[name])
        values[name] = value
        share *= 1.0 if name == each else p
    return template.render(values), share


def _item_bytes(item: Mapping[str, Any], generators: Mapping[str, ValueGenerator]) -> int:
    from loadgen.design.templates import RequestTemplate

    rendered = RequestTemplate({"i": item}).render(Draws(generators))["i"]
    return item_size(rendered)


def check(design: Design, *, seed: int = 1) -> CheckReport:
    """The design's expected heat at launch traffic (see the module docstring)."""
    generators = design.generators(seed=seed)
    compiled = design.compile(generators)
    entity_bytes: dict[str, int] = {}
    entity_items: dict[str, dict[str, Any]] = {}
    for name, entity in design.spec.entities.items():
        table = entity.table or next(iter(design.schemas))
        types = dict(design.schemas[table].attribute_types)
        typed = {a: typed_value(v, a, types.get(a)) for a, v in entity.item.items()}
        entity_items[name] = typed
        entity_bytes[name] = _item_bytes(typed, generators)
    keys: dict[tuple[str, str], KeyLoad] = {}
    estimates: list[PatternEstimate] = []
    for pattern_spec in design.patterns:
        pattern = compiled[pattern_spec.id]
        estimate = _estimate(design, pattern, pattern_spec, generators, entity_items, entity_bytes)
        estimates.append(estimate)
        for scope, key, read, write in estimate.keys:
            load = keys.setdefault((scope, key), KeyLoad(scope, key))
            load.read += read
            load.write += write
            load.patterns.add(pattern.id)
    for estimate in estimates:
        over = [
            keys[(scope, key)]
            for scope, key, read, write in estimate.keys
            if keys[(scope, key)].over and (read or write)
        ]
        if over:
            worst = max(over, key=lambda load: load.risk)
            kind = worst.over
            units = worst.read if kind == "read" else worst.write
            estimate.verdict = "FAIL"
            estimate.reason = (
                f"{worst.key} on {worst.scope} at {units:,.0f} {kind} units/s "
                f"(a partition serves {READ_CEILING if kind == 'read' else WRITE_CEILING:,.0f})"
            )
    partitions: dict[str, tuple[int, int]] = {}
    stored: dict[str, int] = {}
    for name, entity in design.spec.entities.items():
        if entity.populate:
            table = entity.table or next(iter(design.schemas))
            count = 1
            for generator, how_many in entity.populate.items():
                cardinality = generators[generator].cardinality or 1
                count *= cardinality if how_many == "all" else min(int(how_many), cardinality)
            stored[table] = stored.get(table, 0) + count * entity_bytes[name]
    for table in design.schemas:
        read = sum(load.read for (scope, _), load in keys.items() if scope == table)
        write = sum(load.write for (scope, _), load in keys.items() if scope == table)
        # Patterns' total units on the table, not just the hottest keys'.
        read = (
            sum(e.rate * e.read_units for e in estimates if compiled[e.id].table == table) or read
        )
        write = (
            sum(e.rate * e.write_units for e in estimates if compiled[e.id].table == table) or write
        )
        by_capacity = max(1, math.ceil(read / READ_CEILING + write / WRITE_CEILING))
        by_size = max(1, math.ceil(stored.get(table, 0) / PARTITION_BYTES))
        partitions[table] = (by_capacity, by_size)
    return CheckReport(design, estimates, keys, partitions, stored)


def _entity_for(
    design: Design,
    table: str,
    key: Mapping[str, Any],
    entity_items: Mapping[str, Mapping[str, Any]],
) -> str | None:
    """The entity whose key templates a request's key matches (what it reads or updates)."""
    for name, item in entity_items.items():
        entity = design.spec.entities[name]
        if (entity.table or next(iter(design.schemas))) != table:
            continue
        if all(item.get(attribute) == value for attribute, value in key.items()):
            return name
    return None


def _estimate(
    design: Design,
    pattern: CompiledPattern,
    spec: Any,
    generators: Mapping[str, ValueGenerator],
    entity_items: Mapping[str, Mapping[str, Any]],
    entity_bytes: Mapping[str, int],
) -> PatternEstimate:
    schema = design.schemas[pattern.table]
    request = pattern.requests[0].request if pattern.requests else {}
    op = pattern.operation
    fan = len(pattern.each_values) if pattern.each else 1
    transactional = op.startswith("Transact")
    factor = 2.0 if transactional else 1.0
    keys: list[tuple[str, str, float, float]] = []
    read_units = write_units = index_writes = 0.0
    index_units: dict[str, float] = {}
    by_scope: dict[str, list[float]] = {}

    def mean_bytes(table: str) -> int:
        sizes = [
            entity_bytes[n]
            for n, e in design.spec.entities.items()
            if (e.table or next(iter(design.schemas))) == table
        ]
        return int(sum(sizes) / len(sizes)) if sizes else 100

    def key_text(value: Mapping[str, Any]) -> str:
        ((_, text),) = value.items()
        return str(text)

    def add(scope: str, template: str, read: float, write: float) -> None:
        key, share = _key_of(template, generators, pattern.each)
        keys.append((scope, key, pattern.rate * share * read, pattern.rate * share * write))

    def writes(table: str, item: Mapping[str, Any] | None, size: int, changes: set[str]) -> float:
        """Index writes of an item written (all its index keys) or updated (``changes``)."""
        total = 0.0
        owner = design.schemas[table]
        for index in owner.global_indexes:
            if item is None or any(a not in item for a in index.key_attributes):
                continue
            if (
                changes
                and not (set(index.key_attributes) & changes)
                and index.projection == "KEYS_ONLY"
            ):
                continue
            moved = bool(changes & set(index.key_attributes))
            units = math.ceil(max(size, 1) / WRITE_UNIT_BYTES) * factor * (2 if moved else 1)
            total += units
            scope = f"{table}/{index.name}"
            index_units[scope] = index_units.get(scope, 0.0) + units
            add(f"{table}/{index.name}", key_text(item[index.partition_key]), 0.0, units)
        return total

    if op in ("GetItem", "PutItem", "UpdateItem", "DeleteItem"):
        key = request.get("Key") or {a: request["Item"][a] for a in schema.key_attributes}
        entity = (
            _entity_for(design, schema.name, key, entity_items)
            if op != "PutItem"
            else (spec.entity)
        )
        size = entity_bytes[entity] if entity else mean_bytes(schema.name)
        pk = key_text(key[schema.partition_key])
        if op == "GetItem":
            read_units = math.ceil(max(size, 1) / READ_UNIT_BYTES) * (
                1.0 if request.get("ConsistentRead") else 0.5
            )
            add(schema.name, pk, read_units, 0.0)  # with each: every value, once an execution
        else:
            write_units = math.ceil(max(size, 1) / WRITE_UNIT_BYTES) * 1.0
            add(schema.name, pk, 0.0, write_units * fan)
            item = entity_items.get(entity) if entity else None
            if op == "PutItem":
                index_writes = writes(schema.name, request.get("Item"), size, set())
            elif op == "UpdateItem" and item is not None:
                changed = set((spec.set or {}).keys()) | set((spec.add or {}).keys())
                merged = {**item, **{a: typed_value(v, a) for a, v in (spec.set or {}).items()}}
                if (
                    any(a in changed for i in schema.global_indexes for a in i.key_attributes)
                    or changed
                ):
                    index_writes = writes(schema.name, merged, size, changed)
            elif op == "DeleteItem" and item is not None:
                index_writes = writes(schema.name, item, size, set())
    elif op in ("Query", "Scan"):
        index = schema.index(pattern.index) if pattern.index else None
        owner = index or schema
        per_partition = 1
        size = mean_bytes(schema.name)
        for name, entity in design.spec.entities.items():
            if entity.populate and (entity.table or next(iter(design.schemas))) == schema.name:
                counts = list(entity.populate.values())
                inner = 1
                for generator, how_many in list(entity.populate.items())[1:]:
                    card = generators[generator].cardinality or 1
                    inner *= card if how_many == "all" else min(int(how_many), card)
                per_partition = max(per_partition, inner if counts else 1)
                size = entity_bytes[name]
        items = min(int(request.get("Limit") or per_partition), per_partition)
        strong = bool(request.get("ConsistentRead")) and (index is None or index.local)
        read_units = math.ceil(max(items * size, 1) / READ_UNIT_BYTES) * (1.0 if strong else 0.5)
        scope = schema.name if index is None else f"{schema.name}/{index.name}"
        if op == "Query":
            values = request.get("ExpressionAttributeValues") or {}
            names = request.get("ExpressionAttributeNames") or {}
            condition = str(request.get("KeyConditionExpression") or "")
            template = None
            for placeholder, name in names.items():
                if name == owner.partition_key:
                    left = condition.split(" AND ")[0]
                    for value_name, value in values.items():
                        if placeholder in left and value_name in left:
                            template = key_text(value)
            if template is None:
                for value_name, value in values.items():
                    if owner.partition_key in condition and value_name in condition:
                        template = key_text(value)
                        break
            add(scope, template or "?", read_units, 0.0)
        else:
            add(scope, "(every partition)", read_units, 0.0)
    elif op in ("BatchGetItem", "BatchWriteItem"):
        shape = pattern.key_templates[0]
        count = len(pattern.each_values) if pattern.each else pattern.count
        entity = _entity_for(
            design, schema.name, {a: shape[a] for a in schema.key_attributes}, entity_items
        )
        size = (
            entity_bytes[entity]
            if entity
            else (
                _item_bytes(shape, generators)
                if op == "BatchWriteItem"
                else mean_bytes(schema.name)
            )
        )
        pk = key_text(shape[schema.partition_key])
        if op == "BatchGetItem":
            read_units = (
                count
                * math.ceil(max(size, 1) / READ_UNIT_BYTES)
                * (1.0 if request.get("ConsistentRead") else 0.5)
            )
            per_key = read_units / count
            if pattern.each:
                for value in pattern.each_values:
                    one = Template.parse(pk)
                    rest = {n: _hottest(generators[n])[0] for n in one.names if n != pattern.each}
                    key = one.render({**rest, pattern.each: value})
                    share = math.prod(
                        _hottest(generators[n])[1] for n in set(one.names) if n != pattern.each
                    )
                    keys.append((schema.name, key, pattern.rate * share * per_key, 0.0))
            else:
                add(schema.name, pk, per_key, 0.0)
        else:
            write_units = count * math.ceil(max(size, 1) / WRITE_UNIT_BYTES)
            add(schema.name, pk, 0.0, write_units / count)
            index_writes = count * writes(schema.name, shape, size, set())
            index_units = {scope: units * count for scope, units in index_units.items()}
    else:  # transactions
        for action in request.get("TransactItems") or ():
            ((kind, body),) = action.items()
            owner_schema = design.schemas[body["TableName"]]
            item_body: dict[str, Any] = body.get("Item") or {}
            key = body.get("Key") or {a: item_body[a] for a in owner_schema.key_attributes}
            entity = _entity_for(design, owner_schema.name, key, entity_items)
            size = entity_bytes[entity] if entity else mean_bytes(owner_schema.name)
            pk = key_text(key[owner_schema.partition_key])
            if kind == "Get":
                units = math.ceil(max(size, 1) / READ_UNIT_BYTES) * 2.0
                read_units += units
                add(owner_schema.name, pk, units, 0.0)
                by_scope.setdefault(owner_schema.name, [0.0, 0.0])[0] += units
            else:
                units = math.ceil(max(size, 1) / WRITE_UNIT_BYTES) * 2.0
                write_units += units
                add(owner_schema.name, pk, 0.0, units)
                by_scope.setdefault(owner_schema.name, [0.0, 0.0])[1] += units
                if kind == "Put":
                    index_writes += writes(owner_schema.name, item_body, size, set())
    reads = read_units * fan if op in ("GetItem", "Query") else read_units
    if not op.startswith("Transact"):
        index = schema.index(pattern.index) if pattern.index else None
        read_scope = schema.name if index is None else f"{schema.name}/{index.name}"
        if reads:
            by_scope.setdefault(read_scope, [0.0, 0.0])[0] += reads
        if write_units:
            # An ``each`` write runs once per value: the table's units are the key loads'.
            by_scope.setdefault(schema.name, [0.0, 0.0])[1] += write_units * fan
    for scope, units in index_units.items():
        by_scope.setdefault(scope, [0.0, 0.0])[1] += units * (fan if op in _WRITES else 1)
    return PatternEstimate(
        pattern.id, op, pattern.rate, reads, write_units, index_writes, keys, scopes=by_scope
    )


_WRITES = frozenset({"PutItem", "UpdateItem", "DeleteItem"})
