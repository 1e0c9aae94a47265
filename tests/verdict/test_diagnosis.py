"""The diagnosis: the target's reason decides what is named; the heat names the key."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from loadgen.design import load_design
from loadgen.model.hashing import bucket_of
from loadgen.refusals import CONTENTION_RATE
from loadgen.simulate import check
from loadgen.verdict import analysis
from loadgen.verdict.diagnosis import GUIDES, diagnose
from tests.results_factory import event, make_results, op_row, pattern, steady, with_design

GAME_LOBBY = Path(__file__).resolve().parents[2] / "examples" / "designs" / "game-lobby.yaml"


def kinds(results):
    return [(f.kind, f.scope, f.keys) for f in diagnose(results)]


# --- a partition's ceiling: the heat says which key -----------------------------------------


def test_a_key_refused_by_its_partition_gets_write_sharding() -> None:
    results = make_results(steady("t", ["GLOBAL"], per_second=60, throttled=1))
    (finding,) = diagnose(results)
    assert (finding.kind, finding.scope, finding.keys, finding.cause) == (
        "hot-key", "t", ("GLOBAL",), "partition",
    )  # fmt: skip
    assert "TableWriteKeyRangeThroughputExceeded" in finding.evidence
    assert "a partition's ceiling" in finding.evidence
    assert "GLOBAL took 100% of the touches of t where the throttles fell" in finding.evidence
    assert "600 write" in finding.evidence  # 60/s at scale 0.1
    assert "GLOBAL#<0..N-1>" in finding.remedy and "N = 2" in finding.remedy
    assert "throttled, so the demand was higher" in finding.remedy
    assert finding.guide == GUIDES["write-sharding"]


def test_shards_are_sized_on_the_launch_demand_the_design_declares() -> None:
    results = make_results(
        steady("t", ["GLOBAL"], per_second=60, throttled=1),
        [
            op_row("increment", "UpdateItem", 600, units={"t": {"read": 0, "write": 600}},
                   scope_keys={"t": {"key": "GLOBAL", "share": 1.0}})
        ],
    )  # fmt: skip
    with_design(results, [pattern("increment", "UpdateItem", 3000.0, table="t")])
    (finding,) = diagnose(results)
    # 3,000 increments/s of one unit each, all on GLOBAL: 6 shards under 500 units/s each.
    assert "The launch asks 3,000 write units/s of it" in finding.evidence
    assert "N = 6 keeps each shard under half" in finding.remedy
    assert "at the launch's demand" in finding.remedy
    assert finding.patterns == ("increment",)


def _throttled_under_check_s_figure(launch_rate: float) -> dict:
    """GLOBAL throttled in the run; the launch asks ``launch_rate`` write units/s of it, and
    check passes its one pattern."""
    results = make_results(
        steady("t", ["GLOBAL"], per_second=60, throttled=1),
        [
            op_row("increment", "UpdateItem", 600, units={"t": {"read": 0, "write": 600}},
                   scope_keys={"t": {"key": "GLOBAL", "share": 1.0}})
        ],
    )  # fmt: skip
    with_design(results, [pattern("increment", "UpdateItem", launch_rate, table="t")])
    results["design"]["check"] = {
        "patterns": [{"id": "increment", "rate": launch_rate, "throttled_share": 0.0,
                      "units_per_operation": {"t": {"read": 0.0, "write": 1.0}}}],
    }  # fmt: skip
    return results


def test_a_key_check_passes_is_not_sharded_for_a_run_s_bunched_seconds() -> None:
    # The launch asks 400 write units/s of GLOBAL, and check passes it: the run's throttles
    # met seconds that bunched above the ceiling, in a run whose target fell behind.
    results = _throttled_under_check_s_figure(400.0)
    results["load"] = {**(results.get("load") or {}), "delivered": False,
                       "answer_ms_grew": [80.0, 552.0]}  # fmt: skip
    (finding,) = diagnose(results)
    assert (finding.kind, finding.keys, finding.figure) == ("hot-key", ("GLOBAL",), None)
    assert "check passes every pattern on it at the launch's rates" in finding.evidence
    assert "the target fell behind (a first answer took 80 ms" in finding.evidence
    assert finding.remedy.startswith("Nothing is needed for the launch's demand")
    # Where check fails the pattern too, the key is sharded on the launch's demand.
    results["design"]["check"]["patterns"][0]["throttled_share"] = 0.3
    (finding,) = diagnose(results)
    assert "N = 1" in finding.remedy or "N = 2" in finding.remedy
    assert finding.figure is not None


def test_a_heat_warning_is_about_the_launch_s_demand_where_check_has_it() -> None:
    # 600 write units/s measured on GLOBAL without a throttle: a warning on the run's heat,
    # but none where check's figure for the launch is below half a partition.
    results = make_results(
        steady("t", ["GLOBAL"], per_second=60),
        [
            op_row("increment", "UpdateItem", 600, units={"t": {"read": 0, "write": 600}},
                   scope_keys={"t": {"key": "GLOBAL", "share": 1.0}})
        ],
    )  # fmt: skip
    assert [f.keys for f in diagnose(results)] == [("GLOBAL",)]
    with_design(results, [pattern("increment", "UpdateItem", 300.0, table="t")])
    assert [f for f in diagnose(results) if f.keys == ("GLOBAL",)] == []
    with_design(results, [pattern("increment", "UpdateItem", 900.0, table="t")])
    assert [f.keys for f in diagnose(results)] == [("GLOBAL",)]


def test_a_conditional_counter_is_told_what_sharding_it_implies() -> None:
    results = make_results(
        steady("t", ["STOCK"], per_second=60, throttled=1),
        [op_row("buy", "UpdateItem", 600, units={"t": {"read": 0, "write": 600}},
                scope_keys={"t": {"key": "STOCK", "share": 1.0}})],
    )  # fmt: skip
    with_design(results, [{**pattern("buy", "UpdateItem", 3000.0, table="t"), "conditional": True}])
    (finding,) = diagnose(results)
    assert "sold-out shard" in finding.remedy and "reads all N" in finding.remedy


def test_a_key_read_past_its_partition_gets_caching() -> None:
    results = make_results(
        steady("t", ["CONFIG"], per_second=400, operation="GetItem", throttled=1)
    )
    (finding,) = diagnose(results)
    assert finding.kind == "hot-key" and finding.keys == ("CONFIG",)
    assert finding.guide == GUIDES["caching"]
    assert "Cache the reads of CONFIG" in finding.remedy


def test_an_index_refusing_the_tables_writes_is_named_with_back_pressure() -> None:
    events = [
        event(s, "PutItem", "orders", [f"USER#{s}-{i}"], index_keys={"status": ["STATUS#NEW"]},
              throttled=1, refused_by="status")
        for s in range(10)
        for i in range(20)
    ]  # fmt: skip
    findings = diagnose(make_results(events))
    assert [(f.kind, f.scope, f.keys) for f in findings] == [
        ("hot-gsi-key", "orders/status", ("STATUS#NEW",))
    ]
    (finding,) = findings
    assert finding.title == "A hot GSI key: STATUS#NEW on index status of orders"
    assert "IndexWriteKeyRangeThroughputExceeded" in finding.evidence
    assert "back-pressure" in finding.evidence
    assert "STATUS#NEW#<0..N-1>" in finding.remedy
    assert finding.guide == GUIDES["gsi-sharding"]


def test_a_time_ordered_key_refused_by_its_partitions_is_a_moving_hot_spot() -> None:
    hours = [f"READINGS#2026-01-01-{h:02d}" for h in range(4)]
    events = []
    for second in range(12):
        events += steady("s", [hours[second // 3]], seconds=1, per_second=30, throttled=1)
        events[-30:] = [{**e, "second": second} for e in events[-30:]]
    (finding,) = diagnose(make_results(events))
    assert finding.kind == "moving-hot-spot"
    assert finding.keys == tuple(hours)
    assert " → ".join(hours) in finding.evidence
    assert finding.guide == GUIDES["time-series"]
    assert "time bucket" in finding.remedy


def test_keys_taking_turns_are_not_a_moving_hot_spot() -> None:
    events = []
    for second in range(12):
        key = "A" if second % 2 else "B"
        events += [
            {**e, "second": second}
            for e in steady("s", [key], seconds=1, per_second=30, throttled=1)
        ]
    assert [kind for kind, _, _ in kinds(make_results(events))] == ["hot-key"]


def test_several_keys_refused_on_one_partition_are_a_hot_range() -> None:
    # Six keys of partition 0 (of 16) at 15 calls/s each, throttled; a light spread elsewhere.
    def partition(key: str) -> int:
        return (2 * bucket_of(key, 256) + 1) * 16 // 512

    near = [k for k in (f"item{i}" for i in range(2000)) if partition(k) == 0][:6]
    near = [
        k
        for i, k in enumerate(near)
        if bucket_of(k, 256) not in {bucket_of(n, 256) for n in near[:i]}
    ]
    far = [k for k in (f"other{i}" for i in range(2000)) if partition(k) != 0][:30]
    events = []
    for second in range(10):
        for key in near * 15:
            events.append(event(second, "PutItem", "t", [key], throttled=1))
        for key in far:
            events.append(event(second, "PutItem", "t", [key]))
    results = make_results(events)
    assert analysis.partition_skew(results, analysis.Scope("t"), 16) > 3
    (finding,) = diagnose(results)
    assert finding.kind == "hot-range"
    assert set(finding.keys) == set(near)
    assert finding.guide == GUIDES["uniform-load"]
    took = re.search(r"([\d,]+) of the ([\d,]+) throttled write attempts, spread", finding.evidence)
    assert took is not None, finding.evidence
    assert int(took[1].replace(",", "")) <= int(took[2].replace(",", ""))


def test_a_range_whose_heat_counts_other_causes_throttles_is_not_a_share_of_its_group() -> None:
    # The heat counts every cause's throttles (a table's capacity too), the group one cause's.
    from loadgen.verdict.hotspots import _range_took

    assert _range_took(5, 52, "write") == "5 of the 52 throttled write attempts"
    assert _range_took(52, 5, "write") == (
        "52 throttled write attempts for every reason the run recorded (5 of them for this one)"
    )


def test_a_read_refused_on_a_gsi_key_gets_read_remedies_sized_on_read_units() -> None:
    events = []
    for s in range(10):
        for i in range(5):
            events.append(event(s, "UpdateItem", "chat", [f"USER#{s}-{i}"],
                                index_keys={"GSI1": ["STATUS#online"]}))  # fmt: skip
        for _ in range(40):
            events.append(event(s, "Query", "chat", ["STATUS#online"], index="GSI1", units=9.5,
                                throttled=1))  # fmt: skip
    findings = diagnose(make_results(events))
    finding = next(f for f in findings if f.scope == "chat/GSI1")
    assert finding.title == "A read-hot GSI key: STATUS#online on index GSI1 of chat"
    assert (
        "3,800 read units/s" in finding.evidence and "throttled read attempts" in finding.evidence
    )
    for remedy in ("a Limit", "sparse", "DAX", "eventually consistent"):
        assert remedy in finding.remedy
    # A GSI's reads are eventually consistent: 3,800 read units/s over half a partition's
    # 4,500, 2 shards (the strong 3,000 would ask 3).
    assert "where a partition serves 4,500" in finding.evidence
    assert "N = 2 keeps each shard under half a partition's 4,500 read units/s" in finding.remedy
    assert "write units/s" not in finding.remedy
    assert finding.guide == GUIDES["sparse-index"]


# --- not a key: the capacity, quota or maximum of a table ---------------------------------


def capacity_run(cause: str | None, reason: str | None = None) -> dict:
    """4,800 write units/s asked of an on-demand table over 2,000 keys, a sixth throttled."""
    keys = [f"ORDER#{i}" for i in range(2000)]
    events = steady("Tickets", keys, per_second=480, seconds=10, units=1.0)
    for i, e in enumerate(events):
        if i % 6 == 0:
            e.update(event(e["second"], "PutItem", "Tickets", e["context"]["partition_keys"],
                           throttled=1, cause=cause, reason=reason))  # fmt: skip
    results = make_results(
        events,
        [op_row("order", "PutItem", 4800, units={"Tickets": {"read": 0, "write": 4800}})],
    )
    return with_design(results, [pattern("order", "PutItem", 4800.0, table="Tickets")])


def test_an_on_demand_tables_capacity_is_named_with_the_warm_throughput_it_needs() -> None:
    (finding,) = diagnose(capacity_run("capacity"))
    assert (finding.kind, finding.scope, finding.keys, finding.cause) == (
        "table-capacity", "Tickets", (), "capacity",
    )  # fmt: skip
    assert (
        "4,000 write units/s at once (a new on-demand table's warm throughput)" in finding.evidence
    )
    assert "The launch asks 4,800 write units/s" in finding.evidence
    assert "WarmThroughput WriteUnitsPerSecond 5,800" in finding.remedy
    assert "Sharding keys does not help" in finding.remedy
    assert finding.guide == GUIDES["warm-throughput"]


def test_a_tables_own_warm_throughput_is_the_figure_it_serves() -> None:
    results = capacity_run("capacity")
    results["tables"] = [
        {"table": "Tickets", "index": None, "billing_mode": "PAY_PER_REQUEST",
         "warm_write_units": 4500}
    ]  # fmt: skip
    (finding,) = diagnose(results)
    assert "4,500 write units/s at once (its WarmThroughput)" in finding.evidence


def test_on_dynamodb_itself_spread_throttles_are_the_capacity_and_one_key_is_a_key() -> None:
    spread = capacity_run(None, "TableWriteKeyRangeThroughputExceeded")
    (finding,) = diagnose(spread)
    assert finding.kind == "table-capacity"
    assert "DynamoDB names no cause" in finding.evidence
    one = make_results(steady("t", ["GLOBAL"], per_second=60, throttled=1, cause=None,
                              reason="TableWriteKeyRangeThroughputExceeded"))  # fmt: skip
    (finding,) = diagnose(one)
    assert (finding.kind, finding.keys) == ("hot-key", ("GLOBAL",))
    assert "DynamoDB names no cause; 100% of these throttles fell on one" in finding.evidence


def test_throttles_with_no_reason_are_the_engines_not_heat() -> None:
    results = make_results(steady("t", ["GLOBAL"], per_second=60, throttled=1, cause=None))
    (finding,) = diagnose(results)
    assert (finding.kind, finding.cause) == ("engine-refusals", "not reported")
    assert "reason not reported" in finding.evidence
    assert "GLOBAL" not in finding.title


def test_provisioned_capacity_is_sized_at_auto_scalings_target() -> None:
    results = capacity_run("provisioned", "TableWriteProvisionedThroughputExceeded")
    (finding,) = diagnose(results)
    assert finding.kind == "provisioned-capacity"
    # 4,800 units/s at 70% utilisation.
    assert "Provision 6,900 write capacity units" in finding.remedy


def test_the_most_refused_comes_first() -> None:
    quiet = steady("a", ["A"], per_second=30, throttled=1)
    throttled = steady("b", ["B"], per_second=30, throttled=3)
    events = sorted(quiet + throttled, key=lambda e: e["second"])
    assert [f.scope for f in diagnose(make_results(events))] == ["b", "a"]


# --- refusals that are not throttles ------------------------------------------------------


def test_requests_refused_before_any_work_are_named_with_the_message_and_no_key() -> None:
    message = 'Invalid ConditionExpression: Syntax error; token: "0", near: "> 0"'
    row = op_row("buy", "TransactWriteItems", 836, failures=836,
                 errors={"ValidationException": 836},
                 error_messages=[{"code": "ValidationException", "message": message,
                                  "count": 836}])  # fmt: skip
    (finding,) = diagnose(make_results([], [row]))
    assert (finding.kind, finding.patterns) == ("rejected", ("buy",))
    assert message in finding.evidence and "cost nothing" in finding.evidence


def test_failed_conditions_are_their_own_finding_not_a_throttle() -> None:
    row = op_row("buy", "TransactWriteItems", 400, failures=8,
                 errors={"TransactionCanceledException": 8},
                 cancellations={"ConditionalCheckFailed": 8})  # fmt: skip
    (finding,) = diagnose(make_results([], [row]))
    assert finding.kind == "condition-failed"
    assert "8 of 400 calls of buy failed their condition" in finding.evidence


def test_many_transactions_on_one_item_are_warned_of_with_their_rate() -> None:
    row = op_row("buy", "TransactWriteItems", 100,
                 hot_key={"key": "EVENT#taylor", "share": 0.7, "table": "Tickets",
                          "index": None})  # fmt: skip
    results = make_results([], [row])
    with_design(results, [pattern("buy", "TransactWriteItems", 800.0, table="Tickets")])
    (finding,) = diagnose(results)
    assert finding.kind == "transaction-contention"
    assert "560 transactions/s on EVENT#taylor" in finding.evidence
    assert CONTENTION_RATE < 560


def test_a_design_runs_contention_is_checks_per_item_never_an_index_keys() -> None:
    # The game lobby's run: its joins' hottest key is an index key (a map), and the featured
    # game takes a quarter of the joins, each writing its item and a player's item under it.
    row = op_row("join-game", "TransactWriteItems", 2400,
                 hot_key={"key": "Green Grasslands", "share": 0.5, "table": "battle-royale",
                          "index": "OpenGamesIndex"})  # fmt: skip
    results = make_results([], [row])
    with_design(results, [pattern("join-game", "TransactWriteItems", 2400.0)])
    results["design"]["check"] = check(load_design(str(GAME_LOBBY))).to_dict()
    (finding,) = diagnose(results)
    assert (finding.kind, finding.scope, finding.keys) == (
        "transaction-contention", "battle-royale", ("GAME#featured",),
    )  # fmt: skip
    assert "600 transactions/s on GAME#featured (METADATA)" in finding.evidence
    assert "25% of its calls, as check figures it" in finding.evidence
    assert finding.asked == pytest.approx(600)


# --- without a refusal -------------------------------------------------------------------


def test_a_key_near_its_ceiling_is_a_risk_without_a_throttle() -> None:
    (finding,) = diagnose(make_results(steady("t", ["GLOBAL"], per_second=60)))
    assert (finding.kind, finding.keys, finding.cause) == ("hot-key", ("GLOBAL",), "partition")
    assert "0 of the 0 throttled" in finding.evidence


def test_even_spread_has_nothing_to_name() -> None:
    results = make_results(steady("t", [f"k{i}" for i in range(500)], per_second=50))
    (finding,) = diagnose(results)
    assert finding.kind == "even"


def test_the_throttles_on_a_key_are_a_share_of_its_groups_only_when_they_can_be() -> None:
    from loadgen.verdict.hotspots import _fell_on

    assert _fell_on(19, 62, "write") == "19 of the 62 throttled write attempts fell on it."
    # The key's heat counts every cause's throttles, the group one cause's: never "62 of 19".
    said = _fell_on(62, 19, "write")
    assert "62 of the 19" not in said
    assert said.startswith("62 throttled write attempts fell on it") and "(19 of them" in said


def test_what_a_partition_serves_a_key_is_checks_figure_else_the_models() -> None:
    from loadgen.verdict.analysis import Scope
    from loadgen.verdict.throttles import key_serves

    table, index = Scope("chat"), Scope("chat", "GSI1")
    assert key_serves({}, table, "read", "ROOM#1") == 3_000  # a table may be read strongly
    assert key_serves({}, index, "read", "STATUS#online") == 4_500  # a GSI's reads are eventual
    assert key_serves({}, index, "write", "STATUS#online") == 1_000
    limit = {"scope": "chat", "kind": "read", "key": "ROOM#1", "cause": "partition",
             "serves_units_per_s": 4_500.0}  # fmt: skip
    results = {"design": {"check": {"limits": [limit]}}}
    assert key_serves(results, table, "read", "ROOM#1") == 4_500  # read only eventually
    assert key_serves(results, table, "read", "ROOM#2") == 3_000
