"""The cost arithmetic, held to AWS's worked examples to the cent, and the prices file.

The worked examples are AWS's own (its provisioned and on-demand pricing pages, its Pricing
Calculator) and infracost's golden test, as recorded with their prices in the project's facts
on DynamoDB pricing; each is run through the package's arithmetic (the capacity rules of
`loadgen.model.capacity` for the units, `loadgen.pricing` for the money) at the prices the
example states, and compared with the figure the example prints. AWS's China page shows its
provisioned rates in yuan: the China tests hold the arithmetic to those rates, per unit-hour
as the page states them.
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
from loadgen.model.capacity import read_units, write_units
from loadgen.pricing import (
    Usage,
    Window,
    format_cost,
    format_money,
    load_prices,
    monthly_cost,
)
from loadgen.pricing.cost import (
    needed_capacity,
    on_demand_usd,
    provisioned_usd,
    request_units_usd,
    storage_usd,
)
from loadgen.pricing.prices import ClassPrices, parse_prices

ROOT = Path(__file__).resolve().parents[2]
GB = 1024**3


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


def cents(value: float | None) -> str:
    assert value is not None
    return f"${value:,.2f}"


def four_places(value: float | None) -> str:
    assert value is not None
    return f"${value:.4f}"


# AWS's worked examples -----------------------------------------------------------------------


def test_provisioned_page_114_units_for_a_day_and_the_free_tier_for_30_days() -> None:
    # AWS's provisioned pricing page, us-east-1: 114 WCU (80 consumed at 70% target
    # utilisation) x $0.00065 x 24 h = $1.7784 a day; 114 RCU x $0.00013 x 24 h = $0.3557; the
    # free tier's 25 WCU and 25 RCU over 24 h x 30 days = $11.70 + $2.34 = $14.04; storage
    # averaging 27 GB, 25 of them free: 2 GB x $0.25 = $0.50.
    standard = load_prices(region="us-east-1").of("standard")
    assert four_places(provisioned_usd(0, 114, standard, hours=24)) == "$1.7784"
    assert four_places(provisioned_usd(114, 0, standard, hours=24)) == "$0.3557"
    free_writes = provisioned_usd(0, 25, standard, hours=24 * 30)
    free_reads = provisioned_usd(25, 0, standard, hours=24 * 30)
    assert (cents(free_writes), cents(free_reads)) == ("$11.70", "$2.34")
    assert cents(provisioned_usd(25, 25, standard, hours=24 * 30)) == "$14.04"
    assert cents(storage_usd(2 * GB, standard, GB)) == "$0.50"


def test_on_demand_page_42_177_000_writes_at_the_price_it_states() -> None:
    # AWS's on-demand pricing page (before the cut of 2024-11-01): 42,177,000 writes of up to
    # 1 KB at $1.25 per million write request units = $52.72; its read traffic, 42,177,000
    # read request units at $0.25 per million, $10.54.
    before_the_cut = ClassPrices(
        on_demand_read_per_million=0.25,
        on_demand_write_per_million=1.25,
        provisioned_rcu_hour=0.00013,
        provisioned_wcu_hour=0.00065,
        storage_gb_month=0.25,
    )
    writes = 42_177_000 * write_units(1024)
    assert cents(request_units_usd(0, writes, before_the_cut)) == "$52.72"
    assert cents(request_units_usd(42_177_000, 0, before_the_cut)) == "$10.54"


def test_pricing_calculator_10_million_writes_reads_and_10_gb_in_us_east_2() -> None:
    # AWS Pricing Calculator, us-east-2, 730 h, no free tier: 10 M writes of 1 KB + 10 M
    # eventually consistent reads + 10 GB = $6.25 + $0.625 + $2.50 = $9.38.
    prices = load_prices(region="us-east-2")
    standard = prices.of("standard")
    writes = request_units_usd(0, 10_000_000 * write_units(1024), standard)
    reads = request_units_usd(10_000_000 * read_units(1024, "eventual"), 0, standard)
    storage = storage_usd(10 * GB, standard, prices.gb_bytes)
    assert (writes, reads, storage) == (6.25, 0.625, 2.5)
    assert cents(writes + reads + storage) == "$9.38"


def test_infracost_golden_figures_for_us_east_1_at_730_hours() -> None:
    # infracost's DynamoDB golden test (commit 0b97cc5, 2024-11-15, "dynamo prices dropped"):
    # 3,000,000 WRU -> $1.88, 8,000,000 RRU -> $1.00, 20 WCU -> $9.49 and 30 RCU -> $2.85 at
    # 730 hours, 230 GB -> $57.50 (no free tier applied).
    prices = load_prices(region="us-east-1")
    standard = prices.of("standard")
    hours = prices.hours_per_month
    assert hours == 730
    assert cents(request_units_usd(0, 3_000_000, standard)) == "$1.88"
    assert cents(request_units_usd(8_000_000, 0, standard)) == "$1.00"
    assert cents(provisioned_usd(0, 20, standard, hours)) == "$9.49"
    assert cents(provisioned_usd(30, 0, standard, hours)) == "$2.85"
    assert cents(storage_usd(230 * GB, standard, prices.gb_bytes)) == "$57.50"
    # The same through a section: 20 WCU and 30 RCU carry a peak of 14 and 21 units/s at 70%.
    section = monthly_cost([Usage("t", 0, 0, 21.0, 14.0)], {"t": 230 * GB}, prices)
    assert cents(section["total"]["provisioned_usd"]["standard"]) == "$12.34"  # 9.49 + 2.85
    assert cents(section["total"]["storage_usd"]["standard"]) == "$57.50"


def test_aws_faq_provisioned_example_10_wcu_and_200_rcu_cost_five_cents_an_hour() -> None:
    # aws.amazon.com/dynamodb/faqs, "What are some pricing examples?": "If you create a table
    # and request 10 units of write capacity and 200 units of read capacity of provisioned
    # throughput, you would be charged: $0.01 + (4 x $0.01) = $0.05 per hour" at that page's
    # $0.01 per 10 WCU-hours and $0.01 per 50 RCU-hours.
    prices = parse_prices(
        prices_file(provisioned_wcu_hour=0.01 / 10, provisioned_rcu_hour=0.01 / 50),
        "xx-test-1",
        "faq",
    )
    assert cents(provisioned_usd(200, 10, prices.of("standard"), hours=1)) == "$0.05"


def test_a_window_of_720_hours_carries_a_provisioned_peak_as_the_pages_month() -> None:
    # 100 RCU and 100 WCU for 720 hours at $0.00013 and $0.00065: $9.36 + $46.80 = $56.16;
    # a window gives the pages' 30-day month where the file's month is 730 h.
    prices = load_prices(region="us-east-1")
    usage = [Usage("t", 0, 0, 70.0, 70.0)]  # 70/s at 70%: 100 units each way
    section = monthly_cost(usage, {}, prices, window=Window(hours=720))
    assert cents(section["total"]["provisioned_usd"]["standard"]) == "$56.16"
    assert section["window"] == {"hours": 720, "month": False, "words": "30 days (720 h)"}
    month = monthly_cost(usage, {}, prices)
    assert cents(month["total"]["provisioned_usd"]["standard"]) == "$56.94"  # 730 h
    assert month["window"]["words"] == "a month of 730 h, as AWS's Pricing Calculator counts it"


def test_an_hour_of_a_launch_costs_an_hour_of_units_and_of_storage() -> None:
    prices = load_prices()
    usage = [Usage("t", read=1000.0, write=4000.0, peak_read=1000.0, peak_write=4000.0)]
    hour = monthly_cost(usage, {"t": 730 * GB}, prices, window=Window(hours=1))
    month = monthly_cost(usage, {"t": 730 * GB}, prices)
    # 4,000 writes and 1,000 reads a second for 3,600 s: 14.4 M and 3.6 M request units.
    assert cents(hour["total"]["on_demand_usd"]["standard"]) == "$9.45"  # 9.00 + 0.45
    assert hour["total"]["on_demand_usd"]["standard"] == pytest.approx(
        month["total"]["on_demand_usd"]["standard"] / 730
    )
    assert cents(hour["total"]["storage_usd"]["standard"]) == "$0.25"  # 730 GB, 1/730 month
    printed = "\n".join(format_cost(hour))
    assert printed.startswith("Cost of 1 h (measured; us-east-1, AWS Price List 2026-08-15; USD)")
    assert "Total of 1 h (" in printed


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


# The figures of AWS's Price List (offer AmazonDynamoDB, publication 2026-08-15) as the facts
# record them: (Standard, Standard-IA), each on-demand write and read per million, WCU-hour,
# RCU-hour, GB-month; None where no source gave the figure.
PUBLISHED = {
    "us-east-1": ((0.625, 0.125, 0.00065, 0.00013, 0.25), (0.78, 0.155, 0.00081, 0.00016, 0.10)),
    "us-east-2": ((0.625, 0.125, 0.00065, 0.00013, 0.25), (0.78, 0.155, 0.00081, 0.00016, 0.10)),
    "eu-west-1": ((0.705, 0.1415, 0.000735, 0.000147, 0.283), (0.885, 0.177, None, None, 0.1132)),
    "eu-central-1": (
        (0.7625, 0.1525, 0.000793, 0.0001586, 0.306),
        (0.955, 0.1905, None, None, 0.1224),
    ),
    "ap-northeast-1": (
        (0.715, 0.1425, 0.000742, 0.0001484, 0.285),
        (None, None, None, None, 0.114),
    ),
    "us-west-1": ((None, None, 0.000725, 0.000145, None), (None,) * 5),
    "us-west-2": ((None, None, 0.00065, 0.00013, None), (None,) * 5),
}
ORDER = (
    "on_demand_write_per_million",
    "on_demand_read_per_million",
    "provisioned_wcu_hour",
    "provisioned_rcu_hour",
    "storage_gb_month",
)


@pytest.mark.parametrize("region", sorted(PUBLISHED))
def test_the_package_prices_are_the_published_figures_sourced_and_verified(region: str) -> None:
    prices = load_prices(region=region)
    assert prices.verified and not prices.partly_verified
    assert prices.stamp() == f"{region}, AWS Price List 2026-08-15"
    assert prices.currency == "USD" and prices.hours_per_month == 730
    for name, figures in zip(("standard", "standard_ia"), PUBLISHED[region], strict=True):
        table = prices.of(name)
        assert tuple(getattr(table, f) for f in ORDER) == figures, name
        for figure, value in zip(ORDER, figures, strict=True):
            assert (f"{name}.{figure}" in prices.unpriced) == (value is None)
    data = json.loads((ROOT / "loadgen/pricing/prices.json").read_text())
    for figures in data["regions"][region]["classes"].values():
        for figure in figures.values():
            if figure["price"] is None:  # no source gave it: out, never guessed
                assert not figure["verified"]
                continue
            assert figure["verified"] is True
            assert figure["source"].startswith("AWS Price List (offer AmazonDynamoDB)")
            assert figure["published"] == "2026-08-15"


def test_the_prices_file_states_its_month_and_leaves_nothing_unverified() -> None:
    text = (ROOT / "loadgen/pricing/prices.json").read_text()
    data = json.loads(text)
    assert data["hours_per_month"] == 730
    assert "AWS's Pricing Calculator" in data["hours_per_month_note"]
    assert "unverified" not in text.lower()
    for region, body in data["regions"].items():
        for figures in body["classes"].values():
            for figure in figures.values():
                assert figure["price"] is None or figure["verified"] is True, region
    assert load_prices().month() == "a month of 730 h, as AWS's Pricing Calculator counts it"


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
    assert "requests rejected before any work are not charged" in section["counted"]


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
    assert prices.currency == "CNY" and prices.verified
    assert prices.stamp() == (
        f"{region}, AWS China pricing page (amazonaws.cn/en/dynamodb/pricing), read 2026-11-25"
    )
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
    assert "-: not priced: no source gives cn-north-1's standard.on_demand_read_per_million" in (
        printed.replace("\n    ", " ")
    )


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
