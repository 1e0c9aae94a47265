"""The end of a run's printed summary: the diagnosis and, for a design run, the verdicts.

The heat layer prints the run's figures (`loadgen.heat.results.format_summary`) and cannot
read the verdict; the runner, above both, ends the summary with `conclude`:

    print(format_summary(results))
    print("\\n".join(conclude(results)))   # also puts results["verdicts"] and ["cost"]
"""

from __future__ import annotations

import textwrap
from typing import Any

from loadgen.pricing import MONTH, Prices, Window, load_prices
from loadgen.verdict.cost import format_run_cost, run_cost
from loadgen.verdict.diagnosis import Finding, diagnose
from loadgen.verdict.judged import judged_lines
from loadgen.verdict.patterns import format_pattern_verdicts, pattern_verdicts

__all__ = ["conclude", "format_findings"]

_WIDTH = 100


def format_findings(findings: list[Finding]) -> list[str]:
    """Each finding as a short block: its title, then its evidence and remedy, indented."""
    lines = ["Diagnosis:"]
    for finding in findings:
        lines.append(f"  {finding.title}")
        for text in (finding.evidence, f"Remedy: {finding.remedy}"):
            lines += textwrap.wrap(
                text,
                _WIDTH,
                initial_indent="    ",
                subsequent_indent="    ",
                break_on_hyphens=False,
            )
        lines.append(f"    Guide: {finding.guide}")  # whole, so a terminal can open it
    return lines


def conclude(
    results: dict[str, Any], prices: Prices | None = None, window: Window = MONTH
) -> list[str]:
    """The summary's last lines: who judged the run (`loadgen.verdict.judged`), the
    diagnosis, the per-pattern verdicts of a design run, and what the run's traffic costs over
    ``window`` (a month by default), measured and at launch demand (`loadgen.verdict.cost`, at
    ``prices``: the package's us-east-1 prices by default).

    A design run's verdicts are also put in ``results["verdicts"]`` (each
    `PatternVerdict.to_dict`) and every run's cost in ``results["cost"]``, so the results
    file written after carries them.
    """
    judged = judged_lines(results)  # who judged the run, whose refusals it met
    lines = ["", *judged, *([""] if judged else []), *format_findings(diagnose(results))]
    verdicts = pattern_verdicts(results)
    if verdicts:
        results["verdicts"] = [verdict.to_dict() for verdict in verdicts]
        lines += ["", *format_pattern_verdicts(verdicts)]
    results["cost"] = run_cost(results, prices or load_prices(), window=window)
    lines += ["", *format_run_cost(results["cost"])]
    return lines
