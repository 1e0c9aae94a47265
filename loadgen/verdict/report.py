"""``loadgen report``: a run report as one HTML page and its PNG charts.

    loadgen report results.json --out report/
    loadgen run counter --design single --report report/

writes ``report/report.html`` and, beside it, ``heatmap.png``, ``top-keys.png``,
``throttles.png`` and ``latency.png`` (`loadgen.verdict.charts`). The page embeds the charts as
base64 data, so it opens offline on its own, attached to a CI run or mailed; the PNGs are
there for pull-request comments and wikis. It leads with the diagnosis
(`loadgen.verdict.diagnosis`), which names the hot keys and the remedy from AWS's guides,
followed by what the target said of each refusal (`loadgen.verdict.reasons`): throttles by
reason and cause, errors with their messages, cancelled transactions by reason.

The charts need matplotlib (``pip install 'partition-heat[report]'``); the gate does not.
"""

from __future__ import annotations

import base64
import html
import os
from pathlib import Path
from typing import Any

from loadgen.errors import ConfigError
from loadgen.pricing import Prices, window_of
from loadgen.verdict import analysis
from loadgen.verdict.cost import cost_html, cost_of
from loadgen.verdict.diagnosis import Finding, diagnose
from loadgen.verdict.patterns import pattern_verdicts, pattern_verdicts_html
from loadgen.verdict.reasons import reasons_html

__all__ = ["CHARTS", "build_html", "load_words", "require_matplotlib", "write_report"]

CHARTS = {
    "heatmap.png": (
        "Partition heat over time",
        "Each panel is the hash space of one table or index (bottom to top) over the run's "
        "seconds (left to right); colour is key touches per second on a log scale, blank is "
        "none. The right-hand panels show where throttled attempts fell. A bright horizontal "
        "line is one hot key; a band that steps to a new height every so often is a key that "
        "changes with time; an even wash is a well-spread key.",
    ),
    "top-keys.png": (
        "Top keys",
        "The hottest partition keys of each table and index by share of its key touches "
        "(Space-Saving estimates; each count overstates by at most the stated error).",
    ),
    "throttles.png": (
        "Throttles over time",
        "Per table or index and lane (reads, writes): key touches per second above (a "
        "BatchGetItem of ten keys is ten touches), throttled attempts per second below, one "
        "point per second (the first and last are partial seconds). A throttled call counts "
        "once for every key it touched: a "
        "transaction of five items held back by a hot index counts five on the table.",
    ),
    "latency.png": (
        "Latency percentiles",
        "Per access pattern, the call's latency including the SDK's retries: a throttled call "
        "that was retried is slow, not failed. Locust rounds percentiles to two significant "
        "figures, so a p99 may sit just past the maximum.",
    ),
}
"""File name: (title, how to read it)."""

_STYLE = """
body { font: 15px/1.45 system-ui, sans-serif; margin: 2em auto; max-width: 1200px;
       color: #1c2833; padding: 0 1em; }
h1 { font-size: 1.5em; } h2 { border-bottom: 1px solid #d5d8dc; padding-bottom: .2em; }
table { border-collapse: collapse; margin: .5em 0 1em; }
td, th { border: 1px solid #d5d8dc; padding: .25em .6em; text-align: right; }
td:first-child, th:first-child, td.text { text-align: left; }
.finding { border-left: 4px solid #c0392b; background: #fdedec; padding: .5em 1em;
           margin: .8em 0; }
.finding.even { border-color: #27ae60; background: #eafaf1; }
.finding h3 { margin: .2em 0; font-size: 1.05em; }
code { background: #f2f3f4; padding: 0 .2em; }
img { max-width: 100%; border: 1px solid #e5e7e9; }
.note { color: #566573; font-size: .92em; }
td.verdict.fail { background: #fdedec; } td.verdict.pass { background: #eafaf1; }
td.verdict.empty { background: #fef5e7; }
"""


def require_matplotlib() -> None:
    """Fail with one line if the report's plotting dependency is missing."""
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        raise ConfigError(
            "the report needs matplotlib: pip install 'partition-heat[report]'"
        ) from None


def _e(value: Any) -> str:
    return html.escape(str(value))


def _finding(finding: Finding) -> str:
    keys = "".join(f" <code>{_e(key)}</code>" for key in finding.keys[:6])
    css = "finding even" if finding.kind == "even" else "finding"
    return (
        f'<div class="{css}"><h3>{_e(finding.title)}</h3>'
        + (f"<p>Hot key{'s' if len(finding.keys) > 1 else ''}:{keys}</p>" if keys else "")
        + f"<p>{_e(finding.evidence)}</p>"
        f"<p><b>Remedy.</b> {_e(finding.remedy)} "
        f'<a href="{_e(finding.guide)}">AWS guide</a></p></div>'
    )


def _ms(value: float | None) -> str:
    return "-" if value is None else f"{value:.0f}"


def _operations(results: dict[str, Any]) -> str:
    head = (
        "<tr><th>Access pattern</th><th>Operation</th><th>Requests</th><th>Req/s</th>"
        "<th>p50 ms</th><th>p95 ms</th><th>p99 ms</th><th>Failures</th>"
        "<th>Throttled attempts</th><th>Retries</th><th>Errors</th></tr>"
    )
    rows = []
    for row in [*results["operations"], results["totals"]]:
        errors = ", ".join(f"{code} x{n}" for code, n in sorted(row["errors"].items()))
        rows.append(
            f'<tr><td class="text">{_e(row["name"])}</td><td class="text">{_e(row["operation"])}'
            f"</td><td>{row['requests']}</td><td>{row['requests_per_s']:.1f}</td>"
            f"<td>{_ms(row['p50_ms'])}</td><td>{_ms(row['p95_ms'])}</td>"
            f"<td>{_ms(row['p99_ms'])}</td><td>{row['failures']}</td>"
            f"<td>{row['throttled_attempts']}</td><td>{row['retries']}</td>"
            f'<td class="text">{_e(errors)}</td></tr>'
        )
    return f"<table>{head}{''.join(rows)}</table>"


def _hot_keys(results: dict[str, Any], scale: float) -> str:
    head = (
        "<tr><th>Table or index</th><th>Hottest key</th><th>Share</th><th>Key touches</th>"
        "<th>Write units/s*</th><th>Read units/s*</th><th>Throttled per touch</th></tr>"
    )
    rows = []
    for scope in analysis.scopes(results):
        hot = analysis.hot_key(results, scope)
        rates = [analysis.key_rate(results, scope, access) for access in ("write", "read")]
        cells = [f"{rate.units_per_s:.0f}" if rate else "-" for rate in rates]
        rows.append(
            f'<tr><td class="text">{_e(scope.name)}</td>'
            f'<td class="text"><code>{_e(hot.key if hot else "-")}</code></td>'
            f"<td>{hot.share if hot else 0:.1%}</td>"
            f"<td>{analysis.key_total(results, scope):.0f}</td>"
            f"<td>{cells[0]}</td><td>{cells[1]}</td>"
            f"<td>{analysis.throttled_ratio(results, scope):.2f}</td></tr>"
        )
    note = (
        f'<p class="note">* The busiest 5 s of the hottest key, at AWS scale: measured over the '
        f"run's scale {scale:g}. A partition, and so one key, serves 1,000 write and 3,000 read "
        "units/s; above half of that a key is a launch risk.</p>"
    )
    return f"<table>{head}{''.join(rows)}</table>{note}"


def load_words(results: dict[str, Any]) -> str:
    """The load a run put on, in words: a rate run's rate and arrivals, or its users.

    >>> load_words({"duration_s": 30.0, "run": {}, "load": {"rate": 1000.0,
    ...             "arrivals": "constant"}})
    '1,000 operations/s (open model, constant arrivals) for 30 s'
    """
    load = results.get("load")
    duration = f"{results['duration_s']:.3g} s"
    if load:
        return (
            f"{load.get('rate', 0):,.0f} operations/s (open model, "
            f"{load.get('arrivals') or 'constant'} arrivals) for {duration}"
        )
    return f"{results['run'].get('users', '?')} users for {duration}"


def build_html(
    results: dict[str, Any], images: dict[str, bytes], prices: Prices | None = None
) -> str:
    """The report page, with ``images`` (file name to PNG bytes) embedded; its cost, measured
    and at launch demand, at ``prices`` (default: the results' own cost section, or the
    package's prices)."""
    section = cost_of(results, prices)
    run = results["run"]
    totals = results["totals"]
    scale = analysis.scale_of(results)
    title = f"Partition Heat report: {run.get('workload')} ({run.get('design')})"
    facts = [
        ("Workload", f"{run.get('workload')}, design {run.get('design')}"),
        ("Keys", f"{run.get('distribution')} over {run.get('keys')} keys, seed {run.get('seed')}"),
        ("Load", load_words(results)),
        ("Target", run.get("target")),
        (
            "Scale",
            f"partition model at {scale:g}: every ceiling x{scale:g}; rates here are given at "
            "AWS scale (measured / scale)"
            if run.get("scale")
            else "1 (no partition model: rates as measured)",
        ),
        (
            "Totals",
            f"{totals['requests']} requests, {totals['requests_per_s']:.1f}/s, "
            f"{totals['failures']} failures, {totals['throttled_attempts']} throttled attempts, "
            f"p99 {_ms(totals['p99_ms'])} ms",
        ),
    ]
    if run.get("interrupted"):
        facts.append(("Note", "the run was interrupted: these are partial results"))
    info = "".join(f'<tr><th>{_e(k)}</th><td class="text">{_e(v)}</td></tr>' for k, v in facts)
    charts = []
    for name, (chart_title, caption) in CHARTS.items():
        data = base64.b64encode(images[name]).decode("ascii")
        charts.append(
            f"<h2>{_e(chart_title)}</h2><p class=note>{_e(caption)}</p>"
            f'<img src="data:image/png;base64,{data}" alt="{_e(chart_title)}">'
        )
    findings = "".join(_finding(f) for f in diagnose(results))
    verdicts = pattern_verdicts(results)
    patterns = (
        f"<h2>Access patterns: verdicts</h2>{pattern_verdicts_html(verdicts)}"
        '<p class="note">Rates are operations/s at AWS scale. Throttled: throttled attempts '
        "over attempts (the SDK's retries included). The hottest key is the partition key the "
        "pattern's calls touched most, on the table or the index named.</p>"
        if verdicts
        else ""
    )
    return (
        f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>{_e(title)}</title><style>{_STYLE}</style></head><body>"
        f"<h1>{_e(title)}</h1><table>{info}</table>"
        f"{patterns}"
        f"<h2>Diagnosis</h2>{findings}"
        f"<h2>What the target refused, in its words</h2>{reasons_html(results)}"
        f"<h2>Hot keys per table and index</h2>{_hot_keys(results, scale)}"
        f"<h2>{_cost_heading(section)}</h2>{cost_html(section)}"
        f"{''.join(charts)}"
        f"<h2>Access patterns</h2>{_operations(results)}"
        "</body></html>\n"
    )


def _cost_heading(section: dict[str, Any]) -> str:
    window = window_of(section)
    return "What it costs a month" if window["month"] else f"What {_e(window['words'])} costs"


def write_report(
    results: dict[str, Any], out: str | os.PathLike[str], prices: Prices | None = None
) -> Path:
    """Draw the charts, write them and the page into ``out``; the page's path."""
    require_matplotlib()
    from loadgen.verdict import charts

    images = {
        "heatmap.png": charts.heatmap(results),
        "top-keys.png": charts.top_keys(results),
        "throttles.png": charts.throttles(results),
        "latency.png": charts.latency(results),
    }
    directory = Path(out)
    try:
        directory.mkdir(parents=True, exist_ok=True)
        for name, data in images.items():
            (directory / name).write_bytes(data)
        page = directory / "report.html"
        page.write_text(build_html(results, images, prices), encoding="utf-8")
    except OSError as e:
        raise ConfigError(f"cannot write the report to {str(out)!r}: {e.strerror}") from None
    return page
