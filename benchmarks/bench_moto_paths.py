"""What the moto backend's shorter paths save: each request timed both ways, in one process.

Two regions of the same in-process moto hold the same table (a base table keyed pk/sk with a
GSI), filled with ``--items`` items in partitions of 200; the same requests then go through
`MotoBackend` with its shortcuts (`loadgen.emulator.moto_paths`) and without them (moto's own
path, below its HTTP layer, a base-table Query read from its partition as before the
shortcuts). Prints microseconds per request for each, and the ratio.

    .venv/bin/python benchmarks/bench_moto_paths.py [--items 2000] [--seconds 1]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time
from typing import Any

from loadgen.emulator.backends import MotoBackend
from loadgen.emulator.engines import pk_sk_table

TABLE = "bench-paths"
AUTH = "AWS4-HMAC-SHA256 Credential=x/20260101/{}/dynamodb/aws4_request, Signature=0"


def _s(text: str) -> dict[str, str]:
    return {"S": text}


def requests(items: int) -> dict[str, tuple[str, dict[str, Any]]]:
    partitions = max(1, items // 200)
    return {
        "UpdateItem ADD #c :one": (
            "UpdateItem",
            {
                "TableName": TABLE,
                "Key": {"pk": _s("C#1"), "sk": _s("count")},
                "UpdateExpression": "ADD #c :one",
                "ExpressionAttributeNames": {"#c": "n"},
                "ExpressionAttributeValues": {":one": {"N": "1"}},
            },
        ),
        "Query, base table, Limit 10": (
            "Query",
            {
                "TableName": TABLE,
                "KeyConditionExpression": "pk = :p AND sk BETWEEN :lo AND :hi",
                "ExpressionAttributeValues": {
                    ":p": _s(f"P#{partitions // 2}"),
                    ":lo": _s("T#"),
                    ":hi": _s("T#~"),
                },
                "ScanIndexForward": False,
                "Limit": 10,
            },
        ),
        "Query, index, Limit 20": (
            "Query",
            {
                "TableName": TABLE,
                "IndexName": "by-g",
                "KeyConditionExpression": "gpk = :g",
                "ExpressionAttributeValues": {":g": _s("G#7")},
                "Limit": 20,
            },
        ),
        "TransactWriteItems, 3 actions": (
            "TransactWriteItems",
            {
                "TransactItems": [
                    {"Put": {"TableName": TABLE, "Item": {"pk": _s("U#1"), "sk": _s("O#1")}}},
                    {
                        "Update": {
                            "TableName": TABLE,
                            "Key": {"pk": _s("U#1"), "sk": _s("PROFILE")},
                            "UpdateExpression": "ADD orders :one SET #n = if_not_exists(#n, :u)",
                            "ExpressionAttributeNames": {"#n": "name"},
                            "ExpressionAttributeValues": {":one": {"N": "1"}, ":u": _s("u")},
                        }
                    },
                    {"Put": {"TableName": TABLE, "Item": {"pk": _s("O#1"), "sk": _s("I#1")}}},
                ]
            },
        ),
    }


class Side:
    def __init__(self, backend: MotoBackend, region: str) -> None:
        self.backend, self.region = backend, region
        self.loop = asyncio.new_event_loop()
        self.loop.run_until_complete(backend.start())

    def call(self, operation: str, payload: dict[str, Any]) -> int:
        headers = {
            "X-Amz-Target": f"DynamoDB_20120810.{operation}",
            "Authorization": AUTH.format(self.region),
        }
        body = json.dumps(payload).encode()
        answer = self.loop.run_until_complete(self.backend.call("/", headers, body))
        return answer.status

    def fill(self, items: int) -> None:
        table = pk_sk_table(TABLE, index=("by-g", "gpk"))
        assert self.call("CreateTable", table) == 200
        for first in range(0, items, 25):
            puts = [
                {
                    "PutRequest": {
                        "Item": {
                            "pk": _s(f"P#{i // 200}"),
                            "sk": _s(f"T#{i:08d}"),
                            "gpk": _s(f"G#{i % 50}"),
                            "v": {"N": str(i)},
                        }
                    }
                }
                for i in range(first, min(first + 25, items))
            ]
            assert self.call("BatchWriteItem", {"RequestItems": {TABLE: puts}}) == 200

    def timed(self, operation: str, payload: dict[str, Any], seconds: float) -> float:
        """Microseconds per request, over at least `seconds` (and at least 3 requests), after
        one untimed request (an index's files are built at its first Query)."""
        assert self.call(operation, payload) == 200, operation
        count, started = 0, time.perf_counter()
        while count < 3 or time.perf_counter() - started < seconds:
            assert self.call(operation, payload) == 200, operation
            count += 1
        return (time.perf_counter() - started) / count * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=2000, help="items in the table")
    parser.add_argument("--seconds", type=float, default=1.0, help="time per measurement")
    args = parser.parse_args()
    if args.items < 1:
        parser.error(f"--items must be at least 1 (got {args.items})")
    if not args.seconds > 0:
        parser.error(f"--seconds must be more than 0 (got {args.seconds:g})")
    fast = Side(MotoBackend(), "us-west-2")
    plain = Side(MotoBackend(shortcuts=False), "eu-north-1")
    for side in (fast, plain):
        side.fill(args.items)
    print(f"## moto, {args.items:,} items, partitions of 200 (us per request, one process)")
    print()
    print("| request | without shortcuts | with shortcuts | ratio |")
    print("|---|---|---|---|")
    for label, (operation, payload) in requests(args.items).items():
        mine = fast.timed(operation, payload, args.seconds)
        theirs = plain.timed(operation, payload, args.seconds)
        print(f"| {label} | {theirs:,.0f} | {mine:,.0f} | {theirs / mine:.1f}x |", flush=True)


if __name__ == "__main__":
    main()
