"""What the emulator costs: added latency per request, and the rate it sustains.

    .venv/bin/python benchmarks/bench_emulator.py [--requests 500] [--seconds 5]

1. Added latency: sequential PutItem and GetItem (one keep-alive connection, pre-built
   bodies, so the client adds as little as it can) sent straight to a backend, then through
   an emulator forwarding to that same backend (``--upstream``). Backends: a moto server
   child process, and DynamoDB Local when it is installed. Also the default emulator
   (moto in its own process) against the moto server, which is what a user switching from
   moto sees.
2. Rate sustained with a backend that answers at once, driven by a client in another
   process (aiohttp, 32 requests in flight, half PutItem, half GetItem over 1,000 keys):
   ``--null-backend`` (the answer comes from inside the emulator) and ``--upstream`` to a
   null HTTP server in a third process.

Every server runs in its own process on 127.0.0.1; nothing leaves the machine. Scale 1, so
nothing is throttled and every request takes the full path through the model.
"""

from __future__ import annotations

import argparse
import asyncio
import http.client
import json
import statistics
import subprocess
import sys
import time
import urllib.parse
from contextlib import ExitStack
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from null_server import null_endpoint

from loadgen.emulator.embedded import EmbeddedEmulator
from loadgen.errors import TargetError
from loadgen.targets.local import DynamoDBLocal, EmbeddedMoto

TABLE = "bench_emulator"
WARM_UP = 300
"""Requests before timing: DynamoDB Local's JIT needs a few hundred to settle."""
HEADERS = {
    "Content-Type": "application/x-amz-json-1.0",
    "X-Amz-Date": "20260101T000000Z",
    # moto routes on the service in the credential scope; DynamoDB Local wants an
    # alphanumeric key id. Neither checks the signature.
    "Authorization": "AWS4-HMAC-SHA256 Credential=bench/20260101/us-east-1/dynamodb/"
    "aws4_request, SignedHeaders=content-type;host;x-amz-date;x-amz-target, Signature=0",
}


def body(operation: str, i: int) -> bytes:
    key = {"pk": {"S": f"key-{i % 1000}"}}
    if operation == "PutItem":
        return json.dumps({"TableName": TABLE, "Item": {**key, "n": {"N": str(i)}}}).encode()
    return json.dumps({"TableName": TABLE, "Key": key}).encode()


def call(connection: http.client.HTTPConnection, operation: str, payload: bytes) -> int:
    headers = {**HEADERS, "X-Amz-Target": f"DynamoDB_20120810.{operation}"}
    connection.request("POST", "/", body=payload, headers=headers)
    response = connection.getresponse()
    response.read()
    return response.status


def create_table(url: str) -> None:
    connection = http.client.HTTPConnection(urllib.parse.urlsplit(url).netloc, timeout=30)
    request = {
        "TableName": TABLE,
        "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
        "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}],
        "BillingMode": "PAY_PER_REQUEST",
    }
    status = call(connection, "CreateTable", json.dumps(request).encode())
    if status not in (200, 400):  # 400: it exists already
        raise SystemExit(f"CreateTable on {url} answered HTTP {status}")
    connection.close()


def latencies(url: str, operation: str, count: int) -> list[float]:
    """Milliseconds per request, sequential on one connection, after a warm-up."""
    connection = http.client.HTTPConnection(urllib.parse.urlsplit(url).netloc, timeout=30)
    for i in range(WARM_UP):
        call(connection, operation, body(operation, i))
    times = []
    for i in range(count):
        payload = body(operation, i)
        started = time.perf_counter()
        status = call(connection, operation, payload)
        times.append((time.perf_counter() - started) * 1000.0)
        if status != 200:
            raise SystemExit(f"{operation} on {url} answered HTTP {status}")
    connection.close()
    return times


def summary(times: list[float]) -> tuple[float, float]:
    ordered = sorted(times)
    return statistics.median(ordered), ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]


def compare(label: str, direct: str, through: str, count: int) -> None:
    create_table(direct)
    create_table(through)
    for operation in ("PutItem", "GetItem"):
        base = summary(latencies(direct, operation, count))
        emulated = summary(latencies(through, operation, count))
        print(
            f"  {label:<34} {operation:<8} direct {base[0]:6.2f} / {base[1]:6.2f} ms   "
            f"emulator {emulated[0]:6.2f} / {emulated[1]:6.2f} ms   "
            f"added {emulated[0] - base[0]:+6.2f} / {emulated[1] - base[1]:+6.2f} ms"
        )


# --- the rate a client in another process gets ----------------------------------------------


def rate(url: str, seconds: float, concurrency: int) -> dict[str, float]:
    create_table(url)
    command = [sys.executable, __file__, "--drive", url, "--seconds", str(seconds)]
    command += ["--concurrency", str(concurrency)]
    output = subprocess.run(
        command,
        capture_output=True,
        text=True,
        timeout=seconds + 60,
        check=True,
    ).stdout
    result: dict[str, float] = json.loads(output)
    return result


async def drive(url: str, seconds: float, concurrency: int) -> dict[str, float]:
    from aiohttp import ClientSession, TCPConnector

    statuses: dict[int, int] = {}
    counter = iter(range(1 << 62))

    async def loop(session: ClientSession, deadline: float) -> None:
        while time.perf_counter() < deadline:
            i = next(counter)
            operation = "PutItem" if i % 2 else "GetItem"
            headers = {**HEADERS, "X-Amz-Target": f"DynamoDB_20120810.{operation}"}
            async with session.post(url, data=body(operation, i), headers=headers) as response:
                await response.read()
                statuses[response.status] = statuses.get(response.status, 0) + 1

    async with ClientSession(connector=TCPConnector(limit=concurrency)) as session:
        started = time.perf_counter()
        await asyncio.gather(*(loop(session, started + seconds) for _ in range(concurrency)))
        elapsed = time.perf_counter() - started
    total = sum(statuses.values())
    return {"requests_per_second": total / elapsed, "ok": statuses.get(200, 0) / max(1, total)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=500, help="sequential requests per case")
    parser.add_argument("--seconds", type=float, default=5.0, help="length of each rate run")
    parser.add_argument("--concurrency", type=int, default=32, help="requests in flight")
    parser.add_argument("--drive", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.drive:
        print(json.dumps(asyncio.run(drive(args.drive, args.seconds, args.concurrency))))
        return

    print("1. Added latency, sequential requests, median / p99:")
    with ExitStack() as stack:
        moto = stack.enter_context(EmbeddedMoto())
        front = stack.enter_context(EmbeddedEmulator(scale=1.0, upstream=moto.endpoint_url))
        compare(
            "moto server, emulator --upstream", moto.endpoint_url, front.endpoint_url, args.requests
        )
        default = stack.enter_context(EmbeddedEmulator(scale=1.0))
        compare(
            "moto server vs emulator (default)",
            moto.endpoint_url,
            default.endpoint_url,
            args.requests,
        )
    try:
        with ExitStack() as stack:
            local = stack.enter_context(DynamoDBLocal())
            front = stack.enter_context(EmbeddedEmulator(scale=1.0, upstream=local.endpoint_url))
            compare(
                "DynamoDB Local, emulator --upstream",
                local.endpoint_url,
                front.endpoint_url,
                args.requests,
            )
    except TargetError as exc:
        print(f"  DynamoDB Local skipped: {str(exc).splitlines()[0]}")

    print(
        f"2. Rate with a backend that answers at once ({args.concurrency} in flight, "
        f"{args.seconds:g} s, client in its own process):"
    )
    with EmbeddedEmulator(scale=1.0, extra_args=["--null-backend"]) as emulator:
        result = rate(emulator.endpoint_url, args.seconds, args.concurrency)
        print(
            f"  emulator --null-backend              {result['requests_per_second']:7.0f} req/s"
            f"  ({result['ok']:.0%} HTTP 200)"
        )
    with null_endpoint() as url:
        direct = rate(url, args.seconds, args.concurrency)
        print(f"  null server alone                    {direct['requests_per_second']:7.0f} req/s")
        with EmbeddedEmulator(scale=1.0, upstream=url) as emulator:
            result = rate(emulator.endpoint_url, args.seconds, args.concurrency)
            print(
                f"  emulator --upstream null server      {result['requests_per_second']:7.0f} req/s"
                f"  ({result['ok']:.0%} HTTP 200)"
            )


if __name__ == "__main__":
    main()
