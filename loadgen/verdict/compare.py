"""Designs side by side: one table of per-pattern verdicts from several runs' results.

``loadgen run DESIGN_FILE --design all`` runs each variant in turn on the same patterns and
rates, then prints this table: per access pattern and design, the verdict, the throttled
share of attempts, the hottest key's share of its table's or index's key touches and what the
pattern's units cost a month on demand; then per design its cost a month (on demand,
provisioned for its peak second, storage) next to whether it passed, and the cheapest design
that passes every pattern.

    print("\\n".join(compare_designs([results_bad, results_good])))
"""

from __future__ import annotations

import html
from typing import Any

from loadgen.pricing import Prices, format_money, load_prices
from loadgen.verdict.cost import cost_of, pattern_costs

__all__ = ["THROTTLED_FAIL", "compare_designs", "compare_html", "pattern_rows"]

THROTTLED_FAIL = 0.01
"""A pattern with more than this share of its attempts throttled fails (where a results file
carries no verdicts of its own)."""


def pattern_rows(results: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Per access pattern (the operation rows' names): verdict, throttled share, hot key."""
    verdicts = {v["id"]: v for v in results.get("verdicts") or () if "id" in v}
    rows: dict[str, dict[str, Any]] = {}
    for row in results["operations"]:
        name = row["name"]
        attempts = row["requests"] + row.get("retries", 0)
        entry = rows.setdefault(name, {"attempts": 0, "throttled": 0, "hot_key": None})
        entry["attempts"] += attempts
        entry["throttled"] += row["throttled_attempts"]
        if row.get("hot_key"):
            entry["hot_key"] = row["hot_key"]
    for name, entry in rows.items():
        share = entry["throttled"] / entry["attempts"] if entry["attempts"] else 0.0
        entry["throttled_share"] = share
        verdict = verdicts.get(name)
        if verdict is not None:
            entry["verdict"] = verdict.get("status") or "FAIL"  # PASS, FAIL or EMPTY
        else:
            entry["verdict"] = "FAIL" if share > THROTTLED_FAIL else "PASS"
    return rows


def compare_designs(runs: list[dict[str, Any]], prices: Prices | None = None) -> list[str]:
    """The side-by-side table, one line per pattern and design, then each design's cost."""
    prices = prices or load_prices()
    currency = prices.currency

    def money(value: float | None) -> str:
        return format_money(value, currency)

    lines = [
        f"{'Pattern':<22} {'Design':<18} {'Verdict':<8} {'Throttled':>10} {'Hottest key':<32}"
        f" {'Share':>6} {'On-demand/month':>16}",
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
                f"{(hot or {}).get('share', 0.0):>6.1%} {money(costs.get(pattern)):>16}"
            )
    failing = {d for d, rows, _ in per_design if any(r["verdict"] == "FAIL" for r in rows.values())}
    passing = [d for d, _, _ in per_design if d not in failing]
    lines += [
        "",
        f"Cost a month per design ({prices.stamp()}; Standard table class; {prices.currency}):",
    ]
    totals: dict[str, float | None] = {}
    for design, _, results in per_design:
        total = cost_of(results, prices)["total"]
        totals[design] = total["on_demand_usd"]["standard"]
        lines.append(
            f"  {design:<18} on-demand {money(total['on_demand_usd']['standard']):>11}  "
            f"provisioned {money(total['provisioned_usd']['standard']):>11}  storage "
            f"{money((total['storage_usd'] or {}).get('standard')):>9}  "
            f"{'FAIL' if design in failing else 'PASS'}"
        )
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
            f"Cheapest that passes: {cheapest}, {money(totals[cheapest])} a month on demand"
        )
    elif passing:
        lines.append(f"Cheapest that passes: not known ({prices.region} has no on-demand price)")
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
