"""The workshop's loader, as its client does it, against ``loadgen emulator --scale 1`` in
real time: a sequential boto3 ``put_item`` loop with the SDK's default retries, on a table
created a moment before (Steps 1 and 2), then raised to 100 WCU with its 5-WCU index left
alone (Steps 5 and 6). The published figures are from one run each on AWS; each is held
within the spread the workshop's own two runs of Step 3 show (1.8x either side).

A row takes at least the published client's own pace (its round trip to AWS, 7.8 ms in Step
2 and 8.5 ms in Step 6), as ``workshop.load`` plays it on the model's clock: a loopback call
takes 2-4 ms, so an unpaced loop offers three times the workshop's rate and its seconds
measure this machine, not the model.

The workshop's own scripts run unmodified the same way: docs/fidelity.md has the commands.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from botocore.config import Config
from prometheus_client.parser import text_string_to_metric_families

from loadgen.emulator.embedded import EmbeddedEmulator
from loadgen.targets import emulator_metrics
from tests.oracle import workshop
from tests.oracle.test_measured import in_band

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def dynamodb() -> Iterator[Any]:
    with EmbeddedEmulator(scale=1) as emulator:
        yield boto3.resource(
            "dynamodb",
            endpoint_url=emulator.endpoint_url,
            region_name="us-east-1",
            aws_access_key_id="workshop",
            aws_secret_access_key="workshop",
            # The workshop's client takes boto3's defaults: the legacy retry mode, which
            # tries a DynamoDB call 10 times.
            config=Config(retries={"mode": "legacy"}),
        )


def loader(table: Any, rows: range, pace_s: float) -> tuple[float, list[float]]:
    """Seconds for the rows, and seconds per hundred, as the workshop's loader prints them;
    each row takes at least ``pace_s``, the workshop's client's round trip."""
    start = hundred = time.perf_counter()
    laps = []
    for n in rows:
        item = workshop.row(n)
        sent = time.perf_counter()
        table.put_item(Item=item)
        time.sleep(max(0.0, sent + pace_s - time.perf_counter()))
        if (n - rows.start + 1) % 100 == 0:
            now = time.perf_counter()
            laps.append(now - hundred)
            hundred = now
    return time.perf_counter() - start, laps


def test_the_workshops_loader_takes_as_long_as_on_dynamodb(dynamodb: Any) -> None:
    table = dynamodb.create_table(**workshop.logfile_table("logfile", 5, 5))
    table.wait_until_exists()
    # Step 2: 500 rows into the new table: 17.6 s on AWS, the first 100 at the client's pace.
    seconds, laps = loader(table, range(workshop.STEP2_ROWS), workshop.FIRST_HUNDRED_S / 100)
    assert in_band(seconds, workshop.STEP2_SECONDS), (seconds, laps)
    assert laps[0] < 2.0, laps
    # Steps 5 and 6: raised to 100 WCU, the index left at 5: 2,000 rows in 17.1 s on AWS,
    # every hundred at the client's pace (no slowdown, the index never throttling).
    table.meta.client.update_table(
        TableName="logfile",
        ProvisionedThroughput={"ReadCapacityUnits": 100, "WriteCapacityUnits": 100},
    )
    time.sleep(10)  # Step 5's `wait table-exists` (its waiter polls every 20 s)
    rows = range(workshop.STEP2_ROWS, workshop.STEP2_ROWS + workshop.STEP6_ROWS)
    seconds, laps = loader(table, rows, workshop.STEP6_HUNDRED_S / 100)
    assert in_band(seconds, workshop.STEP6_SECONDS), (seconds, laps)
    # Step 4's and Step 6's finding: the table throttled, its 5-WCU index never did (as the
    # emulator counts its throttles, `partition_heat_emulator_throttled_requests_total`).
    counted = throttled(table.meta.client.meta.endpoint_url)
    assert counted.get(("logfile", "")), counted
    assert not counted.get(("logfile", "GSI_1")), counted


def throttled(endpoint_url: str) -> dict[tuple[str, str], float]:
    """Requests the emulator throttled, by table and index ("" for the table's own)."""
    text = emulator_metrics(endpoint_url, timeout=5.0, limit=None)
    assert text is not None, f"{endpoint_url}/metrics did not answer"
    counts: dict[tuple[str, str], float] = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.name == "partition_heat_emulator_throttled_requests_total":
                where = (sample.labels["table"], sample.labels["index"])
                counts[where] = counts.get(where, 0.0) + sample.value
    return counts
