"""Every workload gives the same results through the boto3 client and the fast client.

Each run is a real ``loadgen run`` in a child process with a fixed seed, one user and a task
budget (``--tasks-per-user``), so a run sends the same requests in the same order whichever
client sends them. Compared: per access pattern the requests, failures by error code,
throttled attempts, retries and unprocessed batch items; the keys hit (every key's count);
and the items in the table afterwards (a Scan of DynamoDB Local).

Two targets:

- DynamoDB Local, which never throttles: the outcomes must be equal, with no failures.
- The emulator in front of DynamoDB Local at scale 1e-6: every partition admits its first
  unit and then stays in debt for some 1,000 s, far beyond a run, so which requests are
  throttled follows from their order alone, not from timing, and the throttle counts must
  be equal too. (At a scale where buckets refill during the run, throttles depend on how
  fast each client sends, and equal counts are not to be expected.) Two attempts per call in
  legacy mode, so retries are counted and compared as well.

One user, since two users' requests interleave by timing: whichever reaches a partition
first takes its one admitted unit, and concurrent transactions on one item may conflict.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from tests.conftest import TASKS, TaskRun

WORKLOADS = [
    ("counter", "single", ["--mix", "increment=3,read=1"]),
    ("counter", "sharded", ["--shards", "4"]),
    ("sensor", "by-time", ["--clock-speed", "0.001"]),
    ("sensor", "per-sensor", ["--clock-speed", "0.001"]),
    ("orders", "hot-status", []),
]
ON_DYNAMODB_LOCAL = [*WORKLOADS, ("orders", "sharded-status", [])]
"""On DynamoDB Local, orders' good design too: tests/test_run.py compares it with the bad."""


def on_dynamodb_local(
    task_run: Callable[..., TaskRun], endpoint: str, workload: str, design: str, client: str
) -> TaskRun:
    """The session's run that `test_same_results_on_dynamodb_local` compares (tests/test_run.py
    judges its boto3 client's runs of each design, bad against good)."""
    (extra,) = [e for w, d, e in ON_DYNAMODB_LOCAL if (w, d) == (workload, design)]
    flags = ["--endpoint", endpoint, "--retry-mode", "none", *extra]
    return task_run(workload, design, client, *flags)


def results_of(run: TaskRun) -> dict[str, Any]:
    assert run.returncode == 0, run.stderr[-3000:]
    results = run.results()
    results["table"] = run.table
    return results


def outcome(results: dict[str, Any], endpoint: str) -> dict[str, Any]:
    """What must not depend on the client: counts, codes, keys and items; no timings."""
    operations = {
        (row["operation"], row["name"]): {
            key: row[key]
            for key in (
                "requests",
                "failures",
                "errors",
                "throttled_attempts",
                "retries",
                "unprocessed_items",
            )
        }
        for row in results["operations"]
    }
    table = results["table"]
    keys = sorted(
        (row["table"].replace(table, "T"), row["key"], row["requests"])
        for row in results["hot_keys"]
    )
    return {"operations": operations, "keys": keys, "items": count_items(endpoint, table)}


def count_items(endpoint: str, table: str) -> int:
    import boto3

    ddb = boto3.client("dynamodb", endpoint_url=endpoint, region_name="us-east-1")
    count = 0
    for page in ddb.get_paginator("scan").paginate(TableName=table, Select="COUNT"):
        count += page["Count"]
    ddb.delete_table(TableName=table)  # DynamoDB Local is shared by the session
    return count


@pytest.mark.slow
@pytest.mark.dynamodb_local
@pytest.mark.parametrize(("workload", "design"), [(w, d) for w, d, _ in ON_DYNAMODB_LOCAL])
def test_same_results_on_dynamodb_local(task_run, dynamodb_local_endpoint, workload, design):
    endpoint = dynamodb_local_endpoint
    outcomes = {
        client: outcome(
            results_of(on_dynamodb_local(task_run, endpoint, workload, design, client)), endpoint
        )
        for client in ("boto3", "fast")
    }
    assert outcomes["fast"] == outcomes["boto3"]
    totals = outcomes["fast"]["operations"].values()
    assert sum(row["requests"] for row in totals) >= TASKS
    assert not any(row["failures"] for row in totals)
    assert outcomes["fast"]["items"] > 0


@pytest.mark.slow
@pytest.mark.dynamodb_local
@pytest.mark.parametrize(("workload", "design", "extra"), WORKLOADS)
def test_same_throttles_through_the_emulator(
    task_run, dynamodb_local_endpoint, workload, design, extra
):
    # On demand: the emulator's default for orders, provisioned tables, would add up to more
    # than DynamoDB Local's account limit over the runs of a session.
    flags = ["--endpoint", dynamodb_local_endpoint, "--emulate", "--scale", "1e-6"]
    flags += ["--billing-mode", "on-demand"]
    flags += ["--retry-mode", "legacy", "--max-attempts", "2", *extra]
    outcomes = {
        client: outcome(
            results_of(task_run(workload, design, client, *flags)), dynamodb_local_endpoint
        )
        for client in ("boto3", "fast")
    }
    assert outcomes["fast"] == outcomes["boto3"]
    rows = outcomes["fast"]["operations"].values()
    assert sum(row["throttled_attempts"] for row in rows) > TASKS  # most calls, twice each
    assert sum(row["retries"] for row in rows) > 0
