"""The end of a run's summary: the diagnosis, and a design run's verdicts put in its results."""

from __future__ import annotations

from loadgen.verdict.diagnosis import GUIDES
from loadgen.verdict.summary import conclude
from tests.results_factory import make_results, op_row, pattern, steady, with_design


def test_the_summary_ends_with_the_diagnosis_and_the_verdicts() -> None:
    events = steady("chat", ["STATUS#online"], per_second=40, operation="Query", index="GSI1",
                    units=10.0, throttled=1)  # fmt: skip
    operations = [op_row("online_now", "Query", 400, throttled=400, retries=400)]
    results = with_design(
        make_results(events, operations), [pattern("online_now", "Query", 100.0, index="GSI1")]
    )
    lines = conclude(results)
    assert lines[1] == "Diagnosis:"
    assert lines[2] == "  A read-hot GSI key: STATUS#online on index GSI1 of chat"
    assert any(line.startswith("    Remedy: ") for line in lines)
    guide = lines.index("    Guide: " + GUIDES["sparse-index"])
    assert all(len(line) <= 100 for line in lines[:guide])  # the blocks wrap
    assert "Access patterns: 0 of 1 passed" in lines
    (verdict,) = results["verdicts"]
    assert verdict["id"] == "online_now" and verdict["status"] == "FAIL"
    assert verdict["reason"].startswith("FAIL: 50% of attempts throttled")


def test_a_run_without_a_design_gets_the_diagnosis_and_its_cost() -> None:
    results = make_results(steady("t", [f"k{i}" for i in range(50)]))
    lines = conclude(results)
    assert lines[1:3] == ["Diagnosis:", "  No hot spot"]
    assert "verdicts" not in results
    assert any(line.startswith("Cost a month (measured; ") for line in lines)
    assert [row["scope"] for row in results["cost"]["scopes"]] == ["t"]
