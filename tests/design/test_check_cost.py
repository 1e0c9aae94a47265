"""``loadgen check``'s cost on paper, and a run's measured and launch-demand ones, for the
counter's single and sharded designs at the same launch rates: the sharded design's reads of
ten shards are the difference at launch demand, and the single design's lower measured cost
is its throttling."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from loadgen.design.loader import load_design
from loadgen.pricing import load_prices
from loadgen.pricing.cost import on_demand_usd
from loadgen.simulate.launch import check
from tests.design.conftest import DesignFileRuns

ROOT = Path(__file__).resolve().parents[2]
COUNTER = str(ROOT / "examples/designs/counter.yaml")
PRICES = load_prices()
STANDARD = PRICES.of("standard")


def test_check_costs_the_sharded_counters_ten_reads_per_read() -> None:
    single = check(load_design(COUNTER, "single"))
    sharded = check(load_design(COUNTER, "sharded"))
    # 1,500 increments/s of one write unit; 150 reads/s of half a unit (one item) or ten
    # halves (a BatchGetItem of ten shards, eventually consistent).
    assert {(u.scope, u.read, u.write) for u in single.usage()} == {("ph-counter", 75.0, 1500.0)}
    assert {(u.scope, u.read, u.write) for u in sharded.usage()} == {("ph-counter", 750.0, 1500.0)}
    paper = [r.cost(PRICES)["total"]["on_demand_usd"]["standard"] for r in (single, sharded)]
    assert paper[1] - paper[0] == pytest.approx(
        on_demand_usd(675.0, 0.0, STANDARD, PRICES.hours_per_month), abs=1e-5
    )


def test_check_costs_gsi_writes_on_the_index_and_storage_from_the_items() -> None:
    report = check(load_design(str(ROOT / "examples/designs/single-table.yaml"), "status-key"))
    usage = {u.scope: u for u in report.usage()}
    assert usage["store/GSI1"].write == usage["store"].write  # every order lands in GSI1
    section = report.cost(PRICES)
    store = section["tables"]["store"]
    assert store["storage_bytes"] == report.stored_bytes["store"] > 0
    assert section["basis"] == "estimated"


def test_loadgen_check_prints_the_cost_on_paper() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "loadgen", "check", COUNTER, "--design", "sharded"],
        cwd=ROOT, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    lines = done.stdout.splitlines()
    assert "Cost a month, on paper (estimated; us-east-1, AWS Price List 2026-08-15; USD):" in lines
    head = next(i for i, line in enumerate(lines) if line.startswith("  Table or index"))
    assert lines[head + 1].split()[:3] == ["ph-counter", "750.0", "1,500.0"]


def test_loadgen_check_costs_a_launch_window_of_an_hour() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "loadgen", "check", COUNTER, "--design", "sharded",
         "--window", "1h"],
        cwd=ROOT, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert "Cost of 1 h, on paper (estimated; us-east-1, AWS Price List 2026-08-15; USD):" in lines
    hour = on_demand_usd(750.0, 1500.0, STANDARD, 1.0)  # 5.4 M writes, 2.7 M reads: $3.71
    head = next(i for i, line in enumerate(lines) if line.startswith("  Table or index"))
    assert lines[head + 1].split()[3] == f"${hour:,.2f}" == "$3.71"
    bad = subprocess.run(
        [sys.executable, "-m", "loadgen", "check", COUNTER, "--window", "soon"],
        cwd=ROOT, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert bad.returncode == 2
    assert bad.stderr.strip() == (
        "loadgen: error: --window must be a time span like 1h, 90m or 2d, or month (got 'soon')"
    )


@pytest.mark.slow
def test_a_run_of_both_designs_costs_their_launch_and_shows_throttling_as_no_saving(
    design_file_runs: Callable[[str], DesignFileRuns],
) -> None:
    # The session's run of every counter design (tests/design/test_design_runs.py judges
    # each against its Python workload).
    done = design_file_runs("counter")
    assert done.returncode in (0, 1), done.stderr[-2000:]
    single = done.results("single")["cost"]
    sharded = done.results("sharded")["cost"]
    (one,) = single["scopes"]
    (ten,) = sharded["scopes"]
    # Measured: each sharded read reads ten shards, about ten times the read units of the
    # single design's read (which the run delivers less of when the hot counter holds it).
    assert ten["read_units_per_s"] > 5 * one["read_units_per_s"]
    # At launch demand (1,500 increments and 150 reads/s asked, each priced by the model's
    # units per execution), the designs differ by the sharded reads alone: 150 x (5 - 0.5).
    (one_asked,) = single["launch"]["scopes"]
    (ten_asked,) = sharded["launch"]["scopes"]
    assert one_asked["write_units_per_s"] == ten_asked["write_units_per_s"] == 1500.0
    assert ten_asked["read_units_per_s"] - one_asked["read_units_per_s"] == pytest.approx(675.0)
    launch = [c["launch"]["total"]["on_demand_usd"]["standard"] for c in (single, sharded)]
    assert launch[1] - launch[0] == pytest.approx(
        on_demand_usd(675.0, 0.0, STANDARD, PRICES.hours_per_month), abs=1e-4
    )
    # The single design did not serve its launch: what it measured less is throttling.
    assert single["served"]["served"] is False and sharded["served"]["served"] is not False
    measured = single["total"]["on_demand_usd"]["standard"]
    assert measured < single["launch"]["total"]["on_demand_usd"]["standard"]
    assert "per design at launch demand" in done.stdout
    assert "did NOT serve its launch" in done.stdout
    assert "throttling, not a saving" in done.stdout
    assert "  sharded: ph-counter reads +675.0 (+$" in done.stdout
    assert "Cheapest that passes: sharded" in done.stdout


def test_loadgen_check_prices_in_yuan_for_a_china_region() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "loadgen", "check", COUNTER, "--design", "sharded",
         "--prices-region", "cn-north-1"],
        cwd=ROOT, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert (
        "Cost a month, on paper (estimated; cn-north-1, AWS China pricing page "
        "(amazonaws.cn/en/dynamodb/pricing), read 2026-11-25; CNY):" in lines
    )
    head = next(i for i, line in enumerate(lines) if line.startswith("  Table or index"))
    # 750 read and 1,500 write units/s: 1,072 RCU and 2,143 WCU at 70%, at the China page's
    # 0.058 CNY per 50 RCU-hours and per 10 WCU-hours, 730 hours. On demand: no price shown.
    assert lines[head + 1].split()[:4] == ["ph-counter", "750.0", "1,500.0", "-"]
    assert "¥9,981.23 (1,072/2,143 r/w)" in lines[head + 1]
    assert "$" not in done.stdout
