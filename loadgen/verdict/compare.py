"""Designs side by side: one table of per-pattern verdicts from several runs' results.

``loadgen run DESIGN_FILE --design all`` runs each variant in turn on the same patterns and
rates, then prints this table: per access pattern and design, the verdict, the throttled
share of attempts, the hottest key's share of its table's or index's key touches and what the
pattern costs on demand at launch demand; then per design its cost at launch demand (on
demand, provisioned, storage) beside its measured cost and whether it served its launch, how
each design's launch demand differs from the first's, and the cheapest design that passes
every pattern, at launch demand. A design that did not serve its launch is marked: its
measured cost is lower because DynamoDB refused its load (`loadgen.verdict.cost`).

    print("\\n".join(compare_designs([results_bad, results_good])))
"""

from __future__ import annotations

import html
from typing import Any

from loadgen.pricing import Prices, Window, format_money, window_of
from loadgen.verdict.cost import FAILING_SHARE, cost_of, pattern_costs, throttled_shares

__all__ = ["THROTTLED_FAIL", "compare_designs", "compare_html", "pattern_rows"]

THROTTLED_FAIL = FAILING_SHARE
"""A pattern with more than this share of its attempts throttled fails (where a results file
carries no verdicts of its own)."""


def pattern_rows(results: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Per access pattern (the operation rows' names): verdict, throttled share, hot key."""
    verdicts = {v["id"]: v for v in results.get("verdicts") or () if "id" in v}
    rows: dict[str, dict[str, Any]] = {}
    for name, (throttled, attempts) in throttled_shares(results).items():
        rows[name] = {"attempts": attempts, "throttled": throttled, "hot_key": None}
    for row in results["operations"]:
        if row.get("hot_key"):
            rows[row["name"]]["hot_key"] = row["hot_key"]
    for name, entry in rows.items():
        share = entry["throttled"] / entry["attempts"] if entry["attempts"] else 0.0
        entry["throttled_share"] = share
        verdict = verdicts.get(name)
        if verdict is not None:
            entry["verdict"] = verdict.get("status") or "FAIL"  # PASS, FAIL or EMPTY
        else:
            entry["verdict"] = "FAIL" if share > THROTTLED_FAIL else "PASS"
    return rows


def compare_designs(
    runs: list[dict[str, Any]], prices: Prices | None = None, window: Window | None = None
) -> list[str]:
    """The side-by-side table, one line per pattern and design, then each design's cost at
    launch demand beside its measured cost (at ``prices`` over ``window``: by default the
    results' own)."""
    sections = [cost_of(r, prices, window=window) for r in runs]
    first = sections[0]
    currency = first["currency"]
    span = window_of(first)

    def money(value: float | None) -> str:
        return format_money(value, currency)

    lines = [
        f"{'Pattern':<22} {'Design':<18} {'Verdict':<8} {'Throttled':>10} {'Hottest key':<32}"
        f" {'Share':>6} {'At launch, on demand':>21}",
    ]
    lines.append("-" * len(lines[0]))
    per_design = [(r["run"].get("design") or "?", pattern_rows(r), r) for r in runs]
    per_pattern = [pattern_costs(r, prices) for r in runs]
    patterns: list[str] = []
    for _, rows, _ in per_design:
        patterns += [p for p in rows if p not in patterns]
    for pattern in patterns:
        for (design, rows, results), costs in zip(per_design, per_pattern, strict=True):
            row = rows.get(pattern)
            if row is None:
                continue
            hot = row["hot_key"]
            if hot is None:  # the run's hottest key overall, where patterns keep none
                top = (results.get("hot_keys") or [None])[0]
                hot = None if top is None else {"key": top["key"], "share": top["share"]}
            lines.append(
                f"{pattern:<22} {design:<18} {row['verdict']:<8} "
                f"{row['throttled_share']:>9.1%} {(hot or {}).get('key', '-')[:32]:<32} "
                f"{(hot or {}).get('share', 0.0):>6.1%} {money(costs.get(pattern)):>21}"
            )
    failing = {d for d, rows, _ in per_design if any(r["verdict"] == "FAIL" for r in rows.values())}
    passing = [d for d, _, _ in per_design if d not in failing]
    cost_title = "Cost a month" if span["month"] else f"Cost of {span['words']}"
    lines += [
        "",
        f"{cost_title} per design at launch demand ({first['stamp']}; {span['words']}; "
        f"Standard table class; {currency}), beside what the run's served requests consumed:",
    ]
    totals: dict[str, float | None] = {}
    unserved: list[tuple[str, dict[str, Any]]] = []
    for (design, _, _), section in zip(per_design, sections, strict=True):
        launch = (section.get("launch") or section)["total"]
        totals[design] = launch["on_demand_usd"]["standard"]
        status = section.get("served") or {}
        mark = "FAIL" if design in failing else "PASS"
        if status.get("served") is False:
            mark += ", did NOT serve its launch"
            unserved.append((design, section))
        elif status.get("served") is None and status:
            mark += ", launch not delivered by this machine"
        lines.append(
            f"  {design:<18} on-demand {money(launch['on_demand_usd']['standard']):>11}  "
            f"provisioned {money(launch['provisioned_usd']['standard']):>11}  storage "
            f"{money((launch['storage_usd'] or {}).get('standard')):>9}  measured on demand "
            f"{money(section['total']['on_demand_usd']['standard']):>11}  {mark}"
        )
    for design, section in unserved:
        measured = section["total"]["on_demand_usd"]["standard"]
        launch_figure = totals[design]
        gap = (
            f" its measured {money(measured)} is {money(launch_figure - measured)} under its "
            "launch demand: throttling, not a saving"
            if measured is not None and launch_figure is not None and launch_figure > measured
            else ""
        )
        lines.append(f"  {design}: {section['served']['why']};{gap}")
    lines += _differences(per_design, sections, money)
    lines.append("")
    lines.append(
        f"Passing every pattern: {', '.join(passing)}"
        if passing
        else "No design passes every pattern"
    )
    priced = [d for d in passing if totals[d] is not None]
    if priced:
        cheapest = min(priced, key=lambda d: totals[d] or 0.0)
        lines.append(
            f"Cheapest that passes: {cheapest}, {money(totals[cheapest])} on demand at launch "
            f"demand ({span['words']})"
        )
    elif passing:
        lines.append(
            f"Cheapest that passes: not known ({first['prices']['region']} has no on-demand price)"
        )
    return lines


def _differences(
    per_design: list[tuple[str, dict[str, Any], dict[str, Any]]],
    sections: list[dict[str, Any]],
    money: Any,
) -> list[str]:
    """How each design's launch demand differs from the first's, table or index by table or
    index, read and write: where a design's extra cost comes from."""
    if len(sections) < 2:
        return []

    def figures(section: dict[str, Any]) -> dict[tuple[str, str], tuple[float, float | None]]:
        found: dict[tuple[str, str], tuple[float, float | None]] = {}
        for row in (section.get("launch") or section)["scopes"]:
            for kind in ("read", "write"):
                found[(row["scope"], kind)] = (
                    row[f"{kind}_units_per_s"],
                    row.get(f"{kind}_on_demand_usd", {}).get("standard"),
                )
        return found

    base_name = per_design[0][0]
    base = figures(sections[0])
    lines = ["", f"At launch demand, against {base_name} (units/s at AWS scale, on demand):"]
    for (design, _, _), section in zip(per_design[1:], sections[1:], strict=True):
        theirs = figures(section)
        parts = []
        for where in sorted({*base, *theirs}):
            units = theirs.get(where, (0.0, 0.0))[0] - base.get(where, (0.0, 0.0))[0]
            mine, first = theirs.get(where, (0.0, 0.0))[1], base.get(where, (0.0, 0.0))[1]
            if abs(units) < 0.05:
                continue
            usd = None if mine is None or first is None else mine - first
            worth = "-" if usd is None else ("+" if usd >= 0 else "-") + money(abs(usd))
            parts.append(f"{where[0]} {where[1]}s {units:+,.1f} ({worth})")
        lines.append(f"  {design}: {'; '.join(parts) if parts else 'the same demand'}")
    return lines


def compare_html(lines: list[str], sources: list[str]) -> str:
    """``loadgen report A.json B.json``: the side-by-side table as a page of its own."""
    files = "".join(f"<li><code>{html.escape(s)}</code></li>" for s in sources)
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        "<title>Partition Heat: designs side by side</title></head><body>"
        f"<h1>Designs side by side</h1><ul>{files}</ul>"
        f"<pre>{html.escape(chr(10).join(lines))}</pre></body></html>\n"
    )
