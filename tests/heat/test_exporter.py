"""The Prometheus exporter: exact exposition, bounded series, promtool, serving on loopback."""

# ruff: noqa: E501  (the expected exposition has long HELP lines)

from __future__ import annotations

import itertools
import json
import socket
import subprocess
import sys
import time
import urllib.request
from types import SimpleNamespace
from typing import Any, get_args

import pytest
from locust.env import Environment
from locust.runners import WorkerRunner
from prometheus_client import CollectorRegistry, generate_latest

from loadgen.errors import ConfigError
from loadgen.heat import exporter
from loadgen.heat.exporter import HeatCollector
from loadgen.heat.heatmap import HeatConfig
from loadgen.heat.recorder import LATENCY_BUCKETS_S, RunRecorder
from loadgen.model.throttling import Limit, throttle
from loadgen.refusals import Refusal
from tests.conftest import installed
from tests.heat.test_heat import T0, context


def exposition(recorder: RunRecorder) -> str:
    registry = CollectorRegistry()
    registry.register(HeatCollector(recorder))
    return generate_latest(registry).decode()


def request(recorder: RunRecorder, ctx: dict[str, Any], **kwargs: Any) -> None:
    kwargs.setdefault("request_type", "PutItem")
    kwargs.setdefault("name", "p.put")
    kwargs.setdefault("response_time", 12.0)
    recorder._on_request(context=ctx, start_time=T0, response={}, **kwargs)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


ARN = "arn:aws:dynamodb:us-east-1:000000000000:table/t"


def small_recorder() -> RunRecorder:
    """A call throttled once for a hot partition then served, and one whose transaction was
    cancelled after a throttle that named no reason (the target's words: none)."""
    recorder = RunRecorder(heat=HeatConfig(buckets=2, top_k=1))
    hot = Refusal("ThrottlingException", "TableWriteKeyRangeThroughputExceeded", ARN, "partition")
    request(
        recorder,
        {
            **context(["k"], consumed={"TableName": "t", "CapacityUnits": 1.0}, throttled=1),
            "refusals": [hot],
        },
    )
    request(
        recorder,
        {
            **context(
                ["k"],
                consumed={"TableName": "t", "CapacityUnits": 1.0},
                throttled=1,
                error_code="TransactionCanceledException",
            ),
            "refusals": [Refusal("ThrottlingException")],
            "cancellation_codes": ["ConditionalCheckFailed", "SomethingNew"],
            "error_message": "Transaction cancelled, please refer cancellation reasons",
        },
        response_time=3.0,
        exception=Exception("no"),
    )
    return recorder


EXPECTED = """\
# HELP partition_heat_bucket_requests_total Partition-key touches per hash bucket (a batch of n keys counts n)
# TYPE partition_heat_bucket_requests_total counter
partition_heat_bucket_requests_total{access="write",bucket="0",index="",table="t"} 0.0
partition_heat_bucket_requests_total{access="write",bucket="1",index="",table="t"} 2.0
# HELP partition_heat_bucket_throttled_attempts_total Throttled attempts per hash bucket, counted for each key the attempt touched
# TYPE partition_heat_bucket_throttled_attempts_total counter
partition_heat_bucket_throttled_attempts_total{access="write",bucket="0",index="",table="t"} 0.0
partition_heat_bucket_throttled_attempts_total{access="write",bucket="1",index="",table="t"} 2.0
# HELP partition_heat_bucket_consumed_write_units_total Write capacity units consumed per hash bucket
# TYPE partition_heat_bucket_consumed_write_units_total counter
partition_heat_bucket_consumed_write_units_total{bucket="0",index="",table="t"} 0.0
partition_heat_bucket_consumed_write_units_total{bucket="1",index="",table="t"} 2.0
# HELP partition_heat_key_requests_total Requests of the top 1 partition keys per table or index (Space-Saving estimate: over by at most the error bound)
# TYPE partition_heat_key_requests_total counter
partition_heat_key_requests_total{index="",key="k",table="t"} 2.0
# HELP partition_heat_key_consumed_units_total Consumed read and write units of the top 1 partition keys per table or index (Space-Saving estimate: over by at most the error bound)
# TYPE partition_heat_key_consumed_units_total counter
partition_heat_key_consumed_units_total{index="",key="k",table="t"} 2.0
# HELP partition_heat_key_requests_error_bound Most that any key's request estimate exceeds its true count
# TYPE partition_heat_key_requests_error_bound gauge
partition_heat_key_requests_error_bound{index="",table="t"} 0.0
# HELP partition_heat_key_consumed_units_error_bound Most that any key's consumed-units estimate exceeds its true figure
# TYPE partition_heat_key_consumed_units_error_bound gauge
partition_heat_key_consumed_units_error_bound{index="",table="t"} 0.0
# HELP partition_heat_requests_total Calls, as Locust counts them
# TYPE partition_heat_requests_total counter
partition_heat_requests_total{operation="PutItem",pattern="p.put"} 2.0
# HELP partition_heat_attempts_total HTTP attempts, retries included
# TYPE partition_heat_attempts_total counter
partition_heat_attempts_total{operation="PutItem",pattern="p.put"} 4.0
# HELP partition_heat_retries_total Attempts the SDK retried
# TYPE partition_heat_retries_total counter
partition_heat_retries_total{operation="PutItem",pattern="p.put"} 2.0
# HELP partition_heat_throttled_attempts_total Attempts answered with a throttle
# TYPE partition_heat_throttled_attempts_total counter
partition_heat_throttled_attempts_total{operation="PutItem",pattern="p.put"} 2.0
# HELP partition_heat_unprocessed_items_total Batch items returned unprocessed
# TYPE partition_heat_unprocessed_items_total counter
partition_heat_unprocessed_items_total{operation="PutItem",pattern="p.put"} 0.0
# HELP partition_heat_failures_total Calls that failed after the SDK's retries, by error code
# TYPE partition_heat_failures_total counter
partition_heat_failures_total{error_code="TransactionCanceledException",operation="PutItem",pattern="p.put"} 1.0
# HELP partition_heat_request_duration_seconds Call duration, retries included
# TYPE partition_heat_request_duration_seconds histogram
partition_heat_request_duration_seconds_bucket{le="0.001",operation="PutItem",pattern="p.put"} 0.0
partition_heat_request_duration_seconds_bucket{le="0.0025",operation="PutItem",pattern="p.put"} 0.0
partition_heat_request_duration_seconds_bucket{le="0.005",operation="PutItem",pattern="p.put"} 1.0
partition_heat_request_duration_seconds_bucket{le="0.01",operation="PutItem",pattern="p.put"} 1.0
partition_heat_request_duration_seconds_bucket{le="0.025",operation="PutItem",pattern="p.put"} 2.0
partition_heat_request_duration_seconds_bucket{le="0.05",operation="PutItem",pattern="p.put"} 2.0
partition_heat_request_duration_seconds_bucket{le="0.1",operation="PutItem",pattern="p.put"} 2.0
partition_heat_request_duration_seconds_bucket{le="0.25",operation="PutItem",pattern="p.put"} 2.0
partition_heat_request_duration_seconds_bucket{le="0.5",operation="PutItem",pattern="p.put"} 2.0
partition_heat_request_duration_seconds_bucket{le="1.0",operation="PutItem",pattern="p.put"} 2.0
partition_heat_request_duration_seconds_bucket{le="2.5",operation="PutItem",pattern="p.put"} 2.0
partition_heat_request_duration_seconds_bucket{le="5.0",operation="PutItem",pattern="p.put"} 2.0
partition_heat_request_duration_seconds_bucket{le="10.0",operation="PutItem",pattern="p.put"} 2.0
partition_heat_request_duration_seconds_bucket{le="+Inf",operation="PutItem",pattern="p.put"} 2.0
partition_heat_request_duration_seconds_count{operation="PutItem",pattern="p.put"} 2.0
partition_heat_request_duration_seconds_sum{operation="PutItem",pattern="p.put"} 0.015
# HELP partition_heat_throttled_attempts_by_reason_total Throttled attempts by the target's ThrottlingReason and the partition model's cause (an attempt refused on several tables or indexes counts for each)
# TYPE partition_heat_throttled_attempts_by_reason_total counter
partition_heat_throttled_attempts_by_reason_total{cause="not reported",index="",operation="PutItem",pattern="p.put",reason="not reported",table=""} 1.0
partition_heat_throttled_attempts_by_reason_total{cause="partition",index="",operation="PutItem",pattern="p.put",reason="TableWriteKeyRangeThroughputExceeded",table="t"} 1.0
# HELP partition_heat_cancellation_reasons_total Actions of cancelled transactions, by their CancellationReasons code
# TYPE partition_heat_cancellation_reasons_total counter
partition_heat_cancellation_reasons_total{code="ConditionalCheckFailed",operation="PutItem",pattern="p.put"} 1.0
partition_heat_cancellation_reasons_total{code="other",operation="PutItem",pattern="p.put"} 1.0
# HELP partition_heat_buckets Hash buckets per table or index (bucket b holds hashes in [b, b+1) * 2^64 / B)
# TYPE partition_heat_buckets gauge
partition_heat_buckets 2.0
"""


def test_exposition_is_exactly_as_documented() -> None:
    assert exposition(small_recorder()) == EXPECTED


def samples(text: str) -> list[str]:
    return [line for line in text.splitlines() if line and not line.startswith("#")]


def test_a_million_distinct_keys_keep_the_series_bounded() -> None:
    buckets, top_k = 256, 20
    recorder = RunRecorder(heat=HeatConfig(buckets=buckets, top_k=top_k))
    ctx = context(["x"], consumed={"TableName": "t", "CapacityUnits": 1.0})
    listener = recorder._on_request
    counts = {}
    for i in range(1_000_000):
        ctx["partition_keys"] = [f"USER#{i:09d}"]
        listener(
            request_type="UpdateItem",
            name="u.update",
            response_time=5.0,
            context=ctx,
            start_time=T0 + i / 1000,
            response={},
        )
        if i + 1 in (1_000, 1_000_000):
            counts[i + 1] = len(samples(exposition(recorder)))
    collector = HeatCollector(recorder)
    # One write lane: 3 families x B buckets; one table: top K by requests and by units
    # plus two error bounds; one pattern: 5 counters + a histogram of 13 + 1 buckets, sum
    # and count; and the bucket-count gauge. Nothing grows with the keys.
    expected = 3 * buckets + (2 * top_k + 2) + (5 + len(LATENCY_BUCKETS_S) + 3) + 1
    assert counts == {1_000: expected, 1_000_000: expected}
    assert expected <= collector.series_bound() < 1000
    # The heat itself saw every request.
    text = exposition(recorder)
    total = sum(
        float(line.rsplit(" ", 1)[1])
        for line in samples(text)
        if line.startswith("partition_heat_bucket_requests_total")
    )
    assert total == 1_000_000


def test_reasons_causes_and_codes_outside_dynamodbs_words_add_no_series() -> None:
    # A target that sends a new word with every throttle (a misbehaving engine) must not
    # grow the series: each label keeps to its bounded set, "other" for anything else.
    recorder = RunRecorder(heat=HeatConfig(buckets=2, top_k=1))
    sizes = []
    for i in range(500):
        said = Refusal("ThrottlingException", f"Reason{i}", f"{ARN}/index/g", f"cause{i}")
        request(
            recorder,
            {
                **context(["k"], throttled=1, error_code="TransactionCanceledException"),
                "refusals": [said],
                "cancellation_codes": [f"Code{i}"],
            },
            exception=Exception("no"),
        )
        if i in (0, 499):
            sizes.append(len(samples(exposition(recorder))))
    assert sizes[0] == sizes[1]
    text = exposition(recorder)
    assert (
        'partition_heat_throttled_attempts_by_reason_total{cause="other",index="g",'
        'operation="PutItem",pattern="p.put",reason="other",table="t"} 500.0' in text
    )
    assert (
        'partition_heat_cancellation_reasons_total{code="other",operation="PutItem",'
        'pattern="p.put"} 500.0' in text
    )
    assert len(samples(text)) <= HeatCollector(recorder).series_bound()


def test_batch_items_left_unprocessed_are_counted_apart_from_attempts() -> None:
    recorder = RunRecorder(heat=HeatConfig(buckets=2, top_k=1))
    left = Refusal(
        "UnprocessedItems", "IndexWriteKeyRangeThroughputExceeded", f"{ARN}/index/g", "capacity"
    )
    request(
        recorder,
        {**context(["k"]), "refusals": [left, left], "unprocessed": 2},
        request_type="BatchWriteItem",
        name="p.batch",
    )
    lines = [line for line in samples(exposition(recorder)) if "_by_reason_" in line]
    assert lines == [
        'partition_heat_unprocessed_items_by_reason_total{cause="capacity",index="g",'
        'operation="BatchWriteItem",pattern="p.batch",'
        'reason="IndexWriteKeyRangeThroughputExceeded",table="t"} 2.0'
    ]


def test_every_reason_the_model_gives_is_a_label_value() -> None:
    for limit in get_args(Limit):
        for index, kind, on_demand in itertools.product((None, "g"), ("read", "write"), (1, 0)):
            said = throttle(
                table="t", index=index, kind=kind, on_demand=bool(on_demand), limit=limit,
                resource=ARN,
            )  # fmt: skip
            assert said.reason in exporter.REASON_VALUES, said
            assert said.cause in exporter.CAUSE_VALUES, said


def promtool_or_skip() -> str:
    return installed("promtool")


def test_promtool_finds_nothing_to_fix() -> None:
    promtool = promtool_or_skip()
    recorder = small_recorder()
    request(
        recorder,
        context(["g"], index="gsi", consumed={"TableName": "t", "CapacityUnits": 0.5}),
        request_type="Query",
        name="p.query",
    )
    result = subprocess.run(
        [promtool, "check", "metrics"],
        input=exposition(recorder),
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.strip() == "" and result.stderr.strip() == ""


class FakeWorker(WorkerRunner):
    """Only the runner's type matters to the exporter: no connection to a master."""

    greenlet = None

    def __init__(self) -> None:
        pass


def environment(worker: bool = False, **options: Any) -> Environment:
    env = Environment(parsed_options=SimpleNamespace(**options))
    if worker:
        env.runner = FakeWorker()
    return env


def test_register_serves_on_loopback_and_is_idempotent() -> None:
    env = environment()
    server = exporter.register(env, port=0, buckets=16, top_k=5)
    assert server is not None
    try:
        assert server.url.startswith("http://127.0.0.1:")
        assert exporter.register(env, port=0) is server
        recorder = RunRecorder.of(env)
        assert (recorder.heat.config.buckets, recorder.heat.config.top_k) == (16, 5)
        env.events.request.fire(
            request_type="GetItem",
            name="g.get",
            start_time=T0,
            response_time=2.0,
            response_length=0,
            response={},
            context=context(["k"], consumed={"TableName": "t", "CapacityUnits": 0.5}),
            exception=None,
        )
        with urllib.request.urlopen(server.url, timeout=5) as response:
            text = response.read().decode()
        assert 'partition_heat_requests_total{operation="GetItem",pattern="g.get"} 1.0' in text
        assert "partition_heat_buckets 16.0" in text
    finally:
        server.close()


def test_workers_count_but_do_not_serve() -> None:
    env = environment(worker=True, heat_buckets=64)
    assert exporter.register(env, port=0) is None
    assert RunRecorder.of(env).heat.config.buckets == 64
    assert "loadgen_metrics" not in env.__dict__


def test_settings_cannot_change_once_counting() -> None:
    env = environment()
    recorder = RunRecorder.of(env, buckets=32)
    request(recorder, context(["k"], consumed={"TableName": "t", "CapacityUnits": 1.0}))
    with pytest.raises(ConfigError, match="differ from those already counting"):
        RunRecorder.of(env, buckets=64)


def test_a_port_in_use_is_one_clear_error() -> None:
    first = exporter.register(environment(), port=0)
    assert first is not None
    try:
        with pytest.raises(ConfigError, match=f"cannot serve metrics on 127.0.0.1:{first.port}"):
            exporter.register(environment(), port=first.port)
    finally:
        first.close()


PLAIN_LOCUSTFILE = """
from locust import User, constant, events, task

from loadgen.heat import exporter
from loadgen.client import DynamoClient


@events.init.add_listener
def on_init(environment, **kwargs):
    exporter.register(environment, port={port}, buckets=32, linger=4)


class PlainUser(User):
    wait_time = constant(0.01)

    def on_start(self):
        self.db = DynamoClient(self.environment, endpoint_url=self.host)

    @task
    def put(self):
        self.db.call("PutItem", "plain.put", table="plain", pk="k1", Item={{"pk": {{"S": "k1"}}}})
"""


@pytest.mark.slow
def test_one_call_in_a_plain_locustfile(tmp_path, moto_endpoint: str) -> None:
    """A locustfile that is not a loadgen workload exports with one ``register`` call."""
    import boto3

    boto3.client("dynamodb", endpoint_url=moto_endpoint).create_table(
        TableName="plain",
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
        BillingMode="PAY_PER_REQUEST",
    )
    port = _free_port()
    locustfile = tmp_path / "plain.py"
    locustfile.write_text(PLAIN_LOCUSTFILE.format(port=port))
    stats = tmp_path / "stats.json"
    process = subprocess.Popen(
        [
            sys.executable, "-m", "locust", "-f", str(locustfile), "--headless", "-u", "2",
            "-r", "2", "-t", "3s", "--host", moto_endpoint,
            "--json-file", str(stats.with_suffix("")),  # Locust adds .json
        ],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )  # fmt: skip
    last = None
    try:
        while process.poll() is None:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=2) as r:
                    last = r.read().decode()
            except OSError:
                pass
            time.sleep(0.3)
        output, _ = process.communicate(timeout=60)
    finally:
        process.kill()
    assert process.returncode == 0, output[-3000:]
    assert last is not None, output[-3000:]
    (entry,) = [e for e in json.loads(stats.read_text()) if e["name"] == "plain.put"]
    count = float(entry["num_requests"])
    lines = last.splitlines()
    assert (
        f'partition_heat_requests_total{{operation="PutItem",pattern="plain.put"}} {count}' in lines
    )
    assert f'partition_heat_key_requests_total{{index="",key="k1",table="plain"}} {count}' in lines
    assert "partition_heat_buckets 32.0" in lines


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["--metrics-port", "70000"], "--metrics-port must be 0 to 65535 (got 70000)"),
        (["--heat-buckets", "2000"], "heat buckets must be 1 to 1024 (got 2000)"),
        (["--hash-keys", ""], "--hash-keys (hash_keys) needs a non-empty salt (got an empty one)"),
        (["--top-keys", "0"], "top keys must be 1 to the sketch capacity 1000 (got 0)"),
        (["--heat-buckets", "0"], "heat buckets must be 1 to 1024 (got 0)"),
    ],
)
def test_bad_heat_settings_are_one_line_and_exit_2(args: list[str], expected: str) -> None:
    from tests.test_run import loadgen

    # On the embedded moto, which starts in a second (DynamoDB Local's JVM takes several):
    # the settings are read once the target is up.
    result = loadgen("run", "counter", "--duration", "2s", "--engine", "moto", *args, timeout=90)
    assert result.returncode == 2, result.stderr
    assert result.stderr.strip().splitlines()[-1] == f"loadgen: error: {expected}"
    assert "Traceback" not in result.stderr


def test_a_metrics_port_in_use_stops_the_run_with_one_line() -> None:
    from tests.test_run import loadgen

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = loadgen(
            "run", "counter", "--duration", "2s", "--engine", "moto", "--metrics-port", str(port)
        )
    assert result.returncode == 2, result.stderr
    last = result.stderr.strip().splitlines()[-1]
    assert last.startswith(f"loadgen: error: cannot serve metrics on 127.0.0.1:{port}: ")


def test_users_and_workload_come_from_the_environment() -> None:
    # Only the runner's user count and the locustfile matter to the collector.
    env = SimpleNamespace(runner=SimpleNamespace(user_count=7), locustfile="workloads/counter.py")
    collector = HeatCollector(small_recorder(), env)
    registry = CollectorRegistry()
    registry.register(collector)
    text = generate_latest(registry).decode()
    assert "\npartition_heat_users 7.0\n" in text
    assert '\npartition_heat_run_info{workload="counter"} 1.0\n' in text
    samples = [line for line in text.splitlines() if not line.startswith("#")]
    assert len(samples) <= collector.series_bound()


def test_workload_name_falls_back_to_the_user_classes() -> None:
    assert exporter.workload_name(SimpleNamespace(locustfile="a/b.py,c.py")) == "b"
    assert exporter.workload_name(SimpleNamespace(locustfile=None, user_classes=[int])) == "int"
    assert exporter.workload_name(SimpleNamespace()) == "unknown"
