"""The cost arithmetic, held to worked pricing examples to the cent, and the prices file.

AWS's pricing pages draw their price tables and examples at view time; the stored copies
read on 2026-11-25 hold the unit rules only (see loadgen/pricing/prices.json). The worked
examples below are the ones found in the stored pages, each cited with its page: AWS's own
(the DynamoDB FAQ's provisioned example, at the prices of its day) and secondary ones that
work AWS's us-east-1 figures. Each is run through the package's arithmetic with the example's
own prices, so the arithmetic, not a price, is what is held. AWS's China page shows its
provisioned rates in yuan but its stored copies end before its Pricing Examples: the China
tests hold the arithmetic to those rates, per unit-hour as the page states them.
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
from loadgen.pricing import Usage, format_cost, format_money, load_prices, monthly_cost
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


# AWS's China pricing page, https://www.amazonaws.cn/en/dynamodb/pricing/ (read 2026-11-25),
# for the China (Beijing) and China (Ningxia) Regions: provisioned capacity at "¥ 0.058 for
# every 10 units of write capacity" and "¥ 0.058 for every 50 units of read capacity" an hour
# (Standard), ¥ 0.0725 for each (Standard-IA). Its Pricing Examples section is not in the
# stored copies, so these hold the arithmetic to the page's own rates, to the fen.
CHINA = ("cn-north-1", "cn-northwest-1")


def fen(value: float | None) -> str:
    assert value is not None
    return f"¥{value:,.2f}"


@pytest.mark.parametrize("region", CHINA)
def test_the_china_pages_rates_price_10_wcu_and_50_rcu_an_hour_at_its_own_figure(
    region: str,
) -> None:
    prices = load_prices(region=region)
    standard, ia = prices.of("standard"), prices.of("standard_ia")
    assert provisioned_usd(0, 10, standard, hours=1) == pytest.approx(0.058, abs=1e-12)
    assert provisioned_usd(50, 0, standard, hours=1) == pytest.approx(0.058, abs=1e-12)
    assert provisioned_usd(0, 10, ia, hours=1) == pytest.approx(0.0725, abs=1e-12)
    assert provisioned_usd(50, 0, ia, hours=1) == pytest.approx(0.0725, abs=1e-12)
    # The FAQ's example table (10 WCU, 200 RCU) at the China page's rates: 0.058 + 4 x 0.058.
    assert fen(provisioned_usd(200, 10, standard, hours=1)) == "¥0.29"
    # A month of 10 WCU and 50 RCU: 0.116 x 730 hours; Standard-IA 0.145 x 730.
    assert fen(provisioned_usd(50, 10, standard, prices.hours_per_month)) == "¥84.68"
    assert fen(provisioned_usd(50, 10, ia, prices.hours_per_month)) == "¥105.85"


@pytest.mark.parametrize("region", CHINA)
def test_the_china_tables_are_in_yuan_and_leave_out_what_the_page_did_not_show(
    region: str,
) -> None:
    prices = load_prices(region=region)
    assert prices.currency == "CNY" and not prices.verified and prices.partly_verified
    assert prices.stamp() == f"{region}, prices read 2026-11-25 (partly verified)"
    assert prices.sources == ("https://www.amazonaws.cn/en/dynamodb/pricing/",)
    assert prices.unpriced == tuple(
        f"{c}.{f}"
        for c in ("standard", "standard_ia")
        for f in ("on_demand_read_per_million", "on_demand_write_per_million", "storage_gb_month")
    )
    data = json.loads((ROOT / "loadgen/pricing/prices.json").read_text())
    for figures in data["regions"][region]["classes"].values():
        for figure in figures.values():
            assert figure["verified"] == (figure["price"] is not None)


def test_a_cost_without_a_price_is_no_figure_and_so_is_every_sum_it_enters() -> None:
    prices = load_prices(region="cn-north-1")
    usage = [
        Usage("t", read=10.0, write=20.0, peak_read=14.0, peak_write=28.0),
        Usage("u", read=1.0, write=1.0, peak_read=1.0, peak_write=1.0, provisioned=(5.0, 5.0)),
    ]
    section = monthly_cost(usage, {"t": prices.gb_bytes}, prices)
    assert section["currency"] == "CNY" and section["prices"]["currency"] == "CNY"
    t, u = section["tables"]["t"], section["tables"]["u"]
    assert t["on_demand_usd"] == {"standard": None, "standard_ia": None}
    assert t["storage_usd"] == {"standard": None, "standard_ia": None}
    assert t["monthly_usd"] is None  # on demand as run, unpriced
    # u ran provisioned, with no storage known: priced at the page's rates.
    assert fen(u["monthly_usd"]) == fen(provisioned_usd(5, 5, prices.of("standard"), 730))
    assert section["total"]["monthly_usd"] is None
    assert section["total"]["provisioned_usd"]["standard"] is not None
    # None of a thing costs nothing, priced or not.
    assert on_demand_usd(0.0, 0.0, prices.of("standard"), 730) == 0.0
    assert storage_usd(0, prices.of("standard"), prices.gb_bytes) == 0.0
    printed = "\n".join(format_cost(section))
    assert "; CNY):" in printed and "¥" in printed and "$" not in printed
    assert "-: not priced: cn-north-1's prices page, as read, does not show" in printed


def test_money_prints_in_the_regions_currency() -> None:
    assert format_money(1234.5, "USD") == "$1,234.50"
    assert format_money(1234.5, "CNY") == "¥1,234.50"
    assert format_money(0.0058, "CNY") == "¥0.0058"
    assert format_money(2.0, "EUR") == "EUR 2.00"
    assert format_money(None, "CNY") == "-"


def test_a_prices_file_of_the_first_shape_still_reads_and_a_currency_is_a_code(
    tmp_path: Path,
) -> None:
    figures = {
        name: {"usd": 1.0, "source": "https://example.test/"}
        for name in prices_file()["regions"]["xx-test-1"]["classes"]["standard"]
    }
    body = {"regions": {"xx-1": {"read_on": "2026-11-25", "classes": {"standard": figures}}}}
    path = tmp_path / "prices.json"
    path.write_text(json.dumps(body))
    prices = load_prices(path, region="xx-1")
    assert prices.currency == "USD" and prices.of("standard").storage_gb_month == 1.0
    body["regions"]["xx-1"]["currency"] = "yuan"
    path.write_text(json.dumps(body))
    with pytest.raises(ConfigError, match=r"currency: expected a currency code .* \(got 'yuan'\)"):
        load_prices(path, region="xx-1")
