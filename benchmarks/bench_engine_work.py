"""What a request of several items costs an embedded engine, in requests of its warm-up.

``--scale auto`` sizes a run for what the engine answered at its warm-up: single-item
PutItem, GetItem, UpdateItem and a Query of up to 10 items (`loadgen.emulator.engines.warm`).
A transaction or a batch holds several items, and the engine's work grows with them; moto
sorts every item under a Query's key before it takes the page. This script starts the engine as
a run does (DynamoDB Local with its JVM options; moto in an emulator's process, behind an
emulator that throttles nothing, as its warm-up is measured), warms it up, writes 500 items
of about 250 bytes, then times each shape below from 4 connections, ``--rounds`` times in
turn: the warm-up's own mix first, then transactions and batches of a small and a large count
of items, and a Query of 9 items, on the table and on an index, of a key holding 10 items and
of one holding 100. Printed per shape: requests/s and its cost in warm-up requests (the mix's
rate over the shape's, from the same round). Per operation, the line through its two counts
gives a request's own cost and each item's (a Query: each item under its key): the figures of
`loadgen.emulator.engines.ENGINE_WORK` (the median over the rounds).

    .venv/bin/python benchmarks/bench_engine_work.py [--engine moto] [--rounds 3]
        [--requests 600]

Figures move with the machine's load; the costs are ratios measured side by side in a round.
"""

from __future__ import annotations

import argparse
import contextlib
import statistics
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from loadgen.emulator.backends import MotoBackend
from loadgen.emulator.command import unthrottled
from loadgen.emulator.engines import (
    ENGINE_WORK,
    JVM_OPTIONS,
    DynamoConnection,
    pk_sk_table,
    warm,
    warm_up_requests,
)
from loadgen.targets.local import DynamoDBLocal

TABLE = "engine-work"
KEYS = 500
CONNECTIONS = 4
QUERY_TABLES = (KEYS, 10 * KEYS)
"""Items in the tables a Query is timed on (``query-N``)."""
GROUPS = 50
"""Key values of a Query table, on the table and on its index: 10 and 100 items under each,
of which a Query reads 9."""

Shape = Callable[[int], tuple[str, dict[str, Any]]]


def _key(i: int) -> dict[str, Any]:
    return {"pk": {"S": f"p{i % KEYS}"}, "sk": {"S": "s0"}}


def _item(i: int) -> dict[str, Any]:
    return {**_key(i), "v": {"N": "1"}, "pad": {"S": "x" * 200}}


_ADD = {"UpdateExpression": "ADD v :one", "ExpressionAttributeValues": {":one": {"N": "1"}}}


def _mix(i: int) -> tuple[str, dict[str, Any]]:
    """The warm-up's own requests (`warm_up_requests`), one at a time in their order."""
    return warm_up_requests(i // 4, TABLE)[i % 4]


def shapes(counts: tuple[int, int]) -> dict[tuple[str, int], Shape]:
    """(operation, items) -> the request of item ``i``'s turn."""
    made: dict[tuple[str, int], Shape] = {}
    for n in counts:

        def transact_write(i: int, n: int = n) -> tuple[str, dict[str, Any]]:
            actions = [
                {"Update": {"TableName": TABLE, "Key": _key(i * n + j), **_ADD}} for j in range(n)
            ]
            return "TransactWriteItems", {"TransactItems": actions}

        def transact_get(i: int, n: int = n) -> tuple[str, dict[str, Any]]:
            actions = [{"Get": {"TableName": TABLE, "Key": _key(i * n + j)}} for j in range(n)]
            return "TransactGetItems", {"TransactItems": actions}

        def batch_write(i: int, n: int = n) -> tuple[str, dict[str, Any]]:
            puts = [{"PutRequest": {"Item": _item(i * n + j)}} for j in range(n)]
            return "BatchWriteItem", {"RequestItems": {TABLE: puts}}

        def batch_get(i: int, n: int = n) -> tuple[str, dict[str, Any]]:
            keys = [_key(i * n + j) for j in range(n)]
            return "BatchGetItem", {"RequestItems": {TABLE: {"Keys": keys}}}

        made[("TransactWriteItems", n)] = transact_write
        made[("TransactGetItems", n)] = transact_get
        made[("BatchWriteItem", n)] = batch_write
        made[("BatchGetItem", n)] = batch_get
    return made


def query_table(items: int) -> dict[str, Any]:
    """A table of ``items`` items, keyed ``pk``/``sk``, with an index on ``g``."""
    table = pk_sk_table(f"query-{items}")
    table["AttributeDefinitions"] = [
        *table["AttributeDefinitions"],
        {"AttributeName": "g", "AttributeType": "S"},
    ]
    table["GlobalSecondaryIndexes"] = [
        {
            "IndexName": "by-g",
            "KeySchema": [
                {"AttributeName": "g", "KeyType": "HASH"},
                {"AttributeName": "pk", "KeyType": "RANGE"},
            ],
            "Projection": {"ProjectionType": "ALL"},
        }
    ]
    return table


def query_item(items: int, i: int) -> dict[str, Any]:
    return {
        "pk": {"S": f"p{i % GROUPS}"},
        "sk": {"S": f"s{i // GROUPS}"},
        "g": {"S": f"g{i % GROUPS}"},
        "pad": {"S": "x" * 200},
    }


def queries(items: int) -> dict[tuple[str, int], Shape]:
    """A Query of 9 items on the table and on its index, in a table of ``items`` (its key
    holding a `GROUPS`-th of them)."""
    name = f"query-{items}"

    def on_table(i: int) -> tuple[str, dict[str, Any]]:
        return "Query", {
            "TableName": name,
            "KeyConditionExpression": "pk = :k",
            "ExpressionAttributeValues": {":k": {"S": f"p{i % GROUPS}"}},
            "Limit": 9,
        }

    def on_index(i: int) -> tuple[str, dict[str, Any]]:
        return "Query", {
            "TableName": name,
            "IndexName": "by-g",
            "KeyConditionExpression": "g = :g",
            "ExpressionAttributeValues": {":g": {"S": f"g{i % GROUPS}"}},
            "Limit": 9,
        }

    under = items // GROUPS
    return {("Query", under): on_table, ("Query index", under): on_index}


@contextlib.contextmanager
def started(engine: str) -> Any:
    """The engine's endpoint, as a run starts it."""
    if engine == "moto":
        with unthrottled(MotoBackend()) as server:
            yield server.endpoint_url
    else:
        with DynamoDBLocal(java_options=JVM_OPTIONS) as local:
            yield local.endpoint_url


def rate(endpoint_url: str, shape: Shape, requests: int) -> float:
    """Requests/s of ``shape`` from `CONNECTIONS` connections at once."""

    def load(worker: int) -> None:
        connection = DynamoConnection(endpoint_url)
        try:
            for i in range(worker, requests, CONNECTIONS):
                connection.call(*shape(i))
        finally:
            connection.close()

    workers = [threading.Thread(target=load, args=(w,)) for w in range(CONNECTIONS)]
    started = time.perf_counter()
    for thread in workers:
        thread.start()
    for thread in workers:
        thread.join()
    return requests / (time.perf_counter() - started)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--engine", choices=("dynamodb-local", "moto"), default="dynamodb-local")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--requests", type=int, default=600, help="of each shape, per round")
    args = parser.parse_args()
    if args.rounds < 1:
        raise SystemExit(f"error: --rounds must be at least 1 (got {args.rounds})")
    if args.requests < CONNECTIONS:
        raise SystemExit(f"error: --requests must be at least {CONNECTIONS} (got {args.requests})")
    counts = (4, 25)
    every = shapes(counts)
    for items in QUERY_TABLES:
        every.update(queries(items))
    costs: dict[tuple[str, int], list[float]] = {shape: [] for shape in every}
    with started(args.engine) as url:
        print(f"{args.engine} warm-up: {warm(url):,.0f} requests/s")
        setup = DynamoConnection(url)
        setup.call("CreateTable", pk_sk_table(TABLE))
        for i in range(KEYS):
            setup.call("PutItem", {"TableName": TABLE, "Item": _item(i)})
        for items in QUERY_TABLES:
            setup.call("CreateTable", query_table(items))
            for i in range(items):
                setup.call("PutItem", {"TableName": f"query-{items}", "Item": query_item(items, i)})
        setup.close()
        for round_ in range(1, args.rounds + 1):
            mix = rate(url, _mix, args.requests)
            print(f"round {round_}: the warm-up's mix {mix:,.0f} requests/s")
            for (operation, n), shape in every.items():
                single = operation.startswith("Query")  # one request, whatever its table
                requests = args.requests if single else max(CONNECTIONS, args.requests // n * 2)
                per_s = rate(url, shape, requests)
                costs[(operation, n)].append(mix / per_s)
                print(
                    f"  {operation:<20} {n:>3} items {per_s:>8,.0f}/s  "
                    f"{mix / per_s:6.2f} warm-up requests"
                )
    print(
        f"\n{'operation':<20} {'request':>8} {'an item':>8}   "
        f"(median of {args.rounds}; a Query's items: those under its key; ENGINE_WORK now)"
    )
    for operation in dict.fromkeys(op for op, _ in every):
        small, large = (
            (QUERY_TABLES[0] // GROUPS, QUERY_TABLES[1] // GROUPS)
            if operation.startswith("Query")
            else counts
        )
        low = statistics.median(costs[(operation, small)])
        high = statistics.median(costs[(operation, large)])
        each = (high - low) / (large - small)
        own = low - each * small
        now = ENGINE_WORK[args.engine].get(operation)
        print(f"{operation:<20} {own:>8.2f} {each:>8.5f}   {now}")


if __name__ == "__main__":
    main()
