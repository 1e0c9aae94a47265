"""A run's cost a month from its results file: the summary, the gate, the report, the
side-by-side table and the web UI's running estimate read the same figures."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from loadgen.errors import ConfigError
from loadgen.pricing import load_prices
from loadgen.pricing.cost import needed_capacity, on_demand_usd, provisioned_usd
from loadgen.verdict.checks import FAIL, PASS, evaluate
from loadgen.verdict.compare import compare_designs
from loadgen.verdict.cost import pattern_costs, run_cost, usage_of
from loadgen.verdict.report import CHARTS, build_html
from loadgen.verdict.summary import conclude
from loadgen.verdict.thresholds import parse_thresholds
from loadgen.webui.view import heat_view
from tests.results_factory import make_results, op_row, steady

ROOT = Path(__file__).resolve().parents[2]
PRICES = load_prices()
STANDARD = PRICES.of("standard")
HOURS = PRICES.hours_per_month


def counter_run(read_units: float, *, scale: float = 0.1, seconds: int = 10) -> dict[str, Any]:
    """A counter-like run at scale 0.1: 150 increments/s of 1 unit and 15 reads/s of
    ``read_units`` each (measured), on the table ``ph-counter``."""
    events = steady("ph-counter", ["k"], seconds=seconds, per_second=150, units=1.0)
    events += steady(
        "ph-counter", ["k"], seconds=seconds, per_second=15, operation="GetItem", units=read_units
    )
    events.sort(key=lambda e: e["second"])  # the heat map takes them in time order
    reads = 15 * seconds
    operations = [
        op_row("increment", "PutItem", 150 * seconds,
               units={"ph-counter": {"read": 0.0, "write": 150.0 * seconds}}),
        op_row("read", "GetItem", reads,
               units={"ph-counter": {"read": read_units * reads, "write": 0.0}}),
    ]  # fmt: skip
    return make_results(events, operations, scale=scale, duration_s=float(seconds))


def test_the_mean_and_the_peak_second_are_read_at_aws_scale() -> None:
    results = counter_run(0.5)
    (usage,) = usage_of(results)
    # 150 write units/s measured at scale 0.1 stand for 1,500 on DynamoDB.
    assert usage.write == pytest.approx(1500.0)
    assert usage.read == pytest.approx(75.0)
    assert usage.peak_write == pytest.approx(1500.0)
    section = run_cost(results, PRICES)
    (row,) = section["scopes"]
    assert row["on_demand_usd"]["standard"] == pytest.approx(
        on_demand_usd(75.0, 1500.0, STANDARD, HOURS), abs=1e-6
    )
    assert row["provisioned"]["write_capacity"] == needed_capacity(1500.0, 0.7) == 2143
    assert row["provisioned"]["usd"]["standard"] == pytest.approx(
        provisioned_usd(108, 2143, STANDARD, HOURS), abs=1e-6
    )
    assert section["stamp"] == "us-east-1, prices read 2026-11-25 (unverified)"


def test_the_summary_ends_with_the_cost_and_puts_it_in_the_results() -> None:
    results = counter_run(0.5)
    lines = conclude(results)
    monthly = on_demand_usd(75.0, 1500.0, STANDARD, HOURS)
    start = lines.index(
        "Cost a month (measured; us-east-1, prices read 2026-11-25 (unverified); USD):"
    )
    assert lines[start + 1].startswith("  How: mean units/s over the run at AWS scale")
    head = next(i for i, line in enumerate(lines) if line.startswith("  Table or index"))
    assert lines[head + 1].split()[:3] == ["ph-counter", "75.0", "1,500.0"]
    total = lines.index("  Total a month (us-east-1, prices read 2026-11-25 (unverified)):")
    assert lines[total + 1].split()[:3] == ["Standard", "on-demand", f"${monthly:,.2f}"]
    assert lines[total + 2].split()[0] == "Standard-IA"
    assert lines[total + 4].startswith("  Counted: units the requests consumed")
    assert all(len(line) <= 100 for line in lines[start:]), lines[start:]
    assert results["cost"]["total"]["monthly_usd"] == pytest.approx(
        on_demand_usd(75.0, 1500.0, STANDARD, HOURS), abs=1e-5
    )
    json.dumps(results)  # the results file can hold it


def test_a_table_provisioned_as_run_is_costed_at_its_throughput() -> None:
    results = counter_run(0.5)
    results["tables"] = [
        {"table": "ph-counter", "index": None, "billing_mode": "PROVISIONED",
         "read_capacity": 200, "write_capacity": 3000},
    ]  # fmt: skip
    table = run_cost(results, PRICES)["tables"]["ph-counter"]
    assert table["provisioned_as_run"]
    assert table["monthly_usd"] == pytest.approx(
        provisioned_usd(200, 3000, STANDARD, HOURS), abs=1e-5
    )


def gate(results: dict[str, Any], thresholds: dict[str, Any]) -> Any:
    return evaluate(results, parse_thresholds(thresholds))


def test_the_gate_fails_a_run_over_its_monthly_cost_limit() -> None:
    results = counter_run(0.5)
    monthly = on_demand_usd(75.0, 1500.0, STANDARD, HOURS)  # about $2,700
    outcome = gate(
        results,
        {
            "run": {"max_monthly_cost_usd": 2000},
            "tables": {"ph-counter": {"max_monthly_cost_usd": 5000}},
        },
    )
    checks = {c.gate.where: c for c in outcome.checks}
    assert checks["run"].status == FAIL and outcome.exit_code == 1
    assert checks["run"].measured == pytest.approx(monthly, abs=1e-5)
    assert checks["run"].detail == (
        f"the tables as run: ${monthly:,.2f} a month (limit <= $2,000.00 a month); "
        "us-east-1, prices read 2026-11-25 (unverified)"
    )
    assert checks["tables.ph-counter"].status == PASS
    assert gate(results, {"run": {"max_monthly_cost_usd": 3000}}).exit_code == 0


def test_the_cost_gate_takes_a_number_of_dollars() -> None:
    with pytest.raises(ConfigError, match=r"max_monthly_cost_usd: expected US dollars"):
        parse_thresholds({"run": {"max_monthly_cost_usd": -1}})
    with pytest.raises(ConfigError, match="applies to run and tables, not operations"):
        parse_thresholds({"operations": {"*": {"max_monthly_cost_usd": 1}}})


def test_the_report_has_the_cost_section() -> None:
    results = counter_run(0.5)
    page = build_html(results, dict.fromkeys(CHARTS, b""))
    assert "<h2>What it costs a month</h2>" in page
    monthly = on_demand_usd(75.0, 1500.0, STANDARD, HOURS)
    assert f"${monthly:,.2f}" in page
    assert "us-east-1, prices read 2026-11-25 (unverified)" in page


def test_designs_side_by_side_show_the_sharded_reads_extra_cost() -> None:
    single = counter_run(0.5)  # one GetItem of one item: half a unit
    single["run"]["design"] = "single"
    sharded = counter_run(5.0)  # a BatchGetItem of ten shards: ten halves
    sharded["run"]["design"] = "sharded"
    costs = [pattern_costs(r, PRICES) for r in (single, sharded)]
    extra = costs[1]["read"] - costs[0]["read"]
    assert extra == pytest.approx(on_demand_usd(750.0 - 75.0, 0, STANDARD, HOURS))
    assert costs[1]["increment"] == pytest.approx(costs[0]["increment"])
    lines = compare_designs([single, sharded], PRICES)
    read_rows = [line for line in lines if line.startswith("read ")]
    assert read_rows[0].endswith(f"${costs[0]['read']:,.2f}")
    assert read_rows[1].endswith(f"${costs[1]['read']:,.2f}")
    assert lines[-1].startswith("Cheapest that passes: single")


def test_the_web_ui_view_carries_the_running_estimate() -> None:
    view = heat_view(counter_run(0.5))
    cost = view["cost"]
    assert cost["stamp"] == "us-east-1, prices read 2026-11-25 (unverified)"
    assert cost["on_demand_usd"] == pytest.approx(
        on_demand_usd(75.0, 1500.0, STANDARD, HOURS), abs=1e-5
    )
    assert set(cost["tables"]) == {"ph-counter"}


def test_loadgen_gate_and_report_reprice_with_prices_files(tmp_path: Path) -> None:
    results = counter_run(0.5)
    path = tmp_path / "results.json"
    path.write_text(json.dumps(results))
    limits = tmp_path / "t.yaml"
    limits.write_text("run:\n  max_monthly_cost_usd: 2000\n")
    doubled = json.loads((ROOT / "loadgen/pricing/prices.json").read_text())
    for figures in doubled["regions"]["us-east-1"]["classes"].values():
        for figure in figures.values():
            figure["price"] /= 2
    cheap = tmp_path / "half.json"
    cheap.write_text(json.dumps(doubled))

    def loadgen(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "loadgen", *args],
            cwd=ROOT, capture_output=True, text=True, timeout=120,
        )  # fmt: skip

    assert loadgen("gate", str(path), "--thresholds", str(limits)).returncode == 1
    done = loadgen("gate", str(path), "--thresholds", str(limits), "--prices", str(cheap))
    assert done.returncode == 0, done.stdout  # half the prices: about $1,350
    bad = loadgen("gate", str(path), "--thresholds", str(limits), "--prices-region", "xx-9")
    assert bad.returncode == 2 and "unknown region 'xx-9'" in bad.stderr


def test_the_dollar_cost_gate_refuses_a_region_priced_in_yuan(tmp_path: Path) -> None:
    results = counter_run(0.5)
    limits = {"run": {"max_monthly_cost_usd": 2000}}
    with pytest.raises(ConfigError, match=r"cn-north-1's prices are in CNY"):
        evaluate(results, parse_thresholds(limits), prices=load_prices(region="cn-north-1"))
    # Gates other than the cost gate read no price: they still run.
    other = parse_thresholds({"run": {"max_failure_ratio": 0.01}})
    assert evaluate(results, other, prices=load_prices(region="cn-north-1")).exit_code == 0

    path = tmp_path / "results.json"
    path.write_text(json.dumps(results))
    thresholds = tmp_path / "t.yaml"
    thresholds.write_text("run:\n  max_monthly_cost_usd: 2000\n")
    for argv in (
        ["gate", str(path), "--thresholds", str(thresholds)],
        # loadgen run refuses before it starts a target.
        ["run", "counter", "--duration", "1s", "--gate", str(thresholds)],
    ):
        done = subprocess.run(
            [sys.executable, "-m", "loadgen", *argv, "--prices-region", "cn-north-1"],
            cwd=ROOT, capture_output=True, text=True, timeout=120,
        )  # fmt: skip
        assert done.returncode == 2, done.stderr
        assert len(done.stderr.strip().splitlines()) == 1
        assert "max_monthly_cost_usd is a limit in USD" in done.stderr and "CNY" in done.stderr
        assert "Target:" not in done.stderr
