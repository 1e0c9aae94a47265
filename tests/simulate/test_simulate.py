"""What a simulation must show, on the shipped designs and a launch ramp, at AWS scale."""

from __future__ import annotations

import bisect
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml

from loadgen.design.loader import load_design
from loadgen.model.hashing import partition_hash
from loadgen.model.partitions import PartitionModel
from loadgen.simulate import Settings, build_results, parse_profile, simulate
from loadgen.simulate.command import design_path
from loadgen.verdict import analysis

ROOT = Path(__file__).resolve().parents[2]
COUNTER = str(ROOT / "examples" / "designs" / "counter.yaml")

LAUNCH = {
    "name": "launch",
    "tables": [
        {
            "TableName": "events",
            "BillingMode": "PAY_PER_REQUEST",
            "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}],
            "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
        }
    ],
    "generators": {"user": {"count": 100000, "distribution": "uniform"}},
    "entities": {"event": {"item": {"pk": "USER#{user}", "body": {"size": 200}}}},
    "access_patterns": [
        {"id": "put-event", "operation": "PutItem", "entity": "event", "rate": "1000/s"}
    ],
}


def write_design(tmp_path: Path, data: dict[str, Any], name: str = "design.yaml") -> str:
    path = tmp_path / name
    path.write_text(yaml.safe_dump(data))
    return str(path)


def provisioned_counter(tmp_path: Path, units: int) -> Any:
    """The sharded counter on a table provisioned with ``units`` read and write units."""
    data = yaml.safe_load(Path(COUNTER).read_text())
    data["tables"][0]["BillingMode"] = "PROVISIONED"
    data["tables"][0]["ProvisionedThroughput"] = {
        "ReadCapacityUnits": units,
        "WriteCapacityUnits": units,
    }
    return load_design(write_design(tmp_path, data), "sharded")


def share(row: Any) -> float:
    return row.throttled / row.offered if row.offered else 0.0


def test_a_new_on_demand_table_throttles_while_a_ramp_outruns_twice_its_previous_peak(
    tmp_path: Path,
) -> None:
    design = load_design(write_design(tmp_path, LAUNCH))
    profile = parse_profile(["0 -> 20k/s over 5m", "hold 30m"])
    result = simulate(design, profile)
    minutes = result.patterns["put-event"]
    # 4,000 write units/s at once: the ramp passes them 60 s in, and throttles from then.
    assert share(minutes[0]) == 0
    assert all(share(row) > 0.5 for row in minutes[2:30])
    (failure,) = result.first_failures()
    assert failure.minute == 1
    assert "traffic more than doubled within 30 minutes" in failure.reason
    capacity = [row.write_capacity for row in result.scopes[("events", None)]]
    assert capacity[29] == 4000  # the previous peak is the warm 4,000: not yet 30 minutes old
    assert capacity[-1] == pytest.approx(8000)  # then twice it: still under the 20,000 asked
    # Raised ahead of launch to 20,000, the same ramp is served.
    warm = simulate(design, profile, Settings(warm_write_units=20000))
    assert warm.first_failures() == []
    assert sum(row.throttled for row in warm.patterns["put-event"]) == 0


def test_the_single_counter_throttles_from_the_first_second_and_no_split_helps() -> None:
    from loadgen.simulate.demand import pattern_demands

    design = load_design(COUNTER, "single")
    (lane,) = next(
        d for d in pattern_demands(design, design.generators()) if d.id == "increment"
    ).lanes
    result = simulate(design, parse_profile(["1650/s for 1h"]), Settings(attempts=1))
    increment = result.patterns["increment"]
    table = result.scopes[("ph-counter", None)]
    # One key takes every increment: 1,500 writes/s on a partition that serves 1,000 write
    # units. Each new counter adds an attribute to GLOBAL_COUNTER, and DynamoDB charges an
    # update by the larger of the item before and after: an increment's units grow from 1
    # with the item, so the throttled share grows past the 1/3 of a 1-unit increment.
    assert lane.units_after(np.zeros(1)).tolist() == [1.0]
    grown = lane.growth[-1][1]
    assert grown >= 4  # GLOBAL_COUNTER past 3 KB within the replay's updates
    units_per_increment = [
        row.consumed_write / m.admitted for row, m in zip(table, increment, strict=True)
    ]
    assert 1 < units_per_increment[0] < grown  # it grows within the first minute
    assert units_per_increment[-1] == pytest.approx(grown, rel=0.01)
    assert 500 / 1500 < share(increment[0]) < share(increment[-1])
    assert share(increment[-1]) == pytest.approx(1 - 1000 / (1500 * grown), rel=0.01)
    heat = build_results(result)["heat"]
    write_lane = next(lane for lane in heat["lanes"] if lane["access"] == "write")
    assert sum(write_lane["throttled_attempts"][0]) > 0  # the first column already throttles
    partitions = [row.partitions for row in table]
    assert partitions[0] == partitions[-1]  # an hour of heat, and no split
    assert "GLOBAL_COUNTER" in result.first_failures()[0].reason


def test_the_sharded_counter_on_a_provisioned_table_burst_then_split(tmp_path: Path) -> None:
    design = provisioned_counter(tmp_path, 3000)
    # An hour at launch traffic, three times that for ten minutes from minute 20.
    result = simulate(design, parse_profile(["1650/s for 60m", "x3 for 10m at 20m"]))
    table = result.scopes[("ph-counter", None)]
    increment = result.patterns["increment"]
    assert all(share(row) == 0 for row in increment[:20])
    # Burst: 4,500 writes/s asked of 3,000 provisioned, and more than 3,000 admitted.
    assert table[21].consumed_write / 60 > 3000
    assert table[21].burst_write < table[19].burst_write
    # Four partitions of 1,000 each throttle the spike until they split for heat (8 minutes).
    assert table[21].partitions == 4 and share(increment[21]) > 0.3
    split = next(row.minute for row in table if row.partitions > 4)
    assert 27 <= split <= 29
    assert share(increment[split + 1]) == 0
    assert all(share(row) == 0 for row in increment[30:])
    assert table[-1].partitions == 8  # partitions never merge


@pytest.mark.parametrize("workload", ["counter", "sensor", "orders"])
def test_every_shipped_workload_simulates_from_its_design_file(workload: str) -> None:
    design = load_design(design_path(workload))
    result = simulate(design, parse_profile(["0 -> 500/s over 1m", "hold 1m"]))
    results = build_results(result)
    # The results file is one that report and gate read.
    assert {"run", "operations", "totals", "heat", "top_keys"} <= set(results)
    assert analysis.scopes(results)
    assert results["totals"]["requests"] > 0


def test_a_pattern_charges_what_its_requests_charge_key_by_key() -> None:
    from loadgen.simulate.demand import pattern_demands

    design = load_design(design_path("orders"), "hot-status")
    demands = {d.id: d for d in pattern_demands(design, design.generators())}
    lanes = {
        (lane.index, lane.kind, lane.template.text if lane.template else None): lane
        for lane in demands["create-order"].lanes
    }
    # A new order's header is written to both GSIs: STATUS#PLACED on the status index.
    placed = lanes[("status", "write", "STATUS#PLACED")]
    assert placed.units == 2.0  # a transaction's write of a small item
    assert lanes[(None, "write", "USER#u{user:07d}")].multiplicity == 2  # header and profile
    profile = demands["create-order"].profile(placed)
    assert profile.top == [("STATUS#PLACED", 1.0)]
    # A sharded read: every shard's key once per execution.
    counter = load_design(design_path("counter"), "sharded")
    read = next(d for d in pattern_demands(counter, counter.generators()) if d.id == "read")
    assert len(read.lanes) == 10
    assert sum(read.profile(lane).touches for lane in read.lanes) == pytest.approx(10)


def test_an_update_that_sets_an_index_key_moves_the_entry_as_the_emulator_charges_it() -> None:
    from loadgen.simulate.demand import pattern_demands

    design = load_design(design_path("orders"), "hot-status")
    demands = {d.id: d for d in pattern_demands(design, design.generators())}
    status = {
        lane.template.text: lane
        for lane in demands["update-status"].lanes
        if lane.index == "status" and lane.template is not None
    }
    # Out of PLACED: the old entry removed from its key, the new one written on the new key
    # (not the old entry rewritten where it was).
    assert set(status) == {"STATUS#PLACED", "STATUS#{status}"}
    assert all(lane.kind == "write" and lane.units == 1.0 for lane in status.values())
    # A run's recorder reads keys from the request: it sees the new entry, not the removal
    # from the stored item's old key, which is charged all the same.
    assert not status["STATUS#PLACED"].recorded and status["STATUS#{status}"].recorded
    placed = next(lane for lane in demands["create-order"].lanes if lane.index == "status")
    assert placed.recorded
    moved = demands["update-status"].profile(status["STATUS#{status}"])
    assert {key for key, _ in moved.top} == {
        "STATUS#PAID", "STATUS#SHIPPED", "STATUS#DELIVERED", "STATUS#CANCELLED"
    }  # fmt: skip


def test_a_name_written_two_ways_keeps_each_way_in_its_own_key() -> None:
    from loadgen.simulate.demand import pattern_demands

    # orders.yaml writes the user zero-padded in USER#u{user:07d} and bare in
    # ORDER#u{user}-{past}: a key is listed, hashed and named as the design writes it.
    design = load_design(design_path("orders"), "hot-status")
    demands = {d.id: d for d in pattern_demands(design, design.generators())}
    (lane,) = demands["get-order"].lanes
    assert lane.template is not None and lane.template.text == "ORDER#u{user}-{past}"
    top = [key for key, _ in demands["get-order"].profile(lane).top]
    assert all(key.startswith("ORDER#u") and not key.startswith("ORDER#u000") for key in top)
    (profile,) = [ln for ln in demands["get-profile"].lanes if ln.template is not None]
    assert profile.template is not None and profile.template.text == "USER#u{user:07d}"


def test_auto_scaling_follows_a_provisioned_table_up(tmp_path: Path) -> None:
    design = provisioned_counter(tmp_path, 1000)
    profile = parse_profile(["1650/s for 15m"])
    fixed = simulate(design, profile)
    scaled = simulate(design, profile, Settings(auto_scaling=True))
    table = scaled.scopes[("ph-counter", None)]
    assert table[0].write_capacity == 1000
    # 1,500 writes/s on 1,000 throttle; two minutes over the 70% target and the policy raises it.
    assert table[-1].write_capacity == pytest.approx(1500 / 0.7, rel=0.02)
    assert sum(r.throttled for r in scaled.patterns["increment"]) < sum(
        r.throttled for r in fixed.patterns["increment"]
    )


def test_a_key_at_its_ceiling_throttles_in_the_seconds_its_draws_pass_it(tmp_path: Path) -> None:
    from math import comb

    # The single counter adding 1 to one fixed attribute: `add: {"c{counter}": 1}` would grow
    # GLOBAL_COUNTER with each new counter, and its increments past 1 unit (`Lane.growth`),
    # where this test is of a key whose 1-unit draws pass its ceiling in some seconds.
    data = yaml.safe_load(Path(COUNTER).read_text())
    data["access_patterns"][0]["add"] = {"n": 1}
    design = load_design(write_design(tmp_path, data), "single")
    # 1,000 increments/s of 1,100 executions: GLOBAL_COUNTER exactly at its 1,000 write units.
    profile = parse_profile(["1100/s for 10m"])
    even = simulate(design, profile, Settings(attempts=1, fluctuate=False))
    drawn = simulate(design, profile, Settings(attempts=1))
    assert sum(row.throttled for row in even.patterns["increment"]) == 0
    # Each second's increments are binomial (1,100 arrivals, each one with 10/11): the
    # refused share is E[(X - 1000)+] / E[X].
    n, p = 1100, 1500 / 1650
    expected = sum(comb(n, x) * p**x * (1 - p) ** (n - x) * (x - 1000) for x in range(1001, n + 1))
    rows = drawn.patterns["increment"]
    share_drawn = sum(row.throttled for row in rows) / sum(row.offered for row in rows)
    assert share_drawn == pytest.approx(expected / (n * p), rel=0.2)
    # At a run's scale of 0.01 the counts are 100 times smaller and fluctuate 10 times more.
    small = simulate(design, profile, Settings(attempts=1, scale=0.01))
    rows = small.patterns["increment"]
    assert sum(r.throttled for r in rows) / sum(r.offered for r in rows) > 5 * share_drawn


def two_item_transaction(tmp_path: Path, hot_share: float | None, rate: float) -> Any:
    """A transaction putting an ``A#`` item and a ``B#`` item on a table of 16 partitions,
    at ``rate`` a second; each item's key ``hot`` takes ``hot_share`` of its draws (None:
    every draw)."""
    drawn = {"count": 1000, "distribution": "uniform", "named": {"hot": hot_share}}
    generators = {} if hot_share is None else {"a": drawn, "b": drawn}
    entities = {
        name: {"item": {"pk": f"{name.upper()}#" + ("hot" if hot_share is None else f"{{{name}}}")}}
        for name in ("a", "b")
    }
    data = {
        "name": "two items",
        "tables": [{"TableName": "t", "BillingMode": "PAY_PER_REQUEST",
                    "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}],
                    "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
                    "WarmThroughput": {"WriteUnitsPerSecond": 12000}}],
        "generators": generators,
        "entities": entities,
        "access_patterns": [{"id": "both", "operation": "TransactWriteItems", "rate": rate,
                             "actions": [{"operation": "Put", "entity": "a"},
                                         {"operation": "Put", "entity": "b"}]}],
    }  # fmt: skip
    design = load_design(write_design(tmp_path, data))
    model = PartitionModel()
    model.create_table(design.schemas["t"])
    starts = model.partition_starts("t")
    on = {bisect.bisect_right(starts, partition_hash(k)) - 1 for k in ("A#hot", "B#hot")}
    assert (len(starts), len(on)) == (16, 2)  # the two hot items on partitions of their own
    return design


def refused_share(design: Any, rate: float) -> float:
    result = simulate(
        design, parse_profile([f"{rate}/s for 1m"]), Settings(attempts=1, fluctuate=False)
    )
    rows = result.patterns["both"]
    return sum(row.throttled for row in rows) / sum(row.offered for row in rows)


def test_a_transaction_whose_items_each_take_one_hot_partition_is_refused_as_one(
    tmp_path: Path,
) -> None:
    # Every execution puts both hot items: each partition is asked 1,250 of its 1,000 write
    # units (two a transactional put) and refuses the last fifth of the second, the same
    # executions on both: a fifth refused, not one minus four fifths squared.
    design = two_item_transaction(tmp_path, None, 625)
    assert refused_share(design, 625) == pytest.approx(0.2, abs=1e-9)


def test_a_transaction_is_refused_where_any_of_its_items_partitions_refuses(
    tmp_path: Path,
) -> None:
    # Each item's hot key takes 0.8 of its draws: its partition is asked 1,248 units, and a
    # sixteenth of both items' other draws (19.5 each), 1,287 of 1,000; the rest 39 each.
    # An execution is refused in the last 0.223 of the second unless neither item fell on a
    # hot partition (0.175 each: 0.2 less the other's sixteenth), where the most refused
    # item alone (0.8125 of its draws there) would say about 0.18.
    design = two_item_transaction(tmp_path, 0.8, 780)
    refused = 1.0 - 1000 / 1287
    assert refused_share(design, 780) == pytest.approx(refused * (1.0 - 0.175**2), rel=0.01)


def test_retries_come_back_as_the_standard_mode_waits() -> None:
    from loadgen.simulate.retries import landing

    # Throttles in the last half of a second, retried 0-1 s later: a quarter come back within
    # the second (throttled again), three quarters the next second.
    same, lands, retries = landing(0.5, 0, 3)
    assert same[1] == pytest.approx(0.25, abs=0.01)
    assert lands[1, 1] == pytest.approx(0.75, abs=0.01)
    # A whole second refused: half back within it, and of those, waiting 0-2 s more, a sixth
    # within it again (P(u + d1 + d2 < 1) = 1/12), out of attempts.
    same, lands, retries = landing(1.0, 0, 3)
    assert same[1] == pytest.approx(0.5, abs=0.01)
    assert same[2] == pytest.approx(1 / 12, abs=0.01)
    assert lands.sum() + same[2] == pytest.approx(1.0)
    assert retries == pytest.approx(1 + same[1])
    assert lands[3].sum() == 0 and lands[2, 2] > 0  # the second retry may come 2 s on


def test_an_update_that_adds_drawn_attributes_grows_its_item_and_its_charge() -> None:
    from loadgen.simulate.demand import pattern_demands

    design = load_design(COUNTER, "single")
    demands = {d.id: d for d in pattern_demands(design, design.generators())}
    (lane,) = demands["increment"].lanes
    # GLOBAL_COUNTER gains a c<k> attribute per new counter: past 1 KB an update costs 2 units
    # (the emulator charges the larger of the item before and after).
    assert lane.units_after(np.asarray([0.0, 100.0, 1000.0, 4000.0])).tolist() == pytest.approx(
        [1.0, 1.0, 2.0, 4.0], abs=0.1
    )
    sharded = load_design(COUNTER, "sharded")
    increment = next(
        d for d in pattern_demands(sharded, sharded.generators()) if d.id == "increment"
    )
    assert all(not lane.growth for lane in increment.lanes)  # ADD n: the item keeps its size


def test_a_growing_item_admits_fewer_updates_as_a_run_at_its_scale_grows_it() -> None:
    design = load_design(COUNTER, "single")
    result = simulate(design, parse_profile(["1650/s for 60s"]), Settings(scale=0.01, attempts=1))
    (minute,) = result.patterns["increment"]
    # 10 units/s at scale 0.01 over 60 s: 600 one-unit updates, but the run's ~500th update
    # takes the item past 1 KB (a real run: 512 admitted, 606 units).
    assert minute.admitted * 0.01 == pytest.approx(510, rel=0.05)
    # The results file charges the grown units too: the operation's units are the table's,
    # the heat's write units outgrow its requests, and the top key by units counts them.
    results = build_results(result)
    (operation,) = [o for o in results["operations"] if o["name"] == "increment"]
    consumed = sum(row.consumed_write for row in result.scopes[("ph-counter", None)])
    assert operation["units"]["ph-counter"]["write"] == pytest.approx(consumed)
    assert consumed > minute.admitted * 1.1
    heat = {lane["access"]: lane for lane in results["heat"]["lanes"]}
    requests, units = (sum(map(sum, heat["write"][field])) for field in ("requests", "units"))
    assert 1.1 < units / requests < 2
    by_units = next(t for t in results["top_keys"] if t["by"] == "units")
    (hottest,) = by_units["keys"]
    assert hottest["key"] == "GLOBAL_COUNTER" and type(hottest["count"]) is float
    assert hottest["count"] == pytest.approx(units + sum(map(sum, heat["read"]["units"])))


@pytest.mark.parametrize("scale", [1.0, 0.03])
def test_one_count_is_rounded_as_an_array_of_one_is(scale: float) -> None:
    # The engine rounds a single count (a second's arrivals, a lane's executions coming back
    # elsewhere) without arrays: the same value and the same draw as the array rounding.
    from loadgen.simulate.engine import _Draws

    alone, in_array = _Draws(Settings(seed=7, scale=scale)), _Draws(Settings(seed=7, scale=scale))
    for count in [0.0, 0.4, 1.0, 2.5, 17.25, 1234.5678, 1e6 + 0.3]:
        (expected,) = in_array.executions(np.asarray([count]))
        assert alone.execution(count) == expected
    assert alone.random is not None and in_array.random is not None
    assert alone.random.random() == in_array.random.random()  # each drew as many


def test_a_simulation_without_its_heat_matrix_gives_every_other_answer_alike() -> None:
    # check asks for no heat matrix (Settings.heat=False): what it reads must not move.
    design = load_design(design_path("orders"), "hot-status")
    profile = parse_profile(["750/s for 2m"])
    full = simulate(design, profile, Settings())
    bare = simulate(design, profile, Settings(heat=False))
    assert bare.heat["lanes"] == [] and full.heat["lanes"]
    assert bare.patterns == full.patterns
    assert bare.reasons == full.reasons and bare.causes == full.causes
    assert bare.limits == full.limits and bare.throttles == full.throttles
    assert bare.final == full.final and bare.top_keys == full.top_keys
    assert bare.requests == full.requests and bare.grown_units == full.grown_units


@pytest.mark.parametrize("spec", ["uniform", "zipf:0.9", "latest:1.1", "hotspot:0.2:0.8"])
def test_key_spaces_alike_but_for_their_seed_list_alike(spec: str) -> None:
    # Lanes share one listing of key spaces that differ only by seed (Known.values_of): their
    # seed moves their draws, not the chance of each value.
    from loadgen.design.generators import KeySpace
    from loadgen.simulate.demand import Known, _values

    one, other = (
        KeySpace(50_000, spec, seed=seed, scramble=False, named={"vip": 0.1}) for seed in (1, 2)
    )
    first, second = _values(one, False), _values(other, False)
    assert first is not None and second is not None
    assert first[0] == second[0] and first[2] == second[2]
    assert first[1].tolist() == second[1].tolist()
    known = Known()
    assert known.values_of(one, False) is known.values_of(other, False)
    # Scrambled, each its own order: listed apart (uniform has no order to scramble).
    scrambled = KeySpace(50_000, spec, seed=1, scramble=True, named={"vip": 0.1})
    if scrambled.distribution.scramble:
        assert known.values_of(scrambled, False) is not known.values_of(one, False)


def test_a_key_read_eventually_is_said_to_be_served_what_check_says(tmp_path: Path) -> None:
    # Every read of a GSI is eventually consistent: its partition serves 4,500 read units/s,
    # the figure check states, not the strong 3,000.
    from loadgen.simulate.launch import check, launch_profile

    chat = Path(__file__).resolve().parents[2] / "examples" / "designs" / "chat.yaml"
    design = load_design(str(chat), "status-index")
    result = simulate(design, launch_profile(design, 60), Settings(seed=1, heat=False))
    said = result.reasons[("online-now", 0)]
    assert "one key, STATUS#online, asks" in said
    assert said.endswith("its partition serves 4,500 and no split helps one key")
    report = check(design)
    limit = next(lim for lim in report.limits if lim.key == "STATUS#online" and lim.kind == "read")
    assert f"of {limit.serves:,.0f}" in limit.words()
    # Its key list holds the key to the same figure: over at 4,500 and more, not at 3,000.
    load = next(load for load in report.keys if load.key == "STATUS#online")
    assert load.read_ceiling == limit.serves == 4500
    assert replace(load, read=4000.0).over is None
    assert replace(load, read=4500.0).over == "read"
    # The table's: read eventually too (get-profile, user-rooms); read strongly by one
    # pattern, 3,000, and the limits say the same.
    table = next(load for load in report.keys if load.scope == "chat")
    assert table.read_ceiling == 4500
    data = yaml.safe_load(chat.read_text())
    data["access_patterns"][0]["consistent"] = True
    assert data["access_patterns"][0]["id"] == "get-profile"
    strong = check(load_design(write_design(tmp_path, data), "status-index"))
    table = next(load for load in strong.keys if load.scope == "chat")
    assert table.read_ceiling == 3000
    (ceiling,) = [
        lim for lim in strong.limits
        if lim.index is None and lim.kind == "read" and lim.cause == "partition"
    ]  # fmt: skip
    assert ceiling.serves == 3000


def test_a_query_over_every_shard_is_judged_by_its_executions_and_its_shards_share_keys() -> None:
    from loadgen.verdict.patterns import pattern_verdicts

    # gsi-sharding salted: count-online queries the ten shards, ten requests an execution.
    design = load_design(str(ROOT / "examples" / "designs" / "gsi-sharding.yaml"), "salted")
    results = build_results(simulate(design, parse_profile(["2002/s for 1m"])))
    count = next(p for p in results["design"]["patterns"] if p["id"] == "count-online")
    assert count["calls"] == 10
    row = next(r for r in results["operations"] if r["name"] == "count-online")
    verdict = next(v for v in pattern_verdicts(results) if v.id == "count-online")
    # The row counts requests, the verdict executions: about what was asked, not ten times.
    assert row["requests_per_s"] == pytest.approx(10 * verdict.rate_delivered, rel=1e-3)
    assert verdict.delivered_share == pytest.approx(1.0, abs=0.3)
    # Its hottest key is one shard's, a tenth of its touches (as a run's recorder counts it).
    assert row["hot_key"]["share"] == pytest.approx(0.1)
    assert row["scope_keys"]["presence/online"]["share"] == pytest.approx(0.1)
