"""Key-choice distributions: which key index a workload touches next.

Each factory reads as English, as Locust's ``between(1, 5)`` does::

    keys = zipf(1_000_000, s=1.1, seed=7)
    keys.next()  # a key index in [0, 1_000_000)

Every generator is seeded and reproducible, and draws in constant time and memory after a
constant-time setup, so ten million keys cost no more than ten. A generator draws a rank,
0 being the hottest, and returns it as the key index (``latest`` counts back from ``n - 1``);
with ``scramble=True`` it relabels that index through a seeded `Permutation`, so the hottest
keys are scattered over the key space instead of sitting side by side.

The CLI and config files name a distribution by a spec string, ``NAME[:PARAM[:PARAM]]``::

    uniform   zipf[:S]   hotspot[:DATA[:OPS]]   latest[:S]   sequential
    exponential[:PERCENTILE[:FRAC]]

`parse` builds a generator from a spec; `validate_spec` checks one before the key count is
known. The key count, seed and scramble flag travel beside the spec, not in it.
"""

from __future__ import annotations

import math
import random
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from loadgen.errors import ConfigError

__all__ = [
    "NAMES",
    "Distribution",
    "Permutation",
    "exponential",
    "hotspot",
    "latest",
    "parse",
    "sequential",
    "uniform",
    "validate_spec",
    "zipf",
]

# Draws pass through floats, which hold every integer only up to 2**53.
_MAX_KEYS = 2**53


def _check_n(n: int) -> int:
    if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= _MAX_KEYS:
        raise ConfigError(f"key count must be an integer from 1 to 2**53 (got {n!r})")
    return n


def _check_exponent(what: str, s: float) -> float:
    s = float(s)
    if not s > 0:  # written this way round so that nan fails too
        raise ConfigError(f"{what} exponent must be > 0 (got {s!r})")
    if math.isinf(s):
        raise ConfigError(f"{what} exponent must be finite (got {s!r})")
    return s


def _check_fraction(what: str, value: float, *, up_to_one: bool = False) -> float:
    value = float(value)
    if not (0 < value <= 1 if up_to_one else 0 < value < 1):
        interval = "(0, 1]" if up_to_one else "(0, 1)"
        raise ConfigError(f"{what} must be in {interval} (got {value!r})")
    return value


_MASK64 = (1 << 64) - 1
_GOLDEN = 0x9E3779B97F4A7C15  # 2**64 / golden ratio, the multiplier of Fibonacci hashing
_ROUNDS = 4


@dataclass(frozen=True)
class Permutation:
    """A seeded bijection of ``[0, n)``, in O(1) memory and expected O(1) time per lookup.

    YCSB's scrambled zipfian hashes a rank with FNV modulo n, which collides: some keys take
    two ranks' traffic and others none, so the keys no longer follow the distribution asked
    for. A bijection only relabels keys, so every key keeps exactly one rank's probability.

    This is a 4-round Feistel network on the smallest power of two with an even number of
    bits that holds ``n`` values, with cycle walking: encrypt again until the value falls in
    ``[0, n)``. That domain is under ``4 * n``, so a lookup averages under four encryptions.

    >>> p = Permutation.seeded(10, seed=1)
    >>> sorted(p(i) for i in range(10)) == list(range(10))
    True
    >>> p.inverse(p(3))
    3
    """

    n: int
    keys: tuple[int, ...] = field(repr=False)
    """The round keys, one 64-bit integer per Feistel round."""
    _half_bits: int = field(init=False, repr=False)
    _half_mask: int = field(init=False, repr=False)

    def __post_init__(self) -> None:
        bits = max(2, (self.n - 1).bit_length())
        bits += bits % 2
        object.__setattr__(self, "_half_bits", bits // 2)
        object.__setattr__(self, "_half_mask", (1 << (bits // 2)) - 1)

    @classmethod
    def seeded(cls, n: int, seed: int | None = None) -> Permutation:
        """The permutation of ``[0, n)`` that ``seed`` selects (a random one for None)."""
        # Its own stream, apart from the draws', so scrambling relabels a generator's draws
        # without changing which ranks it draws.
        rng = random.Random(None if seed is None else f"scramble:{seed}")
        return cls(_check_n(n), tuple(rng.getrandbits(64) for _ in range(_ROUNDS)))

    def __call__(self, index: int) -> int:
        """The image of ``index``, which must be in ``[0, n)``."""
        value = self._encrypt(index)
        while value >= self.n:
            value = self._encrypt(value)
        return value

    def inverse(self, index: int) -> int:
        """The ``i`` with ``self(i) == index``; ``index`` must be in ``[0, n)``."""
        value = self._decrypt(index)
        while value >= self.n:
            value = self._decrypt(value)
        return value

    # Each round mixes one half into the other with a Fibonacci hash: the top bits of a product
    # by the golden multiplier depend on every bit of the input. Inlined: this is per draw.
    def _encrypt(self, value: int) -> int:
        bits, shift = self._half_bits, 64 - self._half_bits
        left, right = value >> bits, value & self._half_mask
        for key in self.keys:
            left, right = right, left ^ ((((right ^ key) * _GOLDEN) & _MASK64) >> shift)
        return (left << bits) | right

    def _decrypt(self, value: int) -> int:
        bits, shift = self._half_bits, 64 - self._half_bits
        left, right = value >> bits, value & self._half_mask
        for key in reversed(self.keys):
            left, right = right ^ ((((left ^ key) * _GOLDEN) & _MASK64) >> shift), left
        return (left << bits) | right


class Distribution(ABC):
    """A seeded generator of key indices in ``[0, n)``; build one with a factory or `parse`.

    >>> keys = hotspot(100, seed=1)
    >>> keys.n, keys.spec
    (100, 'hotspot:0.2:0.8')
    >>> 0 <= keys.next() < 100
    True
    """

    n: int
    """Number of keys: `next` returns an index in ``[0, n)``."""
    spec: str
    """Canonical spec string: ``parse(keys.spec, keys.n)`` draws from the same distribution."""
    scramble: bool
    """Whether indices are relabelled through a seeded `Permutation`."""

    def __init__(self, n: int, spec: str, *, seed: int | None, scramble: bool) -> None:
        self.n = _check_n(n)
        self.spec = spec
        self.scramble = scramble
        self._random = random.Random(seed)
        self._permutation = Permutation.seeded(n, seed) if scramble else None

    def next(self) -> int:
        """The next key index."""
        index = self._draw()
        return index if self._permutation is None else self._permutation(index)

    def probability(self, index: int) -> float:
        """Exact probability that `next` returns ``index`` (0.0 outside ``[0, n)``).

        It is for tests and reports; drawing never calls it.
        """
        if not 0 <= index < self.n:
            return 0.0
        if self._permutation is not None:
            index = self._permutation.inverse(index)
        return self._probability(index)

    def __repr__(self) -> str:
        scrambled = " scrambled" if self._permutation is not None else ""
        return f"<Distribution {self.spec} n={self.n}{scrambled}>"

    @abstractmethod
    def _draw(self) -> int:
        """The next key index before scrambling."""

    @abstractmethod
    def _probability(self, index: int) -> float:
        """Probability of a key index before scrambling."""


class _ZipfRanks:
    """Ranks ``0..n-1`` with probability proportional to ``(rank + 1) ** -s``, for any s > 0.

    Rejection-inversion sampling (Hörmann and Derflinger, "Rejection-inversion to generate
    variates from monotone discrete distributions", 1996), as in Apache Commons RNG's
    RejectionInversionZipfSampler: draw x from the density ``h(x) = x ** -s`` on
    ``[0.5, n + 0.5]`` by inverting its integral ``H``, round it to k, and accept k when its
    share of the pmf covers the draw. The helpers keep ``H`` exact near s == 1, where it tends
    to a logarithm. Nearly every draw is accepted, and neither setup nor a draw sums over n.
    """

    def __init__(self, n: int, s: float) -> None:
        self.n = n
        self.s = s
        self._h_integral_x1 = self._h_integral(1.5) - 1.0
        self._h_integral_n = self._h_integral(n + 0.5)
        self._squeeze = 2.0 - self._h_integral_inverse(self._h_integral(2.5) - self._h(2.0))
        self._normalizer: float | None = None

    def sample(self, uniform: Callable[[], float]) -> int:
        while True:
            # u is uniform on (H(1.5) - 1, H(n + 0.5)]: rank 1 owns a width of h(1) = 1,
            # rank k > 1 the width H(k + 0.5) - H(k - 0.5), which is at least h(k).
            u = self._h_integral_n + uniform() * (self._h_integral_x1 - self._h_integral_n)
            x = self._h_integral_inverse(u)
            k = self.n if x >= self.n else max(int(x + 0.5), 1)
            if k - x <= self._squeeze or u >= self._h_integral(k + 0.5) - self._h(k):
                return k - 1

    def probability(self, rank: int) -> float:
        if self._normalizer is None:
            self._normalizer = _generalized_harmonic(self.n, self.s)
        return math.pow(rank + 1, -self.s) / self._normalizer

    def _h(self, x: float) -> float:
        return math.exp(-self.s * math.log(x))

    def _h_integral(self, x: float) -> float:
        # (x ** (1 - s) - 1) / (1 - s), which is log(x) at s == 1.
        log_x = math.log(x)
        return _expm1_over((1.0 - self.s) * log_x) * log_x

    def _h_integral_inverse(self, x: float) -> float:
        t = x * (1.0 - self.s)
        if t <= -1.0:
            # Rounding can put u a hair past H's limit for s > 1; that is the far end.
            return math.inf
        return math.exp(_log1p_over(t) * x)


_TAYLOR_THRESHOLD = 1e-8


def _expm1_over(x: float) -> float:
    """``expm1(x) / x``, continuous through 0."""
    if abs(x) > _TAYLOR_THRESHOLD:
        return math.expm1(x) / x
    return 1.0 + x * 0.5 * (1.0 + x / 3.0 * (1.0 + 0.25 * x))


def _log1p_over(x: float) -> float:
    """``log1p(x) / x``, continuous through 0."""
    if abs(x) > _TAYLOR_THRESHOLD:
        return math.log1p(x) / x
    return 1.0 - x * (0.5 - x * (1.0 / 3.0 - 0.25 * x))


_HEAD_TERMS = 1000
_EULER_MACLAURIN = (1.0 / 12.0, -1.0 / 720.0, 1.0 / 30240.0)  # B2/2!, B4/4!, B6/6!


def _generalized_harmonic(n: int, s: float) -> float:
    """``sum(k ** -s for k in 1..n)`` in O(1) time.

    The first 1000 terms are summed exactly (``math.fsum``); the rest by Euler-Maclaurin to
    the B6 term, the first omitted term being under 1e-20 of the sum for every s > 0.
    """
    head = math.fsum(math.pow(k, -s) for k in range(1, min(n, _HEAD_TERMS) + 1))
    if n <= _HEAD_TERMS:
        return head
    a, b = float(_HEAD_TERMS + 1), float(n)
    log_ratio = math.log(b / a)
    tail = math.pow(a, 1.0 - s) * log_ratio * _expm1_over((1.0 - s) * log_ratio)  # integral a..b
    tail += (math.pow(a, -s) + math.pow(b, -s)) / 2.0
    for coefficient, at_a, at_b in zip(
        _EULER_MACLAURIN, _odd_derivatives(a, s), _odd_derivatives(b, s), strict=True
    ):
        tail += coefficient * (at_a - at_b)
    return head + tail


def _odd_derivatives(x: float, s: float) -> Iterator[float]:
    """``-f'(x)``, ``-f'''(x)``, ``-f'''''(x)`` for ``f(x) = x ** -s``."""
    # Multiplied up one factor at a time, so an underflowing power stays 0 for huge s.
    derivative = s * math.pow(x, -s - 1.0)
    for order in (1, 3, 5):
        if order > 1:
            derivative = derivative * (s + order - 2) / x * (s + order - 1) / x
        yield derivative


class _Uniform(Distribution):
    def __init__(self, n: int, *, seed: int | None) -> None:
        super().__init__(n, "uniform", seed=seed, scramble=False)

    def _draw(self) -> int:
        return self._random.randrange(self.n)

    def _probability(self, index: int) -> float:
        return 1.0 / self.n


class _Zipf(Distribution):
    def __init__(self, n: int, s: float, *, seed: int | None, scramble: bool) -> None:
        s = _check_exponent("zipf", s)
        super().__init__(n, f"zipf:{s!r}", seed=seed, scramble=scramble)
        self._ranks = _ZipfRanks(self.n, s)

    def _draw(self) -> int:
        return self._ranks.sample(self._random.random)

    def _probability(self, index: int) -> float:
        return self._ranks.probability(index)


class _Latest(Distribution):
    def __init__(self, n: int, s: float, *, seed: int | None, scramble: bool) -> None:
        s = _check_exponent("latest", s)
        super().__init__(n, f"latest:{s!r}", seed=seed, scramble=scramble)
        self._ranks = _ZipfRanks(self.n, s)

    def _draw(self) -> int:
        return self.n - 1 - self._ranks.sample(self._random.random)

    def _probability(self, index: int) -> float:
        return self._ranks.probability(self.n - 1 - index)


class _Hotspot(Distribution):
    def __init__(
        self, n: int, data: float, ops: float, *, seed: int | None, scramble: bool
    ) -> None:
        data = _check_fraction("hotspot data fraction", data)
        ops = _check_fraction("hotspot ops fraction", ops)
        super().__init__(n, f"hotspot:{data!r}:{ops!r}", seed=seed, scramble=scramble)
        # Rounded (YCSB truncates, so 0.29 of 100 keys made 28) and kept to at least one hot
        # and one cold key; a one-key space is all hot.
        self._hot = min(max(round(self.n * data), 1), self.n - 1) if self.n > 1 else 1
        self._cold = self.n - self._hot
        self._ops = ops if self._cold else 1.0

    def _draw(self) -> int:
        if self._random.random() < self._ops:
            return self._random.randrange(self._hot)
        return self._hot + self._random.randrange(self._cold)

    def _probability(self, index: int) -> float:
        if index < self._hot:
            return self._ops / self._hot
        return (1.0 - self._ops) / self._cold


class _Sequential(Distribution):
    def __init__(self, n: int, *, seed: int | None, scramble: bool) -> None:
        super().__init__(n, "sequential", seed=seed, scramble=scramble)
        # A seed starts the walk part-way round, so users seeded apart do not walk in step.
        self._position = 0 if seed is None else self._random.randrange(self.n)

    def _draw(self) -> int:
        index = self._position
        self._position = (index + 1) % self.n
        return index

    def _probability(self, index: int) -> float:
        return 1.0 / self.n


class _Exponential(Distribution):
    def __init__(
        self, n: int, percentile: float, frac: float, *, seed: int | None, scramble: bool
    ) -> None:
        percentile = _check_fraction("exponential percentile", percentile)
        frac = _check_fraction("exponential frac", frac, up_to_one=True)
        super().__init__(n, f"exponential:{percentile!r}:{frac!r}", seed=seed, scramble=scramble)
        self._gamma = -math.log1p(-percentile) / (frac * self.n)
        # P(X < n) for the untruncated exponential X: (1 - percentile) ** (1 / frac) is beyond.
        self._inside = -math.expm1(math.log1p(-percentile) / frac)

    def _draw(self) -> int:
        # Inverting the CDF of X conditioned on X < n gives the law of redrawing every X >= n,
        # as YCSB does, without the loop.
        x = -math.log1p(-self._random.random() * self._inside) / self._gamma
        return min(int(x), self.n - 1)  # rounding can land on n itself

    def _probability(self, index: int) -> float:
        return math.exp(-self._gamma * index) * -math.expm1(-self._gamma) / self._inside


def uniform(n: int, *, seed: int | None = None, scramble: bool = False) -> Distribution:
    """Every key equally likely.

    ``scramble`` is accepted for symmetry and does nothing: relabelling keys leaves a uniform
    distribution as it was.

    >>> keys = uniform(1000, seed=7)
    >>> keys.spec, keys.probability(999)
    ('uniform', 0.001)
    """
    return _Uniform(n, seed=seed)


def zipf(
    n: int, s: float = 0.99, *, seed: int | None = None, scramble: bool = False
) -> Distribution:
    """Key ``i`` with probability proportional to ``(i + 1) ** -s``: key 0 is the hottest.

    ``s`` is any exponent > 0 (YCSB's zipfian uses 0.99). `Distribution.probability`
    computes the normalizing constant on its first call, then keeps it.

    >>> keys = zipf(10_000_000, s=1.2, seed=7)
    >>> keys.spec
    'zipf:1.2'
    >>> round(keys.probability(0) / keys.probability(1), 6) == round(2**1.2, 6)
    True
    """
    return _Zipf(n, s, seed=seed, scramble=scramble)


def hotspot(
    n: int,
    data: float = 0.2,
    ops: float = 0.8,
    *,
    seed: int | None = None,
    scramble: bool = False,
) -> Distribution:
    """A fraction ``ops`` of draws fall on the first ``data`` of the keys, uniformly.

    The rest fall uniformly on the other keys. The defaults are YCSB's hotspot defaults. The
    hot set is ``round(n * data)`` keys, kept between 1 and ``n - 1``.

    >>> keys = hotspot(1000, data=0.1, ops=0.9, seed=7)
    >>> keys.spec, round(keys.probability(0), 6), round(keys.probability(999), 6)
    ('hotspot:0.1:0.9', 0.009, 0.000111)
    """
    return _Hotspot(n, data, ops, seed=seed, scramble=scramble)


def latest(
    n: int, s: float = 0.99, *, seed: int | None = None, scramble: bool = False
) -> Distribution:
    """Zipf over age: key ``n - 1``, the newest, is the hottest, as in YCSB's skewed-latest.

    >>> keys = latest(1000, seed=7)
    >>> keys.spec, keys.probability(999) > keys.probability(998) > keys.probability(0)
    ('latest:0.99', True)
    """
    return _Latest(n, s, seed=seed, scramble=scramble)


def sequential(n: int, *, seed: int | None = None, scramble: bool = False) -> Distribution:
    """Keys in order, wrapping: every key once per lap of ``n`` draws.

    Without a seed the walk starts at key 0; a seed starts it at a seeded offset. With
    ``scramble`` the lap visits the keys in a seeded order, still each once.

    >>> keys = sequential(3)
    >>> [keys.next() for _ in range(5)]
    [0, 1, 2, 0, 1]
    """
    return _Sequential(n, seed=seed, scramble=scramble)


def exponential(
    n: int,
    percentile: float = 0.95,
    frac: float = 0.8571,
    *,
    seed: int | None = None,
    scramble: bool = False,
) -> Distribution:
    """Key ``floor(X)`` for X exponential, ``percentile`` of it within the first ``frac`` keys.

    This is YCSB's exponential generator, rate ``-ln(1 - percentile) / (frac * n)``; YCSB
    counts keys back from the newest insert, here key 0 is the hottest. Draws of ``n`` or
    more are redrawn (in effect: the tail is sampled out by inversion, not by a loop), which
    raises the share within the first ``frac`` keys a little: to 0.98 for the defaults.
    ``percentile`` is a fraction in (0, 1), not a percentage; ``frac`` is in (0, 1].

    >>> keys = exponential(1000, seed=7)
    >>> keys.spec
    'exponential:0.95:0.8571'
    >>> round(sum(keys.probability(i) for i in range(857)), 2)
    0.98
    """
    return _Exponential(n, percentile, frac, seed=seed, scramble=scramble)


@dataclass(frozen=True)
class _Kind:
    factory: Callable[..., Distribution]
    params: tuple[str, ...]

    def usage(self, name: str) -> str:
        return name + "".join(f"[:{param}" for param in self.params) + "]" * len(self.params)


_KINDS = {
    "exponential": _Kind(exponential, ("PERCENTILE", "FRAC")),
    "hotspot": _Kind(hotspot, ("DATA", "OPS")),
    "latest": _Kind(latest, ("S",)),
    "sequential": _Kind(sequential, ()),
    "uniform": _Kind(uniform, ()),
    "zipf": _Kind(zipf, ("S",)),
}

NAMES: tuple[str, ...] = tuple(sorted(_KINDS))
"""The distribution names a spec can start with."""


def parse(spec: str, n: int, *, seed: int | None = None, scramble: bool = False) -> Distribution:
    """The generator a spec string names, over ``n`` keys.

    A spec is a name, then up to its number of parameters, each after a colon; parameters
    left out take the factory's defaults.

    >>> parse("zipf:1.2", 1000, seed=7).spec
    'zipf:1.2'
    >>> parse("hotspot", 1000).spec
    'hotspot:0.2:0.8'
    """
    name, *fields = spec.strip().split(":")
    name = name.strip().lower()
    kind = _KINDS.get(name)
    if kind is None:
        raise ConfigError(f"unknown distribution {name!r} (expected one of: {', '.join(NAMES)})")
    if len(fields) > len(kind.params):
        raise ConfigError(
            f"too many parameters in distribution spec {spec!r} (expected {kind.usage(name)})"
        )
    params = []
    for text in fields:
        try:
            params.append(float(text))
        except ValueError:
            raise ConfigError(
                f"{text.strip()!r} is not a number in distribution spec {spec!r}"
                f" (expected {kind.usage(name)})"
            ) from None
    return kind.factory(n, *params, seed=seed, scramble=scramble)


def validate_spec(spec: str) -> str:
    """Check a spec before the key count is known, and return its canonical form.

    >>> validate_spec("zipf")
    'zipf:0.99'
    """
    # The factories check their own parameters; on a one-key space, building one is free.
    return parse(spec, 1, seed=0).spec
