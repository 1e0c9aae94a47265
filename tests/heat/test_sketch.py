from __future__ import annotations

import random
from collections import Counter

import pytest

from loadgen.errors import ConfigError
from loadgen.heat.sketch import SpaceSaving


def _zipf_stream(n_keys: int, draws: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    weights = [1.0 / (rank + 1) ** 1.1 for rank in range(n_keys)]
    return [f"k{i}" for i in rng.choices(range(n_keys), weights, k=draws)]


def test_exact_when_keys_fit() -> None:
    sketch = SpaceSaving(capacity=10)
    for key in ["a", "b", "a", "c", "a", "b"]:
        sketch.add(key)
    assert [(h.key, h.count, h.error) for h in sketch.top(3)] == [
        ("a", 3, 0),
        ("b", 2, 0),
        ("c", 1, 0),
    ]
    assert sketch.total == 6


def test_error_bound_and_heavy_hitters_kept() -> None:
    capacity = 50
    stream = _zipf_stream(5000, 50_000, seed=3)
    truth = Counter(stream)
    sketch = SpaceSaving(capacity)
    for key in stream:
        sketch.add(key)
    assert len(sketch) == capacity
    bound = len(stream) / capacity
    for hitter in sketch.top(capacity):
        # The estimate never undercounts and overcounts by at most its error <= N/k.
        assert truth[hitter.key] <= hitter.count
        assert hitter.count - hitter.error <= truth[hitter.key]
        assert hitter.error <= bound
    held = {h.key for h in sketch.top(capacity)}
    for key, count in truth.items():
        if count > bound:
            assert key in held
    assert [h.key for h in sketch.top(3)] == [k for k, _ in truth.most_common(3)]


def test_merge_matches_one_sketch_over_both_streams() -> None:
    a, b, whole = SpaceSaving(40), SpaceSaving(40), SpaceSaving(40)
    stream_a = _zipf_stream(2000, 20_000, seed=1)
    stream_b = _zipf_stream(2000, 20_000, seed=2)
    for key in stream_a:
        a.add(key)
        whole.add(key)
    for key in stream_b:
        b.add(key)
        whole.add(key)
    a.merge(SpaceSaving.from_dict(b.to_dict()))
    truth = Counter(stream_a + stream_b)
    assert a.total == whole.total == 40_000
    assert len(a) == 40
    for hitter in a.top(10):
        assert hitter.count - hitter.error <= truth[hitter.key] <= hitter.count
    assert [h.key for h in a.top(5)] == [k for k, _ in truth.most_common(5)]


def test_weighted_add_and_capacity_validation() -> None:
    sketch = SpaceSaving(2)
    sketch.add("a", 5)
    sketch.add("b", 1)
    sketch.add("c", 1)  # evicts b, inherits its count as error
    top = {h.key: (h.count, h.error) for h in sketch.top(2)}
    assert top == {"a": (5, 0), "c": (2, 1)}
    with pytest.raises(ConfigError, match=r"got 0"):
        SpaceSaving(0)
