"""A gate's outcome for people and CI systems: text, JUnit XML and Markdown.

- `format_text`: the lines ``loadgen gate`` prints, failures first.
- `write_junit`: one ``<testcase>`` per check (classname ``tables.ph-counter``, name the
  gate), with ``<failure>`` or ``<skipped>``: the schema Jenkins, GitLab and the GitHub test
  reporters read.
- `write_markdown`: a summary for a pull-request comment or ``$GITHUB_STEP_SUMMARY``: the
  verdict, the run, a table of the checks and the diagnosis naming the hot keys.
"""

from __future__ import annotations

import os
import re
import tempfile
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

from loadgen.verdict import analysis
from loadgen.verdict.checks import FAIL, PASS, SKIP, Check, Outcome, format_value
from loadgen.verdict.diagnosis import diagnose

__all__ = ["format_markdown", "format_text", "junit_xml", "write_junit", "write_markdown"]

_ORDER = {FAIL: 0, PASS: 1, SKIP: 2}
_MARK = {FAIL: "❌", PASS: "✅", SKIP: "⏭️"}
# Characters XML 1.0 cannot hold at all: a key may contain them, a report must not.
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


def _sorted(outcome: Outcome) -> list[Check]:
    return sorted(outcome.checks, key=lambda c: _ORDER[c.status])


def _verdict(outcome: Outcome) -> str:
    failed, total = len(outcome.failed), len(outcome.checks)
    skipped = sum(c.status == SKIP for c in outcome.checks)
    tail = f", {skipped} skipped" if skipped else ""
    if failed:
        return f"FAILED: {failed} of {total} checks failed{tail}"
    return f"PASSED: {total - skipped} of {total} checks passed{tail}"


def _run_line(results: dict[str, Any], scale: float | None) -> str:
    run = results["run"]
    model = analysis.scale_of(results, scale)
    scaled = (
        f", partition model at scale {model:g} (key rates read at AWS scale: measured / {model:g})"
        if model != 1
        else ""
    )
    return (
        f"{run.get('workload')} ({run.get('design')}), {run.get('distribution')} over "
        f"{run.get('keys')} keys, {_load_words(results)}, {results['duration_s']:.1f} s, "
        f"{results['totals']['requests']} requests{scaled}"
    )


def _load_words(results: dict[str, Any]) -> str:
    load = results.get("load")
    if not load:
        return f"{results['run'].get('users', '?')} users"
    return f"launch traffic {load.get('rate', 0):,.0f} operations/s ({load.get('arrivals')})"


def format_text(outcome: Outcome) -> str:
    """The checks, one a line, failures first, under the verdict."""
    lines = [
        f"Gate {_verdict(outcome)}",
        "  " + _run_line(outcome.results, outcome.thresholds.settings.scale),
    ]
    for check in _sorted(outcome):
        lines.append(
            f"  {check.status.upper():<4}  {check.classname}: {check.gate.title}: {check.detail}"
        )
    return "\n".join(lines)


def _clean(text: str) -> str:
    return _NOT_XML.sub("?", text)


def junit_xml(outcome: Outcome) -> str:
    """The outcome as a JUnit XML document."""
    checks = outcome.checks
    counts = {
        "tests": str(len(checks)),
        "failures": str(len(outcome.failed)),
        "errors": "0",
        "skipped": str(sum(c.status == SKIP for c in checks)),
        "time": "0",
    }
    run = outcome.results["run"]
    suites = ET.Element("testsuites", {"name": "loadgen gate", **counts})
    name = _clean(f"loadgen gate: {run.get('workload')} ({run.get('design')})")
    suite = ET.SubElement(suites, "testsuite", {"name": name, **counts})
    properties = ET.SubElement(suite, "properties")
    for name in ("workload", "design", "distribution", "keys", "users", "scale", "target"):
        ET.SubElement(properties, "property", name=name, value=_clean(str(run.get(name))))
    for check in checks:
        case = ET.SubElement(
            suite,
            "testcase",
            classname=_clean(check.classname),
            name=_clean(check.gate.title),
            time="0",
        )
        if check.status == FAIL:
            failure = ET.SubElement(
                case, "failure", message=_clean(check.detail), type="GateFailed"
            )
            failure.text = _clean(
                f"{check.classname}: {check.gate.title} = {check.gate.limit:g}\n{check.detail}"
            )
        elif check.status == SKIP:
            ET.SubElement(case, "skipped", message=_clean(check.detail))
        else:
            ET.SubElement(case, "system-out").text = _clean(check.detail)
    ET.indent(suites)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(suites, "unicode") + "\n"


_MARKDOWN = re.compile(r"([\\`*_\[\]<>&|])")


def _cell(text: str) -> str:
    """Text shown as written in Markdown, table cells included: keys are arbitrary text."""
    return _MARKDOWN.sub(r"\\\1", text).replace("\n", " ")


def format_markdown(outcome: Outcome) -> str:
    """A summary for a pull-request comment or ``$GITHUB_STEP_SUMMARY``."""
    settings = outcome.thresholds.settings
    failed = bool(outcome.failed)
    lines = [
        f"## {'❌' if failed else '✅'} Partition Heat gate {_verdict(outcome)}",
        "",
        _cell(_run_line(outcome.results, settings.scale)),
        "",
        "| | check | on | measured | limit |",
        "|---|---|---|---|---|",
    ]
    for check in _sorted(outcome):
        kind = check.gate.kind
        sign = "≥" if kind.minimum else "≤"
        limit = f"{sign} {format_value(check.gate.limit, kind.unit).lstrip('+')}"
        measured = format_value(check.measured, kind.unit)
        lines.append(
            f"| {_MARK[check.status]} | `{check.gate.title}` | {_cell(check.target)} | "
            f"{_cell(measured)} | {_cell(limit)} |"
        )
    if failed:
        lines += ["", "### Failed checks", ""]
        lines += [
            f"- **{_cell(c.classname)}** `{c.gate.title}`: {_cell(c.detail)}"
            for c in outcome.failed
        ]
    findings = diagnose(
        outcome.results,
        partitions=settings.partitions,
        window_s=settings.sustain_s,
        scale=settings.scale,
    )
    lines += ["", "### Diagnosis", ""]
    for finding in findings:
        lines.append(f"- **{_cell(finding.title)}.** {_cell(finding.evidence)}")
        lines.append(f"  *Remedy:* {_cell(finding.remedy)} ([AWS guide]({finding.guide}))")
    return "\n".join(lines) + "\n"


def _write(text: str, path: str | os.PathLike[str]) -> None:
    # Written whole or not at all: a CI step that reads the file never sees half of it.
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.")
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(tmp, target)


def write_junit(outcome: Outcome, path: str | os.PathLike[str]) -> None:
    """Write `junit_xml` to ``path``."""
    _write(junit_xml(outcome), path)


def write_markdown(outcome: Outcome, path: str | os.PathLike[str]) -> None:
    """Write `format_markdown` to ``path`` (replacing it; append to a step summary yourself)."""
    _write(format_markdown(outcome), path)
