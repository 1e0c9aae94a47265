"""The tables and the client of AWS's DynamoDB workshop, Exercise 1 ("Capacity Units and
Partitioning", aws-samples/amazon-dynamodb-labs, design patterns), as figures to hold the
partition model to.

The workshop's client is a sequential loop of PutItem calls (one BatchWriteItem of 25 rows at a
time in its parallel variant) with the SDK's default retries for DynamoDB: up to 10 attempts,
waiting 50 ms x 2^n between them (botocore's legacy mode). `load` plays that loop against the
model on a virtual clock; `tests/oracle/test_workshop_client.py` runs it for real against the
emulator. Rows are shaped as the workshop's log file (about 200 bytes: a request id, a host, a
date, a method, a URL, a response code, bytes sent and a user agent).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from loadgen.model.capacity import Charge, cost_of
from loadgen.model.partitions import PartitionModel
from loadgen.model.schema import TableSchema
from loadgen.refusals import LEGACY_ATTEMPTS, LEGACY_BASE_S

# Published in the workshop (Steps 2, 3, 6 and 7), each from one run by AWS.
STEP2_ROWS, STEP2_SECONDS = 500, 17.614499807357788
STEP3_ROWS, STEP3_SECONDS = 2000, (75.0764648914, 133.84829711914062)
STEP6_ROWS, STEP6_SECONDS = 2000, 17.13607406616211
FIRST_HUNDRED_S = 0.780548095703125
"""Step 2's first 100 rows: the client's own pace with nothing throttled (128 rows/s)."""
STEP6_HUNDRED_S = 0.8499886989593506
"""Step 6's pace per 100 rows at 100 WCU (118 rows/s)."""
SPREAD = max(STEP3_SECONDS) / min(STEP3_SECONDS)
"""How far two of the workshop's own runs of one step differ (Step 3: 75 s and 134 s): the
band a single run's figure is held to, either side."""


def logfile_table(name: str, table_wcu: int, index_wcu: int) -> dict[str, Any]:
    """The workshop's CreateTable: ``PK`` hash key, GSI_1 on the host (INCLUDE bytessent)."""
    return {
        "TableName": name,
        "AttributeDefinitions": [
            {"AttributeName": "PK", "AttributeType": "S"},
            {"AttributeName": "GSI_1_PK", "AttributeType": "S"},
        ],
        "KeySchema": [{"AttributeName": "PK", "KeyType": "HASH"}],
        "ProvisionedThroughput": {"ReadCapacityUnits": table_wcu, "WriteCapacityUnits": table_wcu},
        "GlobalSecondaryIndexes": [
            {
                "IndexName": "GSI_1",
                "KeySchema": [{"AttributeName": "GSI_1_PK", "KeyType": "HASH"}],
                "Projection": {"ProjectionType": "INCLUDE", "NonKeyAttributes": ["bytessent"]},
                "ProvisionedThroughput": {
                    "ReadCapacityUnits": index_wcu,
                    "WriteCapacityUnits": index_wcu,
                },
            }
        ],
    }


HOSTS = ("66.249.67.3", "72.14.192.65", "74.125.74.193", "122.160.162.2", "64.233.172.17")


def row(n: int) -> dict[str, Any]:
    """The n-th log row as the workshop's loader writes it (PK, GSI_1_PK and the columns)."""
    host = HOSTS[n % len(HOSTS)] if n % 3 else f"10.0.{n % 251}.{n % 241}"
    return {
        "requestid": n,
        "host": host,
        "date": "2009-07-20",
        "hourofday": 20,
        "timezone": "GMT-0700",
        "method": "GET",
        "url": f"/gallery/main.php?g2_itemId={15741 + n}&g2_fromNavId=x8fa12efc",
        "responsecode": 200,
        "bytessent": 8068,
        "useragent": "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)",
        "PK": f"request#{n}",
        "GSI_1_PK": f"host#{host}",
    }


def wire(item: dict[str, Any]) -> dict[str, Any]:
    """An item in DynamoDB's JSON."""
    return {k: {"N": str(v)} if isinstance(v, int) else {"S": v} for k, v in item.items()}


class Clock:
    def __init__(self, now: float = 0.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def put_charges(schema: TableSchema, n: int) -> list[Charge]:
    request = {"TableName": schema.name, "Item": wire(row(n))}
    return list(cost_of("PutItem", request, tables={schema.name: schema}).charges)


def load(
    model: PartitionModel,
    clock: Clock,
    rows: range,
    charges: Callable[[int], list[Charge]],
    pace_s: float,
) -> tuple[float, int | None]:
    """The workshop's sequential loader on the model's clock: seconds taken, and the row whose
    first attempt was throttled first (None: none)."""
    start = clock.now
    first = None
    for n in rows:
        for attempt in range(LEGACY_ATTEMPTS):
            if model.admit(charges(n)) is None:
                break
            if first is None:
                first = n
            clock.now += LEGACY_BASE_S * 2**attempt
        else:
            raise AssertionError(f"row {n} failed after {LEGACY_ATTEMPTS} attempts")
        clock.now += pace_s
    return clock.now - start, first
