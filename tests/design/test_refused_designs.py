"""Designs DynamoDB refuses, end to end: what it said reaches the summary, the results and
the report; a request refused before any work costs nothing and heats no key; a failed
condition is charged as DynamoDB charges it and is not a throttle."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.slow

TABLE = {
    "TableName": "ph-refused",
    "BillingMode": "PAY_PER_REQUEST",
    "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}],
    "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
}


def run_design(tmp_path: Path, design: dict[str, Any]) -> tuple[dict[str, Any], str, Path]:
    path = tmp_path / "design.yaml"
    path.write_text(yaml.safe_dump(design))
    out, report = tmp_path / "results.json", tmp_path / "report"
    done = subprocess.run(
        [sys.executable, "-m", "loadgen", "run", str(path), "--duration", "4s",
         "--scale", "0.1", "--out", str(out), "--report", str(report)],
        cwd=ROOT, capture_output=True, text=True, timeout=240,
    )  # fmt: skip
    results = json.loads(out.read_text())
    # A design run exits 1 where a pattern fails, as check and simulate do.
    failed = any(v["status"] == "FAIL" for v in results.get("verdicts") or ())
    assert done.returncode == (1 if failed else 0), done.stderr[-3000:]
    return results, done.stdout, report / "report.html"


def test_a_write_dynamodb_refuses_as_invalid_costs_nothing_and_heats_no_key(
    tmp_path: Path,
) -> None:
    design = {
        "name": "duplicate-set",
        "tables": [TABLE],
        "generators": {"user": {"count": 100}},
        "entities": {
            # A string set that names one member twice: DynamoDB refuses the item. (An item
            # past 400 KB is refused when the file is loaded: tests/design/test_limits.py.)
            "blob": {"item": {"pk": "USER#{user}", "tags": {"SS": ["vip", "vip"]}}}
        },
        "access_patterns": [
            {"id": "save", "operation": "PutItem", "entity": "blob", "rate": "50/s"}
        ],
    }
    results, printed, report = run_design(tmp_path, design)
    (row,) = results["operations"]
    assert row["requests"] > 0 and row["failures"] == row["requests"]
    (said,) = row["error_messages"]
    assert said["code"] == "ValidationException"
    assert "Input collection [vip, vip] contains duplicates" in said["message"]
    assert row["rejected"] == row["requests"]
    # Refused before any work: no unit, no key, no cost.
    assert row["units"] == {} and results["hot_keys"] == []
    assert results["cost"]["total"]["monthly_usd"] == 0
    assert "Input collection [vip, vip] contains duplicates" in printed
    assert "Requests refused before any work: save" in printed
    assert "One hot key" not in printed
    (verdict,) = results["verdicts"]
    assert verdict["status"] == "FAIL" and "ValidationException" in verdict["reason"]
    assert "Input collection [vip, vip] contains duplicates" in report.read_text()


def test_a_conditional_write_that_always_fails_is_charged_and_is_no_throttle(
    tmp_path: Path,
) -> None:
    design = {
        "name": "always-fails",
        "tables": [TABLE],
        "generators": {"user": {"count": 100, "distribution": "uniform"}},
        "entities": {
            "account": {
                "item": {"pk": "USER#{user}", "name": {"size": 200}},
                "populate": {"user": "all"},
            },
        },
        "access_patterns": [
            {
                "id": "register",
                "operation": "PutItem",
                "entity": "account",
                "condition": "attribute_not_exists(pk)",
                "rate": "200/s",
            },
        ],
    }
    results, printed, report = run_design(tmp_path, design)
    (row,) = results["operations"]
    assert row["requests"] > 0
    assert row["errors"] == {"ConditionalCheckFailedException": row["requests"]}
    (said,) = row["error_messages"]
    assert said["message"] == "The conditional request failed"
    assert row["throttled_attempts"] == 0 and row["rejected"] == 0
    # DynamoDB charges a failed condition its write units: one per item of up to 1 KB.
    assert row["units"]["ph-refused"]["write"] == row["requests"]
    assert results["cost"]["total"]["monthly_usd"] > 0
    assert "Conditions that failed: register" in printed
    assert "The conditional request failed" in printed
    (verdict,) = results["verdicts"]
    assert verdict["status"] == "NOT JUDGED"
    assert "failed their condition" in verdict["reason"]
    assert "The conditional request failed" in report.read_text()
