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

import json
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]

WORKLOADS = [
    ("counter", "single", ["--mix", "increment=3,read=1"]),
    ("counter", "sharded", ["--shards", "4"]),
    ("sensor", "by-time", ["--clock-speed", "0.001"]),
    ("sensor", "per-sensor", ["--clock-speed", "0.001"]),
    ("orders", "hot-status", []),
]
TABLES = {"counter": "ph-counter", "sensor": "ph-sensor", "orders": "ph-orders"}
TASKS = 60


def run(tmp_path: Path, workload: str, design: str, client: str, *extra: str) -> dict[str, Any]:
    out = tmp_path / f"{workload}-{design}-{client}.json"
    table = f"{TABLES[workload]}-{client}-{uuid.uuid4().hex[:8]}"
    result = subprocess.run(
        [sys.executable, "-m", "loadgen", "run", workload, "--design", design,
         "--client", client, "--users", "1", "--duration", "120s", "--keys", "40",
         "--seed", "7", "--tasks-per-user", str(TASKS), "--table", table,
         "--out", str(out), *extra],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-3000:]
    results: dict[str, Any] = json.loads(out.read_text())
    results["table"] = table
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
@pytest.mark.parametrize(("workload", "design", "extra"), WORKLOADS)
def test_same_results_on_dynamodb_local(tmp_path, dynamodb_local_endpoint, workload, design, extra):
    flags = ["--endpoint", dynamodb_local_endpoint, "--retry-mode", "none", *extra]
    outcomes = {
        client: outcome(run(tmp_path, workload, design, client, *flags), dynamodb_local_endpoint)
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
    tmp_path, dynamodb_local_endpoint, workload, design, extra
):
    # On demand: the emulator's default for orders, provisioned tables, would add up to more
    # than DynamoDB Local's account limit over the runs of a session.
    flags = ["--endpoint", dynamodb_local_endpoint, "--emulate", "--scale", "1e-6"]
    flags += ["--billing-mode", "on-demand"]
    flags += ["--retry-mode", "legacy", "--max-attempts", "2", *extra]
    outcomes = {
        client: outcome(run(tmp_path, workload, design, client, *flags), dynamodb_local_endpoint)
        for client in ("boto3", "fast")
    }
    assert outcomes["fast"] == outcomes["boto3"]
    rows = outcomes["fast"]["operations"].values()
    assert sum(row["throttled_attempts"] for row in rows) > TASKS  # most calls, twice each
    assert sum(row["retries"] for row in rows) > 0
