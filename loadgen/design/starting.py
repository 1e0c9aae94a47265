"""Starting data: the items a design's tables hold when launch traffic arrives.

An entity's ``populate`` says how many values of which generators to write items for:
``{room: all, message: 50}`` is every room, each with 50 messages (the values of ``message``
enumerated 0..49); placeholders not named are drawn. The file's ``items`` (AWS's
``batch_write_item`` shape) are written as they are.

A run writes every item up to ``limit`` items in all. Above it, the first generator of each
``populate`` (the partition key's, as a design names it first) is cut to its hottest values
(those its distribution draws most), keeping the rest whole: each partition that is written
holds as many items, of the same sizes, as at launch, so a Query reads what it would read
then; the partitions left out are the coldest, and the plan states the share of draws that
fall on written values. The items a condition or an update reads (an entity keyed by a
conditional write, an UpdateItem or a transaction's Update or ConditionCheck) are never cut,
whatever the limit: a purchase that draws an event with no inventory item would fail its
condition for want of data, and the design would be judged on it.

    plans, notes = starting_plans(design, limit=100_000)
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from loadgen.design.generators import Draws, ValueGenerator, enumerate_values, hottest_share
from loadgen.design.loader import Design
from loadgen.design.templates import RequestTemplate

__all__ = ["DEFAULT_LIMIT", "TablePlan", "read_by_writes", "starting_plans"]

DEFAULT_LIMIT = 20_000
"""Items a run writes before its load at most, unless told otherwise: about 15 s through the
embedded emulator in front of DynamoDB Local on two cores (1,163 to 1,313 items/s measured
writing 100,000)."""


@dataclass(frozen=True)
class TablePlan:
    """The items to write into one table: ``item(n)`` for ``n < count``; what ``loadgen
    prefill`` writes, whether a design's starting data, a workload's items or a trace's."""

    table_request: dict[str, Any]
    item: Callable[[int], dict[str, Any]]
    count: int
    source: str
    """What the items follow, for the summary (``counter (sharded)``, ``trace t.jsonl.gz``)."""

    @property
    def table(self) -> str:
        return str(self.table_request["TableName"])


@dataclass(frozen=True)
class _Population:
    template: RequestTemplate
    names: tuple[str, ...]
    values: tuple[tuple[str, ...], ...]
    count: int

    def item(self, number: int, generators: Mapping[str, ValueGenerator]) -> dict[str, Any]:
        fixed: dict[str, str] = {}
        for name, values in zip(reversed(self.names), reversed(self.values), strict=True):
            number, digit = divmod(number, len(values))
            fixed[name] = values[digit]
        item: dict[str, Any] = self.template.render(Draws(generators, **fixed))["item"]
        return item


def starting_plans(
    design: Design,
    *,
    limit: int = DEFAULT_LIMIT,
    seed: int = 1,
    default_distribution: str = "zipf:0.99",
) -> tuple[list[TablePlan], list[str]]:
    """Per table, the items to write before the load; and one note per cut population."""
    from loadgen.design.patterns import typed_value

    generators = design.generators(
        seed=seed, stream=999_983, default_distribution=default_distribution
    )
    notes: list[str] = []
    per_table: dict[str, list[Callable[[int], dict[str, Any]]]] = {}
    counts: dict[str, list[int]] = {}
    sources: dict[str, list[str]] = {}
    populations: list[tuple[str, str, list[tuple[str, int]]]] = []
    wanted = 0
    for name, entity in design.spec.entities.items():
        if not entity.population:
            continue
        table = entity.table or next(iter(design.schemas))
        sizes = []
        for generator, how_many in entity.population.items():
            cardinality = generators[generator].cardinality
            count = cardinality if how_many == "all" else int(how_many)
            if count is None:
                count = 1
            if cardinality is not None:
                count = min(count, cardinality)
            sizes.append((generator, count))
        populations.append((name, table, sizes))
        wanted += math.prod(size for _, size in sizes)
    literal = sum(len(rows) for rows in (design.spec.items or {}).values())
    kept_whole = read_by_writes(design)
    whole = sum(
        math.prod(n for _, n in sizes) for name, _, sizes in populations if name in kept_whole
    )
    budget = max(0, limit - literal - whole)
    wanted -= whole
    if whole and limit and whole + literal > limit:
        notes.append(
            f"{', '.join(sorted(kept_whole))}: all {whole:,} item(s) written, over the "
            f"{limit:,}-item cap: a condition or an update reads them"
        )
    for name, table, sizes in populations:
        total = math.prod(size for _, size in sizes)
        if name not in kept_whole and wanted > budget and total:
            inner = max(1, total // sizes[0][1])
            keep = max(1, budget * total // wanted // inner)
            if keep < sizes[0][1]:
                first = sizes[0][0]
                share = hottest_share(generators[first], keep)
                notes.append(
                    f"{name}: {keep:,} of {sizes[0][1]:,} {first} values written (the "
                    f"hottest, {share:.0%} of draws), each with its {inner:,} item(s) as at "
                    f"launch; the run's starting data is capped at {limit:,} items"
                )
                sizes = [(first, keep), *sizes[1:]]
        schema = design.schemas[table]
        types = dict(schema.attribute_types)
        item_template = {
            attribute: typed_value(value, f"entities.{name}.item.{attribute}", types.get(attribute))
            for attribute, value in design.spec.entities[name].item.items()
        }
        population = _Population(
            RequestTemplate({"item": item_template}),
            tuple(g for g, _ in sizes),
            tuple(tuple(enumerate_values(generators[g], n)) for g, n in sizes),
            math.prod(n for _, n in sizes),
        )
        per_table.setdefault(table, []).append(
            lambda n, p=population: p.item(n, generators)  # type: ignore[misc]
        )
        counts.setdefault(table, []).append(population.count)
        sources.setdefault(table, []).append(f"{population.count:,} {name}")
    for table, rows in (design.spec.items or {}).items():
        items = [next(iter(row.values())).get("Item", row) for row in rows]
        per_table.setdefault(table, []).append(lambda n, items=items: items[n])  # type: ignore[misc]
        counts.setdefault(table, []).append(len(items))
        sources.setdefault(table, []).append(f"{len(items)} listed items")
    plans = []
    requests = {r["TableName"]: r for r in design.table_requests}
    for table, makers in per_table.items():
        offsets = counts[table]

        def item(
            number: int, makers: list[Any] = makers, offsets: list[int] = offsets
        ) -> dict[str, Any]:
            for make, count in zip(makers, offsets, strict=True):
                if number < count:
                    return dict(make(number))
                number -= count
            raise IndexError(number)

        plans.append(TablePlan(requests[table], item, sum(offsets), ", ".join(sources[table])))
    return plans, notes


def read_by_writes(design: Design) -> set[str]:
    """The entities whose items a condition or an update reads: each pattern or transaction
    action that updates, checks or writes under a condition, matched to the entity it names
    or whose key templates its key repeats."""
    default = next(iter(design.schemas))
    keyed: list[tuple[str, str | None, dict[str, str]]] = []
    for pattern in design.patterns:
        table = pattern.table or default
        if pattern.operation == "UpdateItem" or (
            pattern.condition and pattern.operation in ("PutItem", "DeleteItem")
        ):
            keyed.append((table, pattern.entity, dict(pattern.key or {})))
        for action in pattern.actions or ():
            if action.operation in ("Update", "ConditionCheck") or action.condition:
                keyed.append((action.table or table, action.entity, dict(action.key or {})))
    found = set()
    for name, entity in design.spec.entities.items():
        table = entity.table or default
        for owner, named, key in keyed:
            if owner != table:
                continue
            if named == name or (key and all(entity.item.get(a) == v for a, v in key.items())):
                found.add(name)
    return {name for name in found if design.spec.entities[name].populate}
