"""Results files made without a run, for the gate, diagnosis and report tests.

The heat and top keys come from a real `HeatMap` fed request contexts, so they have exactly
the shape `loadgen run --out` writes.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from loadgen.heat.heatmap import HeatConfig, HeatMap
from loadgen.refusals import Refusal

START = 1_800_000_000
ACCOUNT = "arn:aws:dynamodb:us-east-1:000000000000"
_READS = {"GetItem", "Query", "Scan", "BatchGetItem", "TransactGetItems"}


def event(
    second: int,
    operation: str,
    table: str,
    keys: list[str],
    *,
    units: float = 1.0,
    throttled: int = 0,
    index: str | None = None,
    index_keys: dict[str, list[str]] | None = None,
    refused_by: str | None = None,
    cause: str | None = "partition",
    reason: str | None = None,
) -> dict[str, Any]:
    """One call's request event. Its ``throttled`` attempts were refused by the table (or the
    read index), or by index ``refused_by`` (a GSI's back-pressure on a write), for ``cause``
    with ``reason`` (DynamoDB's, by default the key range of the side and resource); None for
    either: the target did not say."""
    scope_index = refused_by or index
    if reason is None and cause is not None:
        side = "Read" if operation in _READS else "Write"
        reason = f"{'Index' if scope_index else 'Table'}{side}KeyRangeThroughputExceeded"
    resource = f"{ACCOUNT}:table/{table}" + (f"/index/{scope_index}" if scope_index else "")
    refusal = Refusal("ThrottlingException", reason, resource if reason else None, cause)
    return {
        "second": second,
        "operation": operation,
        "context": {
            "table": table,
            "index": index,
            "partition_keys": keys,
            "throttled_attempts": throttled,
            "refusals": [refusal] * throttled,
            "consumed_capacity": {"TableName": table, "CapacityUnits": units},
            "index_keys": index_keys or {},
        },
    }


def throttle_rows(events: list[dict[str, Any]], operation: str | None) -> list[dict[str, Any]]:
    """The ``throttles`` of an operation row, as the recorder writes them, from ``events``
    (of one operation type, or all of them)."""
    counted: dict[tuple[Any, ...], int] = {}
    for e in events:
        if operation is not None and e["operation"] != operation:
            continue
        for r in e["context"].get("refusals") or ():
            key = (r.exception, r.reason, r.resource, r.cause)
            counted[key] = counted.get(key, 0) + 1
    rows = []
    for (exception, reason, resource, cause), attempts in counted.items():
        scope = None
        if resource:
            table, _, index = resource.split(":table/", 1)[1].partition("/index/")
            scope = f"{table}/{index}" if index else table
        rows.append(throttle_row(reason, cause, attempts, scope=scope, exception=exception))
    return rows


def op_row(
    name: str,
    operation: str,
    requests: int,
    *,
    failures: int = 0,
    throttled: int = 0,
    retries: int = 0,
    p50: float | None = 10,
    p95: float | None = 20,
    p99: float | None = 30,
    duration_s: float = 10.0,
    errors: dict[str, int] | None = None,
    attempts: int | None = None,
    units: dict[str, dict[str, float]] | None = None,
    hot_key: dict[str, Any] | None = None,
    throttles: list[dict[str, Any]] | None = None,
    error_messages: list[dict[str, Any]] | None = None,
    cancellations: dict[str, int] | None = None,
    scope_keys: dict[str, dict[str, Any]] | None = None,
) -> dict[str, Any]:
    if error_messages is None:
        error_messages = [{"code": c, "message": "", "count": n} for c, n in (errors or {}).items()]
    return {
        "scope_keys": scope_keys or {},
        "rejected": 0,
        "operation": operation,
        "name": name,
        "requests": requests,
        "failures": failures,
        "requests_per_s": requests / duration_s,
        "avg_ms": p50,
        "max_ms": (p99 or 0) + 5,
        "attempts": requests + retries if attempts is None else attempts,
        "throttled_attempts": throttled,
        "retries": retries,
        "unprocessed_items": 0,
        "errors": errors or {},
        "throttles": throttles or [],
        "error_messages": error_messages,
        "cancellations": cancellations or {},
        "units": units or {},
        "hot_key": hot_key,
        "p50_ms": p50,
        "p95_ms": p95,
        "p99_ms": p99,
    }


def throttle_row(
    reason: str | None,
    cause: str | None,
    attempts: int,
    *,
    scope: str | None = "t",
    exception: str = "ThrottlingException",
    final: int = 0,
) -> dict[str, Any]:
    """One entry of a results row's ``throttles``, as `OperationCounts.throttle_rows` writes
    it; None for what the target did not say."""
    table, _, index = (scope or "").partition("/")
    arn = f"arn:aws:dynamodb:us-east-1:000000000000:table/{table}" if scope else None
    return {
        "reason": reason or "not reported",
        "scope": scope,
        "cause": cause or "not reported",
        "source": "model" if cause else "engine",
        "exception": exception,
        "attempts": attempts,
        "final": final,
        "resource": f"{arn}/index/{index}" if arn and index else arn,
    }


def make_results(
    events: list[dict[str, Any]],
    operations: list[dict[str, Any]] | None = None,
    *,
    scale: float | None = 0.1,
    buckets: int = 256,
    hash_keys: str | None = None,
    duration_s: float = 10.0,
) -> dict[str, Any]:
    heat = HeatMap(HeatConfig(buckets=buckets, hash_keys=hash_keys, capacity_source="reported"))
    for e in events:
        heat.record(e["operation"], e["context"], {}, start_time=START + e["second"])
    if operations is None:
        operations = [op_row("w.put", "PutItem", max(1, len(events)))]
        operations[0]["throttles"] = throttle_rows(events, None)
    else:
        for row in operations:
            if "throttles" not in row or not row["throttles"]:
                row["throttles"] = throttle_rows(events, row["operation"])
        if operations and not any(row["throttles"] for row in operations):
            # Rows named for other operations than the events': the first takes them.
            operations[0]["throttles"] = throttle_rows(events, None)
    totals = op_row(
        "Aggregated",
        "",
        sum(r["requests"] for r in operations),
        failures=sum(r["failures"] for r in operations),
        throttled=sum(r["throttled_attempts"] for r in operations),
        retries=sum(r["retries"] for r in operations),
        p50=max((r["p50_ms"] or 0) for r in operations),
        p95=max((r["p95_ms"] or 0) for r in operations),
        p99=max((r["p99_ms"] or 0) for r in operations),
        duration_s=duration_s,
        throttles=[t for r in operations for t in r.get("throttles") or ()],
        error_messages=[m for r in operations for m in r.get("error_messages") or ()],
        cancellations=dict(
            sum((Counter(r.get("cancellations") or {}) for r in operations), Counter())
        ),
    )
    totals["errors"] = dict(sum((Counter(r["errors"]) for r in operations), Counter()))
    return {
        "schema_version": 1,
        "run": {
            "workload": "test",
            "design": "d",
            "distribution": "uniform",
            "keys": 100,
            "seed": 1,
            "target": "test",
            "scale": scale,
            "users": 1,
            "interrupted": False,
        },
        "duration_s": duration_s,
        "operations": operations,
        "totals": totals,
        "hot_keys": [],
        "top_keys": heat.top_keys_dict(),
        "heat": heat.matrix(),
    }


def steady(
    table: str,
    keys: list[str],
    *,
    seconds: int = 10,
    per_second: int = 10,
    operation: str = "PutItem",
    units: float = 1.0,
    throttled: int = 0,
    index: str | None = None,
    cause: str | None = "partition",
    reason: str | None = None,
) -> list[dict[str, Any]]:
    """``per_second`` calls a second for ``seconds``, cycling over ``keys``."""
    events = []
    n = 0
    for second in range(seconds):
        for _ in range(per_second):
            key = keys[n % len(keys)]
            n += 1
            call = event(second, operation, table, [key], units=units, throttled=throttled,
                         index=index, cause=cause, reason=reason)  # fmt: skip
            events.append(call)
    return events


def pattern(
    id: str,
    operation: str,
    rate: float,
    *,
    table: str = "chat",
    index: str | None = None,
    latency: tuple[float, float] | None = None,
    description: str = "",
) -> dict[str, Any]:
    """One access pattern as a design run writes it in ``results["design"]["patterns"]``."""
    return {
        "id": id,
        "description": description or id,
        "operation": operation,
        "table": table,
        "index": index,
        "rate": rate,
        "latency": None if latency is None else {"percentile": latency[0], "ms": latency[1]},
    }


def with_design(
    results: dict[str, Any],
    patterns: list[dict[str, Any]],
    *,
    empty: bool = False,
    items: int = 1000,
    offered: dict[str, tuple[int, ...]] | None = None,
    rate_scale: float = 0.1,
) -> dict[str, Any]:
    """``results`` of a design run: its patterns, its starting data and, given ``offered``
    (pattern id to offered and achieved arrivals, then optionally those dropped and their
    mean service time in ms), an open-model ``load`` section."""
    results["design"] = {
        "file": "chat.yaml",
        "name": "default",
        "patterns": patterns,
        "starting_data": {
            "items": 0 if empty else items,
            "empty": empty,
            "note": "no items written before the load" if empty else f"{items} items",
        },
    }
    if offered is not None:
        results["load"] = {
            "model": "open",
            "rate": sum(p["rate"] for p in patterns),
            "rates": {p["id"]: p["rate"] for p in patterns},
            "arrivals": "constant",
            "scale": rate_scale,
            "operations": [
                {
                    "operation": op,
                    "offered": counts[0],
                    "achieved": counts[1],
                    "dropped": (*counts, 0)[2],
                    "service_mean_ms": (*counts, 0, 5.0)[3],
                }
                for op, counts in offered.items()
            ],
        }
    return results
