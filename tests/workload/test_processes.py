"""The load generator over several processes: how many, and each worker's share of every
pattern's arrivals."""

from __future__ import annotations

import random
from argparse import Namespace

import gevent
import locust  # noqa: F401  (patches the standard library for gevent before boto3 loads)
import pytest
from scipy import stats

from loadgen.errors import ConfigError
from loadgen.heat.load import LoadLedger
from loadgen.workload.arrivals import ArrivalDriver, plan_from_parsed
from loadgen.workload.processes import PROCESS_ATTEMPTS_PER_S, choose, parse

PATTERNS = {"join-game": 1, "find-games": 1, "game-page": 1}


class Worker:
    """A workload user instance stand-in whose operations answer at once."""

    def __getattr__(self, operation: str) -> object:
        return lambda: None


def test_each_worker_offers_its_share_of_every_patterns_rate() -> None:
    options = {"rate": 0, "rates": "join-game=2400,find-games=200,game-page=500",
               "arrivals": "constant", "ramp": "", "stages": "", "max_in_flight": 100,
               "rate_scale": 0.1, "num_users": 1, "rate_drivers": 2}  # fmt: skip
    ledgers = [LoadLedger(), LoadLedger()]
    greenlets = []
    for n, ledger in enumerate(ledgers):  # two workers, as the master's spawn message sets up
        plan = plan_from_parsed(Namespace(**options), PATTERNS)
        assert plan is not None and plan.share == 0.5 and plan.driver_in_flight == 50
        driver = ArrivalDriver(plan, ledger, Worker, rng=random.Random(n))
        greenlets.append(gevent.spawn(driver.run))
    gevent.sleep(1.0)
    gevent.killall(greenlets)
    merged = LoadLedger()
    for ledger in ledgers:
        merged.merge_dict(ledger.to_dict())
    # A second of the rate at scale 0.1, 310 arrivals, half from each worker at constant gaps;
    # each arrival's pattern drawn by its rate (2,400 : 200 : 500).
    weights = {"join-game": 2400, "find-games": 200, "game-page": 500}
    for ledger in ledgers:
        counts = [ledger.operations.get(pattern, [0])[0] for pattern in weights]
        assert abs(sum(counts) - 155) <= 4, counts
        expected = [sum(counts) * w / sum(weights.values()) for w in weights.values()]
        assert stats.chisquare(counts, expected).pvalue > 0.001, counts
    for pattern in weights:
        assert merged.operations[pattern][0] == sum(
            ledger.operations.get(pattern, [0])[0] for ledger in ledgers
        )


def test_auto_asks_for_more_than_one_process_only_where_attempts_need_it_and_cores_allow() -> None:
    one = PROCESS_ATTEMPTS_PER_S["fast"]
    assert choose("auto", attempts_per_s=one, client="fast", cores=8, reserved=2)[0] == 1
    assert choose("auto", attempts_per_s=2.5 * one, client="fast", cores=8, reserved=2)[0] == 3
    assert choose("auto", attempts_per_s=20 * one, client="fast", cores=8, reserved=2)[0] == 6
    # Two cores, one left to the emulator and its engine: one process, and it says why.
    count, why = choose("auto", attempts_per_s=3 * one, client="fast", cores=2, reserved=1)
    assert count == 1
    assert why == (
        f"--processes auto: {3 * one:,.0f} attempts/s offered, one process carries about "
        f"{one:,.0f}, but the machine's 2 cores, 1 left to the target, leave one to the load "
        "generator"
    )
    assert choose(2, attempts_per_s=10.0, client="fast", cores=2, reserved=1) == (
        2, "--processes 2"
    )  # fmt: skip
    # The boto3 client sends fewer per core: the same attempts need more processes.
    assert choose("auto", attempts_per_s=one, client="boto3", cores=16, reserved=0)[0] > 1


@pytest.mark.parametrize("value", ["0", "-1", "two", "1.5"])
def test_processes_must_be_a_count_or_auto(value: str) -> None:
    with pytest.raises(ConfigError, match=f"integer >= 1 or auto \\(got '{value}'\\)"):
        parse(value)
    assert parse("3") == 3 and parse(None) == "auto" and parse("auto") == "auto"
