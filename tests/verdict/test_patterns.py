"""A verdict per access pattern, read from a design run's results file."""

from __future__ import annotations

import json
from typing import Any

from loadgen.verdict.patterns import (
    EMPTY,
    FAIL,
    NOT_JUDGED,
    PASS,
    format_pattern_verdicts,
    pattern_verdicts,
    pattern_verdicts_html,
)
from tests.results_factory import make_results, op_row, pattern, steady, with_design

ONLINE = {"key": "STATUS#online", "share": 0.97, "table": "chat", "index": "GSI1"}


def throttle(reason: str, scope: str | None, cause: str, attempts: int) -> dict[str, Any]:
    """One entry of an operation row's ``throttles``, as the recorder writes it."""
    return {"reason": reason, "scope": scope, "cause": cause,
            "source": "engine" if cause == "not reported" else "model",
            "exception": "ThrottlingException", "attempts": attempts, "final": 0,
            "resource": None}  # fmt: skip


def chat_results(
    *, empty: bool = False, offered: Any = None, local: bool = False
) -> dict[str, Any]:
    """Four patterns: a status GSI read hot and throttled, a slow room read, a status write,
    and a profile read that passes."""
    operations = [
        op_row("online_now", "Query", 620, throttled=380, retries=380, p50=4, p99=30,
               units={"chat/GSI1": {"read": 3809.5, "write": 0}}, hot_key=ONLINE,
               throttles=[throttle("IndexReadKeyRangeThroughputExceeded", "chat/GSI1",
                                   "partition", 380)],
               scope_keys={"chat/GSI1": {"key": "STATUS#online", "share": 0.97}}),
        op_row("room_messages", "Query", 500, p50=12, p95=40, p99=84,
               hot_key={"key": "ROOM#7", "share": 0.02, "table": "chat", "index": None}),
        op_row("set_status", "UpdateItem", 200, p50=3, p99=8,
               units={"chat": {"read": 0, "write": 200}, "chat/GSI1": {"read": 0, "write": 400}}),
        op_row("profile", "GetItem", 2000, p50=2, p99=6),
    ]  # fmt: skip
    results = make_results(steady("chat", ["USER#1"]), operations, scale=0.1)
    results["run"]["target"] = (
        "embedded emulator (http://127.0.0.1:8000) in front of moto"
        if local
        else "AWS account 111122223333, region us-east-1"
    )
    return with_design(
        results,
        [
            pattern("online_now", "Query", 100.0, index="GSI1", latency=(99.0, 50.0)),
            pattern("room_messages", "Query", 50.0, latency=(99.0, 10.0)),
            pattern("set_status", "UpdateItem", 20.0),
            pattern("profile", "GetItem", 200.0, latency=(99.0, 10.0)),
        ],
        empty=empty,
        offered=offered,
    )


def by_id(results: dict[str, Any]) -> dict[str, Any]:
    return {v.id: v for v in pattern_verdicts(results)}


def test_each_pattern_passes_or_fails_with_its_reason_in_words() -> None:
    verdicts = by_id(chat_results())
    assert verdicts["online_now"].reason == (
        "FAIL: 38% of attempts throttled: a partition's ceiling on STATUS#online "
        "(index GSI1 of chat), reads"
    )
    assert verdicts["room_messages"].reason == "FAIL: p99 84 ms over the 10 ms need"
    assert verdicts["set_status"].reason == "PASS"
    assert verdicts["profile"].status == PASS
    assert verdicts["online_now"].units == {"chat/GSI1": {"read": 3809.5, "write": 0}}
    assert verdicts["online_now"].hot_key_share == 0.97


def test_a_latency_need_is_shown_but_not_judged_on_a_local_target() -> None:
    results = chat_results()
    results["run"]["target"] = "embedded emulator (http://127.0.0.1:8000) in front of moto"
    room = by_id(results)["room_messages"]
    assert room.status == NOT_JUDGED
    assert room.reason == (
        "NOT JUDGED: p99 84 ms against the 10 ms need: a local engine's latency is not DynamoDB's"
    )
    # A need it met is not a PASS either: a local engine's latency says nothing of it.
    assert by_id(results)["profile"].status == NOT_JUDGED
    assert by_id(results)["set_status"].status == PASS  # no latency need: judged
    assert by_id(chat_results())["room_messages"].status == FAIL  # on AWS it decides


def test_a_closed_model_run_delivers_requests_per_second_over_the_scale() -> None:
    verdicts = by_id(chat_results())
    # 2,000 requests in 10 s at scale 0.1: 2,000/s at AWS scale, for 200/s asked.
    assert verdicts["profile"].rate_delivered == 2000.0
    assert verdicts["profile"].delivered_share == 10.0


def test_a_rate_run_the_machine_did_not_deliver_is_not_judged() -> None:
    offered = {
        "online_now": (1000, 610), "room_messages": (500, 500),
        "set_status": (200, 200), "profile": (2000, 1220),
    }  # fmt: skip
    verdicts = by_id(chat_results(offered=offered))
    assert verdicts["profile"].rate_delivered == 122.0
    assert verdicts["profile"].status == NOT_JUDGED
    assert verdicts["profile"].reason == (
        "NOT JUDGED: load not delivered: 61% of the rate asked was delivered (780 in flight "
        "at the run's end)"
    )
    assert verdicts["set_status"].rate_delivered == 20.0
    # Throttled at less than its load, it throttles at its load: still a FAIL, said so.
    assert verdicts["online_now"].status == FAIL
    assert "load not delivered" in verdicts["online_now"].reason


def short_run(*, service_ms: dict[str, float], **load: Any) -> dict[str, Any]:
    """A local rate run whose in-flight cap was reached: set_status's arrivals and half of
    profile's delivered, online_now's and room_messages' not."""
    offered = {
        "online_now": (1000, 600, 380, service_ms["online_now"]),
        "room_messages": (500, 300, 190, service_ms["room_messages"]),
        "set_status": (200, 200, 0, service_ms["set_status"]),
        "profile": (2000, 1990, 0, service_ms["profile"]),
    }  # fmt: skip
    results = chat_results(offered=offered, local=True)
    bottleneck = "in-flight cap reached (--max-in-flight 1000): 570 arrivals dropped"
    results["load"].update({"dropped_at_cap": 570, "bottleneck": bottleneck, **load})
    return results


def test_a_pattern_whose_own_arrivals_were_delivered_is_judged() -> None:
    verdicts = by_id(short_run(service_ms={"online_now": 5, "room_messages": 5,
                                           "set_status": 5, "profile": 5}))  # fmt: skip
    # Others fell short; set_status's 200 arrivals and profile's 1,990 of 2,000 arrived.
    assert verdicts["set_status"].status == PASS
    assert verdicts["set_status"].shortfall == ""
    assert verdicts["room_messages"].status == NOT_JUDGED
    assert verdicts["profile"].status == NOT_JUDGED  # its latency need, on a local target
    assert "load not delivered" not in verdicts["profile"].reason


def test_undelivered_load_held_by_retries_of_throttled_requests_says_so() -> None:
    # online_now throttled 38% of its attempts: its operations held the slots, retrying.
    verdicts = by_id(short_run(service_ms={"online_now": 900, "room_messages": 20,
                                           "set_status": 5, "profile": 5}))  # fmt: skip
    assert verdicts["room_messages"].reason == (
        "NOT JUDGED: load not delivered: 60% of the rate asked was delivered (190 of its 500 "
        "arrivals dropped, 10 in flight at the run's end; in-flight cap reached "
        "(--max-in-flight 1000): 570 arrivals dropped; the cap's slots were held by retries of "
        "throttled requests (online_now 97% of the slot time, 38% of its attempts throttled): "
        "the design's doing, a finding in itself (its retries would hold an application's "
        "concurrency as they held the run's)); p99 84 ms against the 10 ms need: a local "
        "engine's latency is not DynamoDB's"
    )
    # Throttled itself, it fails, and says why its load fell short as well.
    assert verdicts["online_now"].status == FAIL
    assert "the cap's slots were held by retries of throttled requests" in (
        verdicts["online_now"].reason
    )


def test_undelivered_load_names_the_process_that_ran_out_of_cpu() -> None:
    bottleneck = (
        "the emulator's process ran out of CPU (98% of a core over the run); in-flight cap "
        "reached (--max-in-flight 1000): 570 arrivals dropped"
    )
    verdicts = by_id(short_run(service_ms={"online_now": 5, "room_messages": 700,
                                           "set_status": 5, "profile": 5},
                               bottleneck=bottleneck))  # fmt: skip
    reason = verdicts["room_messages"].reason
    assert "the emulator's process ran out of CPU (98% of a core over the run)" in reason
    assert (
        "the cap's slots were held by slow answers (room_messages 94% of the slot time, 700 "
        "ms mean from launch to end)"
    ) in reason


def test_reads_that_mostly_found_nothing_are_not_judged() -> None:
    results = chat_results()
    results["operations"][3].update(looked=2000, found=166)
    verdict = by_id(results)["profile"]
    assert verdict.status == NOT_JUDGED
    assert "only 8% of its reads found an item" in verdict.reason


def test_conditions_that_mostly_failed_are_not_judged_and_are_no_failure() -> None:
    results = chat_results()
    results["operations"][2].update(failures=150, errors={"TransactionCanceledException": 150},
                                    cancellations={"ConditionalCheckFailed": 150})  # fmt: skip
    verdict = by_id(results)["set_status"]
    assert verdict.status == NOT_JUDGED and verdict.condition_failed == 150
    assert "75% of its calls failed their condition" in verdict.reason


def test_a_transaction_a_throttle_cancelled_is_a_throttle_once_not_an_error() -> None:
    results = chat_results()
    # 60 transactions cancelled: 20 by a throttle naming three items each (60 item reasons),
    # 40 by a conflict. The conflicts are the calls' failures; the throttles are not.
    cancelled = throttle("TableWriteKeyRangeThroughputExceeded", "chat", "partition", 20)
    cancelled.update(exception="TransactionCanceledException", final=20)
    results["operations"][2].update(
        operation="TransactWriteItems", failures=60, throttled_attempts=20, throttles=[cancelled],
        errors={"TransactionCanceledException": 60},
        cancellations={"ThrottlingError": 60, "TransactionConflict": 40})  # fmt: skip
    del results["operations"][2]["error_messages"]
    assert "20% of calls failed (TransactionCanceledException x40)" in (
        by_id(results)["set_status"].reason
    )


def test_a_tables_capacity_is_named_as_the_cause_not_a_key() -> None:
    results = chat_results()
    results["operations"][2].update(
        throttled_attempts=100, throttles=[throttle("TableWriteKeyRangeThroughputExceeded", "chat",
                                           "capacity", 100)])  # fmt: skip
    assert by_id(results)["set_status"].reason == (
        "FAIL: 50% of attempts throttled: the on-demand capacity of table chat "
        "(TableWriteKeyRangeThroughputExceeded), writes"
    )


def test_every_limit_that_refused_over_one_percent_is_named_the_most_first() -> None:
    # A transaction on a hot key of a new on-demand table: the key's partition refused most,
    # the table's capacity the rest; a limit under 1% of the attempts is left out.
    results = chat_results()
    results["operations"][2].update(
        throttled_attempts=101, scope_keys={"chat": {"key": "ROOM#7", "share": 0.4}},
        throttles=[
            throttle("TableWriteKeyRangeThroughputExceeded", "chat", "capacity", 30),
            throttle("TableWriteKeyRangeThroughputExceeded", "chat", "partition", 50),
            throttle("TableWriteKeyRangeThroughputExceeded", "chat", "partition", 20),
            throttle("IndexWriteKeyRangeThroughputExceeded", "chat/GSI1", "partition", 1),
        ])  # fmt: skip
    assert by_id(results)["set_status"].reason == (
        "FAIL: 50% of attempts throttled: a partition's ceiling on ROOM#7 (table chat); also "
        "the on-demand capacity of table chat (TableWriteKeyRangeThroughputExceeded), writes"
    )


def test_a_reason_the_target_did_not_give_is_said_so() -> None:
    results = chat_results()
    results["operations"][2].update(
        throttled_attempts=100, throttles=[throttle("not reported", None, "not reported", 100)]
    )
    assert by_id(results)["set_status"].reason == (
        "FAIL: 50% of attempts throttled: reason not reported, writes"
    )


def test_a_rejected_request_fails_with_the_targets_message() -> None:
    results = chat_results()
    results["operations"][2].update(
        failures=200, errors={"ValidationException": 200},
        error_messages=[{"code": "ValidationException", "count": 200,
                         "message": "Invalid UpdateExpression: Syntax error"}],
    )  # fmt: skip
    assert by_id(results)["set_status"].reason == (
        "FAIL: 100% of calls failed (ValidationException x200: Invalid UpdateExpression: "
        "Syntax error)"
    )


def test_an_empty_table_never_passes_silently() -> None:
    verdicts = by_id(chat_results(empty=True))
    assert verdicts["profile"].status == EMPTY
    assert verdicts["profile"].reason == (
        "EMPTY: nothing failed, but the tables were empty when the load began, so its reads "
        "found nothing to read"
    )
    assert not verdicts["profile"].passed
    assert verdicts["online_now"].status == FAIL
    assert verdicts["online_now"].reason.endswith("; the tables were empty when the load began")


def test_a_percentile_the_results_do_not_hold_is_read_at_the_maximum() -> None:
    results = chat_results()
    results["design"]["patterns"][3]["latency"] = {"percentile": 99.9, "ms": 10.0}
    verdict = by_id(results)["profile"]
    assert (verdict.measured_as, verdict.measured_ms) == ("max", 11)
    assert verdict.reason == "FAIL: max 11 ms over the 10 ms need (p99.9 read at the maximum)"


def test_failures_and_a_pattern_that_made_no_calls() -> None:
    results = chat_results()
    results["operations"][2].update(failures=10, errors={"ValidationException": 10})
    del results["operations"][3]
    verdicts = by_id(results)
    assert verdicts["set_status"].reason == "FAIL: 5% of calls failed (ValidationException x10)"
    assert verdicts["profile"].reason.startswith("FAIL: the pattern made no calls")


def test_no_design_no_verdicts() -> None:
    results = make_results(steady("t", ["a"]))
    assert pattern_verdicts(results) == []
    assert format_pattern_verdicts([]) == []


def test_the_terminal_table_is_fixed_width() -> None:
    lines = format_pattern_verdicts(pattern_verdicts(chat_results()))
    assert lines[0] == "Access patterns: 2 of 4 passed"
    head = lines[1]
    assert head.startswith("Pattern") and head.endswith("Verdict")
    column = head.index("Verdict")
    for line in lines[3:]:
        assert line[column:].startswith(("PASS", "FAIL"))
    assert len(lines) == 3 + 4
    online = next(line for line in lines if line.startswith("online_now"))
    assert "STATUS#online (GSI1) 97%" in online and "p99 < 50 ms" in online


def test_verdicts_are_json_and_html() -> None:
    verdicts = pattern_verdicts(chat_results(empty=True))
    data = json.loads(json.dumps([v.to_dict() for v in verdicts]))
    assert data[0]["id"] == "online_now"
    assert data[0]["status"] == FAIL
    assert data[0]["throttled_share"] == 0.38
    assert data[3]["status"] == EMPTY and "empty" in data[3]["reason"]
    page = pattern_verdicts_html(verdicts)
    assert page.count("<tr") == 5
    assert 'class="text verdict fail"' in page and "STATUS#online" in page


def test_a_gate_asks_every_pattern_to_pass() -> None:
    from loadgen.verdict.checks import FAIL as GATE_FAIL
    from loadgen.verdict.checks import PASS as GATE_PASS
    from loadgen.verdict.checks import SKIP, evaluate
    from loadgen.verdict.thresholds import parse_thresholds

    every = parse_thresholds({"run": {"min_patterns_passed_ratio": 1}})
    (check,) = evaluate(chat_results(), every).checks
    assert check.status == GATE_FAIL
    assert check.detail.startswith("2 of 4 judged patterns passed: 50.00% (limit >= 100.00%); ")
    assert "room_messages: FAIL: p99 84 ms over the 10 ms need" in check.detail
    half = parse_thresholds({"run": {"min_patterns_passed_ratio": 0.5}})
    assert evaluate(chat_results(), half).checks[0].status == GATE_PASS
    # A run on an empty table passes no pattern; a run of no design is skipped.
    assert evaluate(chat_results(empty=True), half).checks[0].status == GATE_FAIL
    plain = make_results(steady("t", ["a"]))
    assert evaluate(plain, every).checks[0].status == SKIP


def test_too_few_arrivals_say_so_instead_of_judging_delivery() -> None:
    offered = {"online_now": (100, 100), "room_messages": (100, 100), "set_status": (100, 100),
               "profile": (10, 9)}  # fmt: skip
    profile = by_id(chat_results(offered=offered))["profile"]
    assert profile.status == PASS
    assert "only 10 arrival(s) offered, too few to judge delivery" in profile.reason
    offered["profile"] = (100, 90)
    assert by_id(chat_results(offered=offered))["profile"].status == NOT_JUDGED


def _bunched_results(expected: float, at_aws: float) -> dict[str, Any]:
    """A lobby join throttled 1.2% of its attempts in a run at scale 0.05, with what check
    expects of it at AWS scale and the model of a run at 0.05."""
    operations = [
        op_row("join", "TransactWriteItems", 2500, throttled=30, retries=0, p50=8, p99=40,
               throttles=[throttle("TableWriteKeyRangeThroughputExceeded", "lobby",
                                   "partition", 30)]),
    ]  # fmt: skip
    results = with_design(
        make_results(steady("lobby", ["GAME#featured#11"]), operations, scale=0.05),
        [pattern("join", "TransactWriteItems", 2400.0)],
    )
    results["run"]["target"] = "embedded emulator (http://127.0.0.1:8000) in front of moto"
    results["design"]["check"] = {"patterns": [{"id": "join", "throttled_share": at_aws}]}
    results["design"]["at_scale"] = {
        "scale": 0.05, "seconds": 300, "throttled_share": {"join": expected},
    }  # fmt: skip
    return results


def test_throttles_a_scaled_runs_bunched_seconds_explain_are_not_judged() -> None:
    (verdict,) = pattern_verdicts(_bunched_results(expected=0.006, at_aws=0.0))
    assert verdict.status == NOT_JUDGED
    assert verdict.reason.startswith(
        "NOT JUDGED: 1% of attempts throttled: a partition's ceiling (table lobby), where the "
        "model expects 0.6% in a run at scale 0.05 and 0% at AWS scale"
    ), verdict.reason
    assert "4.5 times as much as AWS's" in verdict.reason


def test_throttles_of_a_run_that_fell_behind_its_target_are_not_judged_where_check_passes() -> None:
    # Ten times what the model expects at the scale, in a run whose target fell behind: the
    # requests that waited on it came in bunches. check passes it at AWS scale.
    results = _bunched_results(expected=0.001, at_aws=0.0)
    results["load"] = {**(results.get("load") or {}), "delivered": False,
                       "answer_ms_grew": [80.0, 552.0]}  # fmt: skip
    (verdict,) = pattern_verdicts(results)
    assert verdict.status == NOT_JUDGED
    behind = "the target fell behind (a first answer took 80 ms at the start, 552 ms at the worst)"
    assert behind in verdict.reason
    # A run that delivered its load, or a pattern check fails too, is judged as before.
    results["load"]["delivered"] = True
    assert pattern_verdicts(results)[0].status == FAIL
    results = _bunched_results(expected=0.001, at_aws=0.05)
    results["load"] = {**(results.get("load") or {}), "delivered": False,
                       "answer_ms_grew": [80.0, 552.0]}  # fmt: skip
    assert pattern_verdicts(results)[0].status == FAIL


def test_throttles_past_what_the_scale_explains_or_at_aws_scale_still_fail() -> None:
    # The model expects a tenth of them at this scale: the run saw more than bunching.
    (verdict,) = pattern_verdicts(_bunched_results(expected=0.001, at_aws=0.0))
    assert verdict.status == FAIL
    # check expects them at AWS scale: the design's, whatever the run's scale.
    (verdict,) = pattern_verdicts(_bunched_results(expected=0.02, at_aws=0.05))
    assert verdict.status == FAIL
    # Without the model's figures (a run at AWS scale, or a workload), as before.
    results = _bunched_results(expected=0.006, at_aws=0.0)
    del results["design"]["at_scale"]
    (verdict,) = pattern_verdicts(results)
    assert verdict.status == FAIL
