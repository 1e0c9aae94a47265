"""A simulation's timeline in words and figures, and its results file.

The timeline prints, per minute, each table's and index's capacity, use, burst and
partitions, then each access pattern's offered, admitted and throttled requests per second,
and the first minute each pattern fails and why. The results file has the shape of
``loadgen run --out`` (`loadgen.heat.results`), so ``loadgen report`` draws its heat over the
simulated time and ``loadgen gate`` gates it; latencies are not simulated and stay empty.

Like a design run's, it carries the design's patterns (``design.patterns``: id, operation,
table, index, the rate asked of each over the simulation), which the per-pattern verdict
reads, and each pattern's row says which limits throttled it (``throttles``: DynamoDB's
reason, the table or index, the model's cause, attempts and requests that ran out of
attempts). No latency need is written: a simulation measures none.
"""

from __future__ import annotations

from typing import Any

from loadgen.simulate.engine import SimulationResult

__all__ = ["build_results", "timeline_lines"]


def _scope_name(table: str, index: str | None) -> str:
    return table if index is None else f"{table}/{index}"


def _minutes(count: int, every: int) -> list[int]:
    chosen = list(range(0, count, every))
    if count and chosen[-1] != count - 1:
        chosen.append(count - 1)
    return chosen


def timeline_lines(result: SimulationResult, every: int = 1) -> list[str]:
    """The printed summary: tables and indexes, patterns, first failures (every N minutes)."""
    design, profile = result.design, result.profile
    rate = result.requests / result.wall_s if result.wall_s else 0.0
    lines = [
        f"Simulated {profile.duration_s / 60:,.1f} min of {design.title} ({design.name}) at "
        f"AWS scale: {result.requests:,.0f} requests in {result.wall_s:,.1f} s "
        f"({rate:,.0f} simulated requests per wall second)",
        f"Profile: {'; '.join(profile.lines)}",
        "",
    ]
    count = len(next(iter(result.patterns.values()), []))
    shown = _minutes(count, every)
    for (table, index), rows in result.scopes.items():
        mode = "on-demand" if rows and rows[0].on_demand else "provisioned"
        lines.append(f"{_scope_name(table, index)} ({mode}), per second over each minute:")
        lines.append(
            f"  {'min':>4} {'read cap':>10} {'write cap':>10} {'read':>10} {'write':>10} "
            f"{'burst r':>10} {'burst w':>10} {'parts':>6}"
        )
        by_minute = {row.minute: row for row in rows}
        for minute in shown:
            row = by_minute.get(minute)
            if row is None:
                continue
            lines.append(
                f"  {minute:>4} {row.read_capacity:>10,.0f} {row.write_capacity:>10,.0f} "
                f"{row.consumed_read / 60:>10,.0f} {row.consumed_write / 60:>10,.0f} "
                f"{row.burst_read:>10,.0f} {row.burst_write:>10,.0f} {row.partitions:>6}"
            )
        lines.append("")
    lines.append("Access patterns, requests per second over each minute (retries included):")
    width = max([len(p) for p in result.patterns] + [7])
    lines.append(
        f"  {'min':>4} {'pattern':<{width}} {'offered':>10} {'admitted':>10} {'throttled':>10} "
        f"{'share':>7} {'failed':>9}"
    )
    for minute in shown:
        for pattern, minutes in result.patterns.items():
            at = minutes[minute]
            share = at.throttled / at.offered if at.offered else 0.0
            lines.append(
                f"  {minute:>4} {pattern:<{width}} {at.offered / 60:>10,.0f} "
                f"{at.admitted / 60:>10,.0f} {at.throttled / 60:>10,.0f} "
                f"{share * 100:>6.1f}% {at.failed / 60:>9,.1f}"
            )
    lines.append("")
    failures = result.first_failures()
    if not failures:
        lines.append("No access pattern fails: at most 1% of any minute's attempts throttled.")
    else:
        lines.append("First failure of each access pattern (over 1% of a minute's attempts "
                     "throttled):")  # fmt: skip
        for failure in failures:
            lines.append(
                f"  {failure.pattern}: minute {failure.minute}, {failure.share * 100:.1f}% "
                f"throttled: {failure.reason or 'throttled'}"
            )
    return lines


def build_results(result: SimulationResult) -> dict[str, Any]:
    """The results file of a simulation (see the module docstring)."""
    design, settings = result.design, result.settings
    duration = float(result.profile.duration_s)
    operations: list[dict[str, Any]] = []
    scope_touches: dict[tuple[str, str | None], float] = {}
    for lane in result.heat["lanes"]:
        scope = (lane["table"], lane["index"])
        scope_touches[scope] = scope_touches.get(scope, 0.0) + sum(map(sum, lane["requests"]))
    for demand in result.demands:
        rows = result.patterns[demand.id]
        calls = demand.calls
        offered = sum(r.offered for r in rows) * calls
        new = sum(r.new for r in rows) * calls
        throttled = sum(r.throttled for r in rows) * calls
        failed = sum(r.failed for r in rows) * calls
        admitted = sum(r.admitted for r in rows)
        # Each lane's keys at the simulation's end (keys on the run's clock have moved).
        profiles = [demand.profile(lane) for lane in demand.lanes]
        units: dict[str, dict[str, float]] = {}
        for place, lane in enumerate(demand.lanes):
            slot = units.setdefault(_scope_name(lane.table, lane.index), {"read": 0, "write": 0})
            charged = result.grown_units.get((demand.id, place))
            if charged is None:  # its items keep their size: each touch costs its units
                charged = admitted * demand.lane_units(lane)
            slot[lane.kind] = round(slot[lane.kind] + charged, 3)
        # The pattern's hottest key on each table and index, as a run's row says it: its
        # share of the pattern's touches there, over every lane (a Query over every shard has
        # a lane a shard; a transaction, one an item).
        touched: dict[tuple[str, str | None], tuple[float, dict[str, float]]] = {}
        for lane, profile in zip(demand.lanes, profiles, strict=True):
            if profile.top and profile.touches and lane.recorded:
                total, weights = touched.get(lane.scope, (0.0, {}))
                for text, weight in profile.top:
                    weights[text] = weights.get(text, 0.0) + weight
                touched[lane.scope] = (total + profile.touches, weights)
        hottest: dict[str, Any] | None = None
        scope_keys: dict[str, dict[str, Any]] = {}
        for (table, index), (total, weights) in touched.items():
            text, weight = max(weights.items(), key=lambda item: item[1])
            share = weight / total
            scope_keys[_scope_name(table, index)] = {"key": text, "share": round(share, 6)}
            if hottest is None or share > hottest["share"]:
                hottest = {
                    "key": text,
                    "share": round(share, 6),
                    "table": table,
                    "index": index,
                    "touches": round(sum(r.offered for r in rows) * weight, 3),
                    "error": 0,
                }
        error = _error_name(result, demand.table)
        throttles = [
            {
                "reason": t.throttle.reason,
                "scope": _scope_name(t.throttle.table, t.throttle.index),
                "cause": t.throttle.cause,
                "source": "model",
                "exception": t.throttle.exception,
                "attempts": round(t.attempts * calls),
                "final": round(t.final * calls),
            }
            for t in result.throttles.get(demand.id, ())
            if round(t.attempts * calls)
        ]
        operations.append(
            {
                "operation": demand.operation,
                "name": demand.id,
                "requests": round(new),
                "failures": round(failed),
                "requests_per_s": new / duration,
                "avg_ms": None,
                "max_ms": 0.0,  # latencies are not simulated; the report draws none
                "attempts": round(offered),
                "throttled_attempts": round(throttled),
                "retries": round(offered - new),
                "unprocessed_items": 0,
                "errors": {error: round(failed)} if round(failed) else {},
                "units": units,
                "throttles": throttles,
                "hot_key": hottest,
                "scope_keys": scope_keys,
                "p50_ms": None,
                "p95_ms": None,
                "p99_ms": None,
            }
        )
    totals: dict[str, Any] = {
        "operation": "",
        "name": "Aggregated",
        "avg_ms": None,
        "max_ms": 0.0,
        "unprocessed_items": 0,
        "units": {},
        "hot_key": None,
        "p50_ms": None,
        "p95_ms": None,
        "p99_ms": None,
    }
    for field in ("requests", "failures", "attempts", "throttled_attempts", "retries"):
        totals[field] = sum(row[field] for row in operations)
    totals["requests_per_s"] = totals["requests"] / duration
    errors: dict[str, int] = {}
    for row in operations:
        for name, n in row["errors"].items():
            errors[name] = errors.get(name, 0) + n
    totals["errors"] = errors
    top_keys: list[dict[str, Any]] = []
    hot_keys: list[dict[str, Any]] = []
    for (table, index), keys in result.top_keys.items():
        total = scope_touches.get((table, index), 0.0)
        ranked = sorted(keys.items(), key=lambda item: -item[1][0])[:20]
        by_units = sorted(keys.items(), key=lambda item: -item[1][1])[:20]
        for by, chosen, position in (("requests", ranked, 0), ("units", by_units, 1)):
            top_keys.append(
                {
                    "table": table,
                    "index": index,
                    "by": by,
                    "total": round(total if position == 0 else sum(v[1] for v in keys.values()), 3),
                    "error_bound": 0,
                    "keys": [
                        {"key": key, "count": round(value[position], 3), "error": 0}
                        for key, value in chosen
                    ],
                }
            )
        for key, (touches, _) in ranked[:10]:
            hot_keys.append(
                {
                    "table": _scope_name(table, index),
                    "key": key,
                    "requests": round(touches, 3),
                    "error": 0,
                    "share": touches / total if total else 0.0,
                }
            )
    hot_keys.sort(key=lambda row: (-row["share"], -row["requests"], row["key"]))
    return {
        "schema_version": 1,
        "run": {
            "workload": design.title,
            "design": design.name,
            "distribution": settings.distribution,
            "keys": max(
                (g.cardinality or 0 for g in result.demands[0].generators.values()), default=0
            )
            if result.demands
            else 0,
            "seed": settings.seed,
            "target": "simulation (loadgen.model at AWS scale, no requests sent)",
            "scale": 1.0,
            "users": 0,
            "interrupted": False,
        },
        "duration_s": duration,
        "operations": operations,
        "totals": totals,
        "hot_keys": hot_keys[:10],
        "top_keys": top_keys,
        "heat": result.heat,
        "design": _design_section(result),
        "gsi_buffers": result.buffers(),
        "simulation": {
            "profile": list(result.profile.lines),
            "attempts": settings.attempts,
            "auto_scaling": settings.auto_scaling,
            "wall_s": round(result.wall_s, 3),
            "first_failures": [
                {
                    "pattern": f.pattern,
                    "minute": f.minute,
                    "share": round(f.share, 6),
                    "reason": f.reason,
                    "cause": f.cause or None,
                }
                for f in result.first_failures()
            ],
            "timeline": {
                pattern: [
                    {
                        "minute": r.minute,
                        "offered": round(r.offered, 3),
                        "admitted": round(r.admitted, 3),
                        "throttled": round(r.throttled, 3),
                        "failed": round(r.failed, 3),
                    }
                    for r in rows
                ]
                for pattern, rows in result.patterns.items()
            },
            "scopes": {
                _scope_name(table, index): [
                    {
                        "minute": r.minute,
                        "read_capacity": r.read_capacity,
                        "write_capacity": r.write_capacity,
                        "consumed_read": round(r.consumed_read, 3),
                        "consumed_write": round(r.consumed_write, 3),
                        "partitions": r.partitions,
                    }
                    for r in rows
                ]
                for (table, index), rows in result.scopes.items()
            },
        },
    }


def _design_section(result: SimulationResult) -> dict[str, Any]:
    """The design's patterns as a design run's results file has them, each with the rate the
    simulation asked of it (the profile's mean, split by the design's mix)."""
    design = result.design
    total = sum(d.rate for d in result.demands)
    mean = sum(result.profile.rates) / result.profile.duration_s if result.profile.rates else 0.0
    patterns = [
        {
            "id": demand.id,
            "description": next((p.description for p in design.patterns if p.id == demand.id), ""),
            "operation": demand.operation,
            "table": demand.table,
            "index": demand.index,
            "rate": round(mean * demand.rate / total, 6) if total else 0.0,
            "calls": demand.calls,
            "latency": None,  # not simulated: nothing to judge it on
        }
        for demand in result.demands
    ]
    return {
        "file": design.path,
        "name": design.name,
        "title": design.title,
        "patterns": patterns,
        "notes": list(design.notes),
        "starting_data": {
            "items": None,
            "empty": False,
            "note": "simulated: every request finds the items the design's entities describe",
        },
    }


def _error_name(result: SimulationResult, table: str) -> str:
    schema = result.design.schemas.get(table)
    if schema is not None and not schema.on_demand:
        return "ProvisionedThroughputExceededException"
    return "ThrottlingException"
