"""``loadgen gate``: check a results file against thresholds, print the verdict, write reports.

The checks are `loadgen.verdict.checks`; how an outcome is written for people and CI systems is
`loadgen.verdict.formats`.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any, TextIO

from loadgen.pricing import Prices
from loadgen.verdict import analysis
from loadgen.verdict.checks import evaluate
from loadgen.verdict.formats import format_text, write_junit, write_markdown
from loadgen.verdict.thresholds import Thresholds, load_thresholds

__all__ = ["run_gate"]


def run_gate(
    results: str | Path | dict[str, Any],
    thresholds: str | Path | Thresholds,
    *,
    baseline: str | Path | None = None,
    junit: str | Path | None = None,
    markdown: str | Path | None = None,
    out: TextIO | None = None,
    prices: Prices | None = None,
) -> int:
    """Gate a results file (or results), print the checks, write the reports; the exit code."""
    data = results if isinstance(results, dict) else analysis.load_results(results)
    rules = thresholds if isinstance(thresholds, Thresholds) else load_thresholds(thresholds)
    base = analysis.load_results(baseline) if baseline is not None else None
    outcome = evaluate(data, rules, base, prices)
    if junit is not None:
        write_junit(outcome, junit)
    if markdown is not None:
        write_markdown(outcome, markdown)
    try:
        print(format_text(outcome), file=out or sys.stdout, flush=True)
    except BrokenPipeError:
        # `loadgen gate ... | head`: the verdict is the exit code; stop writing quietly.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return outcome.exit_code
