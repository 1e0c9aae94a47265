"""The live view reads the heat as the report and the gate do: top keys, throttles, heat."""

from __future__ import annotations

import json

import pytest

from loadgen.model.hashing import bucket_of
from loadgen.webui.view import FIELDS, heat_view, table_rows
from tests.results_factory import event, make_results, op_row, steady


def hot_and_cold() -> dict:
    # 10 s of one hot key (50 writes/s, each throttled once) beside 10 cold keys.
    events = steady("t", ["HOT"], per_second=50, units=1.0, throttled=1)
    events += steady("t", [f"cold-{i}" for i in range(10)], per_second=10, units=2.0)
    return make_results(
        in_time(events), [op_row("t.put", "PutItem", 600, throttled=500, retries=500)]
    )


def in_time(events: list[dict]) -> list[dict]:
    """Events in the order of their seconds, as a heat map records them."""
    return sorted(events, key=lambda e: e["second"])


def test_the_hottest_key_leads_its_table_with_its_throttles_and_rates() -> None:
    view = heat_view(hot_and_cold())
    (table,) = view["tables"]
    assert (table["scope"], table["key_touches"], table["throttled_attempts"]) == ("t", 600, 500)
    hot = table["keys"][0]
    assert hot["key"] == "HOT"
    assert hot["share"] == pytest.approx(500 / 600)
    assert hot["bucket"] == bucket_of("HOT", 256)
    assert hot["throttled_attempts"] == 500 and hot["throttled_ratio"] == 1.0
    # 50 units/s measured at scale 0.1: 500 at AWS scale, now (the last 5 s before the
    # still-open last column) as over the busiest 5 s.
    assert hot["write_units_per_s_now"] == pytest.approx(500)
    assert hot["write_units_per_s_peak"] == pytest.approx(500)
    assert hot["read_units_per_s_now"] == 0
    cold = table["keys"][1]
    assert cold["share"] == pytest.approx(10 / 600)
    assert cold["throttled_attempts"] == 0
    assert cold["write_units_per_s_now"] == pytest.approx(2 * 1 / 0.1)  # 1 write/s of 2 units


def test_the_current_rate_follows_the_run_and_the_peak_keeps_the_busiest_seconds() -> None:
    # Busy for 5 s, then quiet for 7: the current rate (the 5 s before the last, still
    # filling second) falls, the busiest 5 s stay.
    events = steady("t", ["K"], seconds=5, per_second=40) + [
        {**e, "second": e["second"] + 5} for e in steady("t", ["K"], seconds=7, per_second=4)
    ]
    (key,) = heat_view(make_results(events))["tables"][0]["keys"]
    assert key["write_units_per_s_peak"] == pytest.approx(400)
    assert key["write_units_per_s_now"] == pytest.approx(40)


def test_heat_is_folded_into_rows_per_field_with_units_at_aws_scale() -> None:
    view = heat_view(hot_and_cold(), rows=16)
    heat = view["heat"]
    assert (heat["buckets"], heat["rows"], heat["columns"], heat["resolution_s"]) == (
        256,
        16,
        10,
        1,
    )
    grids = heat["scopes"]["t"]
    assert set(grids) == set(FIELDS)
    row = bucket_of("HOT", 256) * 16 // 256
    requests = grids["requests"]
    assert len(requests) == 16 and all(len(r) == 10 for r in requests)
    assert all(v >= 50 for v in requests[row])  # the hot key's band, every second
    assert sum(map(sum, requests)) == 600
    assert grids["throttled_attempts"][row] == [50] * 10
    assert sum(map(sum, grids["throttled_attempts"])) == 500
    assert sum(map(sum, grids["write_units"])) == pytest.approx((500 + 100 * 2) / 0.1)
    assert sum(map(sum, grids["read_units"])) == 0


def test_one_scope_and_field_can_be_asked_for() -> None:
    events = steady("t", ["A"]) + steady("t", ["B"], index="i")
    view = heat_view(make_results(in_time(events)), scope="t/i", fields=("requests",))
    assert [t["scope"] for t in view["tables"]] == ["t", "t/i"]
    assert list(view["heat"]["scopes"]) == ["t/i"]
    assert list(view["heat"]["scopes"]["t/i"]) == ["requests"]


def test_the_diagnosis_names_the_hot_key_with_its_remedy() -> None:
    (finding,) = heat_view(hot_and_cold())["diagnosis"]
    assert finding["kind"] == "hot-key" and finding["keys"] == ["HOT"]
    assert "HOT#<0..N-1>" in finding["remedy"]
    assert finding["guide"].startswith("https://docs.aws.amazon.com/")


def test_throttles_per_access_pattern_and_totals() -> None:
    view = heat_view(hot_and_cold())
    (row,) = view["throttles"]
    assert (row["name"], row["requests"], row["throttled_attempts"]) == ("t.put", 600, 500)
    assert row["throttled_ratio"] == pytest.approx(500 / 600)
    assert view["totals"]["throttled_attempts"] == 500


def test_what_the_target_refused_is_shown_in_its_words() -> None:
    from tests.results_factory import throttle_row

    reason = "TableWriteKeyRangeThroughputExceeded"
    operations = [
        op_row("t.put", "PutItem", 600, failures=3, throttled=500,
               throttles=[throttle_row(reason, "partition", 480, final=3),
                          throttle_row(reason, "capacity", 15),
                          throttle_row(None, None, 5, scope=None)],
               errors={"ThrottlingException": 3},
               error_messages=[{"code": "ThrottlingException", "count": 3,
                                "message": "Throughput exceeds the current capacity"}]),
        op_row("t.buy", "TransactWriteItems", 20, failures=2,
               errors={"TransactionCanceledException": 2},
               cancellations={"ConditionalCheckFailed": 2}),
    ]  # fmt: skip
    results = make_results(in_time(steady("t", ["HOT"], per_second=50)), operations)
    said = heat_view(results)["refusals"]
    assert [(t["reason"], t["scope"], t["cause"], t["attempts"], t["final"])
            for t in said["throttles"]] == [
        (reason, "t", "partition", 480, 3),
        (reason, "t", "capacity", 15, 0),
        ("not reported", "not reported", "not reported", 5, 0),
    ]  # fmt: skip
    assert [(e["pattern"], e["code"], e["count"], e["message"]) for e in said["errors"]] == [
        ("t.put", "ThrottlingException", 3, "Throughput exceeds the current capacity"),
        # No message kept for it: not reported, never a guess.
        ("t.buy", "TransactionCanceledException", 2, "not reported"),
    ]
    assert said["cancellations"] == [
        {"pattern": "t.buy", "operation": "TransactWriteItems",
         "codes": {"ConditionalCheckFailed": 2}},
    ]  # fmt: skip
    json.dumps(said, allow_nan=False)  # as data.json serves it


def test_a_rate_run_shows_its_offered_and_achieved_load() -> None:
    results = hot_and_cold()
    assert heat_view(results)["load"] is None
    results["load"] = {"model": "open", "offered": 100, "achieved": 90, "delivered": False}
    assert heat_view(results)["load"]["achieved"] == 90


def test_no_requests_yet_is_an_empty_view_not_an_error() -> None:
    view = heat_view(make_results([], scale=None))
    assert view["tables"] == [] and view["diagnosis"] == [] and view["heat"]["columns"] == 0
    json.dumps(view, allow_nan=False)


def test_hashed_keys_are_listed_without_a_bucket() -> None:
    results = make_results(steady("t", ["HOT"], throttled=1), hash_keys="salt")
    (key,) = heat_view(results)["tables"][0]["keys"]
    assert key["key"] != "HOT" and key["bucket"] is None


def test_the_tab_rows_round_for_people() -> None:
    rows = table_rows(heat_view(hot_and_cold()))
    assert rows[0] == {
        "table": "t", "key": "HOT", "share": 83.3, "touches": 500, "write_units": 500.0,
        "read_units": 0.0, "throttled": 500, "throttled_ratio": 1.0,
    }  # fmt: skip
    assert len(rows) == 10  # the ten hottest of 11 keys


def test_events_of_two_tables_are_kept_apart() -> None:
    events = steady("a", ["A"]) + [event(s, "GetItem", "b", ["B"]) for s in range(10)]
    view = heat_view(make_results(in_time(events)))
    assert [(t["scope"], t["keys"][0]["key"]) for t in view["tables"]] == [("a", "A"), ("b", "B")]
    (b,) = view["tables"][1]["keys"]
    assert b["read_units_per_s_now"] == pytest.approx(10) and b["write_units_per_s_now"] == 0


def test_an_index_without_reported_units_counts_one_unit_per_write() -> None:
    # ReturnConsumedCapacity TOTAL reports the call's units, none of the index's: the index's
    # write units are its touches, as the report and the gate count them.
    events = [
        event(s, "PutItem", "orders", [f"USER#{s}-{i}"], index_keys={"status": ["STATUS#NEW"]})
        for s in range(10)
        for i in range(20)
    ]
    view = heat_view(make_results(events), scope="orders/status")
    assert view["heat"]["units_basis"]["orders/status"]["write_units"] == "requests"
    assert view["heat"]["units_basis"]["orders"]["write_units"] == "units"
    grid = view["heat"]["scopes"]["orders/status"]["write_units"]
    assert sum(map(sum, grid)) == pytest.approx(200 / 0.1)
    (status,) = [t for t in view["tables"] if t["scope"] == "orders/status"]
    assert status["keys"][0]["write_units_per_s_peak"] == pytest.approx(20 / 0.1)
