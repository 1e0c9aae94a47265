"""Your own traffic end to end: a plain boto3 application captured by the emulator and by the
botocore hook, replayed on the embedded target, and a table prefilled with aioboto3."""

from __future__ import annotations

import json
import math
import random
import time
import urllib.request
from collections import Counter
from pathlib import Path
from typing import Any

import boto3
import pytest

from loadgen import capture
from loadgen.emulator.embedded import EmbeddedEmulator
from loadgen.emulator.metrics import _METRIC as METRIC
from loadgen.model.itemsize import item_size
from loadgen.traffic.trace import TraceRecord, TraceWriter, read_trace
from tests.test_run import loadgen

pytestmark = pytest.mark.slow


def _client(url: str) -> Any:
    return boto3.client(
        "dynamodb",
        endpoint_url=url,
        region_name="us-east-1",
        aws_access_key_id="local",
        aws_secret_access_key="local",
    )


def _application(db: Any, requests: int, seed: int = 7, rate: float = 60.0) -> None:
    """A small application in plain boto3: events per user, one user taking most writes, at
    a steady ``rate`` of calls per second (as a service under a steady load, and so that
    replayed at twice its speed its hot user stays under the model's scaled ceiling: then
    the replay's mix is the trace's, not what throttling let through)."""
    db.create_table(
        TableName="app",
        KeySchema=[
            {"AttributeName": "pk", "KeyType": "HASH"},
            {"AttributeName": "sk", "KeyType": "RANGE"},
        ],
        AttributeDefinitions=[
            {"AttributeName": "pk", "AttributeType": "S"},
            {"AttributeName": "sk", "AttributeType": "S"},
        ],
        BillingMode="PAY_PER_REQUEST",
    )
    rng = random.Random(seed)
    due = time.monotonic()
    for i in range(requests):
        due += 1 / rate
        time.sleep(max(0.0, due - time.monotonic()))
        user = "user#hot" if rng.random() < 0.7 else f"user#{rng.randrange(200)}"
        draw = rng.random()
        if draw < 0.6:
            item = {"pk": {"S": user}, "sk": {"S": f"event#{i}"}, "body": {"S": "x" * 200}}
            db.put_item(TableName="app", Item=item)
        elif draw < 0.85:
            db.get_item(TableName="app", Key={"pk": {"S": user}, "sk": {"S": f"event#{i - 1}"}})
        else:
            db.query(
                TableName="app",
                KeyConditionExpression="pk = :p",
                ExpressionAttributeValues={":p": {"S": user}},
                Limit=3,
            )


def test_a_captured_application_replays_with_its_hot_key_and_mix(tmp_path: Path) -> None:
    trace_path = tmp_path / "t.jsonl.gz"
    # The capture and the replay on the embedded moto: the partition model, not the engine,
    # decides what throttles, and moto starts in a second where DynamoDB Local takes several.
    with EmbeddedEmulator(extra_args=["--capture", str(trace_path)], engine="moto") as emulator:
        _application(_client(emulator.endpoint_url), 500)
    trace = read_trace(trace_path)
    # Every attempt the emulator answered: the 500 calls, and the SDK's retries of throttled
    # ones (how many depends on how fast the engine lets the hot user write).
    assert trace.end is not None and trace.end["records"] == len(trace.records)
    assert sum(r.out != "throttled" for r in trace.records) == 500
    keys = Counter(r.pk for r in trace.records)
    hot, hot_count = keys.most_common(1)[0]
    captured_share = hot_count / len(trace.records)
    captured_mix = Counter(r.op for r in trace.records)

    out = tmp_path / "r.json"
    result = loadgen(
        "replay", str(trace_path), "--speed", "2", "--duration", "6s", "--engine", "moto",
        "--out", str(out),
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-2000:]
    results = json.loads(out.read_text())
    top = results["hot_keys"][0]
    assert (top["table"], top["key"]) == ("app", hot)
    assert abs(top["share"] - captured_share) <= 0.10, (top["share"], captured_share)
    replayed = Counter()
    for row in results["operations"]:
        replayed[row["operation"]] += row["requests"]
    total = sum(replayed.values())
    assert total > 200
    for operation, count in captured_mix.items():
        assert abs(replayed[operation] / total - count / len(trace.records)) <= 0.05, operation


def test_the_botocore_hook_records_an_application_with_its_key_schema(tmp_path: Path) -> None:
    path = tmp_path / "app.jsonl.gz"
    # On moto: the hook reads the key schema from DescribeTable and sizes items itself, and
    # the model charges the units, whatever the engine.
    with EmbeddedEmulator(engine="moto") as emulator:
        db = _client(emulator.endpoint_url)
        with capture.install(db, path) as recording:
            _application(db, 60)
        assert recording.records == 60
    trace = read_trace(path)
    assert trace.schemas["app"]["pk"] == ["pk", "S"] and trace.schemas["app"]["sk"] == ["sk", "S"]
    puts = [r for r in trace.records if r.op == "PutItem"]
    assert puts and all(r.pk and r.sk and r.sk.startswith("event#") for r in puts)
    # DynamoDB's item size: "pk" and its value, "sk" and its value, "body" and 200 bytes.
    assert all(r.size == 2 + len(r.pk or "") + 2 + len(r.sk or "") + 4 + 200 for r in puts)
    assert all(r.out == "ok" and r.units > 0 for r in puts)


def test_a_call_that_gets_no_answer_is_recorded_with_its_error(tmp_path: Path) -> None:
    from botocore.config import Config

    path = tmp_path / "down.jsonl.gz"
    config = Config(retries={"total_max_attempts": 1}, connect_timeout=1)
    db = boto3.client(
        "dynamodb",
        endpoint_url="http://127.0.0.1:9",  # nothing listens on the discard port
        region_name="us-east-1",
        aws_access_key_id="local",
        aws_secret_access_key="local",
        config=config,
    )
    with (
        capture.install(db, path, describe_tables=False),
        pytest.raises(Exception, match="Could not connect"),
    ):
        db.get_item(TableName="app", Key={"pk": {"S": "a"}})
    [record] = read_trace(path).records
    assert (record.op, record.pk, record.out) == ("GetItem", "a", "EndpointConnectionError")


def _table_metrics(url: str, table: str) -> tuple[int, float]:
    """The emulator's partition count and data size of ``table``, from its /metrics."""
    text = urllib.request.urlopen(f"{url}/metrics", timeout=10).read().decode()
    labels = f'{{index="",table="{table}"}}'
    values = {}
    for line in text.splitlines():
        name, _, value = line.rpartition(" ")
        if name.endswith(labels):
            values[name.removesuffix(labels)] = float(value)
    return int(values[f"{METRIC}_partitions"]), values[f"{METRIC}_table_size_bytes"]


def test_prefill_fills_a_running_emulator_and_refuses_a_full_table(tmp_path: Path) -> None:
    # Partitions of 4 KB: the table's size decides its partition count within seconds. On
    # moto: the emulator counts the partitions and the bytes, whatever the engine. At scale 1
    # the new table's 4,000 write units/s carry the prefill however fast the engine answers
    # (at 0.1 a fast engine let it outrun 400 and run out of attempts).
    args = ["--partition-size", "4KB"]
    with EmbeddedEmulator(scale=1, extra_args=args, engine="moto") as emulator:
        url = emulator.endpoint_url
        result = loadgen(
            "prefill", "counter", "--design", "sharded", "--items", "3000", "--endpoint", url
        )
        assert result.returncode == 0, result.stderr[-2000:]
        assert result.stdout.startswith("Prefilled 3,000 items (")
        assert "into ph-counter" in result.stdout
        db = _client(url)
        count = sum(
            page["Count"]
            for page in db.get_paginator("scan").paginate(TableName="ph-counter", Select="COUNT")
        )
        assert count == 3000
        partitions, size = _table_metrics(url, "ph-counter")
        assert size > 3000 * 25  # COUNTER#c<n>#SHARD#<s> and its count: 25 bytes or more
        # On demand, the table starts with 8 partitions (its warm throughput) and doubles
        # until they hold its data (or its throughput, which grew too).
        assert partitions >= max(32, math.ceil(size / 4096))
        shards = {
            page_item["pk"]["S"] for page_item in db.scan(TableName="ph-counter", Limit=20)["Items"]
        }
        assert all(pk.startswith("COUNTER#c") and "#SHARD#" in pk for pk in shards)

        again = loadgen(
            "prefill", "counter", "--design", "sharded", "--items", "10", "--endpoint", url
        )
        assert again.returncode == 2
        assert again.stderr.strip().splitlines() == [
            f"loadgen: error: table 'ph-counter' at {url} already holds items; pass "
            "--allow-existing to add to them"
        ]
        more = loadgen(
            "prefill", "counter", "--design", "sharded", "--items", "10", "--endpoint", url,
            "--allow-existing",
        )  # fmt: skip
        assert more.returncode == 0, more.stderr[-2000:]

        # A trace's keys at their recorded sizes, then their copies.
        trace = tmp_path / "t.jsonl.gz"
        with TraceWriter(trace, source="boto3") as writer:
            writer.schema({"name": "app", "pk": ["pk", "S"], "sk": None, "indexes": {}})
            for key, size in (("a", 50), ("b", 300), ("a", 80)):
                writer.write(TraceRecord(0.0, "PutItem", "app", key, size=size))
        result = loadgen("prefill", str(trace), "--items", "5", "--endpoint", url)
        assert result.returncode == 0, result.stderr[-2000:]
        items = {i["pk"]["S"]: item_size(i) for i in db.scan(TableName="app")["Items"]}
        assert items == {"a": 80, "b": 300, "a~1": 80, "b~1": 300, "a~2": 80}


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["prefill", "counter", "--items", "10"], "prefill needs a table that outlives it"),
        (
            ["prefill", "counter", "--items", "0", "--endpoint", "http://127.0.0.1:9"],
            "--items must be >= 1 (got 0)",
        ),
        (
            ["prefill", "nosuch", "--items", "5", "--endpoint", "http://127.0.0.1:9"],
            "unknown prefill source 'nosuch'",
        ),
        (["replay", "missing.jsonl.gz"], "cannot read the trace 'missing.jsonl.gz'"),
        (["replay", "README.md"], "README.md: not a trace file"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(args: list[str], message: str) -> None:
    result = loadgen(*args, timeout=60)
    assert result.returncode == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0], lines
