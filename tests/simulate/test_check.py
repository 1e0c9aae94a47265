"""``loadgen check`` asks the partition model, and ``loadgen simulate`` at the file's launch
rates gives the same answer: the same failing patterns, failed by the same limit.

Per shipped design (counter, sensor, orders, and capacity.yaml, whose only limit is its new
table's on-demand capacity): ``check FILE --out`` run as a user runs it, and ``simulate FILE
--design V --out`` of each variant (no rate: the file's launch rates), whose results file the
per-pattern verdict judges as a run's (`loadgen.verdict.patterns`) and whose rows name the
limit that throttled each pattern (``throttles``).
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml

from loadgen.cli import main
from loadgen.design.loader import load_design
from loadgen.model.hashing import HASH_SPACE, partition_hash
from loadgen.simulate import LAUNCH_S, check
from loadgen.simulate.demand import pattern_demands, pattern_units
from loadgen.simulate.engine import _sampler, _Scope
from loadgen.verdict.patterns import pattern_verdicts
from tests.test_run import loadgen

ROOT = Path(__file__).resolve().parents[2]
DESIGNS = ROOT / "examples" / "designs"

Answer = dict[str, str]
"""Failing pattern to the cause of most of its throttles."""

# What the model says of each shipped variant at launch, and the old arithmetic did not all
# say: sensor's per-sensor partitions hold several sensors each (no one key over 1,000, a
# partition over it); the orders' status index pushes back on both writes that touch
# STATUS#PLACED; capacity.yaml's new table is short of capacity, not of a partition.
EXPECTED: dict[tuple[str, str], Answer] = {
    ("counter", "single"): {"increment": "partition"},
    ("counter", "sharded"): {},
    ("sensor", "by-time"): {"put-reading": "partition", "update-aggregate": "partition"},
    ("sensor", "per-sensor"): {"put-reading": "partition", "update-aggregate": "partition"},
    ("orders", "hot-status"): {"create-order": "buffer", "update-status": "buffer"},
    ("orders", "sharded-status"): {},
    ("capacity", "new-table"): {"place-order": "capacity"},
    ("capacity", "warmed"): {},
}


@pytest.fixture(scope="module")
def checked(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[int, dict[str, Any]]]:
    """Per file: ``loadgen check FILE --out`` (every variant), its exit code and its JSON."""
    found = {}
    for name in sorted({name for name, _ in EXPECTED}):
        out = tmp_path_factory.mktemp("check") / f"{name}.json"
        done = loadgen("check", str(DESIGNS / f"{name}.yaml"), "--out", str(out), timeout=300)
        assert done.returncode in (0, 1), done.stderr
        found[name] = (done.returncode, json.loads(out.read_text()))
    return found


def check_answer(section: dict[str, Any]) -> Answer:
    return {p["id"]: p["cause"] for p in section["patterns"] if p["verdict"] == "FAIL"}


def simulate_answer(results: dict[str, Any]) -> Answer:
    """Failing patterns as the per-pattern verdict judges the results, each with the cause
    of most of its throttled attempts (its row's ``throttles``)."""
    rows = {row["name"]: row for row in results["operations"]}
    answer = {}
    for verdict in pattern_verdicts(results):
        if verdict.status == "FAIL":
            throttles = rows[verdict.id]["throttles"]
            if verdict.behind and not throttles:
                answer[verdict.id] = "buffer"  # its table's index falls behind
                continue
            answer[verdict.id] = max(throttles, key=lambda t: t["attempts"])["cause"]
    return answer


@pytest.mark.parametrize(("name", "variant"), sorted(EXPECTED))
def test_check_and_simulate_name_the_same_failing_patterns_and_causes(
    name: str,
    variant: str,
    checked: dict[str, tuple[int, dict[str, Any]]],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, report = checked[name]
    (section,) = [d for d in report["designs"] if d["design"]["name"] == variant]
    expected = EXPECTED[(name, variant)]
    assert check_answer(section) == expected
    assert section["verdict"] == ("FAIL" if expected else "PASS")
    out = tmp_path / "simulated.json"
    done = main(["simulate", str(DESIGNS / f"{name}.yaml"), "--design", variant,
                 "--every", "10m", "--out", str(out)])  # fmt: skip
    printed = capsys.readouterr().out
    assert done == (1 if expected else 0)
    assert f"Simulated {LAUNCH_S / 60:,.1f} min" in printed
    assert "the file's launch rates" in printed
    results = json.loads(out.read_text())
    assert simulate_answer(results) == expected
    # The results carry the design's patterns at their launch rates, and their verdicts.
    design = load_design(str(DESIGNS / f"{name}.yaml"), variant)
    assert {p["id"]: p["rate"] for p in results["design"]["patterns"]} == pytest.approx(
        design.rates
    )
    assert {v["id"] for v in results["verdicts"] if v["status"] == "FAIL"} == set(expected)
    assert f"Access patterns: {len(design.patterns) - len(expected)} of" in printed
    if expected:
        assert code == 1  # a file with a failing variant exits 1


def test_check_names_the_limit_and_the_side_that_fails(
    checked: dict[str, tuple[int, dict[str, Any]]],
) -> None:
    def pattern(name: str, variant: str, pattern_id: str) -> dict[str, Any]:
        (section,) = [d for d in checked[name][1]["designs"] if d["design"]["name"] == variant]
        return next(p for p in section["patterns"] if p["id"] == pattern_id)

    assert pattern("counter", "single", "increment")["reason"].startswith(
        "a partition's ceiling: GLOBAL_COUNTER at 1,500 write units/s of 1,000"
    )
    # The read shares GLOBAL_COUNTER, hot on writes only: reads have their own ceiling.
    assert pattern("counter", "single", "read")["verdict"] == "PASS"
    assert pattern("capacity", "new-table", "place-order")["reason"].startswith(
        "table Tickets's on-demand capacity, 4,800 write units/s asked of 4,000"
    )
    create = pattern("orders", "hot-status", "create-order")
    assert create["reason"].startswith(
        "back-pressure from index ph-orders/status: index ph-orders/status's write buffer, "
        "behind a partition's ceiling: STATUS#PLACED at 1,250 write units/s of 1,000: full "
        "after about 12 min at launch"
    )
    # Full after the ten minutes checked: its share is said to be of them, not of the launch.
    assert create["reason"].endswith("(0% of attempts throttled in the 10 minutes checked)")
    assert pattern("counter", "single", "increment")["reason"].endswith("of attempts throttled)")
    assert create["throttles"][0]["reason"] == "IndexWriteKeyRangeThroughputExceeded"
    # Per operation, on the table and on each index: the header put (over 1 KB: 2 units)
    # and the line put twice each (a transaction), the profile's update twice; an index entry
    # per put at the standard rate (the transactional rate is the table's: docs/cost.md).
    assert create["units_per_operation"] == {
        "ph-orders": {"read": 0.0, "write": 8.0},
        "ph-orders/inverted": {"read": 0.0, "write": 3.0},
        "ph-orders/status": {"read": 0.0, "write": 2.0},
    }
    assert checked["counter"][0] == checked["orders"][0] == checked["capacity"][0] == 1


def test_check_out_is_what_it_printed_per_pattern_key_and_limit(
    checked: dict[str, tuple[int, dict[str, Any]]],
) -> None:
    (new_table, warmed) = checked["capacity"][1]["designs"]
    # The model's clients retry as the SDK's standard mode does (a run's --retry-mode).
    assert (new_table["seconds"], new_table["retry_mode"]) == (LAUNCH_S, "standard")
    limits = {(lim["scope"], lim["kind"], lim["cause"]): lim for lim in new_table["limits"]}
    capacity = limits[("Tickets", "write", "capacity")]
    assert capacity["verdict"] == "FAIL"
    assert capacity["reason"] == "TableWriteKeyRangeThroughputExceeded"
    assert (capacity["asked_units_per_s"], capacity["serves_units_per_s"]) == (4800.0, 4000.0)
    assert capacity["patterns"] == ["place-order"]
    # Its keys are spread: no partition's ceiling refuses.
    assert limits[("Tickets", "write", "partition")]["verdict"] == "PASS"
    assert limits[("Tickets", "write", "partition")]["refused_share"] == 0
    warm = {(lim["scope"], lim["kind"], lim["cause"]): lim for lim in warmed["limits"]}
    assert warm[("Tickets", "write", "capacity")]["serves_units_per_s"] == 6000.0
    assert warm[("Tickets", "write", "capacity")]["verdict"] == "PASS"
    key = next(k for k in new_table["keys"] if k["key"] == "EVENT#0")
    assert key["read_units_per_s"] == pytest.approx(0.5)  # 2,000/s over 2,000 events, half a unit
    assert key["read_patterns"] == ["view-event"]
    assert new_table["partitions"]["Tickets"]["at_start"] == 8  # 12,000 read + 4,000 write
    assert "cost" in new_table


def test_the_item_an_update_finds_was_written_before_it() -> None:
    # A heartbeat sets last_seen, the index's sort key: the stored entry moves (a removal and
    # a put, 2 index write units), on the one key Online.
    design = load_design(str(DESIGNS / "gsi-sharding.yaml"), "unsalted")
    (heartbeat, _) = pattern_demands(design, design.generators())
    index_lanes = [lane for lane in heartbeat.lanes if lane.index == "online"]
    assert [(lane.template.text, lane.units * lane.multiplicity) for lane in index_lanes] == [  # type: ignore[union-attr]
        ("Online", 2.0)
    ]
    report = check(design)
    assert report.patterns[0].reason.startswith(
        "back-pressure from index presence/online: index presence/online's write buffer, "
        "behind a partition's ceiling: Online"
    )


@pytest.mark.parametrize(
    ("change", "cause", "words"),
    [
        (
            {"BillingMode": "PROVISIONED",
             "ProvisionedThroughput": {"ReadCapacityUnits": 1000, "WriteCapacityUnits": 1200}},
            "provisioned",
            "table ph-counter's provisioned capacity, 1,500 write units/s asked of 1,200",
        ),
        (
            {"OnDemandThroughput": {"MaxWriteRequestUnits": 1200}},
            "maximum",
            "table ph-counter's on-demand maximum (OnDemandThroughput), 1,500 write units/s "
            "asked of 1,200",
        ),
    ],
)  # fmt: skip
def test_check_names_a_tables_own_limit(
    change: dict[str, Any], cause: str, words: str, tmp_path: Path
) -> None:
    # The sharded counter's 1,500 increments/s of one write unit, spread over 10,000 keys,
    # on a table held to 1,200 write units/s.
    data = yaml.safe_load((DESIGNS / "counter.yaml").read_text())
    data["tables"][0].update(change)
    path = tmp_path / "counter.yaml"
    path.write_text(yaml.safe_dump(data))
    increment, read = check(load_design(str(path), "sharded")).patterns
    assert (increment.verdict, increment.cause, read.verdict) == ("FAIL", cause, "PASS")
    assert increment.reason.startswith(words)


def test_check_warns_of_many_transactions_on_one_item(tmp_path: Path) -> None:
    # Orders of one event: every purchase decrements one inventory item in a transaction.
    design = {
        "name": "on-sale",
        "tables": [
            {"TableName": "Tickets", "BillingMode": "PAY_PER_REQUEST",
             "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}],
             "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}]}
        ],
        "generators": {"order": {"id": True}, "event": {"count": 10, "distribution": "uniform"}},
        "entities": {
            "inventory": {"item": {"pk": "EVENT#{event}", "remaining": 1000},
                          "populate": {"event": "all"}},
            "order": {"item": {"pk": "ORDER#{order}", "event": "EVENT#{event}"}},
        },
        "access_patterns": [
            {"id": "buy", "operation": "TransactWriteItems", "rate": "200/s", "actions": [
                {"operation": "Update", "key": {"pk": "EVENT#{event}"},
                 "add": {"remaining": -1}, "condition": "attribute_exists(pk)"},
                {"operation": "Put", "entity": "order"},
            ]},
        ],
    }  # fmt: skip
    path = tmp_path / "on-sale.yaml"
    path.write_text(yaml.safe_dump(design))
    report = check(load_design(str(path)))
    # 200 purchases/s over 10 events: 20 transactions a second on each inventory item.
    (note,) = report.notes
    assert note.startswith("buy puts 20 transactions/s on the item EVENT#")
    assert "TransactionConflict" in note
    assert f"  note: {note}" in report.lines()


def test_a_query_over_every_shard_reads_each_shards_page(tmp_path: Path) -> None:
    # The lobby's games sharded by map: a Query over every shard (each) reads a page from
    # each shard, as a run's reads do. Each call found the entries of the shard the
    # execution drew and none of the others' (0.5 units each, an empty page).
    data = yaml.safe_load((DESIGNS / "game-lobby.yaml").read_text())
    data["entities"]["game"]["item"]["detail"] = {"size": 250}
    data["tables"][0]["GlobalSecondaryIndexes"][0]["Projection"] = {"ProjectionType": "ALL"}
    data["generators"]["map_shard"] = {"shard": 3}
    (query,) = [p for p in data["access_patterns"] if p["id"] == "find-games"]
    attribute = next(iter(query["key"]))
    sharded = f"{query['key'][attribute]}#{{map_shard}}"
    data["entities"]["game"]["item"][attribute] = sharded
    query.update({"key": {attribute: sharded}, "each": "map_shard", "limit": 20})
    path = tmp_path / "lobby-sharded.yaml"
    path.write_text(yaml.safe_dump(data))
    design = load_design(str(path))
    (demand,) = [d for d in pattern_demands(design, design.generators()) if d.id == "find-games"]
    assert [lane.units for lane in demand.lanes if lane.kind == "read"] == [1.0, 1.0, 1.0]


def test_a_query_is_priced_by_the_page_it_returns(tmp_path: Path) -> None:
    # The game lobby with its index projecting whole games of about 330 B: a map has hundreds
    # of open games, and a Query with a Limit of 20 reads 20 entries, 6.6 KB: two 4 KB blocks,
    # halved for eventually consistent reads; with a Limit of 10, one block.
    data = yaml.safe_load((DESIGNS / "game-lobby.yaml").read_text())
    data["entities"]["game"]["item"]["detail"] = {"size": 250}
    data["tables"][0]["GlobalSecondaryIndexes"][0]["Projection"] = {"ProjectionType": "ALL"}
    found = {}
    for limit in (20, 10):
        (query,) = [p for p in data["access_patterns"] if p["id"] == "find-games"]
        query["limit"] = limit
        path = tmp_path / f"lobby-{limit}.yaml"
        path.write_text(yaml.safe_dump(data))
        units = pattern_units(load_design(str(path)))
        found[limit] = units["find-games"]["battle-royale/OpenGamesIndex"]["read"]
    assert found == {20: 1.0, 10: 0.5}


def test_contention_is_counted_per_item_a_transaction_writes() -> None:
    # A quarter of the game lobby's 2,400 joins/s update the featured game's item; each puts
    # a player's item under the same key too, which no other join writes: 600 on one item,
    # where its partition key takes 1,200 touches. No map's index entry is an item.
    report = check(load_design(str(DESIGNS / "game-lobby.yaml")))
    (found,) = report.contention
    assert (found.pattern, found.table, found.key, found.sort) == (
        "join-game", "battle-royale", "GAME#featured", "METADATA",
    )  # fmt: skip
    assert found.per_s == pytest.approx(600)
    assert report.to_dict()["contention"] == [found.to_dict()]


def test_a_hot_index_key_is_priced_by_its_own_page() -> None:
    """The delivery design's city Query on ByCity (Limit 25, restaurants of about 3 KB, read
    eventually consistent): london holds half of the 5,000 restaurants, so its page is 25
    entries, 75 KB, 9.5 read units; the smallest cities hold fewer than 25, and the lane's
    mean over every city is less. Check's key list and its partition limit ask london's own
    page of the model: 1,100 Queries/s, half of them london's, at 9.5 units."""
    design = load_design(str(Path(__file__).with_name("designs") / "delivery.yaml"))
    (demand,) = [d for d in pattern_demands(design, design.generators()) if d.id == "open-in-city"]
    (lane,) = demand.lanes
    assert lane.units_at("london") == 9.5
    assert lane.units < lane.units_at("london")  # a touch of a city not among the hottest
    profile = demand.profile(lane)
    hottest = dict(profile.top)
    assert hottest["london"] == 0.5
    assert demand.lane_units(lane) == pytest.approx(
        lane.units * (profile.touches - sum(hottest.values()))
        + sum(touches * lane.units_at(key) for key, touches in hottest.items())
    )
    report = check(design)
    (london,) = [k for k in report.keys if k.scope == "Delivery/ByCity" and k.key == "london"]
    assert london.read == pytest.approx(1100 * 0.5 * 9.5)
    (limit,) = [lim for lim in report.limits if lim.index == "ByCity" and lim.cause == "partition"]
    assert (limit.key, limit.key_units) == ("london", pytest.approx(london.read))


def test_a_hot_partition_splits_by_its_keys_own_units() -> None:
    """Where a hot partition of ByCity splits is chosen by the units its keys are asked (as the
    model samples a partition's traffic), london's at its own page: 32 points at even steps
    of the units, london's share of them its share of the lane's units, not of its touches.
    london's page is made four times the other cities' (its own is 9.5 units to their 8.8,
    too near to tell 32 points apart)."""
    design = load_design(str(Path(__file__).with_name("designs") / "delivery.yaml"))
    (demand,) = [d for d in pattern_demands(design, design.generators()) if d.id == "open-in-city"]
    (priced,) = demand.lanes
    profile = demand.profile(priced)
    lane = dataclasses.replace(priced, key_units={"london": 4 * priced.units})
    scope = _Scope("Delivery", "ByCity", buckets=64)
    scope.lanes = [(0, lane, profile)]
    points = _sampler(scope, np.array([1100.0]), [(0, lane)])(0, HASH_SPACE)
    london = sum(1 for at in points if at == partition_hash("london")) / len(points)
    touches = dict(profile.top)["london"]
    own = touches * lane.units_at("london") / lane.units_per_execution(profile)
    assert own > touches + 2 / len(points)  # its units weigh more than its touches do
    assert london == pytest.approx(own, abs=1 / len(points))
