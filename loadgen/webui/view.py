"""The live view of a run's partition heat: what the web UI's tab, heatmap and JSON show.

`heat_view` reads the results of the run so far (the same dictionary the results file holds,
`loadgen.heat.results.build_results`), through the verdict's own reading of it
(`loadgen.verdict.analysis`, `loadgen.verdict.diagnosis`), so the live view, the gate and the
report agree on every figure:

- ``tables``: per table and index, its key touches, throttled attempts and their ratio, and
  its hottest keys with their share of the touches, throttled attempts, and consumed write
  and read units/s at AWS scale, over the last seconds (``*_now``) and the busiest (``*_peak``);
- ``heat``: per table and index, the hash space folded into ``rows`` equal ranges, per column
  of ``resolution_s`` seconds: key touches/s, throttled attempts/s, write and read units/s;
- ``throttles``: per access pattern, calls, throttled attempts, retries and failures;
- ``refusals``: what the target said (`loadgen.verdict.reasons`): per access pattern, its
  ``throttles`` by DynamoDB's reason, table or index and the partition model's cause (``not
  reported`` where the target gave none), its final ``errors`` by code with the target's
  message, its ``cancellations`` by reason code, and what each of the model's ``causes``
  names;
- ``diagnosis``: the report's findings, each with its remedy and AWS guide;
- ``load``: a rate run's offered, achieved and dropped load (`loadgen.heat.load`), else null;
- ``cost``: what the run's traffic so far costs a month (`loadgen.verdict.cost`), in the
  run's prices' region and currency: on demand, provisioned for its busiest second, storage,
  the tables as run, and the same at launch demand, with the prices' region and source and
  each figure formatted in its currency (``text``); null before the first request.

    view = heat_view(results, top=10)
    view["tables"][0]["keys"][0]["key"]   # "GLOBAL_COUNTER"
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import asdict
from functools import partial
from typing import Any

from loadgen.model.hashing import bucket_of
from loadgen.refusals import CAUSES
from loadgen.verdict import analysis, reasons
from loadgen.verdict.cost import run_cost
from loadgen.verdict.diagnosis import diagnose

__all__ = ["FIELDS", "SCHEMA_VERSION", "heat_view", "table_rows"]

SCHEMA_VERSION = 1
FIELDS = ("requests", "throttled_attempts", "write_units", "read_units")
"""What the heatmap can colour: key touches/s, throttled attempts/s, write and read units/s."""
WINDOW_S = 5.0
"""Seconds over which a key's current and busiest rates are averaged (the gate's default)."""


def heat_view(
    results: dict[str, Any],
    *,
    top: int = 10,
    rows: int = analysis.DISPLAY_ROWS,
    scope: str | None = None,
    fields: tuple[str, ...] = FIELDS,
    memo: dict[Any, Any] | None = None,
) -> dict[str, Any]:
    """The view of ``results``: ``top`` keys per table and index, the heat folded into
    ``rows`` hash ranges (of the one ``scope`` named, else of all) for ``fields``.

    Views of the same ``results`` may share a ``memo`` (a dictionary): what one has built
    (the tables, the diagnosis, each table's grid of one field) the next takes from it.
    """
    memo = {} if memo is None else memo

    def once(key: Any, build: Callable[[], Any]) -> Any:
        if key not in memo:
            memo[key] = build()
        return memo[key]

    scopes = once("scopes", lambda: analysis.scopes(results))
    heat = results["heat"]
    rows = min(rows, heat["buckets"])
    totals = results["totals"]
    return {
        "schema_version": SCHEMA_VERSION,
        "generated_at": round(time.time(), 3),
        "run": {**results["run"], "duration_s": results["duration_s"]},
        "scale": results["run"].get("scale"),
        "totals": {
            name: totals[name]
            for name in ("requests", "requests_per_s", "failures", "throttled_attempts", "retries")
        },
        "tables": once(("tables", top), lambda: [_table(results, s, top) for s in scopes]),
        "heat": {
            "buckets": heat["buckets"],
            "rows": rows,
            "resolution_s": heat["resolution_s"],
            "start": heat["start"],
            "columns": heat["columns"],
            "keys_hashed": bool(heat.get("keys_hashed")),
            "units_basis": once("basis", lambda: {s.name: _basis(results, s) for s in scopes}),
            "scopes": {
                s.name: {
                    field: once(("heat", s, field, rows), partial(_grid, results, s, field, rows))
                    for field in fields
                }
                for s in scopes
                if scope is None or s.name == scope
            },
        },
        "throttles": [
            {
                "operation": row["operation"],
                "name": row["name"],
                "requests": row["requests"],
                "throttled_attempts": row["throttled_attempts"],
                "throttled_ratio": _ratio(row["throttled_attempts"], row["requests"]),
                "retries": row["retries"],
                "failures": row["failures"],
                "errors": row["errors"],
            }
            for row in results["operations"]
        ],
        "refusals": once("refusals", lambda: _refusals(results)),
        "diagnosis": once("diagnosis", lambda: _diagnosis(results) if scopes else []),
        "load": results.get("load"),
        "cost": once("cost", lambda: _cost(results) if scopes else None),
    }


def _refusals(results: dict[str, Any]) -> dict[str, Any]:
    """Throttles by reason and cause, errors with their messages, cancellation reasons."""
    return {
        "throttles": [asdict(line) for line in reasons.throttles(results)],
        "errors": [asdict(line) for line in reasons.errors(results)],
        "cancellations": [asdict(line) for line in reasons.cancellations(results)],
        # What each cause of the partition model names, for the page's legend.
        "causes": dict(CAUSES),
    }


def _cost(results: dict[str, Any]) -> dict[str, Any] | None:
    """The running estimate, in the run's prices' region and currency (the summary's): the
    totals and each table's figure, measured and at launch demand, as figures and as money
    (``text``: formatted in the currency); None where the run's prices cannot be read."""
    from loadgen.errors import ConfigError
    from loadgen.pricing import format_money, load_prices

    run = results["run"]
    try:
        prices = load_prices(run.get("prices_file"), region=run.get("prices_region"))
    except ConfigError:
        return None  # the summary says why; the live view shows no cost rather than a wrong one
    section = run_cost(results, prices)
    total, launch = section["total"], section["launch"]["total"]
    figures = {
        "on_demand_usd": total["on_demand_usd"]["standard"],
        "provisioned_usd": total["provisioned_usd"]["standard"],
        "storage_usd": (total["storage_usd"] or {}).get("standard"),
        "monthly_usd": total["monthly_usd"],
        "launch_on_demand_usd": launch["on_demand_usd"]["standard"],
        "launch_monthly_usd": launch["monthly_usd"],
    }
    return {
        "stamp": section["stamp"],
        "region": prices.region,
        "currency": prices.currency,
        "month": prices.month(),
        **figures,
        "text": {name: format_money(value, prices.currency) for name, value in figures.items()},
        "served": section["served"],
        "tables": {name: t["monthly_usd"] for name, t in section["tables"].items()},
    }


def _diagnosis(results: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        {
            "kind": finding.kind,
            "scope": finding.scope,
            "keys": list(finding.keys),
            "title": finding.title,
            "evidence": finding.evidence,
            "remedy": finding.remedy,
            "guide": finding.guide,
        }
        for finding in diagnose(results)
    ]


def table_rows(view: dict[str, Any]) -> list[dict[str, Any]]:
    """One row per hot key of every table and index: the web UI tab's table."""
    return [
        {
            "table": table["scope"],
            "key": key["key"],
            "share": round(100 * key["share"], 1),
            "touches": round(key["touches"]),
            "write_units": round(key["write_units_per_s_now"], 1),
            "read_units": round(key["read_units_per_s_now"], 1),
            "throttled": round(key["throttled_attempts"]),
            "throttled_ratio": round(key["throttled_ratio"], 3),
        }
        for table in view["tables"]
        for key in table["keys"]
    ]


def _ratio(part: float, whole: float) -> float:
    return part / whole if whole else 0.0


def _table(results: dict[str, Any], scope: analysis.Scope, top: int) -> dict[str, Any]:
    heat = results["heat"]
    touches = _sums(analysis.bucket_series(results, scope))
    throttled = _sums(analysis.bucket_series(results, scope, "throttled_attempts"))
    total = analysis.key_total(results, scope)
    rates = {
        (access, latest): {
            rate.key: rate.units_per_s
            for rate in analysis.key_rates(results, scope, access, window_s=WINDOW_S, latest=latest)
        }
        for access in ("write", "read")
        for latest in (True, False)
    }
    keys = []
    for row in analysis.top_keys(results, scope)[:top]:
        name, count = str(row["key"]), float(row["count"])
        bucket = None if heat.get("keys_hashed") else bucket_of(name, heat["buckets"])
        # A key's share of its bucket's touches carries its share of the bucket's throttles:
        # exact when the key is alone in its bucket, an estimate otherwise.
        of_bucket = min(1.0, _ratio(count, touches[bucket])) if bucket is not None else 0.0
        key_throttled = throttled[bucket] * of_bucket if bucket is not None else 0.0
        keys.append(
            {
                "key": name,
                "touches": count,
                "error": row["error"],
                "share": _ratio(count, total),
                "bucket": bucket,
                "throttled_attempts": key_throttled,
                "throttled_ratio": _ratio(key_throttled, count),
                **{
                    f"{access}_units_per_s_{when}": rates[(access, when == "now")].get(name, 0.0)
                    for access in ("write", "read")
                    for when in ("now", "peak")
                },
            }
        )
    return {
        "scope": scope.name,
        "table": scope.table,
        "index": scope.index,
        "key_touches": total,
        "throttled_attempts": sum(throttled),
        "throttled_ratio": analysis.throttled_ratio(results, scope),
        "keys": keys,
    }


def _sums(grid: list[list[float]]) -> list[float]:
    return [sum(column) for column in zip(*grid, strict=True)] if grid else []


def _grid(
    results: dict[str, Any], scope: analysis.Scope, field: str, rows: int
) -> list[list[float]]:
    """``[row][t]``: one field's rate per second (units at AWS scale) of a table or index."""
    heat = results["heat"]
    per = float(heat["resolution_s"])
    if field in ("requests", "throttled_attempts"):
        grid = analysis.bucket_series(results, scope, field)
    else:
        lane = _lane(results, scope, field)
        grid = analysis.lane_units(lane)[1] if lane else [[0.0] * heat["buckets"]] * heat["columns"]
        per *= analysis.scale_of(results)
    return [[round(v / per, 3) if v else 0 for v in row] for row in analysis.fold_rows(grid, rows)]


def _lane(results: dict[str, Any], scope: analysis.Scope, field: str) -> dict[str, Any] | None:
    """The read or write lane of a ``read_units`` or ``write_units`` field."""
    access = field.removesuffix("_units")
    return next((la for la in analysis.lanes_of(results, scope) if la["access"] == access), None)


def _basis(results: dict[str, Any], scope: analysis.Scope) -> dict[str, str]:
    """Per units field, ``units`` or ``requests`` (one unit per touch: see `lane_units`)."""
    basis = {}
    for field in ("write_units", "read_units"):
        lane = _lane(results, scope, field)
        basis[field] = analysis.lane_units(lane)[0] if lane else "units"
    return basis
