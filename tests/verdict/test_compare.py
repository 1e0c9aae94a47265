"""Designs side by side: each pattern's verdict as its run judged it."""

from __future__ import annotations

from loadgen.verdict.compare import pattern_rows
from loadgen.verdict.patterns import pattern_verdicts
from tests.results_factory import make_results, op_row, pattern, steady, with_design


def test_a_pattern_row_takes_the_runs_own_verdict() -> None:
    operations = [
        op_row("read", "GetItem", 100, p99=80),
        op_row("write", "PutItem", 100, throttled=50, retries=50),
    ]
    results = with_design(
        make_results(steady("t", ["k"]), operations, scale=0.1),
        [pattern("read", "GetItem", 10.0), pattern("write", "PutItem", 10.0)],
        empty=True,
    )
    results["verdicts"] = [v.to_dict() for v in pattern_verdicts(results)]
    rows = pattern_rows(results)
    # Not throttled, but judged on empty tables: EMPTY, as the run said, not PASS.
    assert rows["read"]["verdict"] == "EMPTY"
    assert rows["write"]["verdict"] == "FAIL"
