"""Named values in a key population ("taylor takes 40%; the rest zipf over 2,000") and a
single fixed item: drawn, checked, simulated and written as starting data alike."""

from __future__ import annotations

import copy
import math
from pathlib import Path
from typing import Any

import pytest
import yaml
from scipy import stats

from loadgen.design import load_design, load_designs
from loadgen.design.generators import KeySpace, enumerate_values, hottest_share, hottest_values
from loadgen.design.starting import starting_plans
from loadgen.errors import ConfigError
from loadgen.simulate import check
from loadgen.simulate.demand import key_profile, pattern_demands

EVENTS: dict[str, Any] = {
    "tables": [
        {
            "TableName": "Tickets",
            "AttributeDefinitions": [
                {"AttributeName": "PK", "AttributeType": "S"},
                {"AttributeName": "SK", "AttributeType": "S"},
            ],
            "KeySchema": [
                {"AttributeName": "PK", "KeyType": "HASH"},
                {"AttributeName": "SK", "KeyType": "RANGE"},
            ],
        }
    ],
    "generators": {
        "event": {"count": 2000, "distribution": "zipf:0.99", "named": {"taylor": 0.4}}
    },
    "entities": {
        "event": {"item": {"PK": "EVENT#{event}", "SK": "DETAILS"}, "populate": {"event": "all"}},
        "site": {"item": {"PK": "SITE", "SK": "SETTINGS", "banner": {"size": 100}},
                 "populate": 1},
    },
    "access_patterns": [
        {"id": "page-view", "operation": "GetItem",
         "key": {"PK": "EVENT#{event}", "SK": "DETAILS"}, "rate": "5000/s"},
        {"id": "settings", "operation": "GetItem", "key": {"PK": "SITE", "SK": "SETTINGS"},
         "rate": "10/s"},
    ],
}  # fmt: skip


def _file(tmp_path: Path, data: dict[str, Any]) -> str:
    path = tmp_path / "events.yaml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    return str(path)


def test_a_named_value_takes_its_share_and_the_distribution_the_rest() -> None:
    space = KeySpace(50, "zipf:1.1", seed=7, scramble=True, named={"taylor": 0.4, "ed": 0.1})
    draws = [space.draw() for _ in range(40_000)]
    values = space.values() or []
    observed = [draws.count(v) for v in values]
    expected = [(space.probability(v) or 0.0) * len(draws) for v in values]
    assert math.fsum(space.probability(v) or 0.0 for v in values) == pytest.approx(1.0)
    result = stats.chisquare(observed, expected)
    assert result.pvalue > 0.001, result


def test_named_values_rank_among_the_distribution_by_their_shares() -> None:
    space = KeySpace(100, "zipf:0.99", seed=1, scramble=False, named={"big": 0.5, "small": 0.01})
    order = list(enumerate_values(space, 102))
    assert order[0] == "big" and len(order) == 102 == space.cardinality
    shares = [space.probability(v) or 0.0 for v in order]
    assert shares == sorted(shares, reverse=True)  # hottest first, "small" among the ranks
    assert 1 < order.index("small") < 100
    assert hottest_share(space, 1) == pytest.approx(0.5)


@pytest.mark.parametrize("spec", ["zipf:0.99", "latest:1.2", "hotspot:0.2:0.8", "uniform"])
@pytest.mark.parametrize("scramble", [False, True])
def test_the_hottest_values_come_with_the_share_the_key_space_gives_each(
    spec: str, scramble: bool
) -> None:
    space = KeySpace(300, spec, seed=3, scramble=scramble, named={"big": 0.3, "small": 0.001})
    values, shares = hottest_values(space, 250)
    assert values == list(enumerate_values(space, 250))
    assert shares == [space.probability(v) for v in values]  # the same floats, not near them


@pytest.mark.parametrize(
    ("named", "message"),
    [
        ({"taylor": 1.0}, "named.taylor: a share is more than 0 and less than 1"),
        ({"a": 0.6, "b": 0.5}, "named: the shares add up to 1.1"),
        ({"7": 0.2}, "named.7: '7' is one of the count's own values 0..1999"),
        ({}, "named: give at least one value and its share"),
    ],
)
def test_bad_named_values_are_one_line_naming_them(
    tmp_path: Path, named: dict[str, float], message: str
) -> None:
    data = copy.deepcopy(EVENTS)
    data["generators"]["event"]["named"] = named
    with pytest.raises(ConfigError, match=rf"events\.yaml: generators\.event\.{message}"):
        load_designs(_file(tmp_path, data))
    data["generators"]["event"] = {"choice": {"a": 1}, "named": {"b": 0.5}}
    with pytest.raises(ConfigError, match=r"generators\.event\.named: named values go with count"):
        load_designs(_file(tmp_path, data))


def test_a_bad_population_is_named_by_its_path_in_the_file(tmp_path: Path) -> None:
    # Not by the union branch the validator tried (".dict[str,union[...]].event.int").
    data = copy.deepcopy(EVENTS)
    data["entities"]["event"]["populate"] = {"event": "lots"}
    with pytest.raises(ConfigError) as raised:
        load_designs(_file(tmp_path, data))
    assert str(raised.value).endswith(
        "events.yaml: entities.event.populate.event: input should be a valid integer, "
        "unable to parse string as an integer (got 'lots')"
    )


def test_check_and_simulate_see_the_named_key_take_its_share(tmp_path: Path) -> None:
    design = load_design(_file(tmp_path, EVENTS))
    report = check(design)
    hottest = report.hottest(1)[0]
    assert (hottest.scope, hottest.key) == ("Tickets", "EVENT#taylor")
    page_view = next(p for p in report.patterns if p.id == "page-view")
    assert hottest.read / (page_view.rate * page_view.read_units) == pytest.approx(0.4)
    (demand, _) = pattern_demands(design, design.generators())
    (lane,) = demand.lanes
    profile = key_profile(lane, demand.generators, demand.each)
    assert profile.top[0][0] == "EVENT#taylor"
    assert profile.top[0][1] / profile.touches == pytest.approx(0.4)


def test_the_starting_data_holds_the_named_value_and_the_one_fixed_item(tmp_path: Path) -> None:
    design = load_design(_file(tmp_path, EVENTS))
    (plan,), notes = starting_plans(design, limit=100)  # capped: the hottest kept
    items = [plan.item(n) for n in range(plan.count)]
    keys = [item["PK"]["S"] for item in items]
    assert keys[0] == "EVENT#taylor" and keys.count("SITE") == 1
    assert plan.count == 100
    assert "event: 99 of 2,001 event values written" in notes[0]
    (site,) = [item for item in items if item["PK"]["S"] == "SITE"]
    assert len(site["banner"]["S"]) == 100


def test_an_iso_time_is_unique_per_draw_and_a_bucket_is_not() -> None:
    from loadgen.design.generators import RunClock, TimeValue

    stopped = RunClock(start=1_800_000_000.0)
    stopped.now = lambda: 1_800_000_000.25  # type: ignore[method-assign]  # one instant
    iso = TimeValue("iso", stopped)
    draws = [iso.draw() for _ in range(1000)]
    assert len(set(draws)) == 1000 and draws == sorted(draws)
    assert draws[0] == "2027-01-15T08:00:00.250000Z" and draws[1].endswith(".250001Z")
    assert len({TimeValue("epoch", stopped).draw() for _ in range(10)}) == 1
    assert len({TimeValue("minute", stopped).draw() for _ in range(10)}) == 1
