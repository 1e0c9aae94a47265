"""``loadgen check --remedy``: every remedy a design's launch needs, at once, as a variant.

A check names each limit the launch asks too much of (`loadgen.simulate.launch`). Each is
remedied in the file's own terms, sized by `loadgen.model.sizing` (the rules the run's diagnosis
names its figures by):

- an on-demand table's or index's capacity: its ``WarmThroughput`` at the figure asked;
- provisioned capacity: ``ProvisionedThroughput`` that carries it at 70% utilisation;
- an on-demand maximum: ``OnDemandThroughput`` at the figure;
- a capacity that passes, but that the other remedies ask more of (a read over every shard
  reads each shard) and leave within `HEADROOM` of what it serves: sized as a failing one;
- a partition's ceiling: the hot key's template takes a shard generator (``GAME#{game}`` ->
  ``GAME#{game}#{PK_shard}``) wherever the key is written, and the reads of it run over
  every shard (a GetItem becomes a BatchGetItem of the shards, a Query runs per shard); as
  many shards as keep the busiest partition they make within its ceiling (`shards_for`:
  where the model places a fixed key's shards, at the odds of any placement where the key
  moves with a time bucket), checked again on each remedied round's partitions; a
  partition hot with many keys, none near a ceiling: more partitions (its warm throughput
  or provisioned capacity doubled);
- the per-table quota: asked of AWS, not in a file.

What a remedy cannot decide for the team (a condition on a count now split over N shards, a
key the reads would have to find a shard of) is said, not guessed. The remedied design is
checked again: a limit hidden behind one remedied is remedied in the next round, up to
`ROUNDS`, so the variant holds every remedy and the report every limit that binds.

    found = remedy(load_design("examples/designs/counter.yaml", "single"))
    found.name, found.final.failed      # ('single-remedied', False)
"""

from __future__ import annotations

import copy
import math
import re
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from typing import Any

from loadgen.design.check import FAIL, CheckReport, LimitCheck, scope_name
from loadgen.design.loader import Design, design_of, variant_source
from loadgen.design.variants import compose_changes, variant_data
from loadgen.model.partitions import (
    ON_DEMAND_TABLE_QUOTA_UNITS,
    ON_DEMAND_WARM_READ_UNITS,
    ON_DEMAND_WARM_WRITE_UNITS,
    key_ceiling,
    partitions_for,
)
from loadgen.model.sizing import (
    HEADROOM,
    RISK,
    SPREAD,
    capacity_figure,
    fits,
    most_partitions,
    provisioned_figure,
    shard_plan,
    shards_for,
)
from loadgen.simulate.launch import check

__all__ = ["ROUNDS", "Remedy", "remedy", "remedy_name", "write_remedies"]

ROUNDS = 4
"""Checks of a remedied design, each remedying what the one before found."""
_WARM = {"read": ON_DEMAND_WARM_READ_UNITS, "write": ON_DEMAND_WARM_WRITE_UNITS}
_SIDE = {"read": "Read", "write": "Write"}
_READS = frozenset({"GetItem", "BatchGetItem", "Query", "Scan"})
_FIELD = re.compile(r"(\{[^{}]*\})")


def remedy_name(design: Design) -> str:
    """``V-remedied``; ``remedied`` for a file without variants."""
    return "remedied" if design.name == "default" else f"{design.name}-remedied"


@dataclass
class Remedy:
    """Every remedy of one variant, and the checks that found them."""

    design: Design
    name: str
    change: dict[str, Any] = field(default_factory=dict)
    """The remedies, as a variant of the checked one changes it."""
    own: dict[str, Any] = field(default_factory=dict)
    """The checked variant's own changes (its ``designs`` entry)."""
    said: dict[tuple[str, ...], str] = field(default_factory=dict)
    """What each remedy does, one line each, by what it changes (a later round's figure
    replaces an earlier one's)."""
    undecided: list[str] = field(default_factory=list)
    """What the remedies leave to the team."""
    reports: list[CheckReport] = field(default_factory=list)
    """The checked variant's, then each remedied round's."""
    remedied: Design | None = None
    sharded: dict[str, Sharded] = field(default_factory=dict)
    """The keys the remedy sharded, by their shard generator."""

    @property
    def final(self) -> CheckReport:
        return self.reports[-1]

    def variant(self) -> dict[str, Any]:
        """The ``designs`` entry that writes it: the checked variant's changes, then these."""
        out = compose_changes(self.own, self.change)
        out.pop("description", None)
        return {"description": f"{self.design.name} with every remedy check found", **out}

    def later(self) -> list[LimitCheck]:
        """Limits that refuse once those before them are lifted: FAIL in a remedied round on
        a table, index, side and limit the checked variant did not fail on."""
        seen = {_slot(limit) for limit in self.reports[0].limits if limit.verdict == FAIL}
        found = []
        for report in self.reports[1:]:
            for limit in report.limits:
                if limit.verdict == FAIL and _slot(limit) not in seen:
                    seen.add(_slot(limit))
                    found.append(limit)
        return found

    def lines(self) -> list[str]:
        out = [f"Remedy of {self.design.name}, written as {self.name}:"]
        out += [f"  {line}" for line in self.said.values()]
        later = self.later()
        if later:
            out.append("  Found once the limits before them were lifted:")
            out += [f"    FAIL  {lim.words()}; fails {', '.join(lim.patterns)}" for lim in later]
        if self.undecided:
            out.append("  Left to the team (not decided by the remedy):")
            out += [f"    {line}" for line in self.undecided]
        final = self.final
        verdict = "FAIL" if final.failed else "PASS"
        rounds = len(self.reports) - 1
        out.append(
            f"  {self.name}: Expected {verdict} (the model over the launch, "
            f"{rounds} remedied round{'s' if rounds != 1 else ''})"
        )
        if final.failed:
            out += [f"    still FAIL  {lim.words()}" for lim in final.limits if lim.verdict == FAIL]
        return out


@dataclass
class Sharded:
    """A key the remedy split over a shard generator, and the reads it split a page over."""

    table: str
    index: str | None
    kind: str
    key: str
    """The key as check named it (its shards are ``key#0``..)."""
    moves: bool
    """Whether its template holds a time generator: each bucket's shards are placed anew."""
    least: int = 2
    """The shards the `RISK` rule gives it (`shards_for`): `SPREAD` times it at most."""
    limits: dict[str, int] = field(default_factory=dict)
    """Each Query's own Limit, by pattern id, which the shards share."""

    @property
    def scope(self) -> str:
        return scope_name(self.table, self.index)


def _slot(limit: LimitCheck) -> tuple[str, str | None, str, str]:
    return (limit.table, limit.index, limit.kind, limit.cause)


def remedy(design: Design, *, report: CheckReport | None = None, seed: int = 1) -> Remedy:
    """Every remedy ``design``'s launch needs (see the module docstring)."""
    data, own = variant_source(design)
    found = Remedy(design, remedy_name(design), own=own)
    found.reports.append(report or check(design, seed=seed))
    current = data
    for _ in range(ROUNDS):
        change = _Round(found.final, current, found).change
        total = compose_changes(found.change, change)
        if total == found.change:  # passes with its shards placed, or nothing more to change
            break
        found.change = total
        current = variant_data(current, found.name, change)
        found.remedied = design_of(design, found.name, current)
        found.reports.append(check(found.remedied, seed=seed))
    return found


class _Round:
    """One check's failing limits, remedied on the data of the variant it checked."""

    def __init__(self, report: CheckReport, data: dict[str, Any], remedy: Remedy) -> None:
        self.report, self.data, self.remedy = report, data, remedy
        self.change: dict[str, Any] = {}
        first = data["tables"][0]["TableName"]
        self.first = first
        self._placed()
        for limit in report.limits:
            if limit.verdict != FAIL:
                continue
            if limit.cause == "partition":
                self._partition(limit)
            elif limit.cause == "buffer":
                # A GSI's buffer fills behind the limit its reason names: a partition's
                # ceiling (a hot index key), or the index's own capacity.
                if "KeyRange" in limit.reason and limit.key is not None:
                    self._partition(replace(limit, cause="partition"))
                elif "Provisioned" in limit.reason:
                    self._capacity(replace(limit, cause="provisioned"), limit.asked)
                else:
                    self._capacity(replace(limit, cause="capacity"), limit.asked)
            elif limit.cause == "account":
                self._say(
                    f"{limit.scope}: {limit.words()}: ask AWS for a table-level {limit.kind} "
                    f"throughput quota of at least {capacity_figure(limit.asked):,} (Service "
                    "Quotas); a design file cannot raise it",
                    undecided=True,
                )
            else:
                self._capacity(limit, limit.asked)
        self._headroom()

    def _headroom(self) -> None:
        """A capacity the remedies so far ask more of than the launch did (a read over every
        shard reads each shard), left within `HEADROOM` of what it serves though it passes:
        sized as a failing one is, for the launch's busiest seconds."""
        before = {_slot(limit): limit.asked for limit in self.remedy.reports[0].limits}
        for limit in self.report.limits:
            if limit.verdict == FAIL or limit.cause not in ("capacity", "provisioned"):
                continue
            if limit.asked * HEADROOM <= limit.serves or limit.asked <= before.get(_slot(limit), 0):
                continue
            self._capacity(
                limit,
                limit.asked,
                f"{limit.asked:,.0f} {limit.kind} units/s asked at launch with the remedies "
                f"above, {limit.asked / limit.serves:.1%} of the {limit.serves:,.0f} it serves",
            )

    # -- what a remedy writes -------------------------------------------------------------

    def _say(self, line: str, *, undecided: bool = False, slot: tuple[str, ...] = ()) -> None:
        if not undecided:
            self.remedy.said[slot or (line,)] = line
        elif line not in self.remedy.undecided:
            self.remedy.undecided.append(line)

    def _table(self, table: str) -> dict[str, Any]:
        return next(t for t in self.data["tables"] if t.get("TableName") == table)

    def _owner(self, table: str, index: str | None) -> dict[str, Any]:
        """The table's or index's entry in the file's data."""
        body = self._table(table)
        if index is None:
            return body
        return next(
            i for i in body.get("GlobalSecondaryIndexes") or () if i.get("IndexName") == index
        )

    def _owner_change(self, table: str, index: str | None) -> dict[str, Any]:
        """The table's or index's entry in this round's change, made where missing."""
        tables = self.change.setdefault("tables", [])
        entry = next((t for t in tables if t["TableName"] == table), None)
        if entry is None:
            entry = {"TableName": table}
            tables.append(entry)
        if index is None:
            return entry
        indexes = entry.setdefault("GlobalSecondaryIndexes", [])
        found = next((i for i in indexes if i["IndexName"] == index), None)
        if found is None:
            found = {"IndexName": index}
            indexes.append(found)
        return found

    def _raise(self, limit: LimitCheck, group: str, field_name: str, figure: int) -> int:
        """``group.field_name`` of the table or index raised to ``figure`` (never lowered)."""
        return self._raise_on(limit.table, limit.index, group, field_name, figure)

    def _raise_on(
        self, table: str, index: str | None, group: str, field_name: str, figure: int
    ) -> int:
        owner = self._owner(table, index)
        target = self._owner_change(table, index).setdefault(group, {})
        have = float((owner.get(group) or {}).get(field_name) or 0)
        figure = max(figure, int(target.get(field_name, 0)))
        if figure <= have:
            return int(have)
        target[field_name] = figure
        if group == "ProvisionedThroughput":  # both figures, as UpdateTable takes them
            for other in ("ReadCapacityUnits", "WriteCapacityUnits"):
                target.setdefault(other, int((owner.get(group) or {}).get(other) or 1))
        return figure

    def _capacity(self, limit: LimitCheck, units: float, why: str = "") -> None:
        why = why or f"{units:,.0f} {limit.kind} units/s asked at launch"
        side = _SIDE[limit.kind]
        what = f"{'index' if limit.index else 'table'} {limit.scope}"
        on_demand = self._table(limit.table).get("BillingMode") == "PAY_PER_REQUEST"
        if limit.cause == "provisioned" or (limit.cause == "partition" and not on_demand):
            wanted = provisioned_figure(units)
            figure = self._raise(limit, "ProvisionedThroughput", f"{side}CapacityUnits", wanted)
            line = (
                f"{what}: ProvisionedThroughput {side}CapacityUnits {figure:,} "
                f"({units:,.0f} {limit.kind} units/s at 70% utilisation)"
            )
            slot = (limit.scope, "ProvisionedThroughput", side)
        elif limit.cause == "maximum":
            wanted = capacity_figure(units)
            figure = self._raise(limit, "OnDemandThroughput", f"Max{side}RequestUnits", wanted)
            line = f"{what}: OnDemandThroughput Max{side}RequestUnits {figure:,}"
            slot = (limit.scope, "OnDemandThroughput", side)
        else:
            wanted = capacity_figure(units)
            figure = self._raise(limit, "WarmThroughput", f"{side}UnitsPerSecond", wanted)
            line = f"{what}: WarmThroughput {side}UnitsPerSecond {figure:,} ({why})"
            slot = (limit.scope, "WarmThroughput", side)
        self._say_figure(line, slot, figure, wanted)

    def _say_figure(self, line: str, slot: tuple[str, ...], figure: int, wanted: int) -> None:
        """A raised figure's line, unless a higher figure another remedy asked of the same
        field is said already (its line says why)."""
        if figure > wanted and slot in self.remedy.said:
            return
        self._say(line, slot=slot)

    def _partition(self, limit: LimitCheck) -> None:
        ceiling = limit.serves  # what a partition serves its key: check's figure
        if (
            limit.key is not None
            and limit.key_units >= RISK * ceiling
            and not (limit.kind == "read" and limit.key_units < ceiling and self._a_shard(limit))
        ):
            self._shard(limit)
            return
        # A partition hot with many keys, none of them near a ceiling, or read shards of one
        # key that fit a partition each but share one: more partitions. (A read over every
        # shard costs each shard's read again: more of them would ask more.)
        count = self.report.partitions.get(limit.scope)
        total = 0.0
        if count is not None:
            total = count.read_units if limit.kind == "read" else count.write_units
        owner = self._owner(limit.table, limit.index)
        side = _SIDE[limit.kind]
        if self._table(limit.table).get("BillingMode") != "PAY_PER_REQUEST":
            provisioned = owner.get("ProvisionedThroughput") or {}
            have = float(provisioned.get(f"{side}CapacityUnits") or 1)
            self._capacity(
                limit,
                2 * max(total, have) * 0.7,
                f"more partitions: {limit.words()}",
            )
            return
        warm = float((owner.get("WarmThroughput") or {}).get(f"{side}UnitsPerSecond") or 0)
        self._capacity(
            limit,
            # Within the per-table quota: past it, the quota refuses what the partitions take.
            min(2 * max(total, warm, _WARM[limit.kind]), ON_DEMAND_TABLE_QUOTA_UNITS / HEADROOM),
            f"more partitions: {limit.words()}",
        )

    # -- shards ---------------------------------------------------------------------------

    def _partitions(self, table: str, index: str | None) -> int | None:
        count = self.report.partitions.get(scope_name(table, index))
        return None if count is None else count.at_start

    def _asked(self, scope: str, kind: str) -> float:
        """Units/s of ``kind`` the launch asks of a table or index."""
        count = self.report.partitions.get(scope)
        if count is None:
            return 0.0
        return count.read_units if kind == "read" else count.write_units

    def _serves(self, scope: str, kind: str) -> float | None:
        return next(
            (
                limit.serves
                for limit in self.report.limits
                if limit.scope == scope and limit.kind == kind and limit.cause == "partition"
            ),
            None,
        )

    def _placed(self) -> None:
        """The remedy's shards sized again on the partitions this round's check gave their
        table or index, at the units check asked of all of them: more where the busiest
        partition they make is past its ceiling over the headroom."""
        generators = {**self.data.get("generators", {}), **self.change.get("generators", {})}
        for name, key in self.remedy.sharded.items():
            count = int((generators.get(name) or {}).get("shard") or 0)
            units = count * self._shard_units(key, count)
            partitions = self._partitions(key.table, key.index)
            if not count or not units or partitions is None:
                continue
            wanted, needed = shard_plan(
                units,
                key.kind,
                partitions,
                key=key.key,
                moves=key.moves,
                serves=self._serves(key.scope, key.kind),
                others=self._asked(key.scope, key.kind) - units,
                most=self._most_partitions(key.table, key.index, key.kind),
            )
            wanted, needed = self._busiest(key, count, wanted, needed, partitions)
            self._partitions_at_least(key.table, key.index, key.kind, needed, key.key)
            self._reads_fit(name, key, max(wanted, count), partitions)
            if wanted > count:
                self._set_shards(name, wanted)
                said = self.remedy.said.get(("shard", name), "").split("; placed: ")[0]
                self.remedy.said[("shard", name)] = (
                    said.replace(f", {count} shards (", f", {wanted} shards (")
                    + f"; placed: {wanted} shards keep the busiest of the {partitions} "
                    f"partitions they fall on within its ceiling"
                    + (", wherever a bucket's shards fall" if key.moves else "")
                )

    def _throughput(
        self, table: str, index: str | None
    ) -> tuple[str, tuple[str, str], list[float]]:
        """The group a table's or index's partitions follow (warm throughput on demand,
        provisioned capacity), its read and write fields, and their figures now."""
        owner = self._owner(table, index)
        changed = self._owner_change(table, index)
        on_demand = self._table(table).get("BillingMode") == "PAY_PER_REQUEST"
        group = "WarmThroughput" if on_demand else "ProvisionedThroughput"
        names = (
            ("ReadUnitsPerSecond", "WriteUnitsPerSecond")
            if on_demand
            else ("ReadCapacityUnits", "WriteCapacityUnits")
        )
        have = [
            float((changed.get(group) or {}).get(name) or (owner.get(group) or {}).get(name) or 0)
            for name in names
        ]
        if on_demand:
            have = [have[0] or ON_DEMAND_WARM_READ_UNITS, have[1] or ON_DEMAND_WARM_WRITE_UNITS]
        return group, names, have

    def _most_partitions(self, table: str, index: str | None, kind: str) -> int:
        """The partitions the model gives a table or index at the per-table quota."""
        _, _, have = self._throughput(table, index)
        return most_partitions(have[0], have[1], kind)

    def _partitions_at_least(
        self, table: str, index: str | None, kind: str, partitions: int, key: str
    ) -> None:
        """A table's or index's ``kind`` capacity raised until the model gives it
        ``partitions`` (`partitions_for`), where its shards of ``key`` need them."""
        if partitions <= (self._partitions(table, index) or 0):
            return
        group, names, have = self._throughput(table, index)
        side = 0 if kind == "read" else 1
        units = have[side]
        while partitions_for(*[units if n == side else have[n] for n in (0, 1)]) < partitions:
            units += 100.0
        figure = self._raise_on(table, index, group, names[side], math.ceil(units))
        scope = scope_name(table, index)
        self._say_figure(
            f"{'index' if index else 'table'} {scope}: {group} {names[side]} {figure:,} "
            f"(more partitions: {partitions}, so that the shards of {key} and the other keys "
            "fit each partition's ceiling)",
            (scope, group, _SIDE[kind]),
            figure,
            math.ceil(units),
        )

    def _shard_units(self, key: Sharded, count: int, kind: str | None = None) -> float:
        """Units/s check asks of one of ``key``'s ``count`` shards: a shard generator draws
        them alike, so the busiest listed (check lists a lane's hottest keys only)."""
        kind = kind or key.kind
        shard_keys = {f"{key.key}#{n}" for n in range(count)}
        return max(
            (
                load.read if kind == "read" else load.write
                for load in self.report.keys
                if load.scope == key.scope and load.key in shard_keys
            ),
            default=0.0,
        )

    def _busiest(
        self, key: Sharded, count: int, wanted: int, needed: int, partitions: int
    ) -> tuple[int, int]:
        """Shards and partitions, checked against the busiest partition the model served
        over a launch that passes (its other keys as they fall, not at their mean share):
        where it is past its ceiling over `HEADROOM`, the next count that `fits` where the
        model places them, or, past `SPREAD` times the least count, twice the partitions.
        Each round checks again."""
        count_of = self.report.partitions.get(key.scope)
        busiest = getattr(count_of, f"busiest_{key.kind}_units", None)
        serves = self._serves(key.scope, key.kind) or key_ceiling(key.kind)
        if (
            self.report.failed  # the failing limits are remedied first
            or busiest is None
            or busiest <= serves / HEADROOM
            or wanted > count
            or needed > partitions
        ):
            return wanted, needed
        units = count * self._shard_units(key, count)
        others = self._asked(key.scope, key.kind) - units
        for more in range(count + 1, SPREAD * key.least + 1):
            if fits(more, units, key.kind, partitions, key.key, key.moves, serves, others):
                return more, needed
        return wanted, min(2 * partitions, self._most_partitions(key.table, key.index, key.kind))

    def _reads_fit(self, name: str, key: Sharded, shards: int, partitions: int) -> None:
        """A write-hot key's shards read over all of them: each shard takes every read, so
        where the busiest partition they make cannot serve them, more partitions (more
        shards would each be read again)."""
        if key.kind != "write":
            return
        each = self._shard_units(key, shards, "read")
        if not each:
            return
        units, most = shards * each, self._most_partitions(key.table, key.index, "read")
        serves, others = self._serves(key.scope, "read"), self._asked(key.scope, "read") - units
        needed = partitions
        while needed < most and not fits(
            shards, units, "read", needed, key.key, key.moves, serves, others
        ):
            needed = min(most, 2 * needed)
        self._partitions_at_least(key.table, key.index, "read", needed, key.key)

    def _set_shards(self, name: str, shards: int) -> None:
        """Generator ``name`` at ``shards``, and each read that split its page over the
        shards taking its share again."""
        self.change.setdefault("generators", {})[name] = {"shard": shards}
        key = self.remedy.sharded.get(name)
        for pattern, limit in (key.limits if key else {}).items():
            share = math.ceil(limit / shards)
            self.change.setdefault("access_patterns", {}).setdefault(pattern, {})["limit"] = share
            self._say(
                f"{pattern}: its Limit of {limit} read over {shards} shards: {share} from each",
                slot=("limit", pattern),
            )

    def _partition_key(self, table: str, index: str | None) -> str:
        schema = self.report.design.schemas[table]
        return schema.partition_key if index is None else schema.index(index).partition_key

    def _a_shard(self, limit: LimitCheck) -> bool:
        """Whether the limit's key is one shard of a key the file shards already."""
        assert limit.key is not None
        attribute = self._partition_key(limit.table, limit.index)
        generators = {**self.data.get("generators", {}), **self.change.get("generators", {})}
        return any(
            _shard_generator(text, generators) is not None
            for _, _, text in self._places(limit.table, attribute, limit.key)
        )

    def _shard(self, limit: LimitCheck) -> None:
        assert limit.key is not None
        attribute = self._partition_key(limit.table, limit.index)
        generators = {**self.data.get("generators", {}), **self.change.get("generators", {})}
        places = list(self._places(limit.table, attribute, limit.key))
        if not places:
            self._say(
                f"{limit.scope}: {limit.key} takes {limit.key_units:,.0f} {limit.kind} units/s "
                f"of a partition's {limit.serves:,.0f}; no template of {attribute} "
                "in the file writes it: shard it by hand",
                undecided=True,
            )
            return
        template = places[0][2]
        sharded = _shard_generator(template, generators)
        if sharded is not None:  # sharded already: more shards
            name, count = sharded
            shards = max(count + 1, shards_for(count * limit.key_units, limit.kind, limit.serves))
            self._set_shards(name, shards)
            said = self.remedy.said.get(("shard", name))
            self._say(
                said.replace(f"{count} shards", f"{shards} shards")
                if said
                else f"{limit.scope}: {limit.key} at {limit.key_units:,.0f} {limit.kind} "
                f"units/s: generator {name} {count} -> {shards} shards",
                slot=("shard", name),
            )
            return
        name = _free_name(f"{attribute}_shard", generators)
        # Check's figure (`LimitCheck.shards`), on the partitions its launch starts with.
        wanted = limit.shards or shards_for(limit.key_units, limit.kind, limit.serves)
        if limit.shard_partitions is not None:
            self._partitions_at_least(
                limit.table, limit.index, limit.kind, limit.shard_partitions, limit.key
            )
        self.change.setdefault("generators", {})[name] = {"shard": wanted}
        self.remedy.sharded[name] = Sharded(
            limit.table,
            limit.index,
            limit.kind,
            limit.key,
            limit.key_moves,
            least=shards_for(limit.key_units, limit.kind, limit.serves),
        )
        readers: list[str] = []
        writers: list[str] = []
        for where, path, text in places:
            new = f"{text}#{{{name}}}"
            self._put(where, path, new)
            if where[0] == "pattern":
                writers.append(where[1])
        for pattern in self._patterns_on(limit.table):
            read = (pattern.get("key") or {}).get(attribute)
            if not isinstance(read, str) or not _renders(read, limit.key):
                continue
            if pattern["operation"] not in (*_READS, "DeleteItem"):
                continue
            if limit.index is not None and pattern.get("index") != limit.index:
                continue
            if limit.index is None and pattern.get("index") is not None:
                continue
            self._read_all(pattern, attribute, f"{read}#{{{name}}}", name, wanted, readers)
        shown = places[0][2]
        self._say(
            f"{limit.scope}: {limit.key} at {limit.key_units:,.0f} {limit.kind} units/s of a "
            f"partition's {limit.serves:,.0f}: {attribute} {shown!r} -> "
            f"'{shown}#{{{name}}}', {wanted} shards (generator {name})"
            + (f"; written by {', '.join(sorted(set(writers)))}" if writers else "")
            + (f"; read over every shard by {', '.join(readers)}" if readers else ""),
            slot=("shard", name),
        )

    def _patterns_on(self, table: str) -> Iterator[dict[str, Any]]:
        entities = self.data.get("entities") or {}
        for pattern in self.data["access_patterns"]:
            owner = pattern.get("table")
            if owner is None and pattern.get("entity") in entities:
                owner = entities[pattern["entity"]].get("table")
            if (owner or self.first) == table:
                yield pattern

    def _places(
        self, table: str, attribute: str, key: str
    ) -> Iterator[tuple[tuple[str, str], tuple[Any, ...], str]]:
        """Where the file writes ``attribute`` of ``table`` with a template that renders
        ``key``: (owner, path to the value, the template)."""
        for name, entity in (self.data.get("entities") or {}).items():
            if (entity.get("table") or self.first) != table:
                continue
            text = (entity.get("item") or {}).get(attribute)
            if isinstance(text, str) and _renders(text, key):
                yield ("entity", name), ("item", attribute), text
        for pattern in self._patterns_on(table):
            where = ("pattern", pattern["id"])
            if pattern.get("index") is None and pattern["operation"] not in _READS:
                text = (pattern.get("key") or {}).get(attribute)
                if isinstance(text, str) and _renders(text, key):
                    yield where, ("key", attribute), text
            text = (pattern.get("set") or {}).get(attribute)
            if isinstance(text, str) and _renders(text, key):
                yield where, ("set", attribute), text
            yield from self._in_expression(where, pattern, (), attribute, key)
            for i, action in enumerate(pattern.get("actions") or ()):
                if (action.get("table") or table) != table:
                    continue
                for part in ("key", "set"):
                    text = (action.get(part) or {}).get(attribute)
                    if isinstance(text, str) and _renders(text, key):
                        yield where, ("actions", i, part, attribute), text
                yield from self._in_expression(where, action, ("actions", i), attribute, key)

    def _in_expression(
        self,
        where: tuple[str, str],
        body: dict[str, Any],
        path: tuple[Any, ...],
        attribute: str,
        key: str,
    ) -> Iterator[tuple[tuple[str, str], tuple[Any, ...], str]]:
        """An update expression's ``attribute = :value``: the value's template."""
        update = body.get("update")
        if not isinstance(update, str):
            return
        names = [attribute, *(n for n, a in (body.get("names") or {}).items() if a == attribute)]
        for name in names:
            pattern = rf"(?<![\w#:]){re.escape(name)}\s*=\s*(:[A-Za-z0-9_]+)"
            for found in re.finditer(pattern, update):
                text = (body.get("values") or {}).get(found.group(1))
                if isinstance(text, str) and _renders(text, key):
                    yield where, (*path, "values", found.group(1)), text

    def _put(self, where: tuple[str, str], path: tuple[Any, ...], value: str) -> None:
        """Set a template in this round's change: an entity attribute by attribute, a
        pattern's field whole (as a variant replaces it)."""
        kind, name = where
        if kind == "entity":
            entity = self.change.setdefault("entities", {}).setdefault(name, {})
            entity.setdefault("item", {})[path[1]] = value
            own = self.data["entities"][name]
            populate = entity.get("populate") or own.get("populate")
            table = own.get("table") or self.first
            keyed = path[1] == self.report.design.schemas[table].partition_key
            for shard in _FIELD.findall(value)[-1:]:
                if keyed and isinstance(populate, dict):  # the starting data: every shard's item
                    entity["populate"] = {**populate, shard[1:-1]: "all"}
            return
        changed = self.change.setdefault("access_patterns", {}).setdefault(name, {})
        pattern = next(p for p in self.data["access_patterns"] if p["id"] == name)
        top = path[0]
        if top not in changed:
            changed[top] = copy.deepcopy(pattern.get(top))
        target = changed[top]
        for step in path[1:-1]:
            target = target[step]
        target[path[-1]] = value
        self._conditions(name, pattern, path)

    def _conditions(self, name: str, pattern: dict[str, Any], path: tuple[Any, ...]) -> None:
        """A write with a condition on the item it shards: what the count means now is the
        team's to decide."""
        body = pattern["actions"][path[1]] if path[0] == "actions" else pattern
        condition = body.get("condition")
        if condition and "attribute_not_exists" not in condition:
            self._say(
                f"{name}: its condition ({condition}) now tests one shard's item: a count or "
                "limit split over the shards holds a share in each (set each shard's to the "
                "total over N, and decide what a write that meets a full shard does)",
                undecided=True,
            )

    def _read_all(
        self,
        pattern: dict[str, Any],
        attribute: str,
        template: str,
        generator: str,
        shards: int,
        readers: list[str],
    ) -> None:
        """A read of the sharded key runs over every shard: a GetItem as one BatchGetItem of
        the shards' keys, a Query once per shard."""
        name = pattern["id"]
        changed = self.change.setdefault("access_patterns", {}).setdefault(name, {})
        key = copy.deepcopy(changed.get("key") or pattern.get("key") or {})
        key[attribute] = template
        changed["key"] = key
        operation = pattern["operation"]
        if pattern.get("each") is not None:
            self._say(
                f"{name}: it runs over each {pattern['each']} already; each of its reads now "
                f"finds one of {shards} shards of {attribute}: read them all",
                undecided=True,
            )
            return
        if operation == "GetItem":
            changed.update({"operation": "BatchGetItem", "each": generator})
        elif operation in ("Query", "BatchGetItem"):
            changed["each"] = generator
            limit = changed.get("limit") or pattern.get("limit")
            if operation == "Query" and limit:
                # The same page over every shard: each shard's share of it.
                changed["limit"] = math.ceil(int(limit) / shards)
                self.remedy.sharded[generator].limits[name] = int(limit)
                self._say(
                    f"{name}: its Limit of {limit} read over {shards} shards: "
                    f"{changed['limit']} from each",
                    slot=("limit", name),
                )
        else:
            self._say(
                f"{name}: {operation} of {attribute} {template!r} finds one shard of "
                f"{shards}: say which (a shard computed from the item's id finds it again)",
                undecided=True,
            )
            return
        readers.append(name)


def _renders(template: str, key: str) -> bool:
    """Whether ``template`` (``GAME#{game}``) can render ``key`` (``GAME#featured``)."""
    parts = _FIELD.split(template)
    pattern = "".join(".+" if _FIELD.fullmatch(p) else re.escape(p) for p in parts)
    return re.fullmatch(pattern, key, flags=re.DOTALL) is not None


def _shard_generator(template: str, generators: dict[str, Any]) -> tuple[str, int] | None:
    """The shard generator ``template`` names already, and its count."""
    for part in _FIELD.findall(template):
        name = part[1:-1].split(":", 1)[0]
        spec = generators.get(name)
        if isinstance(spec, dict) and spec.get("shard"):
            return name, int(spec["shard"])
    return None


def _free_name(name: str, taken: dict[str, Any]) -> str:
    found, n = name, 2
    while found in taken:
        found, n = f"{name}{n}", n + 1
    return found


def write_remedies(path: str, out: str, remedies: list[Remedy]) -> None:
    """``path`` written again to ``out`` with one more variant per remedy (after the file's
    own; a file without variants gets ``default`` first), what each leaves to the team as
    comments above it. The file's own text, comments included, is kept as it is."""
    import json
    from pathlib import Path

    import yaml

    from loadgen.design.loader import load_designs, read_file
    from loadgen.errors import ConfigError

    source = Path(path)
    text = source.read_text(encoding="utf-8")
    if source.suffix.lower() == ".json" and remedies:  # none: the file as it is
        data = read_file(path)
        if remedies[0].design.aws_model:
            raise ConfigError(
                f"--remedy: {path} is AWS's data model, which has no variants; write its "
                "remedies into a YAML design file of it (see docs/your-design.md)"
            )
        designs = data.setdefault("designs", {}) or {"default": {}}
        data["designs"] = designs
        for found in remedies:
            designs[found.name] = found.variant()
        text = json.dumps(data, indent=2) + "\n"
    elif remedies:
        block: list[str] = []
        for found in remedies:
            block += [f"  # {found.name}: every remedy `loadgen check --remedy` found for "
                      f"{found.design.name}."]  # fmt: skip
            block += [f"  # Left to the team: {line}" for line in found.undecided]
            dumped = yaml.safe_dump(
                {found.name: found.variant()}, sort_keys=False, width=96, allow_unicode=True
            )
            block += [f"  {line}" for line in dumped.splitlines()]
        text = _with_variants(text, block)
    try:
        # Its folder made as `loadgen check --out` makes it.
        Path(out).parent.mkdir(parents=True, exist_ok=True)
        Path(out).write_text(text, encoding="utf-8")
    except OSError as e:
        why = e.strerror or str(e)
        if isinstance(e, FileExistsError | NotADirectoryError):
            why = f"{e.filename or Path(out).parent} is a file, not a folder"
        raise ConfigError(
            f"--remedy {out}: cannot write the remedied design there ({why}); "
            "expected a file path in a folder this user may write"
        ) from None
    names = {d.name for d in load_designs(out)}
    missing = [found.name for found in remedies if found.name not in names]
    if missing:  # pragma: no cover - a bug of the writer, not of the file
        raise ConfigError(f"--remedy {out}: written without {', '.join(missing)}")


def _with_variants(text: str, block: list[str]) -> str:
    """The YAML ``text`` with ``block`` (entries of ``designs``, indented two) added after
    its variants; a ``designs`` section made where the file has none."""
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines) if re.match(r"designs:\s*(#.*)?$", line)), None)
    if start is None:
        return text.rstrip("\n") + "\n\ndesigns:\n  default: {}\n" + "\n".join(block) + "\n"
    end = start
    for i in range(start + 1, len(lines)):
        line = lines[i]
        if line.startswith((" ", "\t")) and line.strip():
            end = i
        elif line.strip() and not line.startswith("#"):
            break
    return "\n".join([*lines[: end + 1], *block, *lines[end + 1 :]]) + "\n"
