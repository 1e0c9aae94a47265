"""What one execution of an access pattern asks of each table and index, key by key.

A design's pattern compiles to requests (`loadgen.design.patterns`); their charges come from
the same capacity rules the emulator applies (`loadgen.model.capacity.cost_of`). A *lane* is
one table or index, one kind (read, write) and one partition-key template of those charges,
with the units a touch costs and a `KeyProfile`: the key hashes it lands on and how many
touches each takes per execution, from the generators' exact probabilities
(`ValueGenerator.probability`). Keys are listed exactly up to `EXACT_KEYS`; past that the
coldest values are folded into a share spread evenly over the hash space, as many cold keys
hash. Keys drawn new at each execution (ids, sequences, ISO times) are spread the same way.

To learn a charge's key template, the pattern is rendered once with numbered markers for
every generator's value and the markers are read back from the charged keys: whatever builds
the request (an entity's item, a GSI key, a transaction's actions) names the key.

The item a request finds was written before it: its key is the request's, its other values
its own draws, and its times (ISO, epoch) `EARLIER_S` older than the request's. An update that
sets an index key or a projected attribute so moves the index entry as on the target (a
heartbeat that sets ``last_seen`` rewrites its entry), where rendering the stored item with the
request's own draws would find nothing changed. The items a file lists (``items``, as AWS's
data model has them) are found too.
"""

from __future__ import annotations

import functools
import itertools
import math
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import numpy as np

from loadgen.design.generators import (
    Choice,
    Draws,
    KeySpace,
    Shard,
    TimeValue,
    ValueGenerator,
    hottest_values,
)
from loadgen.design.loader import Design
from loadgen.design.patterns import CompiledPattern, typed_value
from loadgen.design.templates import RequestTemplate, Template
from loadgen.model.capacity import Charge, cost_of, projected
from loadgen.model.hashing import HASH_SPACE, partition_hash, partition_hashes
from loadgen.model.index_writes import index_writes
from loadgen.model.update_expression import apply_update

__all__ = [
    "EXACT_KEYS",
    "KeyProfile",
    "Known",
    "Lane",
    "LargestRequest",
    "PatternDemand",
    "RequestShape",
    "largest_request",
    "pattern_demands",
    "pattern_units",
    "reads_eventually",
    "request_shapes",
]

EXACT_KEYS = 1 << 14
"""Key values a lane lists one by one; colder ones are folded into an even spread. A model
choice: past the hottest 16,384 keys, each partition holds thousands of the rest, whose sum
differs from an even share by under a few percent of theirs."""
KNOWN_HASHES = 1 << 20
"""Key hashes a design's lanes keep for one another before starting again (`Known`)."""
KNOWN_KEY_LISTS = 256
"""Key templates' listed texts a design's lanes keep for one another (`Known.keys`)."""
PROBES = 16
"""Executions rendered with real draws to average a touch's units (item sizes vary)."""
GROWTH_EXECUTIONS = 4096
"""Executions replayed key by key to learn how an update grows the item it keeps writing."""
GROWTH_CHECK = 128
"""Executions replayed before giving up when no item has gained an attribute."""
SAMPLE = 32
"""Key hashes a hot partition is given to choose where it splits (as the model samples)."""
_MARK = 7_391_000_000  # numbered markers: digits survive every format spec ({n:07d})
_MARKED = re.compile(r"7391(\d{6})")
EARLIER_S = 60.0
"""How much older than a request the times of the item it finds are (any age that differs)."""


class _Marker(ValueGenerator):
    def __init__(self, number: int) -> None:
        self.text = str(_MARK + number)

    def draw(self) -> str:
        return self.text


@dataclass
class KeyProfile:
    """Touches per execution at each key hash, plus a share spread evenly over the space."""

    hashes: np.ndarray
    """Sorted 64-bit key hashes (uint64)."""
    weights: np.ndarray
    """Touches per execution at each hash."""
    spread: float
    """Touches per execution spread evenly over the hash space (new or folded keys)."""
    top: list[tuple[str, float]]
    """The hottest keys, by touches per execution, hottest first."""
    top_values: list[dict[str, str]] = field(default_factory=list, repr=False)
    """Each of `top`'s keys as the values of its template's names (empty where not listed)."""
    cumulative: np.ndarray = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self.cumulative = np.concatenate(([0.0], np.cumsum(self.weights)))

    @property
    def touches(self) -> float:
        return float(self.cumulative[-1]) + self.spread

    def shares(self, starts: Sequence[int]) -> np.ndarray:
        """Touches per execution on each range ``[starts[i], starts[i+1])`` (the last to the
        end of the space)."""
        bounds = np.asarray(starts, dtype=np.uint64)
        at = np.searchsorted(self.hashes, bounds, side="left")
        ends = np.append(at[1:], len(self.hashes))
        exact = self.cumulative[ends] - self.cumulative[at]
        if self.spread:
            edges = [*starts, HASH_SPACE]
            widths = np.diff(np.asarray(edges, dtype=np.float64)) / float(HASH_SPACE)
            exact = exact + self.spread * widths
        return np.asarray(exact, dtype=np.float64)

    def sample(self, start: int, end: int, weight: float) -> list[tuple[float, int]]:
        """(mass, hash) points of the range, at most `SAMPLE` exact keys and an even spread."""
        lo = int(np.searchsorted(self.hashes, np.uint64(start)))
        hi = len(self.hashes)
        if end < HASH_SPACE:  # the last partition ends past the largest uint64
            hi = int(np.searchsorted(self.hashes, np.uint64(end)))
        points: list[tuple[float, int]] = []
        if hi > lo:
            chosen = np.arange(lo, hi)
            if hi - lo > SAMPLE:
                chosen = lo + np.argsort(self.weights[lo:hi])[-SAMPLE:]
            points += [
                (float(self.weights[i]) * weight, int(self.hashes[i])) for i in chosen.tolist()
            ]
        if self.spread:
            mass = self.spread * (end - start) / HASH_SPACE * weight / 8
            points += [(mass, start + (end - start) * (2 * i + 1) // 16) for i in range(8)]
        return points


@dataclass
class Lane:
    """One table or index, kind and key template of a pattern's charges."""

    table: str
    index: str | None
    kind: str
    units: float
    """Units one touch costs (mean over probe executions; over those of keys other than
    `key_units`' where it has any)."""
    template: Template | None
    """The partition key's template; None for a Scan (every partition)."""
    multiplicity: float = 1.0
    """Touches per execution of this template (a batch of N drawn keys: N)."""
    recorded: bool = True
    """Whether a run's recorder sees these touches: it reads keys from the request, so an
    index entry an update removes from the stored item's old key is charged but not seen
    (`loadgen.model.index_writes`)."""
    growth: tuple[tuple[float, float], ...] = ()
    """``(n, units)``: units of a key's ``n``-th update, where updates grow the item they
    keep writing (an ``add`` of a drawn attribute name); empty where they do not. Capacity,
    heat, top keys and an operation's units charge the grown units. Limits: the replay stops
    at `GROWTH_EXECUTIONS`, past which an item is taken to grow no further (counter:single
    stops at 4 units, where its GLOBAL_COUNTER goes on to 6-10 within an hour at AWS scale,
    so its share throttled there is a floor); where a hot partition splits is still sampled
    by `units`."""

    eventual: bool = False
    """Eventually consistent reads (`loadgen.model.partitions.EVENTUAL_READ_FACTOR`)."""
    items: dict[str, float] = field(default_factory=dict)
    """Touches per execution by the template of the sort key of the item touched (``""``
    without one): a key's touches on one item, which a transaction holds, and on others."""
    key_units: dict[str, float] = field(default_factory=dict)
    """Units of a touch of each of the lane's hottest keys, where a key's page is its own
    (`_key_units`: a Query of an index whose keys hold different numbers of entries, as one
    big city holds more restaurants than a small one); `units` is then a touch's of the
    other keys. Empty where every key's touch costs alike."""

    @functools.cached_property
    def _hash_units(self) -> dict[int, float]:
        """`key_units` by each key's partition hash (asked once the lane is priced)."""
        return {partition_hash(key): units for key, units in self.key_units.items()}

    def units_at(self, key: str) -> float:
        """Units of one touch of ``key`` (at the starting size: `growth` is the engine's)."""
        return self.key_units.get(key, self.units)

    def units_per_execution(self, profile: KeyProfile) -> float:
        """Units one execution charges through the lane, its touches of ``profile``'s keys
        each at `units_at`."""
        if not self.key_units:
            return self.units * profile.touches
        own = [
            (touches, self.key_units[key]) for key, touches in profile.top if key in self.key_units
        ]
        rest = profile.touches - math.fsum(touches for touches, _ in own)
        return self.units * rest + math.fsum(touches * units for touches, units in own)

    def sample(
        self, profile: KeyProfile, start: int, end: int, executions: float
    ) -> list[tuple[float, int]]:
        """(units, hash) points of ``profile``'s keys in ``[start, end)`` at ``executions``
        a second (`KeyProfile.sample`), each key's touches at `units_at`: where a hot
        partition splits."""
        if not executions:
            return []
        if not self.key_units:
            return profile.sample(start, end, executions * self.units) if self.units else []
        own = self._hash_units
        return [
            (mass * own.get(at, self.units), at)
            for mass, at in profile.sample(start, end, executions)
        ]

    def partition_units(
        self, profile: KeyProfile, starts: Sequence[int], shares: np.ndarray
    ) -> float | np.ndarray:
        """Units of one touch on each partition of ``starts`` (``shares``: the profile's
        touches on each): `units`, but where a key of `key_units` falls, as its touches
        weigh."""
        if not self.key_units:
            return self.units
        extra = np.zeros(len(starts))
        bounds = np.asarray(starts, dtype=np.uint64)
        for key, touches in profile.top:
            if key in self.key_units:
                at = int(np.searchsorted(bounds, np.uint64(partition_hash(key)), side="right")) - 1
                extra[at] += touches * (self.key_units[key] - self.units)
        own: np.ndarray = np.divide(extra, shares, out=np.zeros(len(starts)), where=shares > 0)
        return self.units + own

    def units_after(self, updates: np.ndarray) -> np.ndarray:
        """Units of one touch of keys that have taken ``updates`` updates each (`growth`):
        `units` where the lane's items do not grow."""
        updates = np.asarray(updates, dtype=np.float64)
        if not self.growth:
            return np.full(updates.shape, self.units)
        n, units = np.asarray(self.growth).T
        # Past the replay's last update, the item is taken to grow no further.
        return np.asarray(np.interp(np.log2(np.maximum(updates + 1.0, 1.0)), np.log2(n), units))

    @property
    def scope(self) -> tuple[str, str | None]:
        return (self.table, self.index)


def reads_eventually(lanes: Iterable[Lane]) -> bool:
    """Whether one table's or index's reads through ``lanes`` are there and all eventually
    consistent (every GSI's are): a key's partition then serves its read ceiling
    `loadgen.model.partitions.EVENTUAL_READ_FACTOR` times over (`key_ceiling`)."""
    reads = [lane.eventual for lane in lanes if lane.kind == "read"]
    return bool(reads) and all(reads)


@dataclass
class PatternDemand:
    """A pattern's lanes, its requests per execution and how to list each lane's keys."""

    id: str
    operation: str
    table: str
    index: str | None
    rate: float
    """Executions per second at launch (the design's mix)."""
    calls: int
    """Requests per execution (``each: shard`` Query: one per shard)."""
    lanes: list[Lane]
    generators: Mapping[str, ValueGenerator]
    each: str | None
    time_names: tuple[str, ...]
    """Generators of the run's clock in its keys: their keys move with simulated time."""
    known: Known = field(default_factory=lambda: Known())
    """What the design's lanes have listed so far, shared by its patterns."""

    def profile(self, lane: Lane) -> KeyProfile:
        """The lane's key profile at the generators' current clock."""
        return key_profile(lane, self.generators, self.each, self.known)

    def lane_units(self, lane: Lane) -> float:
        """Units one execution charges through ``lane``: a touch's units times its touches
        per execution (items at their starting size: `Lane.growth` is the engine's)."""
        return lane.units_per_execution(self.profile(lane))

    def hottest_item(self, lane: Lane, profile: KeyProfile) -> tuple[str, str, float] | None:
        """The item ``lane`` touches most: its partition key (the profile's hottest), the
        template of its sort key, and touches per execution on it. Of a key's touches, those
        whose sort key is fixed or follows the key fall on one item; one drawn apart (a
        player of a game) falls on its hottest value's item only by that value's chance."""
        if lane.template is None or not profile.top or not lane.multiplicity:
            return None
        key, touches = profile.top[0]
        per_touch = touches / lane.multiplicity
        named = set(lane.template.names)
        best: tuple[str, str, float] | None = None
        for sort, count in lane.items.items():
            chance = 1.0
            for name in set(Template.parse(sort).names) - named if sort else ():
                each = name == self.each  # every value once an execution: each its share
                listed = self.known.values_of(self.generators[name], each)
                weights = listed[1] if listed is not None else np.zeros(0)  # None: new draws
                if not weights.size:
                    chance = 0.0
                else:
                    chance *= 1.0 / weights.size if each else float(weights.max())
            on_item = per_touch * count * chance
            if best is None or on_item > best[2]:
                best = (key, sort, on_item)
        return best

    def units(self) -> dict[str, dict[str, float]]:
        """Units one execution consumes on each table and index (``table`` or
        ``table/index``), read and write: what a simulated execution is charged."""
        totals: dict[str, dict[str, float]] = {}
        for lane in self.lanes:
            scope = lane.table if lane.index is None else f"{lane.table}/{lane.index}"
            slot = totals.setdefault(scope, {"read": 0.0, "write": 0.0})
            slot[lane.kind] += self.lane_units(lane)
        return totals


@dataclass
class Known:
    """Values and key hashes the lanes of a design share: a transaction's actions, a write and
    its index entries, and patterns on one key list the same keys, which are listed and
    hashed once."""

    values: dict[tuple[Any, ...], tuple[list[str], np.ndarray, float] | None] = field(
        default_factory=dict
    )
    """`_values` by what they depend on (`_listing`): of the generators that keep theirs."""
    hashes: dict[str, int] = field(default_factory=dict)
    """`partition_hash` by key text."""
    keys: dict[tuple[Any, ...], tuple[list[list[str]], list[str], np.ndarray]] = field(
        default_factory=dict
    )
    """A key template's texts and their hashes by the template's literal parts and its
    names' value lists (kept beside, so that their ``id`` is not reused): lanes whose
    templates render the same lists alike (``PLAYER#{p0}``, ``PLAYER#{p1}``) list them once."""

    def values_of(
        self, generator: ValueGenerator, fixed: bool
    ) -> tuple[list[str], np.ndarray, float] | None:
        if isinstance(generator, TimeValue):  # its values move with the clock
            return _values(generator, fixed)
        key = _listing(generator, fixed)
        if key not in self.values:
            self.values[key] = _values(generator, fixed)
        return self.values[key]

    def texts_of(
        self, template: Template, names: list[str], lists: list[list[str]]
    ) -> tuple[list[str], np.ndarray]:
        """`_render_all`'s texts of the product of ``lists`` and their hashes."""
        literal = tuple(p if i % 2 == 0 else names.index(p) for i, p in enumerate(template.parts))
        key = (literal, template.specs, *map(id, lists))
        known = self.keys.get(key)
        if known is not None and all(a is b for a, b in zip(known[0], lists, strict=True)):
            return known[1], known[2]
        texts = _render_all(template, names, lists)
        hashes = self.hash_all(texts)
        if len(self.keys) >= KNOWN_KEY_LISTS:
            self.keys.clear()
        self.keys[key] = (list(lists), texts, hashes)
        return texts, hashes

    def hash_all(self, texts: list[str]) -> np.ndarray:
        hashes = self.hashes
        if len(hashes) > KNOWN_HASHES:
            hashes.clear()
        missing = [text for text in texts if text not in hashes]
        hashes.update(zip(missing, partition_hashes(missing), strict=True))
        return np.array([hashes[text] for text in texts], dtype=np.uint64)


def _listing(generator: ValueGenerator, fixed: bool) -> tuple[Any, ...]:
    """What `_values` of ``generator`` depends on: a key space's count, distribution and named
    values where its distribution is not scrambled (its seed moves its draws, not their
    chances: generators alike list alike); otherwise the generator itself (its ``id``)."""
    if isinstance(generator, KeySpace) and not fixed and not generator.distribution.scramble:
        named = tuple(generator.named.items())
        return ("keys", generator.count, generator.distribution.spec, named)
    return ("generator", id(generator), fixed)


def _names_specs(value: Any, specs: dict[str, list[str]]) -> None:
    """Every format spec each name is written with (``{user}`` and ``{user:07d}``: both)."""
    if isinstance(value, str):
        template = Template.parse(value)
        for i, name in enumerate(template.names):
            spec = template.specs[i] if template.specs else ""
            if spec not in specs.setdefault(name, []):
                specs[name].append(spec)
    elif isinstance(value, Mapping):
        for item in value.values():
            _names_specs(item, specs)
    elif isinstance(value, list | tuple):
        for item in value:
            _names_specs(item, specs)


def _template_of(
    key: object,
    names: Sequence[str],
    specs: Mapping[str, Sequence[str]],
    rendered: Sequence[tuple[Draws, set[str]]] = (),
) -> Template:
    """The key template a marker-rendered key stands for.

    A marker reads the same whatever its format (a number of ten digits is its own ``07d``), so
    a name written with several specs in the design gives several candidates: the one whose
    rendering with real draws is among the keys those draws charged (``rendered``) is taken.
    """
    text = (key if isinstance(key, str) else str(key)).replace("{", "").replace("}", "")
    # A stored item's marker (`_stored_generators`) stands for the same name.
    marked = [names[int(n) % len(names)] for n in _MARKED.findall(text)]
    options = [specs.get(name) or [""] for name in marked]
    candidates = []
    for chosen in itertools.product(*options):
        picks = iter(chosen)

        def back(match: re.Match[str], picks: Any = picks) -> str:
            spec = next(picks)
            name = names[int(match.group(1)) % len(names)]
            return "{" + name + (f":{spec}" if spec else "") + "}"

        candidates.append(Template.parse(_MARKED.sub(back, text)))
    for template in candidates:
        if any(template.render(draws) in keys for draws, keys in rendered):
            return template
    return candidates[0]


_STORED_ITEMS: dict[
    int, tuple[Design, dict[str, tuple[str, RequestTemplate, tuple[str, ...]]]]
] = {}
"""`_stored_items` by design (its ``id``, the design kept beside it so that the id is not
reused): a design's probes ask for them once per execution."""


def _stored_items(design: Design) -> dict[str, tuple[str, RequestTemplate, tuple[str, ...]]]:
    """Each entity's table, item template (typed as the table types its keys) and the names
    its key attributes are drawn from (worked out once per design: nothing changes them)."""
    known = _STORED_ITEMS.get(id(design))
    if known is not None and known[0] is design:
        return known[1]
    if len(_STORED_ITEMS) >= 16:
        _STORED_ITEMS.clear()
    items = _stored_items_of(design)
    _STORED_ITEMS[id(design)] = (design, items)
    return items


def _stored_items_of(design: Design) -> dict[str, tuple[str, RequestTemplate, tuple[str, ...]]]:
    first = next(iter(design.schemas))
    items = {}
    for name, entity in design.spec.entities.items():
        table = entity.table or first
        schema = design.schemas[table]
        types = dict(schema.attribute_types)
        typed = {a: typed_value(v, a, types.get(a)) for a, v in entity.item.items()}
        specs: dict[str, list[str]] = {}
        _names_specs([typed[a] for a in schema.key_attributes if a in typed], specs)
        items[name] = (table, RequestTemplate(typed), tuple(specs))
    return items


def _stored_generators(
    generators: Mapping[str, ValueGenerator], names: Sequence[str], marked: bool
) -> dict[str, ValueGenerator]:
    """What a stored item's values other than its key are drawn from: markers of their own
    (read back as the same names), or the generators with times `EARLIER_S` older."""
    if marked:
        return {name: _Marker(i + len(names)) for i, name in enumerate(names)}
    stored = dict(generators)
    for name, generator in generators.items():
        if isinstance(generator, TimeValue) and generator.form in ("iso", "epoch"):
            stored[name] = TimeValue(
                generator.form, generator.clock, generator.offset_s - EARLIER_S, generator.pattern
            )
    return stored


def _per_key_items(design: Design, generators: Mapping[str, ValueGenerator]) -> int:
    """Items under one partition-key value in the starting data (what a Query reads)."""
    most = 1
    for entity in design.spec.entities.values():
        inner = 1
        for name, count in list(entity.population.items())[1:]:
            cardinality = generators[name].cardinality or 1
            inner *= cardinality if count == "all" else min(int(count), cardinality)
        most = max(most, inner)
    return most


class _Store:
    """The items a request would find: entities whose key the execution's draws render to,
    written before it (see the module docstring), and the items the file lists."""

    def __init__(
        self,
        design: Design,
        draws: Draws,
        query_items: int,
        stored: Mapping[str, ValueGenerator] | None = None,
        each: tuple[str, Sequence[str]] | None = None,
    ) -> None:
        self.design = design
        self.items = _stored_items(design)
        self.draws = draws
        self.each = each
        """The name a pattern's calls go over and its values (`CompiledPattern.each`,
        ``each_values``): one call per value, the draws' own value of it aside."""
        self.query_items = query_items
        self.stored = draws.generators if stored is None else stored
        self.listed = {
            table: [next(iter(row.values())).get("Item", row) for row in rows]
            for table, rows in (design.spec.items or {}).items()
        }

    def _as_asked(self, template: RequestTemplate, asked: Mapping[str, Any]) -> Draws | None:
        """The draws under which ``template`` renders the attributes ``asked``: the
        execution's, or where a call over every value of ``each`` asks another value than
        the draws' own, the execution's with that value (None: no value renders them)."""
        item = template.render(self.draws)
        if all(item.get(a) == v for a, v in asked.items()):
            return self.draws
        name, values = self.each or ("", ())
        for value in values:
            one = Draws(self.draws.generators, **self.draws)  # every name drawn above
            one[name] = value
            item = template.render(one)
            if all(item.get(a) == v for a, v in asked.items()):
                return one
        return None

    def find(self, table: str, key: Mapping[str, Any]) -> dict[str, Any] | None:
        for owner, template, key_names in self.items.values():
            if owner != table:
                continue
            draws = self._as_asked(template, key)
            if draws is not None:
                written = Draws(self.stored, **{n: draws[n] for n in key_names})
                found: dict[str, Any] = template.render(written)
                return found
        for item in self.listed.get(table, ()):
            if all(item.get(a) == v for a, v in key.items()):
                return dict(item)
        return None

    def query(self, table: str, index: str | None, value: Any) -> list[Any]:
        """What a Query of ``value`` on the table or ``index`` finds, in full (its page is the
        capacity rule's, `page`): the items under a table's key value in the starting data,
        or an index's entries of the entity whose index key renders to it, as many as its
        population holds of that value."""
        schema = self.design.schemas[table]
        owner = schema.index(index) if index else None
        attribute = (owner or schema).partition_key
        for name, (where, template, _) in self.items.items():
            if where != table:
                continue
            draws = self._as_asked(template, {attribute: value})
            if draws is None:
                continue
            item = template.render(draws)
            if owner is None:
                return [item] * self.query_items
            entry = projected(item, schema, owner)
            return [] if entry is None else [entry] * self._holding(name, attribute, draws)
        return []

    def _holding(self, entity: str, attribute: str, draws: Draws) -> int:
        """Items of ``entity``'s starting data whose ``attribute`` is what ``draws`` render it
        to: one per value of the populated names it does not name, times the chance of the
        draw for each name it names that is drawn, not populated."""
        spec = self.design.spec.entities[entity]
        text = spec.item.get(attribute)
        names = set(Template.parse(text).names) if isinstance(text, str) else set()
        generators = draws.generators
        count = 1.0
        for name, how_many in spec.population.items():
            if name not in names:
                cardinality = generators[name].cardinality or 1
                count *= cardinality if how_many == "all" else min(int(how_many), cardinality)
        for name in names - set(spec.population):
            count *= generators[name].probability(draws[name]) or 0.0
        return max(1, round(count))


def _each(pattern: CompiledPattern) -> tuple[str, Sequence[str]] | None:
    """The name a pattern's calls go over and its values, for `_Store`; None without one."""
    return None if pattern.each is None else (pattern.each, pattern.each_values)


def _query_value(params: Mapping[str, Any]) -> Any:
    """The partition-key value a Query's key condition names."""
    values = params.get("ExpressionAttributeValues") or {}
    condition = str(params.get("KeyConditionExpression") or "")
    return next((v for k, v in values.items() if k in condition.split(" AND ")[0]), None)


def _cost(call: Any, store: _Store, design: Design) -> list[Charge]:
    """The charges of one request, with the stored items it would read or overwrite."""
    op, params, schemas = call.operation, call.params, design.schemas
    kwargs: dict[str, Any] = {}
    if op in ("GetItem", "UpdateItem", "DeleteItem"):
        found = store.find(call.table, params["Key"])
        kwargs["returned" if op == "GetItem" else "before"] = found
        if op == "UpdateItem":
            # What the update leaves, as the emulator replays it: an index key it sets moves
            # the entry (a removal on the old key, a write on the new one).
            kwargs["after"] = apply_update(found, params["Key"], params)
    elif op == "Query":
        kwargs["returned"] = store.query(call.table, params.get("IndexName"), _query_value(params))
    elif op == "BatchGetItem":
        keys = params["RequestItems"][call.table]["Keys"]
        kwargs["returned"] = [store.find(call.table, key) for key in keys]
    elif op == "TransactWriteItems":
        befores, afters = [], []
        for action in params["TransactItems"]:
            ((kind, body),) = action.items()
            # A Put writes a new item (its index entries are new); the others find theirs.
            found = None if kind == "Put" else store.find(body["TableName"], body["Key"])
            befores.append(found)
            afters.append(apply_update(found, body["Key"], body) if kind == "Update" else None)
        kwargs["before"], kwargs["after"] = befores, afters
    elif op == "TransactGetItems":
        kwargs["returned"] = [
            store.find(next(iter(a.values()))["TableName"], next(iter(a.values()))["Key"])
            for a in params["TransactItems"]
        ]
    return list(cost_of(op, params, tables=schemas, **kwargs).charges)


def pattern_demands(
    design: Design, generators: Mapping[str, ValueGenerator]
) -> list[PatternDemand]:
    """Every access pattern of ``design`` as lanes of charges (see the module docstring)."""
    compiled = design.compile(generators)
    names = sorted(generators)
    markers: dict[str, ValueGenerator] = {name: _Marker(i) for i, name in enumerate(names)}
    stored_markers = _stored_generators(generators, names, marked=True)
    stored = _stored_generators(generators, names, marked=False)
    query_items = _per_key_items(design, generators)
    demands = []
    known = Known()
    for spec in design.patterns:
        pattern = compiled[spec.id]
        specs: dict[str, list[str]] = {}
        for request in pattern.requests:
            _names_specs(request.request, specs)
        for key_template in pattern.key_templates:
            _names_specs(key_template, specs)
        for _, item, _ in _stored_items(design).values():
            _names_specs(item.request, specs)
        marked_draws = Draws(markers)
        marked_calls = list(pattern.calls(marked_draws))
        marked = [
            c
            for call in marked_calls
            for c in _cost(call, _Store(design, marked_draws, query_items, stored_markers), design)
        ]
        # Units per (scope, kind), averaged over real executions.
        real_units: dict[tuple[str, str | None, str], list[float]] = {}
        real_counts: dict[tuple[str, str | None, str], int] = {}
        real_keys: dict[tuple[str, str | None, str], list[tuple[Draws, set[str]]]] = {}
        keyed_units: dict[tuple[str, str | None, str], list[tuple[str, float]]] = {}
        for _ in range(PROBES):
            draws = Draws(generators)
            store = _Store(design, draws, query_items, stored, _each(pattern))
            keys: dict[tuple[str, str | None, str], set[str]] = {}
            for call in pattern.calls(draws):
                for charge in _cost(call, store, design):
                    slot = (charge.table, charge.index, charge.kind)
                    real_units.setdefault(slot, []).append(charge.units)
                    real_counts[slot] = real_counts.get(slot, 0) + 1
                    if charge.key is not None:
                        keys.setdefault(slot, set()).add(str(charge.key))
                        if pattern.operation == "Query":  # a page may be its key's own
                            keyed_units.setdefault(slot, []).append((str(charge.key), charge.units))
            for where, seen in keys.items():
                real_keys.setdefault(where, []).append((draws, seen))
        # The index entries the requests show: what a run's recorder counts.
        shown = {
            (table, index, str(key))
            for call in marked_calls
            for table, index, key in index_writes(call.operation, call.params, design.schemas)
        }
        marked_counts: dict[tuple[str, str | None, str], int] = {}
        for charge in marked:
            slot = (charge.table, charge.index, charge.kind)
            marked_counts[slot] = marked_counts.get(slot, 0) + 1
        growth = _growth(pattern, generators, design, query_items, stored)
        lanes: dict[tuple[Any, ...], Lane] = {}
        for charge in marked:
            slot = (charge.table, charge.index, charge.kind)
            units = real_units.get(slot, [charge.units])
            template = (
                None
                if charge.key is None
                else _template_of(charge.key, names, specs, real_keys.get(slot, ()))
            )
            ident = (*slot, None if template is None else template.text)
            multiplicity = real_counts.get(slot, PROBES) / PROBES / marked_counts[slot]
            recorded = (
                charge.index is None
                or charge.kind == "read"
                or (charge.table, charge.index, str(charge.key)) in shown
            )
            sort = "" if charge.sort is None else _template_of(charge.sort, names, specs).text
            if ident in lanes:
                lane = lanes[ident]
                lane.multiplicity += multiplicity
                lane.recorded |= recorded
                lane.items[sort] = lane.items.get(sort, 0.0) + multiplicity
                continue
            lanes[ident] = Lane(
                charge.table,
                charge.index,
                charge.kind,
                math.fsum(units) / len(units),
                template,
                multiplicity,
                recorded,
                growth if slot == (pattern.table, None, "write") else (),
                charge.eventual,
                {sort: multiplicity},
            )
        if pattern.operation == "Query":
            for lane in lanes.values():
                read = (lane.table, lane.index, lane.kind)
                if lane.index is not None and len(set(real_units.get(read, ()))) > 1:
                    probed = keyed_units[read]
                    _key_units(
                        lane, pattern, design, generators, known, query_items, stored, probed
                    )
        time_names = tuple(
            sorted(
                {
                    n
                    for lane in lanes.values()
                    if lane.template is not None
                    for n in lane.template.names
                    if isinstance(generators.get(n), TimeValue)
                }
            )
        )
        demands.append(
            PatternDemand(
                id=pattern.id,
                operation=pattern.operation,
                table=pattern.table,
                index=pattern.index,
                rate=pattern.rate,
                calls=pattern.requests_per_execution,
                lanes=list(lanes.values()),
                generators=generators,
                each=pattern.each,
                time_names=time_names,
                known=known,
            )
        )
    return demands


def _key_units(
    lane: Lane,
    pattern: CompiledPattern,
    design: Design,
    generators: Mapping[str, ValueGenerator],
    known: Known,
    query_items: int,
    stored: Mapping[str, ValueGenerator],
    probed: Sequence[tuple[str, float]],
) -> None:
    """Give a Query lane of an index its hottest keys' own units (`Lane.key_units`): each key's
    page priced by a request of that key, where the probes' pages differ (``probed``: the
    probes' keys and units). An index key holds the entries of the items whose attribute
    renders to it, so a big city's page is fuller than the lane's mean over every city;
    `Lane.units` becomes the mean over the probes that drew another key."""
    profile = key_profile(lane, generators, pattern.each, known)
    slot = (lane.table, lane.index, lane.kind)
    for (key, _), values in zip(profile.top, profile.top_values, strict=True):
        draws = Draws(generators, **values)
        store = _Store(design, draws, query_items, stored, _each(pattern))
        units = [
            charge.units
            for call in pattern.calls(draws)
            for charge in _cost(call, store, design)
            if (charge.table, charge.index, charge.kind) == slot and str(charge.key) == key
        ]
        if units:
            lane.key_units[key] = math.fsum(units) / len(units)
    others = [units for key, units in probed if key not in lane.key_units]
    if others:
        lane.units = math.fsum(others) / len(others)


@dataclass(frozen=True)
class LargestRequest:
    """The most write units one request of a design takes on one partition-key value."""

    units: float
    """Write units at AWS scale (a transaction's doubled, its actions on one key added)."""
    pattern: str
    where: str
    """The table or ``table/index`` the units land on."""


def largest_request(
    design: Design, generators: Mapping[str, ValueGenerator] | None = None
) -> LargestRequest | None:
    """The request of ``design`` that takes the most write units on one key (of a table or an
    index) in one go, priced by the model as the simulation prices it (the items it writes,
    the stored items it overwrites), over `PROBES` executions of each pattern; None for a
    design that writes nothing. ``loadgen run --scale auto`` keeps it under a tenth of a
    partition's scaled second (`loadgen.emulator.engines.auto_scale`)."""
    generators = generators or design.generators()
    largest: LargestRequest | None = None
    for pattern, call, store in _probed_calls(design, generators):
        on_key: dict[tuple[str, str | None, str], float] = {}
        for charge in _cost(call, store, design):
            if charge.kind == "write" and charge.key is not None:
                slot = (charge.table, charge.index, str(charge.key))
                on_key[slot] = on_key.get(slot, 0.0) + charge.units
        for (table, index, _key), units in on_key.items():
            if largest is None or units > largest.units:
                where = table if index is None else f"{table}/{index}"
                largest = LargestRequest(units, pattern, where)
    return largest


def _probed_calls(
    design: Design,
    generators: Mapping[str, ValueGenerator],
    stored: Mapping[str, ValueGenerator] | None = None,
) -> Iterator[tuple[str, Any, _Store]]:
    """Each pattern's requests over `PROBES` executions: its id, the request and the store its
    reads and overwrites find (``stored``: what stored items' other values are drawn from)."""
    compiled = design.compile(generators)
    query_items = _per_key_items(design, generators)
    for spec in design.patterns:
        pattern = compiled[spec.id]
        for _ in range(PROBES):
            draws = Draws(generators)
            store = _Store(design, draws, query_items, stored, _each(pattern))
            for call in pattern.calls(draws):
                yield spec.id, call, store


class RequestShape(NamedTuple):
    """What an engine's work for a request depends on (`request_shapes`)."""

    operation: str
    items: int
    """A transaction's actions, a batch's keys or writes; a Query's items under its key in the
    starting data (an engine may go through every one: `loadgen.emulator.engines`); 1 for
    any other request."""
    table: str | None = None
    """A Query's table, whose starting data holds those items; None for any other request."""
    on_index: bool = False
    """A Query of an index."""


def request_shapes(
    design: Design, generators: Mapping[str, ValueGenerator] | None = None
) -> dict[str, dict[RequestShape, float]]:
    """Per access pattern id, the requests one execution sends by shape (`RequestShape`):
    the mean over `PROBES` executions. What an engine's work per operation is weighed from
    (`loadgen.emulator.engines.engine_work`)."""
    generators = generators or design.generators()
    stored = _stored_generators(generators, sorted(generators), marked=False)
    shapes: dict[str, dict[RequestShape, float]] = {p.id: {} for p in design.patterns}
    for pattern, call, store in _probed_calls(design, generators, stored):
        if call.operation == "Query":
            found = store.query(call.table, call.index, _query_value(call.params))
            shape = RequestShape("Query", len(found), call.table, call.index is not None)
        else:
            shape = RequestShape(call.operation, _items_of(call.operation, call.params))
        counted = shapes[pattern]
        counted[shape] = counted.get(shape, 0.0) + 1.0 / PROBES
    return shapes


def _items_of(operation: str, params: Mapping[str, Any]) -> int:
    """The items one request names: a transaction's actions, a batch's keys or writes."""
    if operation in ("TransactWriteItems", "TransactGetItems"):
        return len(params["TransactItems"])
    if operation == "BatchGetItem":
        return sum(len(table["Keys"]) for table in params["RequestItems"].values())
    if operation == "BatchWriteItem":
        return sum(len(writes) for writes in params["RequestItems"].values())
    return 1


def pattern_units(
    design: Design, *, seed: int = 1, distribution: str = "zipf:0.99"
) -> dict[str, dict[str, dict[str, float]]]:
    """Per access pattern id, the units one execution consumes on each table and index
    (`PatternDemand.units`): what a run's launch demand is priced from
    (`loadgen.verdict.cost`), the figure a simulation charges, asked of the same model."""
    generators = design.generators(seed=seed, default_distribution=distribution)
    return {demand.id: demand.units() for demand in pattern_demands(design, generators)}


def _growth(
    pattern: Any,
    generators: Mapping[str, ValueGenerator],
    design: Design,
    query_items: int,
    stored_generators: Mapping[str, ValueGenerator],
) -> tuple[tuple[float, float], ...]:
    """``(n, units)`` of an UpdateItem's table write when it is its key's ``n``-th update
    (``n`` 1, 2, 4, ...), replaying `GROWTH_EXECUTIONS` executions with real draws, each key's
    item kept between them as the target keeps it: an ``add`` of a drawn attribute name adds
    an attribute, and DynamoDB charges an update for the larger of the item before and after.
    Empty when the item does not grow (a charge's units do not change with ``n``)."""
    if pattern.operation != "UpdateItem":
        return ()
    items: dict[str, Any] = {}
    counts: dict[str, int] = {}
    by_n: dict[int, list[float]] = {}
    stored = bool(design.spec.entities or design.spec.items)
    first: dict[str, int] = {}  # attributes each key's item had after its first update
    grew = False
    for execution in range(GROWTH_EXECUTIONS):
        if execution == GROWTH_CHECK and not grew:
            return ()  # no item has gained an attribute: none grows (and the replay is dear)
        draws = Draws(generators)
        for call in pattern.calls(draws):
            key = call.params["Key"]
            text = repr(sorted(key.items()))
            if text in items:
                before = items[text]
            else:  # the starting data's item, if any
                before = (
                    _Store(design, draws, query_items, stored_generators).find(call.table, key)
                    if stored
                    else None
                )
            after = apply_update(before, key, call.params)
            if after is None:
                return ()  # an update beyond the reader: priced as the probes price it
            items[text] = after
            n = counts[text] = counts.get(text, 0) + 1
            grew = grew or len(after) > first.setdefault(text, len(after))
            if n & (n - 1) == 0:  # a power of two: price this one
                charges = cost_of(
                    "UpdateItem", call.params, tables=design.schemas, before=before, after=after
                ).charges
                by_n.setdefault(n, []).append(
                    math.fsum(c.units for c in charges if c.index is None and c.kind == "write")
                )
    growth = tuple((float(n), math.fsum(u) / len(u)) for n, u in sorted(by_n.items()))
    return growth if len({units for _, units in growth}) > 1 else ()


def _values(generator: ValueGenerator, fixed: bool) -> tuple[list[str], np.ndarray, float] | None:
    """(values, touches per execution, folded share) of one name, hottest first; None when
    every draw is new (spread)."""
    if fixed:  # an ``each`` name: every value once per execution
        values = generator.values() or []
        return values, np.ones(len(values)), 0.0
    if isinstance(generator, KeySpace):
        n = min(generator.cardinality or 0, EXACT_KEYS)
        values, shares = hottest_values(generator, n)  # named values among them, by share
        weights = np.asarray(shares, np.float64)
        return values, weights, max(0.0, 1.0 - float(weights.sum()))
    if isinstance(generator, Choice | Shard):
        values = generator.values() or []
        weights = np.asarray([generator.probability(v) or 0.0 for v in values], np.float64)
        return values, weights, 0.0
    if isinstance(generator, TimeValue) and generator.form not in ("iso", "epoch"):
        return [generator.draw()], np.ones(1), 0.0
    return None


def _render_all(template: Template, names: list[str], lists: list[list[str]]) -> list[str]:
    """Every key text of the product of ``lists``, in the order of `np.outer`'s ravel."""
    parts = template.parts
    if len(names) == 1 and len(parts) == 3 and not template.specs:  # the usual "USER#{user}"
        prefix, suffix = parts[0], parts[2]
        return [prefix + value + suffix for value in lists[0]]
    return [
        template.render(dict(zip(names, combo, strict=True))) for combo in itertools.product(*lists)
    ]


def key_profile(
    lane: Lane,
    generators: Mapping[str, ValueGenerator],
    each: str | None,
    known: Known | None = None,
) -> KeyProfile:
    """The lane's keys: the product of its names' values, hottest kept exactly."""
    known = known or Known()
    if lane.template is None:  # a Scan reads every partition: spread
        return KeyProfile(np.zeros(0, np.uint64), np.zeros(0), lane.multiplicity, [])
    template = lane.template
    names = list(dict.fromkeys(template.names))
    lists: list[list[str]] = []
    weights = np.ones(1)
    spread = 0.0
    for name in names:
        listed = known.values_of(generators[name], name == each)
        if listed is None:  # every draw new: whatever the other names, spread
            spread += float(weights.sum())
            lists, weights = [], np.zeros(0)
            break
        values, w, folded = listed
        # Keep the product under EXACT_KEYS: this name's coldest values fold first.
        room = max(1, EXACT_KEYS // max(1, len(weights)))
        if len(values) > room:
            order = np.argsort(-w, kind="stable")[:room]
            folded += float(w.sum() - w[order].sum())
            values, w = [values[i] for i in order.tolist()], w[order]
        spread += float(weights.sum()) * folded
        lists.append(values)
        weights = np.outer(weights, w).ravel()
    texts, hashes = (
        known.texts_of(template, names, lists) if len(weights) else ([], known.hash_all([]))
    )
    order = np.argsort(hashes, kind="stable")
    scaled = weights * lane.multiplicity
    hottest = np.argsort(-scaled, kind="stable")[:20].tolist() if texts else []
    top = [(texts[i], float(scaled[i])) for i in hottest]
    # A key's place in the product (`np.outer`'s ravel) is its values' places in each list.
    places = np.unravel_index(hottest, [len(values) for values in lists]) if lists else ()
    top_values = [
        {name: lists[j][int(places[j][k])] for j, name in enumerate(names)} for k in range(len(top))
    ]
    return KeyProfile(hashes[order], scaled[order], spread * lane.multiplicity, top, top_values)
