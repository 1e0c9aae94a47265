"""A run's cost from its results file, measured and at launch demand: the summary, the gate,
the report, the side-by-side table and the web UI's running estimate read the same figures."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from loadgen.errors import ConfigError
from loadgen.pricing import Window, load_prices
from loadgen.pricing.cost import needed_capacity, on_demand_usd, provisioned_usd
from loadgen.verdict.checks import FAIL, PASS, evaluate
from loadgen.verdict.compare import compare_designs
from loadgen.verdict.cost import (
    cost_of,
    format_run_cost,
    pattern_costs,
    run_cost,
    served,
    usage_of,
)
from loadgen.verdict.report import CHARTS, build_html
from loadgen.verdict.summary import conclude
from loadgen.verdict.thresholds import parse_thresholds
from loadgen.webui.view import heat_view
from tests.results_factory import make_results, op_row, steady, throttle_row

ROOT = Path(__file__).resolve().parents[2]
PRICES = load_prices()
STANDARD = PRICES.of("standard")
HOURS = PRICES.hours_per_month
STAMP = "us-east-1, AWS Price List 2026-08-15"


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
    assert section["stamp"] == STAMP
    assert section["window"]["words"] == "a month of 730 h, as AWS's Pricing Calculator counts it"


def test_the_summary_ends_with_the_cost_and_puts_it_in_the_results() -> None:
    results = counter_run(0.5)
    lines = conclude(results)
    monthly = on_demand_usd(75.0, 1500.0, STANDARD, HOURS)
    start = lines.index(f"Cost a month (measured; {STAMP}; USD):")
    assert lines[start + 1].startswith("  How: the units the run's requests consumed")
    head = next(i for i, line in enumerate(lines) if line.startswith("  Table or index"))
    assert lines[head + 1].split()[:3] == ["ph-counter", "75.0", "1,500.0"]
    total = lines.index(f"  Total a month ({STAMP}):")
    assert lines[total + 1].split()[:3] == ["Standard", "on-demand", f"${monthly:,.2f}"]
    assert lines[total + 2].split()[0] == "Standard-IA"
    launch = lines.index(f"Cost a month at launch demand ({STAMP}; USD):")
    assert launch > total
    assert any(line.startswith("  Measured $") for line in lines[launch:])
    counted = next(i for i, line in enumerate(lines) if line.startswith("  Counted:"))
    assert counted > launch and lines[counted].startswith("  Counted: units the requests consumed")
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
    monthly = on_demand_usd(75.0, 1500.0, STANDARD, HOURS)  # about $690
    outcome = gate(
        results,
        {
            "run": {"max_monthly_cost_usd": 500},
            "tables": {"ph-counter": {"max_monthly_cost_usd": 5000}},
        },
    )
    checks = {c.gate.where: c for c in outcome.checks}
    assert checks["run"].status == FAIL and outcome.exit_code == 1
    # Every request was served: at launch demand the run costs what it measured.
    assert checks["run"].measured == pytest.approx(monthly, abs=1e-5)
    assert checks["run"].detail == (
        f"the tables as run, at launch demand: ${monthly:,.2f} a month (limit <= $500.00 a "
        f"month); measured ${monthly:,.2f}; {STAMP}; a month of 730 h, as AWS's Pricing "
        "Calculator counts it"
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
    assert STAMP in page and "<h3>At launch demand</h3>" in page


def counter_design_run(design: str, *, throttled_share: float = 0.0) -> dict[str, Any]:
    """A design run of the counter at its launch plan (1,500 increments and 150 reads/s at
    AWS scale, at scale 0.1) with the model's units per execution: ``single`` reads one item
    (half a unit), ``sharded`` ten (five). ``throttled_share`` of the increments DynamoDB
    refused for good: they consumed nothing and were throttled on every attempt."""
    reads = 0.5 if design == "single" else 5.0
    served = 1.0 - throttled_share
    results = counter_run(reads)
    increment, _ = results["operations"]
    increment["units"]["ph-counter"]["write"] *= served
    refused = round(increment["requests"] * throttled_share)
    increment.update(failures=refused, throttled_attempts=3 * refused, retries=2 * refused)
    increment["errors"] = {"ProvisionedThroughputExceededException": refused} if refused else {}
    results["run"]["design"] = design
    results["load"] = {
        "rates": {"increment": 1500.0, "read": 150.0},
        "stages": [],
        "scale": 0.1,
        "delivered": True,
    }
    results["design"] = {
        "name": design,
        "patterns": [
            {"id": "increment", "rate": 1500.0,
             "units_per_execution": {"ph-counter": {"read": 0.0, "write": 1.0}}},
            {"id": "read", "rate": 150.0,
             "units_per_execution": {"ph-counter": {"read": reads, "write": 0.0}}},
        ],
    }  # fmt: skip
    if throttled_share:  # the heat holds what was consumed: the served increments only
        events = steady("ph-counter", ["k"], seconds=10, per_second=round(150 * served), units=1.0)
        events += steady(
            "ph-counter", ["k"], seconds=10, per_second=15, operation="GetItem", units=reads
        )
        events.sort(key=lambda e: e["second"])
        fresh = make_results(events, results["operations"], scale=0.1, duration_s=10.0)
        results["heat"], results["top_keys"] = fresh["heat"], fresh["top_keys"]
    return results


def test_at_launch_demand_a_refused_request_counts_once_as_if_served() -> None:
    single = counter_design_run("single", throttled_share=0.4)
    section = run_cost(single, PRICES)
    (measured,) = section["scopes"]
    (launch,) = section["launch"]["scopes"]
    # Measured: 60% of the increments consumed their unit; at launch demand all 1,500/s do,
    # once each (the retries of the refused ones count nothing).
    assert measured["write_units_per_s"] == pytest.approx(900.0)
    assert launch["write_units_per_s"] == pytest.approx(1500.0)
    assert launch["read_units_per_s"] == pytest.approx(75.0)
    assert section["launch"]["total"]["on_demand_usd"]["standard"] == pytest.approx(
        on_demand_usd(75.0, 1500.0, STANDARD, HOURS), abs=1e-5
    )
    assert {p["name"]: p["units_from"] for p in section["launch"]["patterns"]} == {
        "increment": "model",
        "read": "model",
    }
    assert section["served"] == {
        "served": False,
        "why": "DynamoDB refused 67% of increment's attempts (1,800 of 2,700)",
    }
    printed = "\n".join(format_run_cost(section)).replace("\n    ", " ")
    assert "the design did NOT serve its launch (DynamoDB refused 67% of increment's" in printed
    assert "less measured is throttling, not a saving." in printed


def test_without_the_model_a_pattern_is_priced_by_what_its_charged_requests_consumed() -> None:
    results = counter_run(0.5)
    increment = results["operations"][0]
    # 300 of 1,500 increments refused as invalid: they consumed nothing, and at launch demand
    # they still cost nothing (DynamoDB rejects them before any work, however fast it serves).
    increment["failures"] = 300
    increment["errors"] = {"ValidationException": 300}
    patterns = {p["name"]: p for p in run_cost(results, PRICES)["launch"]["patterns"]}
    assert patterns["increment"]["units_from"] == "measured"
    # 1,500 requests/s at AWS scale, a fifth of them rejected at any rate; the rest cost the
    # units the charged ones consumed: 1,500 units/s over 1,200 requests/s.
    assert patterns["increment"]["per_s"] == pytest.approx(1200.0)
    assert patterns["increment"]["units"] == {"ph-counter": {"read": 0.0, "write": 1.25}}
    assert served(results)["served"] is True


def test_a_transaction_a_throttle_cancelled_is_one_request_uncharged_whatever_its_items() -> None:
    results = counter_run(0.5)
    increment = results["operations"][0]
    # 300 of 1,500 transactions cancelled by a throttle, each naming four items' ThrottlingError
    # (1,200 reasons); the 1,200 the table served consumed 2,400 units: 2 an execution.
    increment.update(
        operation="TransactWriteItems", failures=300, errors={"TransactionCanceledException": 300},
        cancellations={"ThrottlingError": 1200},
        units={"ph-counter": {"read": 0.0, "write": 2400.0}},
        throttles=[throttle_row("TableWriteKeyRangeThroughputExceeded", "partition", 300,
                                scope="ph-counter", exception="TransactionCanceledException",
                                final=300)])  # fmt: skip
    patterns = {p["name"]: p for p in run_cost(results, PRICES)["launch"]["patterns"]}
    assert patterns["increment"]["units"] == {"ph-counter": {"read": 0.0, "write": 2.0}}


def test_a_design_whose_every_write_is_invalid_costs_nothing_at_launch_demand() -> None:
    results = counter_design_run("sharded")
    increment = results["operations"][0]
    increment.update(failures=increment["requests"], units={})
    increment["errors"] = {"ValidationException": increment["requests"]}
    section = run_cost(results, PRICES)
    (row,) = section["launch"]["scopes"]
    # The model prices an increment at a write unit; DynamoDB rejects every one before any
    # work, at any rate: only the reads are demand.
    assert row["write_units_per_s"] == 0.0 and row["read_units_per_s"] == pytest.approx(750.0)


def test_designs_side_by_side_differ_at_launch_demand_by_the_sharded_reads() -> None:
    single = counter_design_run("single", throttled_share=0.4)
    sharded = counter_design_run("sharded")
    costs = [pattern_costs(r, PRICES) for r in (single, sharded)]
    extra = costs[1]["read"] - costs[0]["read"]
    assert extra == pytest.approx(on_demand_usd(750.0 - 75.0, 0, STANDARD, HOURS))
    assert costs[1]["increment"] == pytest.approx(costs[0]["increment"])
    lines = compare_designs([single, sharded], PRICES)
    read_rows = [line for line in lines if line.startswith("read ")]
    assert read_rows[0].endswith(f"${costs[0]['read']:,.2f}")
    assert read_rows[1].endswith(f"${costs[1]['read']:,.2f}")
    text = "\n".join(lines)
    assert "did NOT serve its launch" in next(ln for ln in lines if ln.startswith("  single "))
    assert "throttling, not a saving" in text
    # At launch demand the whole difference is the sharded design's reads: +675 units/s.
    (sharded_line,) = [ln for ln in lines if ln.startswith("  sharded: ")]
    assert sharded_line == f"  sharded: ph-counter reads +675.0 (+${extra:,.2f})"
    assert lines[-1].startswith("Cheapest that passes: sharded")


def test_results_written_before_launch_demand_are_worked_out_again_in_their_region() -> None:
    results = counter_design_run("single", throttled_share=0.4)
    old = run_cost(results, load_prices(region="eu-west-1"))
    del old["launch"], old["served"]
    results["cost"] = old
    section = cost_of(results)
    assert section["stamp"] == "eu-west-1, AWS Price List 2026-08-15"
    assert section["launch"]["scopes"][0]["write_units_per_s"] == pytest.approx(1500.0)
    assert section["served"]["served"] is False


def test_a_window_of_an_hour_carries_the_summary_and_keeps_the_gate_a_month() -> None:
    results = counter_run(0.5)
    lines = conclude(results, PRICES, Window(hours=1.0))
    assert f"Cost of 1 h (measured; {STAMP}; USD):" in lines
    hourly = on_demand_usd(75.0, 1500.0, STANDARD, 1.0)
    assert results["cost"]["total"]["monthly_usd"] == pytest.approx(hourly, abs=1e-6)
    # The gate's limit is a month's: it works the month out again.
    (check,) = gate(results, {"run": {"max_monthly_cost_usd": 100000}}).checks
    assert check.measured == pytest.approx(on_demand_usd(75.0, 1500.0, STANDARD, HOURS), 1e-9)


def test_the_web_ui_view_carries_the_running_estimate_in_the_runs_region_and_currency() -> None:
    view = heat_view(counter_run(0.5))
    cost = view["cost"]
    assert cost["stamp"] == STAMP and cost["currency"] == "USD"
    monthly = on_demand_usd(75.0, 1500.0, STANDARD, HOURS)
    assert cost["on_demand_usd"] == pytest.approx(monthly, abs=1e-5)
    assert cost["text"]["on_demand_usd"] == f"${monthly:,.2f}"
    assert set(cost["tables"]) == {"ph-counter"}
    results = counter_run(0.5)
    results["run"]["prices_region"] = "cn-north-1"
    china = heat_view(results)["cost"]
    assert china["region"] == "cn-north-1" and china["currency"] == "CNY"
    assert china["text"]["provisioned_usd"].startswith("¥")
    results["run"]["prices_region"] = "eu-west-1"
    europe = heat_view(results)["cost"]
    assert europe["on_demand_usd"] == pytest.approx(
        on_demand_usd(75.0, 1500.0, load_prices(region="eu-west-1").of("standard"), HOURS),
        abs=1e-5,
    )


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
