"""Value generators: where each ``{name}`` of a design's templates comes from.

A generator draws the text a template puts in place of ``{name}``. Key populations reuse the
harness's key distributions (`loadgen.design.keys`): ``{count: 200000, distribution:
zipf:1.1}`` is the same generator ``--distribution zipf:1.1 --keys 200000`` gives a shipped
workload, so a design file and a workload skewed alike are skewed the same way.

    gens = build_generators({"user": Generator(count=1000)}, default_distribution="zipf:0.99",
                            seed=1, stream=0, clock=RunClock(speed=1.0))
    draws = Draws(gens)
    draws["user"]   # '17', then the same '17' for every later use in this request

One `Draws` is one execution of an access pattern: a name drawn once keeps its value, so
``pk: "USER#{user}"`` and ``GSI1SK: "{user}"`` name the same user.
"""

from __future__ import annotations

import bisect
import itertools
import math
import random
import time
from abc import ABC, abstractmethod
from collections.abc import Iterator, Mapping

from loadgen.design import keys as distributions
from loadgen.design.spec import Generator
from loadgen.design.values import span_s

__all__ = [
    "Choice",
    "Draws",
    "KeySpace",
    "RunClock",
    "Sequence",
    "Shard",
    "TimeValue",
    "ValueGenerator",
    "build_generators",
]


class RunClock:
    """The run's clock: from the top of the hour it was made in, ``speed`` times wall time.

    Starting at the top of an hour, a sped-up run crosses its first hour after an hour over
    ``speed`` of wall time whenever it runs (at 60: a minute), not at a moment that depends
    on the time of day.
    """

    def __init__(self, speed: float = 1.0, start: float | None = None) -> None:
        self.speed = speed
        self.start = time.time() if start is None else start
        self.origin = self.start - self.start % 3600

    def now(self) -> float:
        return self.origin + (time.time() - self.start) * self.speed


class ValueGenerator(ABC):
    """Draws one value's text; `values` lists every value where they are few enough to list."""

    @abstractmethod
    def draw(self) -> str: ...

    def values(self) -> list[str] | None:
        """Every value in order, or None when there is no bounded list."""
        return None

    def probability(self, value: str) -> float | None:
        """The chance a draw gives ``value``, where known (static checks read it)."""
        return None

    @property
    def cardinality(self) -> int | None:
        """How many distinct values (None: unbounded)."""
        values = self.values()
        return None if values is None else len(values)


class KeySpace(ValueGenerator):
    """Values ``0..count-1`` drawn by a key distribution, and values ``named`` pinned to
    shares of the draws: ``{taylor: 0.4}`` over a zipf of 2,000 draws ``taylor`` 40% of the
    time and the zipf the other 60%.

    >>> space = KeySpace(2000, "zipf:0.99", seed=1, scramble=False, named={"taylor": 0.4})
    >>> space.probability("taylor"), round(space.probability("0") / 0.6, 4)
    (0.4, 0.118)
    >>> next(enumerate_values(space, 1)), space.cardinality
    ('taylor', 2001)
    """

    def __init__(
        self,
        count: int,
        spec: str,
        *,
        seed: int,
        scramble: bool,
        named: Mapping[str, float] | None = None,
    ) -> None:
        self.count = count
        self.distribution = distributions.parse(spec, count, seed=seed, scramble=scramble)
        self.named = dict(named or {})
        """Pinned values and their shares of the draws (under 1 in all)."""
        self.rest = 1.0 - math.fsum(self.named.values())
        """The share of draws the distribution over ``0..count-1`` takes."""
        self._names = list(self.named)
        self._cumulative = list(itertools.accumulate(self.named.values()))
        # Its own stream: pinning a value leaves the distribution's draws as they were.
        self._pick = random.Random(f"named:{seed}")

    def draw(self) -> str:
        if self._names:
            u = self._pick.random()
            if u < self._cumulative[-1]:
                return self._names[bisect.bisect_right(self._cumulative, u)]
        return str(self.distribution.next())

    def values(self) -> list[str] | None:
        if self.count + len(self._names) > 100_000:
            return None
        return [*self._names, *(str(i) for i in range(self.count))]

    def probability(self, value: str) -> float | None:
        share = self.named.get(value)
        if share is not None:
            return share
        try:
            index = int(value)
        except ValueError:
            return 0.0
        return self.rest * self.distribution.probability(index)

    @property
    def cardinality(self) -> int | None:
        return self.count + len(self._names)


class Choice(ValueGenerator):
    """Weighted values: ``{pending: 0.7, shipped: 0.25, delivered: 0.05}``."""

    def __init__(self, weights: Mapping[str, float], *, seed: int) -> None:
        self.choices = list(weights)
        total = float(sum(weights.values()))
        self.weights = [weights[c] / total for c in self.choices]
        self.cumulative = list(itertools.accumulate(self.weights))
        self.random = random.Random(seed)

    def draw(self) -> str:
        return self.random.choices(self.choices, cum_weights=self.cumulative)[0]

    def values(self) -> list[str] | None:
        return list(self.choices)

    def probability(self, value: str) -> float | None:
        return dict(zip(self.choices, self.weights, strict=True)).get(value, 0.0)


class Shard(ValueGenerator):
    """A write shard ``0..N-1``, uniform."""

    def __init__(self, shards: int, *, seed: int) -> None:
        self.shards = shards
        self.random = random.Random(seed)

    def draw(self) -> str:
        return str(self.random.randrange(self.shards))

    def values(self) -> list[str] | None:
        return [str(i) for i in range(self.shards)]

    def probability(self, value: str) -> float | None:
        return 1.0 / self.shards


_BUCKETS = {"minute": "%Y-%m-%dT%H:%M", "hour": "%Y-%m-%dT%H", "day": "%Y-%m-%d", "month": "%Y-%m"}
_BUCKET_S = {"minute": 60.0, "hour": 3600.0, "day": 86400.0, "month": 30 * 86400.0}


class TimeValue(ValueGenerator):
    """The run's clock as a bucket (``2026-11-25T09``), an ISO time or epoch seconds.

    Resolution: a bucket's value holds for the whole bucket; ``epoch`` is whole seconds;
    ``iso`` is UTC to the microsecond and unique per draw (a draw in the microsecond of the
    one before takes the next), so a key that names ``{now}`` never names an item twice; a
    ``format`` has the format's own.
    """

    def __init__(
        self, form: str, clock: RunClock, offset_s: float = 0.0, pattern: str | None = None
    ) -> None:
        self.form = form
        self.clock = clock
        self.offset_s = offset_s
        self.pattern = pattern or _BUCKETS.get(form)
        self._last_us = -1

    def draw(self) -> str:
        now = self.clock.now() + self.offset_s
        if self.form == "epoch":
            return str(int(now))
        if self.form == "iso" and self.pattern is None:
            # Two orders of one user in one millisecond are two items, not one overwritten.
            micros = max(int(now * 1_000_000), self._last_us + 1)
            self._last_us = micros
            seconds, fraction = divmod(micros, 1_000_000)
            return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds)) + f".{fraction:06d}Z"
        return time.strftime(self.pattern or "", time.gmtime(now))

    @property
    def bucket_s(self) -> float | None:
        """Wall seconds one bucket lasts at the run's clock speed (None: not a bucket)."""
        span = _BUCKET_S.get(self.form)
        return None if span is None else span / self.clock.speed


class Sequence(ValueGenerator):
    """Increasing numbers, new at each draw; distinct across processes by their stream."""

    _counter = itertools.count()

    def __init__(self, stream: int) -> None:
        self.prefix = stream * 10**9

    def draw(self) -> str:
        return str(self.prefix + next(Sequence._counter))


class RandomId(ValueGenerator):
    """A random 16-hex-digit id, new at each draw."""

    def __init__(self, *, seed: int) -> None:
        self.random = random.Random(seed)

    def draw(self) -> str:
        return f"{self.random.getrandbits(64):016x}"


def build_generator(
    name: str,
    spec: Generator,
    *,
    default_distribution: str,
    seed: int,
    stream: int,
    clock: RunClock,
) -> ValueGenerator:
    """The generator a spec describes (the loader checked it names exactly one kind)."""
    # Each generator draws from its own seeded stream: adding one leaves the others' draws.
    own = seed * 1_000_003 + stream * 7919 + sum(ord(c) * 31**i for i, c in enumerate(name[:16]))
    if spec.count is not None:
        return KeySpace(
            spec.count,
            spec.distribution or default_distribution,
            seed=own,
            scramble=spec.scramble,
            named=spec.named,
        )
    if spec.choice is not None:
        return Choice(spec.choice, seed=own)
    if spec.shard is not None:
        return Shard(spec.shard, seed=own)
    if spec.time is not None:
        offset = span_s(spec.offset) if spec.offset else 0.0
        return TimeValue(spec.time, clock, offset, spec.format)
    if spec.sequence:
        return Sequence(stream)
    return RandomId(seed=own)


def kinds_given(spec: Generator) -> list[str]:
    """The kinds a generator spec names (exactly one is valid)."""
    kinds = ("count", "choice", "shard", "time", "sequence", "id")
    return [kind for kind in kinds if getattr(spec, kind) not in (None, False)]


def build_generators(
    specs: Mapping[str, Generator],
    *,
    default_distribution: str = "zipf:0.99",
    seed: int = 1,
    stream: int = 0,
    clock: RunClock | None = None,
) -> dict[str, ValueGenerator]:
    """One generator per name, seeded by the run's seed and the drawing user's stream."""
    clock = clock or RunClock()
    return {
        name: build_generator(
            name,
            spec,
            default_distribution=default_distribution,
            seed=seed,
            stream=stream,
            clock=clock,
        )
        for name, spec in specs.items()
    }


class Draws(dict[str, str]):
    """One execution's values: each name drawn at its first use, then kept.

    >>> from loadgen.design.spec import Generator
    >>> draws = Draws(build_generators({"shard": Generator(shard=4)}))
    >>> draws["shard"] == draws["shard"]
    True
    """

    __slots__ = ("generators",)

    def __init__(self, generators: Mapping[str, ValueGenerator], **fixed: str) -> None:
        super().__init__(fixed)
        self.generators = generators

    def __missing__(self, name: str) -> str:
        value = self[name] = self.generators[name].draw()
        return value


def enumerate_values(generator: ValueGenerator, count: int) -> Iterator[str]:
    """The first ``count`` values of a generator, hottest first where it has a skew."""
    if isinstance(generator, KeySpace):  # its own order: its list (of up to 100,000) unneeded
        yield from (value for value, _ in itertools.islice(_hottest_first(generator), count))
        return
    values = generator.values()
    if values is not None:
        yield from values[:count]
        return
    for _ in range(count):
        yield generator.draw()


def hottest_values(generator: KeySpace, count: int) -> tuple[list[str], list[float]]:
    """The first ``count`` values of a key space, hottest first (`enumerate_values`), and
    each one's share of the draws (`KeySpace.probability`), worked out as they are listed."""
    values: list[str] = []
    shares: list[float] = []
    for value, share in itertools.islice(_hottest_first(generator), count):
        values.append(value)
        shares.append(share)
    return values, shares


def _hottest_first(generator: KeySpace) -> Iterator[tuple[str, float]]:
    """Every value of a key space and its share of the draws, its named values among the
    distribution's ranks by their shares."""
    # Ranks in order: index 0 is the hottest of an unscrambled skew; scrambled, the
    # permutation says where each rank went. A rank's share is its index's before the
    # permutation relabels it (`Distribution.probability` undoes the permutation).
    n = generator.count
    distribution = generator.distribution
    latest = distribution.spec.startswith("latest")
    permutation = distribution._permutation
    named = sorted(generator.named.items(), key=lambda item: -item[1])
    pinned = generator.named
    rest = generator.rest
    for rank in range(n):
        index = n - 1 - rank if latest else rank
        share = rest * distribution._probability(index)
        if permutation is not None:
            index = permutation(index)
        while named and named[0][1] >= share:
            yield named.pop(0)
        value = str(index)
        yield value, pinned.get(value, share)  # as `KeySpace.probability` gives it
    yield from named


def hottest_share(generator: ValueGenerator, count: int) -> float:
    """The share of draws the first ``count`` enumerated values take (1.0 when unknown)."""
    if isinstance(generator, KeySpace):
        total = generator.cardinality or 0
        if count >= total:
            return 1.0
        return math.fsum(hottest_values(generator, count)[1])
    return 1.0
