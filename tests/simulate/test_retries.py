"""Where the SDK's retries go in a simulation: back to the partition that refused them.

A retry is the same request, with the same key: the simulation must throttle it again as
likely as that key's partition throttles, not as likely as the pattern's keys do on average.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import yaml

from loadgen.design.loader import load_design
from loadgen.errors import ConfigError
from loadgen.model.hashing import HASH_SPACE
from loadgen.simulate import Settings, build_results, parse_profile, simulate
from loadgen.simulate.command import design_path
from loadgen.simulate.retries import Returning, horizon, landing

RATE = 2000.0
HOT, COLD = 0.75, 0.25
"""A hot key takes 1,500 writes/s of a partition that serves 1,000; a cold one, 500."""
CEILING = 1000.0
SECONDS = 240

TWO_KEYS = {
    "name": "two-keys",
    "tables": [
        {
            "TableName": "t",
            "BillingMode": "PAY_PER_REQUEST",
            # Warm far above the 2,000 units/s asked: only the hot key's partition refuses.
            "WarmThroughput": {"WriteUnitsPerSecond": 10000, "ReadUnitsPerSecond": 12000},
            "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}],
            "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
        }
    ],
    "generators": {"key": {"choice": {"hot": HOT, "cold": COLD}}},
    "access_patterns": [
        {
            "id": "count",
            "operation": "UpdateItem",
            "key": {"pk": "K#{key}"},
            "add": {"n": 1},
            "rate": f"{RATE:g}/s",
        }
    ],
}


def two_keys(tmp_path: Path) -> object:
    path = tmp_path / "two-keys.yaml"
    path.write_text(yaml.safe_dump(TWO_KEYS))
    return load_design(str(path))


def hot_partition_alone(attempts: int, seconds: int) -> tuple[float, float]:
    """(throttled, offered) attempts of the hot key's partition on its own, second by
    second: each second it admits 1,000 of the attempts it is asked, refuses the rest in the
    last ``r`` of the second (its bucket is empty from then), and every refused attempt comes
    back to it after the standard mode's wait (`landing`), throttled again if within the
    second."""
    new = RATE * HOT
    arriving = np.zeros((seconds + 8, attempts))
    throttled = offered = 0.0
    for t in range(seconds):
        arriving[t, 0] += new
        asked = float(arriving[t].sum())
        refused = max(0.0, 1.0 - CEILING / asked)
        throttled += asked * refused
        offered += asked
        for k in range(attempts - 1):
            wanting = arriving[t, k] * refused
            if wanting:
                same, lands, _ = landing(refused, k, attempts)
                again = wanting * float(same.sum())
                throttled += again
                offered += again
                arriving[t : t + len(lands)] += wanting * lands
    return throttled, offered


def test_a_retry_is_throttled_again_on_the_partition_that_refused_it(tmp_path: Path) -> None:
    design = two_keys(tmp_path)
    # Expectations, not draws; a quota that never runs out (it is tested on its own).
    settings = Settings(fluctuate=False, clients=10**6)
    result = simulate(design, parse_profile([f"{RATE:g}/s for {SECONDS}s"]), settings)
    rows = result.patterns["count"]
    throttled = sum(row.throttled for row in rows)
    offered = sum(row.offered for row in rows)
    hot_throttled, hot_offered = hot_partition_alone(3, SECONDS)
    # The cold key's 500 writes/s are never throttled and add no retries.
    expected = hot_throttled / (hot_offered + RATE * COLD * SECONDS)
    assert throttled / offered == pytest.approx(expected, rel=1e-6)
    assert expected == pytest.approx(0.59, abs=0.01)  # spread again over both keys: 0.47
    # No retry of the hot key escapes to the cold key's partition: it serves exactly the
    # cold key's writes, and 500 hot requests a second run out of attempts.
    (table,) = result.final
    consumed = sorted(p.consumed_write_units / SECONDS for p in table.partitions)
    assert consumed[-2:] == pytest.approx([RATE * COLD, CEILING])
    failed = sum(row.failed for row in rows[1:]) / (60 * (len(rows) - 1))
    assert failed == pytest.approx(RATE * HOT - CEILING, rel=1e-3)


def test_without_retries_the_refused_share_is_the_hot_keys_excess(tmp_path: Path) -> None:
    design = two_keys(tmp_path)
    settings = Settings(attempts=1, fluctuate=False)
    result = simulate(design, parse_profile([f"{RATE:g}/s for 60s"]), settings)
    (row,) = result.patterns["count"]
    assert row.throttled / row.offered == pytest.approx((RATE * HOT - CEILING) / RATE)
    assert row.offered == row.new  # nothing comes back


def test_retries_on_their_way_back_follow_their_key_into_a_split() -> None:
    back = Returning(4)
    halves = [0, HASH_SPACE // 2]
    back.relayout([], halves, np.ones(2))
    # Two seconds on, 3 executions, each touching the second partition once.
    back.send(np.asarray([1, 2, 3]), np.asarray([0.0, 3.0, 0.0]), np.asarray([0.0, 1.0]))
    # The second partition splits; the key that throttled there is in its upper half.
    quarters = [0, HASH_SPACE // 2, 3 * HASH_SPACE // 4]
    back.relayout(halves, quarters, np.asarray([0.5, 0.0, 0.5]))
    assert back.take(1).tolist() == [0.0, 0.0, 0.0]
    assert back.take(2).tolist() == [0.0, 0.0, 3.0]
    assert back.take(2).tolist() == [0.0, 0.0, 0.0]  # taken


def test_requests_end_admitted_failed_or_on_their_way_back() -> None:
    # A transaction on a table and an index (several lanes): what the index refuses comes
    # back on it, the table's items are drawn again over their keys.
    design = load_design(design_path("orders"), "hot-status")
    result = simulate(design, parse_profile(["750/s for 2m"]), Settings(clients=10**6))
    for rows in result.patterns.values():
        new = sum(row.new for row in rows)
        ended = sum(row.admitted + row.failed for row in rows)
        assert 0 <= new - ended <= 4 * new / 120  # at most the last seconds' retries


def test_the_clock_starts_where_the_runs_clock_started() -> None:
    design = load_design(design_path("sensor"), "by-time")
    top_of_hour = 1_800_000_000.0
    # A run whose clock started 50 minutes into an hour, at 60 times wall time: the clock
    # reads the top of that hour then, and 15 s later a quarter past.
    start = top_of_hour + 3000
    settings = Settings(clock_speed=60, start=start, clock_start=start - 0.3, scale=0.01)
    results = build_results(simulate(design, parse_profile(["7125/s for 15s"]), settings))
    hottest = results["hot_keys"][0]
    assert hottest["key"] == "READINGS#2027-01-15-08" and hottest["share"] == 1.0


def test_a_throttled_transaction_is_not_retried() -> None:
    # DynamoDB answers a throttled transaction TransactionCanceledException, which the SDK
    # does not retry: every throttled create-order fails at its first attempt, while the
    # status change (an UpdateItem on the same hot index key) is retried.
    # The status index's buffer fills after about 12 minutes; then its back-pressure refuses.
    design = load_design(design_path("orders"), "hot-status")
    result = simulate(design, parse_profile(["1500/s for 20m"]), Settings(fluctuate=False))
    created = result.patterns["create-order"]
    assert sum(row.throttled for row in created) > 0.02 * sum(row.new for row in created)
    assert sum(row.offered for row in created) == pytest.approx(sum(row.new for row in created))
    assert sum(row.failed for row in created) == pytest.approx(
        sum(row.throttled for row in created)
    )
    moved = result.patterns["update-status"]
    assert sum(row.offered for row in moved) > 1.01 * sum(row.new for row in moved)


def test_the_legacy_mode_retries_at_once_ten_times_without_a_quota(tmp_path: Path) -> None:
    # botocore's default: 50 ms, then doubling, no jitter: of requests refused in the last
    # quarter of a second, 80% are back within it at once and throttled again, 40% twice;
    # the standard mode's 0-1 s wait brings back 12.5%. All come back the next second.
    same, lands, _ = landing(0.25, 0, 10, "legacy")
    assert same[1] == pytest.approx(0.8) and same[2] == pytest.approx(0.4)
    assert landing(0.25, 0, 3)[0][1] == pytest.approx(0.125)
    assert lands[1].sum() == pytest.approx(1.0)
    assert lands.shape[0] == horizon(10, "legacy") == 2 + 13  # the 12.8 s wait at most
    # No quota: a client refused far more than 100 times still retries, ten attempts each.
    design = two_keys(tmp_path)
    profile = parse_profile([f"{RATE:g}/s for 2m"])
    # The standard mode's quota ends its retries however many attempts it is given.
    standard = simulate(design, profile, Settings(fluctuate=False, attempts=10))
    legacy = simulate(design, profile, Settings(fluctuate=False, attempts=10, retry_mode="legacy"))
    assert standard.requests_per_operation() < 1.3
    assert legacy.requests_per_operation() > 3 * standard.requests_per_operation()
    gave_up = sum(row.failed for row in legacy.patterns["count"])
    assert gave_up < 0.8 * sum(row.failed for row in standard.patterns["count"])


def test_a_retry_mode_the_model_does_not_know_is_refused() -> None:
    with pytest.raises(ConfigError, match="retry mode 'adaptive' is not modelled"):
        Settings(retry_mode="adaptive")
