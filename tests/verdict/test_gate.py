"""``loadgen gate``: each gate type, baselines, JUnit XML, Markdown and the command line."""

from __future__ import annotations

import json
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from loadgen.verdict.checks import FAIL, PASS, SKIP, evaluate
from loadgen.verdict.formats import format_markdown, junit_xml
from loadgen.verdict.thresholds import parse_thresholds
from tests.results_factory import event, make_results, op_row, steady

ROOT = Path(__file__).resolve().parents[2]


def check(results, thresholds, baseline=None):
    """The one check of a one-gate thresholds mapping."""
    outcome = evaluate(results, parse_thresholds(thresholds), baseline)
    assert len(outcome.checks) == 1, outcome.checks
    return outcome.checks[0]


def hot(table="t", seconds=10, per_second=10, units=1.0, scale=0.1):
    return make_results(
        steady(table, ["HOT"], seconds=seconds, per_second=per_second, units=units), scale=scale
    )


def spread(table="t", keys=200, scale=0.1):
    return make_results(steady(table, [f"k{i}" for i in range(keys)], per_second=50), scale=scale)


# Table and index gates.


def test_hot_key_share_names_the_key() -> None:
    failed = check(hot(), {"tables": {"t": {"max_hot_key_share": 0.25}}})
    assert failed.status == FAIL
    assert failed.measured == 1.0
    assert failed.detail.startswith("HOT takes 100.00%")
    passed = check(spread(), {"tables": {"t": {"max_hot_key_share": 0.25}}})
    assert passed.status == PASS
    assert passed.measured == pytest.approx(3 / 500)  # 500 calls over 200 keys


def test_partition_skew_and_gini() -> None:
    skew = {"tables": {"*": {"max_partition_skew": 4}}}
    one = check(hot(), skew)
    assert one.status == FAIL and one.measured == pytest.approx(16.0)  # 16 partitions
    assert check(spread(), skew).status == PASS
    gini = {"settings": {"partitions": 8}, "tables": {"*": {"max_partition_gini": 0.5}}}
    one = check(hot(), gini)
    assert one.status == FAIL and one.measured == pytest.approx(1 - 1 / 8)
    assert check(spread(), gini).status == PASS


def test_key_units_are_read_at_aws_scale() -> None:
    gate = {"tables": {"t": {"max_key_write_units_per_s": 500}}}
    # 60 units/s measured on one key: 600/s at scale 0.1, 60/s without the model.
    scaled = check(hot(per_second=60, scale=0.1), gate)
    assert scaled.status == FAIL
    assert scaled.measured == pytest.approx(600)
    assert "HOT (writes) sustains 600 units/s at AWS scale" in scaled.detail
    assert "60.0 measured at scale 0.1" in scaled.detail
    assert check(hot(per_second=60, scale=None), gate).status == PASS
    override = {"settings": {"scale": 1}, **gate}
    assert check(hot(per_second=60, scale=0.1), override).measured == pytest.approx(60)


def test_key_rate_is_the_busiest_sustained_window() -> None:
    # Three seconds at 100 units/s, then quiet: over 5 s that is 60/s, over 2 s 100/s.
    events = steady("t", ["HOT"], seconds=3, per_second=100) + steady(
        "t", ["OTHER"], seconds=10, per_second=1
    )
    events.sort(key=lambda e: e["second"])
    results = make_results(events, scale=None)
    gate = {"tables": {"t": {"max_key_write_units_per_s": 1000}}}
    assert check(results, gate).measured == pytest.approx(60)
    two = {"settings": {"sustain_s": 2}, **gate}
    assert check(results, two).measured == pytest.approx(100)


def test_key_read_units_and_index_writes_without_units() -> None:
    reads = make_results(steady("t", ["HOT"], per_second=20, operation="GetItem", units=0.5))
    read_gate = {"tables": {"t": {"max_key_read_units_per_s": 50}}}
    assert check(reads, read_gate).measured == pytest.approx(100)  # 10/s at scale 0.1
    # Index writes carry no units of their own (units come for the whole call): one a touch.
    events = [
        event(s, "PutItem", "t", [f"u{s}-{i}"], index_keys={"gsi": ["STATUS#A"]})
        for s in range(10)
        for i in range(60)
    ]
    gsi = check(make_results(events), {"tables": {"t/gsi": {"max_key_write_units_per_s": 500}}})
    assert gsi.status == FAIL
    assert gsi.measured == pytest.approx(600)
    assert "one unit counted per index write" in gsi.detail


def test_hashed_keys_bound_the_key_by_its_bucket() -> None:
    results = make_results(steady("t", ["HOT"], per_second=60), hash_keys="salt")
    failed = check(results, {"tables": {"t": {"max_key_write_units_per_s": 500}}})
    assert failed.status == FAIL
    assert failed.detail.startswith("bucket ")


def test_table_throttled_ratio() -> None:
    results = make_results(steady("t", ["HOT"], throttled=1)[:50] + steady("t", ["HOT"])[50:])
    gate = {"tables": {"t": {"max_throttled_ratio": 0.2}}}
    assert check(results, gate).measured == pytest.approx(0.5)


# Run and operation gates.


OPERATIONS = [
    op_row("c.increment", "UpdateItem", 100, failures=2, throttled=10, p50=10, p95=90, p99=400),
    op_row("c.read", "GetItem", 50, p50=5, p95=8, p99=12),
]


@pytest.mark.parametrize(
    ("gate", "limit", "measured", "status"),
    [
        ("max_failure_ratio", 0.01, 0.02, FAIL),
        ("max_failure_ratio", 0.05, 0.02, PASS),
        ("max_throttled_ratio", 0.05, 0.1, FAIL),
        ("max_p50_ms", 20, 10, PASS),
        ("max_p95_ms", 50, 90, FAIL),
        ("max_p99_ms", 300, 400, FAIL),
        ("min_requests_per_s", 20, 10, FAIL),
        ("min_requests", 100, 100, PASS),
    ],
)
def test_operation_gates(gate, limit, measured, status) -> None:
    results = make_results(steady("t", ["k"]), OPERATIONS)
    got = check(results, {"operations": {"c.increment": {gate: limit}}})
    assert (got.measured, got.status) == (pytest.approx(measured), status)
    assert got.target == "c.increment (UpdateItem)"


def test_selectors_glob_names_and_operations_and_fail_when_nothing_matches() -> None:
    results = make_results(steady("t", ["k"]), OPERATIONS)
    outcome = evaluate(results, parse_thresholds({"operations": {"c.*": {"max_p99_ms": 500}}}))
    assert [c.target for c in outcome.checks] == ["c.increment (UpdateItem)", "c.read (GetItem)"]
    outcome = evaluate(results, parse_thresholds({"operations": {"GetItem": {"max_p99_ms": 5}}}))
    assert [(c.target, c.status) for c in outcome.checks] == [("c.read (GetItem)", FAIL)]
    for thresholds in (
        {"operations": {"c.write": {"max_p99_ms": 500}}},
        {"tables": {"ph-missing": {"max_hot_key_share": 0.5}}},
    ):
        missing = evaluate(results, parse_thresholds(thresholds)).checks
        assert [c.status for c in missing] == [FAIL]
        assert "matches no" in missing[0].detail and "have:" in missing[0].detail


def test_run_gates_read_the_totals() -> None:
    results = make_results(steady("t", ["k"]), OPERATIONS)
    got = check(results, {"run": {"max_failure_ratio": 0.01}})
    assert got.measured == pytest.approx(2 / 150)
    assert got.detail.startswith("2 of 150 calls failed")


# Limits per reason class.

KEY_RANGE = "TableWriteKeyRangeThroughputExceeded"


def reasoned():
    """100 increments throttled 30 times for a hot partition, 10 for the table's on-demand
    capacity, 5 with nothing said; 50 batch writes with 8 items left on an index's partition."""
    from tests.results_factory import throttle_row

    operations = [
        op_row("c.increment", "UpdateItem", 100, throttled=45, throttles=[
            throttle_row(KEY_RANGE, "partition", 30),
            throttle_row(KEY_RANGE, "capacity", 10),
            throttle_row(None, None, 5, scope=None),
        ]),
        op_row("c.load", "BatchWriteItem", 50, throttles=[
            throttle_row("IndexWriteKeyRangeThroughputExceeded", "partition", 8,
                         scope="t/g", exception="UnprocessedItems"),
        ]),
    ]  # fmt: skip
    return make_results(steady("t", ["k"]), operations)


@pytest.mark.parametrize(
    ("gate", "of", "limit", "measured", "status"),
    [
        ("max_throttled_ratio_by_cause", "partition", 0.25, 0.30, FAIL),
        ("max_throttled_ratio_by_cause", "partition", 0.30, 0.30, PASS),
        ("max_throttled_ratio_by_cause", "capacity", 0.05, 0.10, FAIL),
        ("max_throttled_ratio_by_cause", "capacity", 0.10, 0.10, PASS),
        ("max_throttled_ratio_by_cause", "not reported", 0, 0.05, FAIL),
        ("max_throttled_ratio_by_cause", "provisioned", 0, 0.0, PASS),
        ("max_throttled_ratio_by_reason", KEY_RANGE, 0.35, 0.40, FAIL),
        ("max_throttled_ratio_by_reason", "not reported", 0.05, 0.05, PASS),
        ("max_throttled_ratio_by_reason", "IndexWriteKeyRangeThroughputExceeded", 0, 0.0, PASS),
    ],
)
def test_a_limit_per_class_fails_for_its_class_only(gate, of, limit, measured, status) -> None:
    got = check(reasoned(), {"operations": {"c.increment": {gate: {of: limit}}}})
    assert (got.gate.of, got.measured, got.status) == (of, pytest.approx(measured), status)


def test_each_class_is_one_check_on_the_run_and_batch_items_count() -> None:
    thresholds = {
        "run": {"max_throttled_ratio_by_cause": {"partition": 0.2, "capacity": 0.1}},
        "operations": {"c.load": {"max_throttled_ratio_by_cause": {"partition": 0.1}}},
    }
    outcome = evaluate(reasoned(), parse_thresholds(thresholds))
    got = {(c.target, c.gate.title): (c.measured, c.status) for c in outcome.checks}
    assert got == {
        # The totals: 38 throttles for a partition's ceiling (30 attempts, 8 batch items)
        # and 10 for capacity in 150 calls.
        ("run", "max_throttled_ratio_by_cause[partition]"): (pytest.approx(38 / 150), FAIL),
        ("run", "max_throttled_ratio_by_cause[capacity]"): (pytest.approx(10 / 150), PASS),
        ("c.load (BatchWriteItem)", "max_throttled_ratio_by_cause[partition]"): (0.16, FAIL),
    }
    failed = next(c for c in outcome.checks if c.target == "run" and c.status == FAIL)
    assert failed.detail == (
        "38 throttles (cause partition) in 150 calls: 25.33% (limit <= 20.00%); "
        "5 more whose cause was not reported"
    )
    # Text and JUnit name the class beside the gate.
    from loadgen.verdict.formats import format_text

    assert "FAIL  run: max_throttled_ratio_by_cause[partition]: 38 throttles" in format_text(
        outcome
    )
    cases = ET.fromstring(junit_xml(outcome)).findall(".//testcase")
    assert [(c.get("classname"), c.get("name"), c.find("failure") is not None) for c in cases] == [
        ("run", "max_throttled_ratio_by_cause[partition]", True),
        ("run", "max_throttled_ratio_by_cause[capacity]", False),
        ("operations.c.load (BatchWriteItem)", "max_throttled_ratio_by_cause[partition]", True),
    ]
    assert "`max_throttled_ratio_by_cause[capacity]`" in format_markdown(outcome)


def test_a_results_file_without_reasons_skips_a_limit_per_class() -> None:
    results = reasoned()
    del results["totals"]["throttles"]
    got = check(results, {"run": {"max_throttled_ratio_by_cause": {"partition": 0}}})
    assert (got.status, got.detail) == (SKIP, "the results file keeps no throttle reasons")


# Baselines.


def test_regressions_against_a_baseline() -> None:
    base = make_results(steady("t", [f"k{i}" for i in range(10)]), [op_row("a", "PutItem", 100)])
    slower = [op_row("a", "PutItem", 70, p99=45, throttled=5)]
    # k0 takes 4 of every 13 calls: 32 of 100 against 10 of 100 in the baseline.
    new = make_results(steady("t", ["k0"] * 3 + [f"k{i}" for i in range(10)]), slower)
    cases = {
        ("run", "max_p99_regression_pct", 40): (50.0, FAIL),
        ("run", "max_p99_regression_pct", 60): (50.0, PASS),
        ("run", "max_requests_per_s_drop_pct", 20): (30.0, FAIL),
        ("run", "max_throttled_ratio_increase", 0.05): (5 / 70, FAIL),
        ("tables", "max_hot_key_share_increase", 0.1): (0.32 - 0.1, FAIL),
        ("tables", "max_hot_key_share_increase", 0.3): (0.32 - 0.1, PASS),
    }
    for (section, gate, limit), (measured, status) in cases.items():
        body = {gate: limit} if section == "run" else {"t": {gate: limit}}
        got = check(new, {section: body}, base)
        assert (got.measured, got.status) == (pytest.approx(measured), status), gate


def test_regression_gates_skip_without_a_baseline_or_a_matching_row() -> None:
    results = make_results(steady("t", ["k"]), OPERATIONS)
    gate = {"operations": {"*": {"max_p99_regression_pct": 10}}}
    assert check(results, {"run": {"max_p99_regression_pct": 10}}).status == SKIP
    base = make_results(steady("t", ["k"]), [op_row("c.read", "GetItem", 50, p99=12)])
    outcome = evaluate(results, parse_thresholds(gate), base)
    statuses = {c.target: c.status for c in outcome.checks}
    assert statuses == {"c.increment (UpdateItem)": SKIP, "c.read (GetItem)": PASS}
    assert outcome.exit_code == 0


# Reports for CI.


def failing_outcome():
    results = make_results(steady("t", ["HOT|<&>"], per_second=60), OPERATIONS)
    thresholds = parse_thresholds(
        {
            "run": {"max_p99_regression_pct": 10, "max_failure_ratio": 0.5},
            "tables": {"t": {"max_hot_key_share": 0.25, "max_key_write_units_per_s": 500}},
        }
    )
    return evaluate(results, thresholds)


def test_junit_xml_has_one_testcase_per_check() -> None:
    outcome = failing_outcome()
    root = ET.fromstring(junit_xml(outcome))
    assert root.tag == "testsuites"
    (suite,) = root.findall("testsuite")
    cases = suite.findall("testcase")
    assert len(cases) == len(outcome.checks) == 4
    assert suite.get("tests") == "4" and suite.get("failures") == "2"
    assert suite.get("skipped") == "1" and suite.get("errors") == "0"
    by_name = {case.get("name"): case for case in cases}
    share = by_name["max_hot_key_share"]
    assert share.get("classname") == "tables.t"
    assert "HOT|<&> takes 100.00%" in share.find("failure").get("message")
    assert by_name["max_p99_regression_pct"].find("skipped") is not None
    assert by_name["max_failure_ratio"].find("failure") is None
    properties = {p.get("name"): p.get("value") for p in suite.iter("property")}
    assert properties["scale"] == "0.1"


def test_junit_xml_survives_control_characters_in_keys() -> None:
    results = make_results(steady("t", ["bad\x01key"]))
    outcome = evaluate(results, parse_thresholds({"tables": {"t": {"max_hot_key_share": 0.5}}}))
    assert ET.fromstring(junit_xml(outcome)).find(".//failure") is not None


def test_markdown_summary() -> None:
    text = format_markdown(failing_outcome())
    lines = text.splitlines()
    assert lines[0] == "## ❌ Partition Heat gate FAILED: 2 of 4 checks failed, 1 skipped"
    assert "partition model at scale 0.1" in text
    assert "| ❌ | `max_hot_key_share` | t | 100.00% | ≤ 25.00% |" in lines
    rate = "600 units/s at AWS scale | ≤ 500 units/s at AWS scale"
    assert f"| ❌ | `max_key_write_units_per_s` | t | {rate} |" in lines
    assert "| ⏭️ | `max_p99_regression_pct` | run | - | ≤ 10.0% |" in lines
    # Failures come first; the key's pipe is escaped inside table cells.
    assert lines.index("| ✅ | `max_failure_ratio` | run | 1.33% | ≤ 50.00% |") > lines.index(
        "| ❌ | `max_hot_key_share` | t | 100.00% | ≤ 25.00% |"
    )
    assert "### Diagnosis" in text
    assert "**One hot key: HOT\\|\\<\\&\\> on t.**" in text
    assert "bp-partition-key-sharding.html" in text


# The command line.


def loadgen(*args: str):
    return subprocess.run(
        [sys.executable, "-m", "loadgen", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_cli_exit_codes_and_files(tmp_path) -> None:
    results = tmp_path / "r.json"
    results.write_text(json.dumps(hot(per_second=60)))
    thresholds = tmp_path / "t.yaml"
    thresholds.write_text("tables:\n  t:\n    max_hot_key_share: 0.25\n")
    junit, markdown = tmp_path / "out" / "gate.xml", tmp_path / "out" / "gate.md"
    failed = loadgen(
        "gate", str(results), "--thresholds", str(thresholds),
        "--junit", str(junit), "--markdown", str(markdown),
    )  # fmt: skip
    assert failed.returncode == 1, failed.stderr
    assert "FAIL  tables.t: max_hot_key_share: HOT takes 100.00%" in failed.stdout
    assert ET.parse(junit).getroot().get("failures") == "1"
    assert "HOT" in markdown.read_text()
    thresholds.write_text("tables:\n  t:\n    max_hot_key_share: 1\n")
    passed = loadgen("gate", str(results), "--thresholds", str(thresholds))
    assert passed.returncode == 0, passed.stderr
    assert passed.stdout.startswith("Gate PASSED: 1 of 1 checks passed")


@pytest.mark.parametrize(
    ("thresholds", "results", "message"),
    [
        (
            "tables:\n  t:\n    max_hot_key_share: -0.2\n",
            None,
            "loadgen: error: t.yaml: tables.t.max_hot_key_share: expected a ratio from 0 to 1 "
            "(got -0.2)",
        ),
        (
            "tables:\n  t:\n    max_hot_keys: 0.2\n",
            None,
            "loadgen: error: t.yaml: tables.t.max_hot_keys: unknown gate 'max_hot_keys' = 0.2 "
            "(did you mean max_hot_key_share?)",
        ),
        ("run:\n  max_p99_ms: soon\n", None, "loadgen: error: t.yaml: run.max_p99_ms: expected"),
        ("run:\n  min_requests: 1\n", "{}", "is not a loadgen results file"),
        ("run:\n  min_requests: 1\n", "not json", "is not JSON"),
    ],
)
def test_cli_bad_input_is_one_line_and_exit_2(tmp_path, thresholds, results, message) -> None:
    path = tmp_path / "r.json"
    path.write_text(results if results is not None else json.dumps(hot()))
    (tmp_path / "t.yaml").write_text(thresholds)
    got = loadgen("gate", str(path), "--thresholds", str(tmp_path / "t.yaml"))
    assert got.returncode == 2
    assert got.stdout == ""
    assert len(got.stderr.splitlines()) == 1, got.stderr
    assert got.stderr.startswith(message) or message in got.stderr


def test_cli_gate_rejects_stray_arguments(tmp_path) -> None:
    got = loadgen("gate", "r.json", "--thresholds", "t.yaml", "--junk")
    assert got.returncode == 2
    assert got.stderr.strip() == "loadgen: error: unrecognized arguments: --junk"
