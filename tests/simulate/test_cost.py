"""What a simulated profile costs, per hour and in total: on demand from the units the model
admitted, provisioned with auto scaling from the capacity it set, minute by minute."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from loadgen.design.loader import load_design
from loadgen.pricing import load_prices
from loadgen.simulate import Settings, constant, simulate
from loadgen.simulate.cost import cost_lines, needs_replay, profile_cost, provisioned_replay

ROOT = Path(__file__).resolve().parents[2]
PRICES = load_prices()
EXPECTED = Settings(fluctuate=False)
"""Each second's counts at their expectation: figures exact to compare."""


@pytest.fixture(scope="module")
def sharded_counter() -> tuple[object, object]:
    """The counter's sharded design at its launch rate (1,500 increments of 1 write unit and
    150 reads of ten half-units a second) for three minutes, and its provisioned replay."""
    design = load_design(str(ROOT / "examples/designs/counter.yaml"), "sharded")
    result = simulate(design, constant(1650, 180), EXPECTED)
    assert needs_replay(result)  # on demand: the provisioned figure needs a second run
    twin = simulate(design, constant(1650, 180), provisioned_replay(result))
    return result, twin


def test_on_demand_is_the_units_admitted_at_the_price_per_million(sharded_counter: tuple) -> None:
    result, twin = sharded_counter
    section = profile_cost(result, twin, PRICES)
    (hour,) = section["hours"]
    assert hour["minutes"] == 3
    # 1,500 write and 750 read units a second for 180 s: 270,000 write request units at
    # $0.625 a million and 135,000 read request units at $0.125.
    assert hour["on_demand"] == pytest.approx(0.16875 + 0.016875, abs=1e-9)
    assert section["total"]["on_demand"] == hour["on_demand"]
    assert hour["on_demand_throttled_share"] == 0.0
    assert section["total"]["storage"] == 0.0  # the counter keeps no starting data


def test_provisioned_is_the_capacity_auto_scaling_keeps_a_minute_at_a_time(
    sharded_counter: tuple,
) -> None:
    result, twin = sharded_counter
    settings = provisioned_replay(result)
    # From the capacity that carries the first minute at 70%: 1,500 / 0.7 and 750 / 0.7.
    assert settings.provision == (("ph-counter", None, 1072.0, 2143.0),)
    assert settings.auto_scaling
    section = profile_cost(result, twin, PRICES)
    # A steady 70% never scales out (it must pass the target) nor in (under 50%): three minutes
    # of 2,143 WCU at $0.00065 and 1,072 RCU at $0.00013 an hour.
    expected = 3 / 60 * (2143 * 0.00065 + 1072 * 0.00013)
    assert section["total"]["provisioned"] == pytest.approx(expected, abs=1e-9)
    assert section["provisioned"]["replayed"]
    assert section["provisioned"]["throttled_share"] == 0.0
    lines = cost_lines(section)
    assert lines[0].startswith("Cost of the profile (us-east-1, AWS Price List 2026-08-15; USD;")
    assert lines[2].split() == ["0", "(3m)", "$0.1856", "0.0%", "$0.0766", "0.0%", "$0.00"]
    assert lines[3].split()[0] == "total"
    assert "ph-counter 1,072/2,143 r/w" in " ".join(" ".join(lines).split())


def test_a_provisioned_design_auto_scaled_by_the_simulation_prices_its_own_capacity() -> None:
    design = load_design(str(ROOT / "examples/designs/orders.yaml"), "sharded-status")
    result = simulate(design, constant(100, 60), replace(EXPECTED, auto_scaling=True))
    assert not needs_replay(result)
    section = profile_cost(result, None, load_prices(region="eu-west-1"))
    # Each table and GSI provisioned at 26,000 units each way, for a minute, at eu-west-1's
    # $0.000735 per WCU-hour and $0.000147 per RCU-hour (no use drops it in a minute).
    expected = 3 * 26000 * (0.000735 + 0.000147) / 60
    assert section["total"]["provisioned"] == pytest.approx(expected, rel=1e-9)
    assert not section["provisioned"]["replayed"]
    assert section["stamp"] == "eu-west-1, AWS Price List 2026-08-15"
