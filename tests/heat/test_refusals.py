"""What the target said of each refusal, as the recorder keeps it: throttles by reason and
cause on the table or index that refused, errors with their messages, cancellation reasons,
and no heat or units for a call refused before any work."""

from __future__ import annotations

from typing import Any

from loadgen.heat.heatmap import HeatConfig
from loadgen.heat.recorder import MESSAGES_PER_CODE, OTHER_MESSAGES, RunRecorder
from loadgen.heat.results import format_refusals
from loadgen.refusals import Refusal
from tests.heat.test_heat import SCHEMA, T0, cell, context

ARN = "arn:aws:dynamodb:us-east-1:000000000000:table/t"


class Failure(Exception):
    """Stands in for the DynamoDBError a client raises."""


def call(
    recorder: RunRecorder,
    ctx: dict[str, Any],
    *,
    operation: str = "PutItem",
    name: str = "p.put",
    failed: bool = False,
    response: dict[str, Any] | None = None,
) -> None:
    recorder._on_request(
        request_type=operation,
        name=name,
        context=ctx,
        start_time=T0,
        response=response if response is not None else {},
        exception=Failure() if failed else None,
    )


def refused(throttled: int, *refusals: Refusal, **kw: Any) -> dict[str, Any]:
    return {**context(["k"], throttled=throttled, **kw), "refusals": list(refusals)}


def test_throttles_are_counted_by_reason_and_cause_and_the_last_one_failed_the_call() -> None:
    recorder = RunRecorder(heat=HeatConfig(buckets=8))
    hot = Refusal("ThrottlingException", "TableWriteKeyRangeThroughputExceeded", ARN, "partition")
    grown = Refusal("ThrottlingException", "TableWriteKeyRangeThroughputExceeded", ARN, "capacity")
    call(recorder, refused(2, hot, hot))  # retried twice, then served
    call(recorder, refused(3, hot, grown, grown, error_code="ThrottlingException"), failed=True)
    rows = recorder.operations[("PutItem", "p.put")].throttle_rows()
    assert [(r["cause"], r["attempts"], r["final"]) for r in rows] == [
        ("partition", 3, 0),
        ("capacity", 2, 1),
    ]
    assert {(r["reason"], r["scope"], r["source"]) for r in rows} == {
        ("TableWriteKeyRangeThroughputExceeded", "t", "model")
    }


def test_a_target_that_names_no_reason_is_not_reported_never_guessed() -> None:
    recorder = RunRecorder(heat=HeatConfig(buckets=8))
    call(recorder, refused(1, Refusal("ProvisionedThroughputExceededException")))
    (row,) = recorder.operations[("PutItem", "p.put")].throttle_rows()
    assert (row["reason"], row["scope"], row["cause"], row["source"]) == (
        "not reported",
        None,
        "not reported",
        "engine",
    )


def test_an_index_throttle_heats_the_index_key_not_the_table_key() -> None:
    recorder = RunRecorder(heat=HeatConfig(buckets=8))
    recorder.heat.add_table(SCHEMA)
    back_pressure = Refusal(
        "ThrottlingException", "IndexWriteKeyRangeThroughputExceeded", f"{ARN}/index/gsi",
        "partition",
    )  # fmt: skip
    ctx = refused(1, back_pressure, index_keys={"gsi": ["STATUS#open"]})
    call(recorder, ctx)
    assert cell(recorder.heat, ("t", "gsi", "write"), "STATUS#open")[2] == 1.0
    assert cell(recorder.heat, ("t", None, "write"), "k")[2] == 0.0
    (row,) = recorder.operations[("PutItem", "p.put")].throttle_rows()
    assert row["scope"] == "t/gsi"


def test_a_call_refused_before_any_work_makes_no_heat_and_keeps_its_message() -> None:
    recorder = RunRecorder(heat=HeatConfig(buckets=8))
    message = 'Invalid ConditionExpression: Syntax error; token: "0", near: "> 0"'
    for _ in range(3):
        ctx = {
            **context(["k"], consumed={"TableName": "t", "CapacityUnits": 2.0},
                      error_code="ValidationException"),
            "error_message": message,
        }  # fmt: skip
        call(recorder, ctx, failed=True)
    counts = recorder.operations[("PutItem", "p.put")]
    assert (counts.requests, counts.rejected) == (3, 3)
    assert counts.message_rows() == [
        {"code": "ValidationException", "message": message, "count": 3}
    ]
    assert recorder.heat.lanes == {}  # no key touched, no unit consumed
    assert recorder.hottest() == []


def test_a_failed_condition_made_heat_and_a_cancelled_transaction_keeps_its_reasons() -> None:
    recorder = RunRecorder(heat=HeatConfig(buckets=8))
    ctx = {
        **context(["k"], consumed={"TableName": "t", "CapacityUnits": 1.0},
                  error_code="TransactionCanceledException"),
        "error_message": "Transaction cancelled, please refer cancellation reasons for "
        "specific reasons [None, ConditionalCheckFailed]",
        "cancellation_codes": ["ConditionalCheckFailed"],
    }  # fmt: skip
    call(recorder, ctx, operation="TransactWriteItems", name="buy", failed=True)
    counts = recorder.operations[("TransactWriteItems", "buy")]
    assert counts.cancellations == {"ConditionalCheckFailed": 1}
    assert counts.rejected == 0
    assert cell(recorder.heat, ("t", None, "write"), "k")[:2] == [1.0, 1.0]


def test_messages_are_bounded_per_code() -> None:
    recorder = RunRecorder(heat=HeatConfig(buckets=8))
    for i in range(MESSAGES_PER_CODE + 3):
        ctx = {**context(["k"], error_code="ValidationException"), "error_message": f"bad {i}"}
        call(recorder, ctx, failed=True)
    rows = recorder.operations[("PutItem", "p.put")].message_rows()
    assert len(rows) == MESSAGES_PER_CODE + 1
    assert rows[0] == {"code": "ValidationException", "message": OTHER_MESSAGES, "count": 3}


def test_reads_say_what_share_found_an_item() -> None:
    recorder = RunRecorder(heat=HeatConfig(buckets=8))
    for item in ({"pk": {"S": "k"}}, None, None, None):
        response = {"Item": item} if item else {}
        call(recorder, context(["k"]), operation="GetItem", name="get", response=response)
    counts = recorder.operations[("GetItem", "get")]
    assert (counts.looked, counts.found) == (4, 1)


def test_refusals_survive_a_worker_report() -> None:
    worker = RunRecorder(heat=HeatConfig(buckets=8))
    hot = Refusal("ThrottlingException", "TableWriteKeyRangeThroughputExceeded", ARN, "partition")
    call(worker, refused(1, hot, error_code="ThrottlingException"), failed=True)
    ctx = {**context(["k"], error_code="ValidationException"), "error_message": "bad"}
    call(worker, ctx, failed=True)
    master = RunRecorder(heat=HeatConfig(buckets=8))
    master.merge_dict(worker.to_dict())
    mine, theirs = worker.operations[("PutItem", "p.put")], master.operations[("PutItem", "p.put")]
    assert theirs.throttle_rows() == mine.throttle_rows()
    assert theirs.message_rows() == mine.message_rows()
    assert theirs.rejected == mine.rejected == 1


def test_the_summary_says_each_reason_and_message() -> None:
    results = {
        "operations": [
            {
                "name": "buy",
                "failures": 8,
                "errors": {"TransactionCanceledException": 8},
                "throttles": [
                    {"reason": "TableWriteKeyRangeThroughputExceeded", "scope": "Tickets",
                     "cause": "capacity", "source": "model", "exception": "ThrottlingException",
                     "attempts": 120, "final": 3},
                ],
                "error_messages": [
                    {"code": "TransactionCanceledException", "message": "Transaction cancelled",
                     "count": 8}
                ],
                "cancellations": {"ConditionalCheckFailed": 8},
            }
        ]
    }  # fmt: skip
    text = "\n".join(format_refusals(results))
    assert "120 attempts  TableWriteKeyRangeThroughputExceeded on Tickets (capacity)" in text
    assert "3 calls failed" in text
    assert "TransactionCanceledException x8: Transaction cancelled" in text
    assert "cancellation reasons: ConditionalCheckFailed x8" in text
