"""A run's cost a month, from the units its results file says it consumed.

Per table and index, the heat lanes hold the units consumed each second (throttled attempts
consume none; a retry that succeeds does). At AWS scale (measured units over ``run.scale``),
the mean over the run is carried to a month at on-demand prices, and the busiest second sets
the provisioned capacity that carries it at 70% utilisation (`loadgen.pricing.cost`). Storage
comes from the results' ``storage`` section where the run knows its tables' bytes (a design
run: its starting data's items and sizes); what the run's tables had provisioned from its
``tables`` section.

    section = run_cost(load_results("results.json"), load_prices())
    results["cost"] = section
    print("\\n".join(format_cost(section)))
"""

from __future__ import annotations

import html
from typing import Any

from loadgen.pricing import (
    Prices,
    Usage,
    currency_of,
    format_cost,
    format_money,
    load_prices,
    monthly_cost,
)
from loadgen.pricing.cost import on_demand_usd
from loadgen.verdict import analysis

__all__ = ["cost_html", "cost_of", "format_cost", "pattern_costs", "run_cost", "usage_of"]


def _provisioned(results: dict[str, Any]) -> dict[str, tuple[float, float]]:
    """``scope: (read, write)`` of the tables and indexes the run had provisioned."""
    found: dict[str, tuple[float, float]] = {}
    for row in results.get("tables") or ():
        if row.get("billing_mode") != "PROVISIONED":
            continue
        scope = row["table"] if not row.get("index") else f"{row['table']}/{row['index']}"
        found[scope] = (float(row.get("read_capacity") or 0), float(row.get("write_capacity") or 0))
    return found


def usage_of(results: dict[str, Any], scale: float | None = None) -> list[Usage]:
    """Per table and index: mean and peak-second read and write units/s at AWS scale."""
    factor = analysis.scale_of(results, scale)
    heat = results["heat"]
    resolution = float(heat.get("resolution_s") or 1.0)
    duration = float(results.get("duration_s") or 0.0) or max(1.0, heat["columns"] * resolution)
    provisioned = _provisioned(results)
    figures: dict[str, dict[str, float]] = {}
    for lane in heat["lanes"]:
        scope = analysis.Scope(lane["table"], lane["index"]).name
        _, grid = analysis.lane_units(lane)
        per_second = [sum(column) / resolution for column in grid]
        unattributed = float(lane["unattributed"]["units"])
        total = sum(map(sum, grid)) + unattributed
        mean = total / duration / factor
        peak = (max(per_second, default=0.0) + unattributed / duration) / factor
        entry = figures.setdefault(scope, {"read": 0.0, "write": 0.0, "pr": 0.0, "pw": 0.0})
        access = lane["access"]
        entry[access] += mean
        entry["pr" if access == "read" else "pw"] += peak
    return [
        Usage(scope, f["read"], f["write"], f["pr"], f["pw"], provisioned.get(scope))
        for scope, f in figures.items()
    ]


def run_cost(
    results: dict[str, Any], prices: Prices, *, scale: float | None = None
) -> dict[str, Any]:
    """The cost section of a run (see the module docstring)."""
    storage = results.get("storage") or {}
    stored = {str(k): float(v) for k, v in (storage.get("bytes") or {}).items()}
    section = monthly_cost(
        usage_of(results, scale),
        stored,
        prices,
        basis="measured",
        how="mean units/s over the run at AWS scale, carried to a month",
    )
    if storage.get("source"):
        section["storage_source"] = storage["source"]
    return section


def cost_of(
    results: dict[str, Any],
    prices: Prices | None = None,
    *,
    scale: float | None = None,
) -> dict[str, Any]:
    """The results' own cost section when they carry one (and no other prices are asked for),
    else one worked out now."""
    if prices is None and results.get("cost"):
        section: dict[str, Any] = results["cost"]
        return section
    return run_cost(results, prices or load_prices(), scale=scale)


def pattern_costs(results: dict[str, Any], prices: Prices) -> dict[str, float | None]:
    """Per access pattern (operation rows' ``name``): its on-demand cost a month, Standard
    class, from the units its calls consumed on every table and index (at AWS scale), in the
    prices' currency; None where the region's page gave no on-demand price."""
    factor = analysis.scale_of(results)
    duration = float(results.get("duration_s") or 0.0)
    standard = prices.of("standard")
    costs: dict[str, float | None] = {}
    for row in results["operations"]:
        read = sum(float(u.get("read", 0.0)) for u in (row.get("units") or {}).values())
        write = sum(float(u.get("write", 0.0)) for u in (row.get("units") or {}).values())
        if duration <= 0:
            continue
        usd = on_demand_usd(
            read / duration / factor, write / duration / factor, standard, prices.hours_per_month
        )
        before = costs.get(row["name"], 0.0)
        costs[row["name"]] = None if before is None or usd is None else before + usd
    return costs


def cost_html(section: dict[str, Any]) -> str:
    """The cost section as the report's tables: per table and index, per table, the total."""

    def e(value: Any) -> str:
        return html.escape(str(value))

    currency = currency_of(section)

    def money(value: float | None) -> str:
        return format_money(value, currency)

    def both(pair: dict[str, float | None] | None) -> str:
        if pair is None:
            return "<td>-</td><td>-</td>"
        return f"<td>{money(pair['standard'])}</td><td>{money(pair['standard_ia'])}</td>"

    target = section["target_utilization"]
    head = (
        "<tr><th>Table or index</th><th>Read units/s</th><th>Write units/s</th>"
        "<th>On-demand</th><th>On-demand, IA</th><th>Peak read/write units/s</th>"
        f"<th>Provisioned at {target:.0%}</th><th>Provisioned, IA</th><th>As run</th></tr>"
    )
    rows = []
    for row in section["scopes"]:
        prov = row["provisioned"]
        as_run = row["provisioned_as_run"]
        run_cell = (
            f"{as_run['read_capacity']:,.0f} RCU, {as_run['write_capacity']:,.0f} WCU: "
            f"{money(as_run['usd']['standard'])}"
            if as_run
            else "on demand"
        )
        rows.append(
            f'<tr><td class="text">{e(row["scope"])}</td>'
            f"<td>{row['read_units_per_s']:,.1f}</td><td>{row['write_units_per_s']:,.1f}</td>"
            f"{both(row['on_demand_usd'])}"
            f"<td>{row['peak_read_units_per_s']:,.1f} / {row['peak_write_units_per_s']:,.1f}</td>"
            f"<td>{money(prov['usd']['standard'])} ({prov['read_capacity']:,} RCU, "
            f"{prov['write_capacity']:,} WCU)</td><td>{money(prov['usd']['standard_ia'])}</td>"
            f'<td class="text">{e(run_cell)}</td></tr>'
        )
    tables = []
    for name, table in section["tables"].items():
        stored = table["storage_bytes"]
        tables.append(
            f'<tr><td class="text">{e(name)}</td>{both(table["on_demand_usd"])}'
            f"{both(table['provisioned_usd'])}"
            f"<td>{'-' if stored is None else f'{stored / 1e6:,.1f} MB'}</td>"
            f"{both(table['storage_usd'])}<td>{money(table['monthly_usd'])}</td></tr>"
        )
    table_head = (
        "<tr><th>Table</th><th>On-demand</th><th>On-demand, IA</th><th>Provisioned</th>"
        "<th>Provisioned, IA</th><th>Stored</th><th>Storage</th><th>Storage, IA</th>"
        "<th>As run, with storage</th></tr>"
    )
    hours = section["prices"]["hours_per_month"]
    note = (
        f'<p class="note">{e(currency)} a month, {e(section["stamp"])} ({e(section["basis"])}: '
        f"{e(section['how'])}, {hours:g} hours). IA: the Standard-IA table class. Provisioned: "
        f"the capacity that carries the peak second at {target:.0%} utilisation. As run: "
        f"provisioned where the run's table had throughput, else on demand. "
        f"{e(section['counted'])}</p>"
    )
    return f"<table>{head}{''.join(rows)}</table><table>{table_head}{''.join(tables)}</table>{note}"
