"""Cost of the heat accounting per request, against a boto3 call's own client CPU, and memory
from 1,000 to 10,000,000 distinct keys.

The accounting runs in the request listener (`RunRecorder._on_request`), once per call, in
the Locust process: its CPU is taken from the load generator. The reference is what the
same process spends in boto3 for one call (about 1 ms per the facts file), measured here
against a null HTTP endpoint in a child process, so that only client CPU is counted.

Memory is the growth of the process's resident set (VmRSS, and its high-water mark VmHWM,
from /proc: getrusage's ru_maxrss would carry the parent's peak across exec) while distinct
keys stream through one recorder, each size in a fresh child process: flat means the
sketches, the key cache and the bucket counters are bounded whatever the number of keys.

    .venv/bin/python benchmarks/bench_heat.py [--requests 200000] [--max-keys 10000000]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from typing import Any

from loadgen.heat.heatmap import HeatConfig
from loadgen.heat.recorder import RunRecorder
from loadgen.model.schema import TableSchema

T0 = 1_800_000_000.0
SCHEMA = TableSchema.from_create_table(
    {
        "TableName": "t",
        "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
        "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}],
        "BillingMode": "PAY_PER_REQUEST",
    }
)
GSI_SCHEMA = TableSchema.from_create_table(
    {
        "TableName": "g",
        "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
        "AttributeDefinitions": [
            {"AttributeName": "pk", "AttributeType": "S"},
            {"AttributeName": "GSI1PK", "AttributeType": "S"},
        ],
        "GlobalSecondaryIndexes": [
            {
                "IndexName": "GSI1",
                "KeySchema": [{"AttributeName": "GSI1PK", "KeyType": "HASH"}],
                "Projection": {"ProjectionType": "ALL"},
            }
        ],
        "BillingMode": "PAY_PER_REQUEST",
    }
)
MEMORY_SIZES = (1_000, 10_000, 100_000, 1_000_000, 10_000_000)


def context(
    keys: list[str], consumed: Any, request: dict[str, Any] | None = None, table: str = "t"
) -> dict[str, Any]:
    return {
        "table": table,
        "index": None,
        "partition_key": keys[0],
        "sort_key": None,
        "partition_keys": keys,
        "index_keys": {},
        "consumed_capacity": consumed,
        "attempts": 1,
        "retries": 0,
        "throttled_attempts": 0,
        "unprocessed": 0,
        "error_code": None,
        "request": request or {},
    }


def scenarios() -> Iterator[tuple[str, HeatConfig, str, Callable[[int], dict[str, Any]]]]:
    reported = {"TableName": "t", "CapacityUnits": 1.0}
    hot = context(["GLOBAL_COUNTER"], reported)
    yield "one hot key, reported units", HeatConfig(), "UpdateItem", lambda i: hot
    zipf_like = [context([f"USER#{i % 1000:07d}"], reported) for i in range(1000)]
    yield "1,000 keys, reported units", HeatConfig(), "UpdateItem", lambda i: zipf_like[i % 1000]
    yield (
        "every key new (worst case), reported",
        HeatConfig(),
        "UpdateItem",
        lambda i: context([f"USER#{i:09d}"], reported),
    )
    yield (
        "every key new, keys hashed (BLAKE2)",
        HeatConfig(hash_keys="salt"),
        "UpdateItem",
        lambda i: context([f"USER#{i:09d}"], reported),
    )
    item = {"pk": {"S": "k"}, "name": {"S": "x" * 80}, "n": {"N": "12345"}}
    puts = [
        context(
            [f"USER#{i:07d}"],
            None,
            {"TableName": "t", "Item": {**item, "pk": {"S": f"USER#{i:07d}"}}},
        )
        for i in range(1000)
    ]
    yield (
        "1,000 keys, units computed from sizes",
        HeatConfig(capacity_source="computed"),
        "PutItem",
        lambda i: puts[i % 1000],
    )
    batch = [
        context([f"K{(i * 10 + j) % 1000}" for j in range(10)], [reported]) for i in range(100)
    ]
    yield "BatchGetItem of 10 keys", HeatConfig(), "BatchGetItem", lambda i: batch[i % 100]
    # A status change on a table with a GSI: the index key is read from the request's SET.
    moves = [
        context(
            [f"USER#{i:07d}"],
            {
                "TableName": "g",
                "CapacityUnits": 3.0,
                "Table": {"CapacityUnits": 1.0},
                "GlobalSecondaryIndexes": {"GSI1": {"CapacityUnits": 2.0}},
            },
            {
                "TableName": "g",
                "Key": {"pk": {"S": f"USER#{i:07d}"}},
                "UpdateExpression": "SET #s = :s, GSI1PK = :g",
                "ExpressionAttributeNames": {"#s": "status"},
                "ExpressionAttributeValues": {
                    ":s": {"S": "online"},
                    ":g": {"S": f"STATUS#online#{i % 10}"},
                },
            },
            table="g",
        )
        for i in range(1000)
    ]
    yield (
        "GSI key SET by an update, INDEXES reported",
        HeatConfig(),
        "UpdateItem",
        lambda i: moves[i % 1000],
    )


def us_per_request(
    config: HeatConfig, operation: str, make: Callable[[int], dict[str, Any]], n: int
) -> float:
    recorder = RunRecorder(heat=config)
    recorder.heat.add_table(SCHEMA)
    recorder.heat.add_table(GSI_SCHEMA)
    contexts = [make(i) for i in range(n)]  # built outside the timed loop
    listener = recorder._on_request
    # CPU time, as the boto3 reference: on a shared machine wall time counts other work.
    start = time.process_time()
    for i, ctx in enumerate(contexts):
        # 400 requests per simulated second: the timeline rolls as in a real run.
        listener(
            request_type=operation,
            name="bench",
            response_time=5.0,
            context=ctx,
            start_time=T0 + i / 400,
            response={},
        )
    return (time.process_time() - start) / n * 1e6


_NULL_SERVER = """
import http.server, sys
class Null(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        body = b'{"ConsumedCapacity": {"TableName": "t", "CapacityUnits": 1.0}}'
        self.send_response(200)
        self.send_header("Content-Type", "application/x-amz-json-1.0")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *args): pass
server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Null)
print(server.server_address[1], flush=True)
server.serve_forever()
"""


def boto3_call_cpu_us(calls: int = 2000) -> float:
    """Client CPU of one boto3 PutItem to a null endpoint (the server runs in a child)."""
    import boto3

    server = subprocess.Popen(
        [sys.executable, "-c", _NULL_SERVER], stdout=subprocess.PIPE, text=True
    )
    try:
        assert server.stdout is not None
        port = int(server.stdout.readline())
        client = boto3.client(
            "dynamodb",
            endpoint_url=f"http://127.0.0.1:{port}",
            region_name="us-east-1",
            aws_access_key_id="local",
            aws_secret_access_key="local",
        )
        item = {"pk": {"S": "k"}, "n": {"N": "1"}}
        for _ in range(100):  # warm up connections and botocore's caches
            client.put_item(TableName="t", Item=item, ReturnConsumedCapacity="TOTAL")
        start = time.process_time()
        for _ in range(calls):
            client.put_item(TableName="t", Item=item, ReturnConsumedCapacity="TOTAL")
        return (time.process_time() - start) / calls * 1e6
    finally:
        server.kill()
        server.wait()


def memory_child(keys: int) -> None:
    """Stream ``keys`` distinct keys through one recorder; print RSS growth in KiB."""
    recorder = RunRecorder(heat=HeatConfig())
    listener = recorder._on_request
    reported = {"TableName": "t", "CapacityUnits": 1.0}
    ctx = context(["x"], reported)
    # Warm up with 1,000 keys so the baseline includes imports and the first allocations.
    for i in range(1000):
        ctx["partition_keys"] = [f"WARM#{i}"]
        listener(
            request_type="UpdateItem",
            name="m",
            response_time=5.0,
            context=ctx,
            start_time=T0,
            response={},
        )
    base_rss, base_peak = _rss_kib()
    start = time.perf_counter()
    # The same simulated minute for every size: the timeline grows with time (up to its
    # column limit), not with keys, and this measures the keys.
    seconds_per_key = 60 / keys
    for i in range(keys):
        ctx["partition_keys"] = [f"USER#{i:09d}"]
        listener(
            request_type="UpdateItem",
            name="m",
            response_time=5.0,
            context=ctx,
            start_time=T0 + i * seconds_per_key,
            response={},
        )
    seconds = time.perf_counter() - start
    rss, peak = _rss_kib()
    held = sum(len(a) + len(b) for _, _, a, b in recorder.heat.scopes())
    row = {"rss_growth_kib": rss - base_rss, "peak_growth_kib": peak - base_peak, "rss_kib": rss}
    print(json.dumps({**row, "held": held, "seconds": seconds}))


def _rss_kib() -> tuple[int, int]:
    """(VmRSS, VmHWM) of this process in KiB (Linux)."""
    fields = {}
    with open("/proc/self/status") as status:
        for line in status:
            name, _, value = line.partition(":")
            fields[name] = value
    return int(fields["VmRSS"].split()[0]), int(fields["VmHWM"].split()[0])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=200_000, help="timed requests per row")
    parser.add_argument("--max-keys", type=int, default=10_000_000, help="largest memory row")
    parser.add_argument("--memory-child", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.memory_child:
        memory_child(args.memory_child)
        return

    boto3_us = boto3_call_cpu_us()
    print(f"boto3 PutItem to a null endpoint: {boto3_us:,.0f} µs of client CPU per call\n")
    print(
        f"{'accounting per request (RunRecorder._on_request)':<44}{'µs':>8}{'share of boto3':>16}"
    )
    for name, config, operation, make in scenarios():
        us = min(us_per_request(config, operation, make, args.requests) for _ in range(3))
        print(f"{name:<44}{us:>8.2f}{us / boto3_us:>15.2%}")

    print(
        f"\n{'distinct keys':>14}{'RSS growth':>14}{'peak growth':>14}{'RSS':>10}"
        f"{'sketch entries':>16}{'µs/key':>8}"
    )
    for keys in (n for n in MEMORY_SIZES if n <= args.max_keys):
        out = subprocess.run(
            [sys.executable, __file__, "--memory-child", str(keys)],
            capture_output=True,
            text=True,
            check=True,
        )
        row = json.loads(out.stdout)
        print(
            f"{keys:>14,}{row['rss_growth_kib'] / 1024:>10.1f} MiB"
            f"{row['peak_growth_kib'] / 1024:>10.1f} MiB{row['rss_kib'] / 1024:>6.1f} MiB"
            f"{row['held']:>16,}{row['seconds'] / keys * 1e6:>8.2f}"
        )


if __name__ == "__main__":
    main()
