"""The open model: the plan's rates and shape, the arrival process, the in-flight cap, and
latency from the intended start."""

from __future__ import annotations

import random
import time
from argparse import Namespace
from typing import Any

import gevent
import gevent.event
import locust  # noqa: F401  (patches the standard library for gevent before boto3 loads)
import pytest
from scipy import stats

from loadgen.client.base import BaseDynamoClient, Outcome, intended_start
from loadgen.errors import ConfigError
from loadgen.heat.load import LoadLedger
from loadgen.workload.arrivals import (
    ArrivalDriver,
    ArrivalPlan,
    Stage,
    parse_stages,
    plan_from_parsed,
)

MIX = {"increment": 9, "read": 1}


def parsed(**options: Any) -> Namespace:
    defaults = {"rate": 0, "rates": "", "arrivals": "constant", "ramp": "", "stages": "",
                "max_in_flight": None, "rate_scale": None, "num_users": 1}  # fmt: skip
    return Namespace(**{**defaults, **options})


def test_no_rate_is_the_closed_model() -> None:
    assert plan_from_parsed(parsed(), MIX) is None


def test_the_rate_is_split_by_the_mix_scaled_and_shared_by_the_drivers() -> None:
    plan = plan_from_parsed(parsed(rate=1000, rate_scale=0.1, num_users=2), MIX)
    assert plan is not None
    assert plan.rates == {"increment": 900.0, "read": 100.0}
    assert plan.rate_at(0.0) == pytest.approx(50.0)  # 1,000/s x 0.1 over two drivers
    assert plan.driver_in_flight == 500
    assert plan.describe()["rate"] == 1000.0  # the results show the run's, at AWS scale


def test_on_a_worker_the_masters_user_count_shares_the_rate() -> None:
    # A worker parses its own --users (1); the master's count arrives as --rate-drivers.
    plan = plan_from_parsed(parsed(rate=100, num_users=1, rate_drivers=4), MIX)
    assert plan is not None
    assert plan.share == 0.25
    assert plan.rate_at(0.0) == pytest.approx(25.0)


def test_per_operation_rates() -> None:
    plan = plan_from_parsed(parsed(rates="increment=2000,read=200"), MIX)
    assert plan is not None
    assert plan.rates == {"increment": 2000.0, "read": 200.0}
    with pytest.raises(ConfigError, match="unknown operation 'write' in --rates"):
        plan_from_parsed(parsed(rates="write=1"), MIX)


def test_a_ramp_climbs_linearly_and_stages_follow_each_other() -> None:
    plan = plan_from_parsed(parsed(rate=100, ramp="10s"), MIX)
    assert plan is not None
    assert [plan.rate_at(t) for t in (0, 5, 10, 60)] == [0.0, 50.0, 100.0, 100.0]
    assert plan.expected(0, 10) == pytest.approx(500.0)
    assert plan.ramp_s == 10
    staged = ArrivalPlan({"increment": 1.0}, stages=parse_stages("10s:100,10s:300"))
    assert staged.stages == (Stage(10, 100), Stage(10, 300))
    assert [staged.rate_at(t) for t in (5, 10, 15, 20, 30)] == [50, 100, 200, 300, 300]
    assert staged.expected(5, 15) == pytest.approx(1125.0)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"rate": 100, "arrivals": "bursty"}, "unknown --arrivals 'bursty'"),
        ({"rate": 100, "max_in_flight": 0}, "--max-in-flight must be >= 1 (got 0)"),
        ({"rate": 100, "ramp": "soon"}, "--ramp must be a time span like 30s or 2m"),
        ({"stages": "30s"}, "--stages entry '30s': expected DURATION:RATE"),
        ({"ramp": "10s"}, "--ramp 10s needs a rate"),
        ({"rate": 100, "ramp": "5s", "stages": "5s:10"}, "exclude each other"),
    ],
)
def test_bad_options_name_the_value(options: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError, match=message.replace("(", r"\(").replace(")", r"\)")):
        plan_from_parsed(parsed(**options), MIX)


def gaps(arrivals: str, n: int = 4000) -> list[float]:
    plan = ArrivalPlan({"increment": 100.0}, arrivals=arrivals)
    driver = ArrivalDriver(plan, LoadLedger(), object, rng=random.Random(7))
    return [driver._gap(1.0) for _ in range(n)]


def test_constant_arrivals_come_at_equal_gaps() -> None:
    assert set(gaps("constant", 100)) == {0.01}


def test_poisson_arrivals_have_exponential_gaps() -> None:
    result = stats.kstest(gaps("poisson"), "expon", args=(0, 0.01))
    assert result.pvalue > 0.001, result


class Worker:
    """A workload user instance stand-in whose operation waits for ``release``."""

    release = gevent.event.Event()

    def increment(self) -> None:
        self.release.wait()


def drive(plan: ArrivalPlan, seconds: float) -> tuple[ArrivalDriver, LoadLedger]:
    ledger = LoadLedger()
    driver = ArrivalDriver(plan, ledger, Worker, rng=random.Random(1))
    greenlet = gevent.spawn(driver.run)
    gevent.sleep(seconds)
    greenlet.kill()
    return driver, ledger


def test_an_arrival_that_finds_no_free_slot_is_dropped_not_queued() -> None:
    Worker.release.clear()  # every operation hangs: the five slots fill and stay full
    driver, ledger = drive(ArrivalPlan({"increment": 200.0}, max_in_flight=5), 0.5)
    offered, achieved, dropped, answered = ledger.operations["increment"]
    assert driver.created == 5
    assert achieved == answered == 0
    assert offered > 20
    assert dropped == offered - 5
    assert ledger.plan is not None and ledger.plan["max_in_flight"] == 5
    # Counted as the cap's, not as arrivals that came late: the summary names the cap.
    assert sum(second.capped for second in ledger.seconds.values()) == dropped


def test_operations_that_finish_free_their_slot_for_the_next_arrival() -> None:
    Worker.release.set()  # every operation returns at once
    driver, ledger = drive(ArrivalPlan({"increment": 200.0}, max_in_flight=5), 0.5)
    offered, achieved, dropped, answered = ledger.operations["increment"]
    assert dropped == 0
    assert offered > 20
    assert offered - achieved <= 5
    assert answered == achieved  # no client told of an answer: each counted when done
    assert driver.created <= 5


class RecordingClient(BaseDynamoClient):
    """A client whose transport answers at once; the request events are kept."""

    def __init__(self) -> None:
        events = Namespace(request=Namespace(fire=lambda **event: self.events.append(event)))
        super().__init__(Namespace(events=events))
        self.events: list[dict[str, Any]] = []

    def _send(self, operation: str, params: dict[str, Any]) -> Outcome:
        return Outcome({}, attempts=1, throttled_attempts=0)


def test_latency_counts_from_the_intended_start_with_the_service_time_beside_it() -> None:
    client = RecordingClient()
    scheduled = time.perf_counter() - 0.5  # meant to start half a second ago
    with intended_start(scheduled):
        client.call("GetItem", "t.get", table="t", pk="k")
        client.call("GetItem", "t.get", table="t", pk="k")
    client.call("GetItem", "t.get", table="t", pk="k")
    first, second, closed = client.events
    assert first["response_time"] >= 500.0
    assert first["context"]["service_time_ms"] < 500.0
    assert first["start_time"] <= time.time() - 0.5
    # Only the operation's first call was scheduled; the next follows it at once.
    assert second["response_time"] == second["context"]["service_time_ms"] < 500.0
    assert closed["response_time"] == closed["context"]["service_time_ms"] < 500.0


def test_the_model_retries_as_the_run_s_clients_do_by_default() -> None:
    import argparse

    from loadgen import runner
    from loadgen.client.base import RetryPolicy
    from loadgen.workload.options import add_common_arguments

    parser = argparse.ArgumentParser()
    add_common_arguments(parser)
    assert runner.RETRY_MODE == RetryPolicy().mode == parser.parse_args([]).retry_mode
