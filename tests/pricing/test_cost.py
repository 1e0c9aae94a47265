"""The cost arithmetic, held to worked pricing examples to the cent, and the prices file.

AWS's pricing pages draw their price tables and examples at view time; the stored copies
read on 2026-11-25 hold the unit rules only (see loadgen/pricing/prices.json). The worked
examples below are the ones found in the stored pages, each cited with its page: AWS's own
(the DynamoDB FAQ's provisioned example, at the prices of its day) and secondary ones that
work AWS's us-east-1 figures. Each is run through the package's arithmetic with the example's
own prices, so the arithmetic, not a price, is what is held.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from loadgen.errors import ConfigError
from loadgen.pricing import Usage, load_prices, monthly_cost
from loadgen.pricing.cost import (
    needed_capacity,
    on_demand_usd,
    provisioned_usd,
    storage_usd,
)
from loadgen.pricing.prices import parse_prices

ROOT = Path(__file__).resolve().parents[2]


def prices_file(**figures: float) -> dict[str, Any]:
    """A prices file of one region, ``xx-test-1``, with ``figures`` over zeros."""
    standard = dict.fromkeys(
        (
            "on_demand_read_per_million",
            "on_demand_write_per_million",
            "provisioned_rcu_hour",
            "provisioned_wcu_hour",
            "storage_gb_month",
        ),
        0.0,
    )
    hours = figures.pop("hours_per_month", 730)
    standard.update(figures)
    return {
        "hours_per_month": hours,
        "regions": {"xx-test-1": {"read_on": "2026-11-25", "classes": {"standard": standard}}},
    }


def cents(value: float) -> str:
    return f"${value:,.2f}"


def test_aws_faq_provisioned_example_10_wcu_and_200_rcu_cost_five_cents_an_hour() -> None:
    # aws.amazon.com/dynamodb/faqs, "What are some pricing examples?" (US East, as quoted in
    # the stored copy at brainscape.com/flashcards/amazon-dynamodb-pricing-6688548): "If you
    # create a table and request 10 units of write capacity and 200 units of read capacity
    # of provisioned throughput, you would be charged: $0.01 + (4 x $0.01) = $0.05 per hour"
    # at that page's $0.01 per 10 WCU-hours and $0.01 per 50 RCU-hours.
    prices = parse_prices(
        prices_file(provisioned_wcu_hour=0.01 / 10, provisioned_rcu_hour=0.01 / 50),
        "xx-test-1",
        "faq",
    )
    assert cents(provisioned_usd(200, 10, prices.of("standard"), hours=1)) == "$0.05"


def test_on_demand_example_650_thousand_writes_and_550_thousand_reads_cost_48_cents() -> None:
    # airbyte.com/data-engineering-resources/dynamodb-pricing (and the LinkedIn article
    # "Amazon DynamoDB Pricing Explained"), US East at $0.625 per million write request
    # units and $0.125 per million read request units: 0.65M writes = $0.41, 0.55M reads =
    # $0.07, $0.48 a month. Units a month are units/s over a month's seconds.
    prices = parse_prices(
        prices_file(on_demand_write_per_million=0.625, on_demand_read_per_million=0.125),
        "xx-test-1",
        "example",
    )
    seconds = 3600 * prices.hours_per_month
    standard = prices.of("standard")
    writes = on_demand_usd(0, 650_000 / seconds, standard, prices.hours_per_month)
    reads = on_demand_usd(550_000 / seconds, 0, standard, prices.hours_per_month)
    assert (cents(writes), cents(reads)) == ("$0.41", "$0.07")
    assert cents(round(writes, 2) + round(reads, 2)) == "$0.48"  # the example adds its lines


def test_provisioned_example_100_rcu_and_100_wcu_for_720_hours_cost_56_16() -> None:
    # The same LinkedIn article, US East at $0.00065 per WCU-hour and $0.00013 per RCU-hour:
    # "100 RCUs and 100 WCUs for a month (720 hours): Writes $46.80, Reads $9.36, Total
    # $56.16". A 720-hour month is the example's; the package's file says 730.
    prices = parse_prices(
        prices_file(
            provisioned_wcu_hour=0.00065, provisioned_rcu_hour=0.00013, hours_per_month=720
        ),
        "xx-test-1",
        "example",
    )
    standard = prices.of("standard")
    assert cents(provisioned_usd(0, 100, standard, 720)) == "$46.80"
    assert cents(provisioned_usd(100, 0, standard, 720)) == "$9.36"
    section = monthly_cost([Usage("t", 0, 0, 70.0, 70.0)], {}, prices)  # 70/s at 70%: 100 units
    assert cents(section["total"]["provisioned_usd"]["standard"]) == "$56.16"


def test_needed_capacity_carries_the_peak_at_the_target_utilisation() -> None:
    assert needed_capacity(70.0, 0.7) == 100
    assert needed_capacity(70.01, 0.7) == 101
    assert needed_capacity(0.0, 0.7) == 1  # a provisioned table has at least one unit


def test_a_mean_rate_carries_to_a_month_of_730_hours() -> None:
    prices = load_prices()
    standard = prices.of("standard")
    # One write unit/s all month: 2,628,000 write request units.
    expected = 3600 * 730 / 1e6 * standard.on_demand_write_per_million
    assert on_demand_usd(0, 1.0, standard, prices.hours_per_month) == pytest.approx(expected)
    gb = storage_usd(prices.gb_bytes, standard, prices.gb_bytes)
    assert gb == standard.storage_gb_month
    ia = prices.of("standard_ia")
    assert ia.storage_gb_month < standard.storage_gb_month
    assert ia.on_demand_write_per_million > standard.on_demand_write_per_million


def test_the_package_prices_are_dated_sourced_and_say_they_are_unverified() -> None:
    prices = load_prices()
    assert prices.region == "us-east-1" and prices.read_on == "2026-11-25"
    assert not prices.verified
    assert prices.stamp() == "us-east-1, prices read 2026-11-25 (unverified)"
    assert "https://aws.amazon.com/dynamodb/pricing/on-demand/" in prices.sources
    data = json.loads((ROOT / "loadgen/pricing/prices.json").read_text())
    for figures in data["regions"]["us-east-1"]["classes"].values():
        for figure in figures.values():
            assert figure["source"].startswith("https://aws.amazon.com/dynamodb/pricing/")
            assert figure["seen_in"]


def test_a_section_sums_tables_and_indexes_and_names_what_is_counted() -> None:
    prices = load_prices()
    usage = [
        Usage("t", read=10.0, write=20.0, peak_read=14.0, peak_write=28.0),
        Usage("t/GSI1", read=0.0, write=20.0, peak_read=0.0, peak_write=28.0),
        Usage("u", read=1.0, write=0.0, peak_read=1.0, peak_write=0.0, provisioned=(5.0, 5.0)),
    ]
    section = monthly_cost(usage, {"t": prices.gb_bytes}, prices)
    rows = {row["scope"]: row for row in section["scopes"]}
    assert rows["t"]["provisioned"]["read_capacity"] == 20
    assert rows["t/GSI1"]["provisioned"]["write_capacity"] == 40
    table = section["tables"]["t"]
    assert table["on_demand_usd"]["standard"] == pytest.approx(
        rows["t"]["on_demand_usd"]["standard"] + rows["t/GSI1"]["on_demand_usd"]["standard"]
    )
    assert table["storage_usd"]["standard"] == prices.of("standard").storage_gb_month
    # u ran provisioned: its figure as run is its provisioned throughput's, not on-demand.
    u = section["tables"]["u"]
    assert u["provisioned_as_run"] and u["storage_usd"] is None
    assert u["monthly_usd"] == pytest.approx(
        provisioned_usd(5, 5, prices.of("standard"), prices.hours_per_month), abs=1e-6
    )
    assert "throttled attempts are not charged" in section["counted"]


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("{not json", "is not JSON"),
        ('{"regions": {"us-east-1": {"read_on": "2026-11-25", "classes": {"standard": '
         '{"on_demand_read_per_million": 1}}}}}', "lacks on_demand_write_per_million"),
        ('{"regions": {"us-east-1": {"read_on": "2026-11-25", "classes": {"standard": '
         '{"on_demand_read_per_million": -1, "on_demand_write_per_million": 1, '
         '"provisioned_rcu_hour": 1, "provisioned_wcu_hour": 1, "storage_gb_month": 1}}}}}',
         "on_demand_read_per_million: expected a price in USD, a number >= 0 (got -1)"),
    ],
)  # fmt: skip
def test_a_bad_prices_file_is_one_line_naming_the_value(
    tmp_path: Path, body: str, message: str
) -> None:
    path = tmp_path / "prices.json"
    path.write_text(body)
    with pytest.raises(ConfigError, match=re.escape(message)):
        load_prices(path)


def test_an_unknown_region_names_the_regions_there_are() -> None:
    with pytest.raises(ConfigError, match=r"unknown region 'mars-1' .*us-east-1"):
        load_prices(region="mars-1")


@pytest.mark.parametrize(
    "flags",
    [("--prices-region", "mars-1"), ("--prices", "MISSING.json")],
)
def test_loadgen_check_exits_2_on_bad_prices_with_one_line(flags: tuple[str, str]) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "loadgen", "check", "examples/designs/counter.yaml", *flags],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    assert len(done.stderr.strip().splitlines()) == 1
    assert flags[1] in done.stderr
