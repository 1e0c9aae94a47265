"""Key distributions: statistical fit, reproducibility, scrambling, specs and errors.

The fit tests compare draw counts with probabilities computed here, independently of the
module, and check `probability()` against the same numbers. Seeds are fixed and the p-value
threshold is 1e-4, so a pass or a failure repeats exactly; a wrong exponent fails (see
`test_chi_square_detects_a_wrong_exponent`).
"""

from __future__ import annotations

import doctest
import itertools
import math
import re
import tracemalloc

import numpy as np
import pytest
from scipy import stats

from loadgen.design import keys as distributions
from loadgen.design.keys import (
    NAMES,
    Distribution,
    Permutation,
    exponential,
    hotspot,
    latest,
    parse,
    sequential,
    uniform,
    validate_spec,
    zipf,
)
from loadgen.errors import ConfigError

P_MIN = 1e-4
DRAWS = 60_000
BIG_N = 10_000_000


def draw(keys: Distribution, count: int) -> np.ndarray:
    return np.fromiter((keys.next() for _ in range(count)), dtype=np.int64, count=count)


def pooled(observed: np.ndarray, expected: np.ndarray, minimum: float = 5.0):
    """Merge cells, likeliest first, so that every expected count is at least `minimum`."""
    observed_cells: list[float] = []
    expected_cells: list[float] = []
    o = e = 0.0
    for i in np.argsort(-expected, kind="stable"):
        o += observed[i]
        e += expected[i]
        if e >= minimum:
            observed_cells.append(o)
            expected_cells.append(e)
            o = e = 0.0
    observed_cells[-1] += o
    expected_cells[-1] += e
    return np.array(observed_cells), np.array(expected_cells)


def chi_square_p(observed: np.ndarray, probabilities: np.ndarray) -> float:
    assert observed[probabilities == 0].sum() == 0, "drew a key of probability 0"
    obs, exp = pooled(observed, probabilities * observed.sum())
    assert len(obs) >= 2
    # scipy wants equal totals; probabilities summing to 1 is asserted separately.
    return float(stats.chisquare(obs, exp * obs.sum() / exp.sum()).pvalue)


def zipf_reference(n: int, s: float) -> np.ndarray:
    weights = np.arange(1, n + 1, dtype=np.float64) ** -s
    return weights / weights.sum()


def hotspot_reference(n: int, data: float, ops: float) -> np.ndarray:
    hot = round(n * data)
    return np.where(np.arange(n) < hot, ops / hot, (1 - ops) / (n - hot))


def exponential_reference(n: int, percentile: float, frac: float) -> np.ndarray:
    gamma = -math.log(1 - percentile) / (frac * n)
    edges = np.exp(-gamma * np.arange(n + 1, dtype=np.float64))
    weights = edges[:-1] - edges[1:]
    return weights / weights.sum()


def scrambled(reference: np.ndarray, seed: int) -> np.ndarray:
    """Reference probabilities moved to where a scrambled generator puts each rank."""
    permutation = Permutation.seeded(len(reference), seed)
    moved = np.empty_like(reference)
    moved[[permutation(r) for r in range(len(reference))]] = reference
    return moved


FITS = [
    ("uniform", lambda: uniform(1000, seed=1), np.full(1000, 1 / 1000)),
    ("zipf n=50 s=0.99", lambda: zipf(50, seed=2), zipf_reference(50, 0.99)),
    *[
        (f"zipf n=1000 s={s}", lambda s=s: zipf(1000, s, seed=3), zipf_reference(1000, s))
        for s in (0.5, 0.99, 1.0, 1.2, 2.0)
    ],
    ("zipf s=0.2", lambda: zipf(300, 0.2, seed=4), zipf_reference(300, 0.2)),
    ("zipf s=4", lambda: zipf(300, 4.0, seed=5), zipf_reference(300, 4.0)),
    (
        "zipf scrambled",
        lambda: zipf(1000, 1.2, seed=6, scramble=True),
        scrambled(zipf_reference(1000, 1.2), 6),
    ),
    ("hotspot defaults", lambda: hotspot(1000, seed=7), hotspot_reference(1000, 0.2, 0.8)),
    (
        "hotspot 0.05/0.99",
        lambda: hotspot(997, data=0.05, ops=0.99, seed=8),
        hotspot_reference(997, 0.05, 0.99),
    ),
    (
        "hotspot scrambled",
        lambda: hotspot(500, data=0.3, ops=0.6, seed=9, scramble=True),
        scrambled(hotspot_reference(500, 0.3, 0.6), 9),
    ),
    ("latest", lambda: latest(1000, seed=10), zipf_reference(1000, 0.99)[::-1]),
    ("latest s=1.5", lambda: latest(200, 1.5, seed=11), zipf_reference(200, 1.5)[::-1]),
    (
        "exponential defaults",
        lambda: exponential(1000, seed=12),
        exponential_reference(1000, 0.95, 0.8571),
    ),
    (
        "exponential 0.5/0.2",
        lambda: exponential(500, 0.5, 0.2, seed=13),
        exponential_reference(500, 0.5, 0.2),
    ),
    (
        "exponential 0.999/1",
        lambda: exponential(400, 0.999, 1.0, seed=14, scramble=True),
        scrambled(exponential_reference(400, 0.999, 1.0), 14),
    ),
]


@pytest.mark.parametrize(
    ("build", "reference"), [fit[1:] for fit in FITS], ids=[f[0] for f in FITS]
)
def test_draws_fit_the_intended_distribution(build, reference):
    keys = build()
    probabilities = np.array([keys.probability(i) for i in range(keys.n)])
    np.testing.assert_allclose(probabilities, reference, rtol=1e-9, atol=0)
    assert math.fsum(probabilities) == pytest.approx(1.0, abs=1e-12)

    observed = np.bincount(draw(keys, DRAWS), minlength=keys.n)
    assert chi_square_p(observed, reference) > P_MIN


def test_chi_square_detects_a_wrong_exponent():
    observed = np.bincount(draw(zipf(1000, 1.0, seed=15), DRAWS), minlength=1000)
    assert chi_square_p(observed, zipf_reference(1000, 1.0)) > P_MIN
    assert chi_square_p(observed, zipf_reference(1000, 1.05)) < 1e-12


def harmonic_at(points: np.ndarray, s: float) -> np.ndarray:
    """sum(k ** -s for k in 1..m) for each m in `points`, summing every term, in chunks."""
    wanted = np.asarray(points, dtype=np.int64)
    result = np.zeros(len(wanted))
    total, chunk = 0.0, 1_000_000
    for start in range(1, int(wanted.max()) + 1, chunk):
        stop = min(start + chunk, int(wanted.max()) + 1)
        running = total + np.cumsum(np.arange(start, stop, dtype=np.float64) ** -s)
        inside = (wanted >= start) & (wanted < stop)
        result[inside] = running[wanted[inside] - start]
        total = running[-1]
    return result


def binned_fit(ranks: np.ndarray, edges: np.ndarray, cdf_at_edges: np.ndarray) -> float:
    """Chi-square p of ranks in bins [edges[j], edges[j + 1]) against a CDF at the edges."""
    observed = np.bincount(np.searchsorted(edges, ranks, side="right") - 1, minlength=len(edges))
    return chi_square_p(observed[: len(edges) - 1], np.diff(cdf_at_edges))


LOG_EDGES = np.unique(np.geomspace(1, BIG_N + 1, 60).astype(np.int64))  # 1-based ranks


@pytest.mark.parametrize(
    ("factory", "s"),
    [(zipf, 0.5), (zipf, 0.99), (zipf, 1.0), (zipf, 2.0), (latest, 0.99)],
    ids=["zipf-0.5", "zipf-0.99", "zipf-1.0", "zipf-2.0", "latest-0.99"],
)
def test_ten_million_keys_fit_in_log_spaced_bins(factory, s):
    keys = factory(BIG_N, s, seed=16)
    indices = draw(keys, 50_000)
    ranks = indices + 1 if factory is zipf else BIG_N - indices
    harmonic = harmonic_at(np.append(LOG_EDGES - 1, BIG_N), s)
    cdf, total = harmonic[:-1] / harmonic[-1], harmonic[-1]
    assert binned_fit(ranks, LOG_EDGES, cdf) > P_MIN

    hottest = 0 if factory is zipf else BIG_N - 1
    assert keys.probability(hottest) == pytest.approx(1 / total, rel=1e-12)
    coldest = BIG_N - 1 - hottest
    assert keys.probability(coldest) == pytest.approx(BIG_N**-s / total, rel=1e-12)


def test_ten_million_keys_exponential_fits():
    keys = exponential(BIG_N, seed=17)
    gamma = -math.log(1 - 0.95) / (0.8571 * BIG_N)
    edges = np.linspace(0, BIG_N, 41).astype(np.int64)
    cdf = -np.expm1(-gamma * edges) / -math.expm1(-gamma * BIG_N)
    assert binned_fit(draw(keys, 50_000), edges, cdf) > P_MIN


def test_ten_million_keys_hotspot_and_uniform_fit():
    edges = np.linspace(0, BIG_N, 21).astype(np.int64)  # hot set: the first 4 bins
    hot_cdf = np.where(edges <= 2_000_000, 0.8 * edges / 2e6, 0.8 + 0.2 * (edges - 2e6) / 8e6)
    assert binned_fit(draw(hotspot(BIG_N, seed=18), 50_000), edges, hot_cdf) > P_MIN
    assert binned_fit(draw(uniform(BIG_N, seed=19), 50_000), edges, edges / BIG_N) > P_MIN


@pytest.mark.parametrize("name", NAMES)
def test_no_key_sized_memory_at_ten_million_keys(name):
    tracemalloc.start()
    try:
        keys = parse(name, BIG_N, seed=20, scramble=True)
        for _ in range(10_000):
            keys.next()
        keys.probability(BIG_N // 2)  # zipf's normalizing constant too
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 1_000_000


SPECS = ["uniform", "zipf", "zipf:0.5", "hotspot", "latest", "sequential", "exponential"]


@pytest.mark.parametrize("scramble", [False, True])
@pytest.mark.parametrize("spec", SPECS)
def test_a_seed_fixes_the_sequence(spec, scramble):
    first = draw(parse(spec, 10_000, seed=21, scramble=scramble), 1000)
    again = draw(parse(spec, 10_000, seed=21, scramble=scramble), 1000)
    other = draw(parse(spec, 10_000, seed=22, scramble=scramble), 1000)
    assert first.tolist() == again.tolist()
    assert first.tolist() != other.tolist()


def test_without_a_seed_sequences_differ():
    assert draw(zipf(10_000), 100).tolist() != draw(zipf(10_000), 100).tolist()


@pytest.mark.parametrize("n", [1, 2, 7, 1000, 4097])
def test_scramble_is_a_bijection(n):
    permutation = Permutation.seeded(n, seed=23)
    images = [permutation(i) for i in range(n)]
    assert sorted(images) == list(range(n))
    assert [permutation.inverse(j) for j in images] == list(range(n))
    lap = draw(sequential(n, seed=23, scramble=True), n)
    assert sorted(lap.tolist()) == list(range(n))


def test_scramble_only_relabels_the_draws():
    plain = draw(zipf(1000, seed=24), 500)
    mixed = draw(zipf(1000, seed=24, scramble=True), 500)
    permutation = Permutation.seeded(1000, 24)
    assert mixed.tolist() == [permutation(int(r)) for r in plain]


def test_scrambled_zipf_spreads_the_hottest_keys():
    n = 10_000
    keys = zipf(n, seed=25, scramble=True)
    hottest = sorted(range(n), key=keys.probability, reverse=True)[:20]
    gaps = np.diff(sorted(hottest))
    assert gaps.min() > 1, "two of the 20 hottest keys are adjacent"
    assert max(hottest) - min(hottest) > n // 2
    assert np.bincount(draw(keys, 20_000), minlength=n).argmax() == hottest[0]

    permutation = Permutation.seeded(n, 25)
    neighbours = sum(abs(permutation(r + 1) - permutation(r)) <= 1 for r in range(1000))
    assert neighbours <= 5  # consecutive ranks land far apart (a random layout: about 0.2)


def test_sequential_walks_in_order_and_wraps():
    assert draw(sequential(4), 10).tolist() == [0, 1, 2, 3, 0, 1, 2, 3, 0, 1]
    walk = draw(sequential(5, seed=26), 11).tolist()
    assert [(b - a) % 5 for a, b in itertools.pairwise(walk)] == [1] * 10
    assert walk == draw(sequential(5, seed=26), 11).tolist()
    assert draw(sequential(1), 3).tolist() == [0, 0, 0]
    assert sequential(5).probability(3) == pytest.approx(0.2)


def test_small_key_spaces():
    assert draw(hotspot(1, seed=27), 5).tolist() == [0] * 5
    assert hotspot(1).probability(0) == 1.0
    two = hotspot(2, data=0.8, ops=0.9)  # rounds to 2 hot keys; kept to 1 hot, 1 cold
    assert (two.probability(0), two.probability(1)) == pytest.approx((0.9, 0.1))
    for name in NAMES:
        keys = parse(name, 1, seed=28, scramble=True)
        assert draw(keys, 5).tolist() == [0] * 5
        assert keys.probability(0) == pytest.approx(1.0)


def test_probability_is_zero_outside_the_key_space():
    keys = zipf(10)
    assert keys.probability(-1) == keys.probability(10) == 0.0


CANONICAL = {
    "uniform": "uniform",
    "zipf": "zipf:0.99",
    "zipf:1.2": "zipf:1.2",
    "zipf:1": "zipf:1.0",
    "hotspot": "hotspot:0.2:0.8",
    "hotspot:0.1": "hotspot:0.1:0.8",
    "hotspot:0.2:0.8": "hotspot:0.2:0.8",
    "latest": "latest:0.99",
    "latest:0.9": "latest:0.9",
    "sequential": "sequential",
    "exponential": "exponential:0.95:0.8571",
    "exponential:0.95": "exponential:0.95:0.8571",
    "exponential:0.95:0.8571": "exponential:0.95:0.8571",
    " Zipf:1.5 ": "zipf:1.5",
}


@pytest.mark.parametrize(("spec", "canonical"), CANONICAL.items())
def test_specs_round_trip(spec, canonical):
    keys = parse(spec, 100)
    assert keys.spec == canonical
    assert validate_spec(spec) == canonical
    assert parse(keys.spec, 100).spec == canonical


def test_parse_builds_what_the_factory_builds():
    assert draw(parse("zipf:1.2", 500, seed=29), 200).tolist() == (
        draw(zipf(500, s=1.2, seed=29), 200).tolist()
    )
    assert draw(parse("hotspot:0.1:0.7", 500, seed=29, scramble=True), 200).tolist() == (
        draw(hotspot(500, data=0.1, ops=0.7, seed=29, scramble=True), 200).tolist()
    )


KNOWN = "(expected one of: exponential, hotspot, latest, sequential, uniform, zipf)"
ERRORS = [
    (lambda: zipf(0), "key count must be an integer from 1 to 2**53 (got 0)"),
    (lambda: uniform(-3), "(got -3)"),
    (lambda: sequential(2**53 + 1), f"(got {2**53 + 1})"),
    (lambda: zipf(1.5), "(got 1.5)"),
    (lambda: zipf(10, s=-1.0), "zipf exponent must be > 0 (got -1.0)"),
    (lambda: zipf(10, s=0), "zipf exponent must be > 0 (got 0.0)"),
    (lambda: zipf(10, s=math.nan), "zipf exponent must be > 0 (got nan)"),
    (lambda: zipf(10, s=math.inf), "zipf exponent must be finite (got inf)"),
    (lambda: latest(10, s=-0.5), "latest exponent must be > 0 (got -0.5)"),
    (lambda: hotspot(10, data=0), "hotspot data fraction must be in (0, 1) (got 0.0)"),
    (lambda: hotspot(10, data=1.0), "hotspot data fraction must be in (0, 1) (got 1.0)"),
    (lambda: hotspot(10, ops=1.5), "hotspot ops fraction must be in (0, 1) (got 1.5)"),
    (lambda: exponential(10, 95), "exponential percentile must be in (0, 1) (got 95.0)"),
    (lambda: exponential(10, frac=0), "exponential frac must be in (0, 1] (got 0.0)"),
    (lambda: exponential(10, frac=1.5), "exponential frac must be in (0, 1] (got 1.5)"),
    (lambda: parse("zipff", 10), f"unknown distribution 'zipff' {KNOWN}"),
    (lambda: parse("", 10), f"unknown distribution '' {KNOWN}"),
    (
        lambda: parse("zipf:abc", 10),
        "'abc' is not a number in distribution spec 'zipf:abc' (expected zipf[:S])",
    ),
    (lambda: parse("zipf:", 10), "'' is not a number in distribution spec 'zipf:'"),
    (
        lambda: parse("zipf:1:2", 10),
        "too many parameters in distribution spec 'zipf:1:2' (expected zipf[:S])",
    ),
    (lambda: parse("uniform:3", 10), "(expected uniform)"),
    (
        lambda: parse("hotspot:0.1:0.2:0.3", 10),
        "(expected hotspot[:DATA[:OPS]])",
    ),
    (lambda: parse("zipf:-2", 10), "zipf exponent must be > 0 (got -2.0)"),
    (lambda: parse("zipf", 0), "(got 0)"),
    (lambda: validate_spec("hotspot:2"), "hotspot data fraction must be in (0, 1) (got 2.0)"),
    (lambda: validate_spec("exponential:0.9:x"), "(expected exponential[:PERCENTILE[:FRAC]])"),
    (lambda: validate_spec("latest:0"), "latest exponent must be > 0 (got 0.0)"),
]


@pytest.mark.parametrize(("build", "message"), ERRORS, ids=[e[1] for e in ERRORS])
def test_bad_values_are_named(build, message):
    with pytest.raises(ConfigError, match=re.escape(message)) as raised:
        build()
    assert "\n" not in str(raised.value)


def test_names_and_public_api():
    assert NAMES == ("exponential", "hotspot", "latest", "sequential", "uniform", "zipf")
    assert set(distributions.__all__) == {
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
    }


def test_docstring_examples():
    failures, tried = doctest.testmod(distributions)
    assert tried > 0
    assert failures == 0
