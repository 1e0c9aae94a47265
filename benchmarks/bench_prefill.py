"""Prefill's items/s against boto3's batch_writer, in one run, on the same loopback target.

    .venv/bin/python benchmarks/bench_prefill.py [--items 20000] [--rounds 2] [--concurrency 16]

The target is ``loadgen emulator`` in its own process on 127.0.0.1 at scale 1 (nothing
throttles: each table is provisioned at 40,000 write units), first with moto inside it (what
``loadgen prefill --endpoint`` meets locally), then behind a proxy adding ``--rtt-ms`` to
every call (the round trip to a DynamoDB endpoint in the same region, which a loopback
target lacks), then in front of DynamoDB Local when it is installed. Each round writes the
same items (a key and 100 bytes) into a fresh table with `loadgen.traffic.prefill.prefill`
(botocore, BatchWriteItem of 25, ``--concurrency`` in flight, a thread each) and with
``Table.batch_writer()`` (boto3's documented way to load a table: one thread, batches of 25),
in turn; the medians are compared.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import boto3

from loadgen.emulator.embedded import EmbeddedEmulator
from loadgen.errors import TargetError
from loadgen.targets.local import DynamoDBLocal
from loadgen.traffic.prefill import PrefillPlan, prefill

_tables = itertools.count()


def _table(url: str) -> str:
    name = f"bench-prefill-{next(_tables)}"
    db = boto3.client("dynamodb", endpoint_url=url, **_credentials())
    db.create_table(
        TableName=name,
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
        ProvisionedThroughput={"ReadCapacityUnits": 40000, "WriteCapacityUnits": 40000},
    )
    return name


def _credentials() -> dict[str, Any]:
    # Any alphanumeric key signs for a local engine (loadgen.client.credentials says the same;
    # importing it would import Locust, whose monkey-patching this benchmark avoids).
    return {
        "region_name": "us-east-1",
        "aws_access_key_id": "local",
        "aws_secret_access_key": "local",
    }


def ours(url: str, items: int, concurrency: int) -> float:
    table = _table(url)
    plan = PrefillPlan(
        {"TableName": table},
        lambda n: {"pk": {"S": f"item#{n}"}, "v": {"S": "x" * 100}},
        items,
        "bench",
    )
    summary = prefill(
        plan, endpoint_url=url, region="us-east-1", concurrency=concurrency, progress=False
    )
    assert summary.items == items
    _drop(url, table)
    return summary.items_per_s


def batch_writer(url: str, items: int) -> float:
    table = boto3.resource("dynamodb", endpoint_url=url, **_credentials()).Table(_table(url))
    start = time.perf_counter()
    with table.batch_writer() as batch:
        for n in range(items):
            batch.put_item(Item={"pk": f"item#{n}", "v": "x" * 100})
    rate = items / (time.perf_counter() - start)
    _drop(url, table.name)
    return rate


def _drop(url: str, table: str) -> None:
    # The account's quota (80,000 units) holds two tables of 40,000 at a time.
    boto3.client("dynamodb", endpoint_url=url, **_credentials()).delete_table(TableName=table)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--items", type=int, default=20000)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--rtt-ms", type=float, default=5.0, help="round trip the proxy adds")
    parser.add_argument("--proxy", nargs=2, metavar=("UPSTREAM", "DELAY_S"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.proxy:
        asyncio.run(_proxy(args.proxy[0], float(args.proxy[1])))
        return
    for name, value in _credentials().items():
        os.environ.setdefault(name.replace("region_name", "aws_default_region").upper(), value)
    with EmbeddedEmulator(scale=1.0) as emulator:
        compare("emulator with moto", emulator.endpoint_url, args)
        with delayed(emulator.endpoint_url, args.rtt_ms / 1000) as url:
            compare(f"emulator with moto, {args.rtt_ms:g} ms round trip", url, args)
    try:
        with ExitStack() as stack:
            local = stack.enter_context(DynamoDBLocal())
            front = stack.enter_context(EmbeddedEmulator(scale=1.0, upstream=local.endpoint_url))
            compare("emulator in front of DynamoDB Local", front.endpoint_url, args)
    except TargetError as exc:
        print(f"DynamoDB Local skipped: {exc}", flush=True)


@contextmanager
def delayed(upstream: str, delay_s: float) -> Iterator[str]:
    """A proxy in a child process that waits ``delay_s`` before forwarding each request."""
    command = [sys.executable, __file__, "--proxy", upstream, str(delay_s)]
    with subprocess.Popen(command, stdout=subprocess.PIPE, text=True) as child:
        try:
            assert child.stdout is not None
            yield child.stdout.readline().strip()
        finally:
            child.terminate()


async def _proxy(upstream: str, delay_s: float) -> None:
    from aiohttp import ClientSession, TCPConnector, web

    kept = ("content-type", "x-amz-crc32", "x-amzn-requestid")
    async with ClientSession(connector=TCPConnector(limit=0)) as session:

        async def forward(request: web.Request) -> web.Response:
            body = await request.read()
            await asyncio.sleep(delay_s)
            headers = {
                k: v
                for k, v in request.headers.items()
                if k.lower() not in ("host", "content-length")
            }
            async with session.post(
                upstream + request.path_qs, data=body, headers=headers
            ) as answer:
                data = await answer.read()
                back = {k: v for k, v in answer.headers.items() if k.lower() in kept}
                return web.Response(status=answer.status, body=data, headers=back)

        app = web.Application()
        app.router.add_post("/{path:.*}", forward)
        runner = web.AppRunner(app, access_log=None)
        await runner.setup()
        await web.TCPSite(runner, "127.0.0.1", 0).start()
        print(f"http://127.0.0.1:{runner.addresses[0][1]}", flush=True)
        await asyncio.Event().wait()


def compare(what: str, url: str, args: argparse.Namespace) -> None:
    mine, theirs = [], []
    for _ in range(args.rounds):
        mine.append(ours(url, args.items, args.concurrency))
        theirs.append(batch_writer(url, args.items))
    a, b = statistics.median(mine), statistics.median(theirs)
    print(
        f"{what}: prefill {a:,.0f} items/s ({', '.join(f'{x:,.0f}' for x in mine)}), "
        f"boto3 batch_writer {b:,.0f} items/s ({', '.join(f'{x:,.0f}' for x in theirs)}): "
        f"ratio {a / b:.2f}x",
        flush=True,
    )


if __name__ == "__main__":
    main()
