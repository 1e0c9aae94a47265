"""The demand a run was asked to carry, and whether it served it.

**Launch demand**: per access pattern, its rate as the run's plan offered it, at AWS scale (a
design run: its launch rates; a run without a plan: the requests it sent, each refused one
counted once, retries not counted), times what one execution consumes on each table and
index: asked of the simulation's model in a design run (the results'
``design.patterns[].units_per_execution``, `loadgen.simulate.demand.pattern_units`), else the
pattern's measured units over the requests DynamoDB charged. Requests DynamoDB rejects for
what they ask (a validation error, `loadgen.model.capacity.rejected`) are refused at any rate:
no demand. `loadgen.verdict.cost` prices it beside what was measured.

**Served**: a run did not serve its launch when DynamoDB refused more than `FAILING_SHARE` of
a pattern's attempts; where the machine did not deliver the load, whether it does is not
known.

    usage, patterns = launch_usage(results)   # per table and index; per pattern, how
    served(results)                           # {"served": False, "why": "DynamoDB refused ..."}
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from loadgen.model.capacity import charged_on, rejected
from loadgen.pricing import Usage
from loadgen.verdict import analysis
from loadgen.verdict.throttles import cancelled_by_throttles

__all__ = [
    "FAILING_SHARE",
    "launch_how",
    "launch_usage",
    "provisioned_as_run",
    "served",
    "throttled_shares",
]

FAILING_SHARE = 0.01
"""A pattern with more than this share of its attempts throttled did not serve its launch."""


def provisioned_as_run(results: dict[str, Any]) -> dict[str, tuple[float, float]]:
    """``scope: (read, write)`` of the tables and indexes the run had provisioned."""
    found: dict[str, tuple[float, float]] = {}
    for row in results.get("tables") or ():
        if row.get("billing_mode") != "PROVISIONED":
            continue
        scope = row["table"] if not row.get("index") else f"{row['table']}/{row['index']}"
        found[scope] = (float(row.get("read_capacity") or 0), float(row.get("write_capacity") or 0))
    return found


def _plan_rates(results: dict[str, Any]) -> dict[str, float]:
    """Executions/s at AWS scale per operation of the run's plan, at its full rate (the last
    stage's, where it climbed in stages); empty in a closed-model run."""
    load = results.get("load") or {}
    rates = load.get("rates")
    if not isinstance(rates, Mapping) or not rates:
        return {}
    factor = 1.0
    stages = load.get("stages") or []
    total = sum(float(r) for r in rates.values())
    if stages and total:
        factor = float(stages[-1][1]) / total
    return {str(op): float(r) * factor for op, r in rates.items()}


def _charged_requests(row: Mapping[str, Any]) -> int:
    """The pattern's requests DynamoDB charged: all but those it refused before any work (a
    throttle, a validation error: `charged_on`), transactions a throttle cancelled too."""
    refused = sum(
        int(n) for code, n in (row.get("errors") or {}).items() if charged_on(code) == "nothing"
    )
    refused += cancelled_by_throttles(row)
    return max(0, int(row["requests"]) - refused)


def _rejected_share(row: Mapping[str, Any]) -> float:
    """The share of the pattern's requests DynamoDB refused for what they asked (a validation
    error: `loadgen.model.capacity.rejected`): refused at any rate, they cost nothing at launch
    demand either."""
    requests = int(row["requests"])
    refused = sum(int(n) for code, n in (row.get("errors") or {}).items() if rejected(code))
    return min(1.0, refused / requests) if requests else 0.0


def _model_units(results: dict[str, Any]) -> dict[str, dict[str, dict[str, float]]]:
    design = results.get("design") or {}
    return {
        str(p["id"]): p["units_per_execution"]
        for p in design.get("patterns") or ()
        if p.get("units_per_execution")
    }


def _launch_patterns(results: dict[str, Any], scale: float | None) -> list[dict[str, Any]]:
    """Per access pattern: its rate asked at AWS scale, what one execution (or request)
    consumes per table and index, and where each figure comes from."""
    factor = analysis.scale_of(results, scale)
    duration = float(results.get("duration_s") or 0.0)
    plan = _plan_rates(results)
    model = _model_units(results)
    names = [str(row["name"]) for row in results["operations"]]
    planned: dict[str, str] = {}  # row name -> plan operation
    for name in names:
        op = name if name in plan else name.rsplit(".", 1)[-1]
        if op in plan:
            planned[name] = op
    once = {n: op for n, op in planned.items() if list(planned.values()).count(op) == 1}
    patterns = []
    for row in results["operations"]:
        name = str(row["name"])
        entry: dict[str, Any] = {"name": name, "operation": row.get("operation")}
        if name in once:
            entry["per_s"] = plan[once[name]]
            entry["rate_from"] = "plan"
        else:
            entry["per_s"] = row["requests"] / duration / factor if duration > 0 else 0.0
            entry["rate_from"] = "requests"
        # Requests DynamoDB rejects for what they ask are refused at any rate: not demand.
        entry["rejected_share"] = _rejected_share(row)
        entry["per_s"] *= 1.0 - entry["rejected_share"]
        if entry["rate_from"] == "plan" and name in model:
            entry["units"] = model[name]
            entry["units_from"] = "model"
        else:
            charged = _charged_requests(row)
            units = row.get("units") or {}
            entry["units_from"] = "measured"
            entry["units"] = (
                {
                    scope: {k: float(u.get(k, 0.0)) / charged for k in ("read", "write")}
                    for scope, u in units.items()
                }
                if charged
                else None
            )
        patterns.append(entry)
    return patterns


def launch_usage(
    results: dict[str, Any], scale: float | None = None
) -> tuple[list[Usage], list[dict[str, Any]]]:
    """Per table and index, the units/s of the demand the run was asked to carry (steady: its
    peak second is its mean), and per pattern how it was made (see the module docstring)."""
    patterns = _launch_patterns(results, scale)
    totals: dict[str, list[float]] = {}
    for entry in patterns:
        for scope, units in (entry["units"] or {}).items():
            slot = totals.setdefault(scope, [0.0, 0.0])
            slot[0] += entry["per_s"] * units.get("read", 0.0)
            slot[1] += entry["per_s"] * units.get("write", 0.0)
    provisioned = provisioned_as_run(results)
    usage = [Usage(s, r, w, r, w, provisioned.get(s)) for s, (r, w) in totals.items()]
    return usage, patterns


def throttled_shares(results: dict[str, Any]) -> dict[str, tuple[int, int]]:
    """Per access pattern (operation rows' ``name``): (throttled attempts, attempts)."""
    shares: dict[str, tuple[int, int]] = {}
    for row in results["operations"]:
        throttled, attempts = shares.get(row["name"], (0, 0))
        shares[row["name"]] = (
            throttled + int(row["throttled_attempts"]),
            attempts + int(row["requests"]) + int(row.get("retries", 0)),
        )
    return shares


def served(results: dict[str, Any]) -> dict[str, Any]:
    """Whether the run served its launch: ``served`` False where DynamoDB refused more than
    `FAILING_SHARE` of a pattern's attempts, None where the machine did not deliver the load
    (whether the design serves it is not known), True otherwise; ``why`` in words."""
    refused = [
        (name, throttled / attempts, throttled, attempts)
        for name, (throttled, attempts) in throttled_shares(results).items()
        if attempts and throttled / attempts > FAILING_SHARE
    ]
    if refused:
        words = ", ".join(
            f"{share:.0%} of {name}'s attempts ({throttled:,} of {attempts:,})"
            for name, share, throttled, attempts in sorted(refused, key=lambda r: -r[1])
        )
        return {"served": False, "why": f"DynamoDB refused {words}"}
    load = results.get("load")
    if load and load.get("delivered") is False:
        return {
            "served": None,
            "why": "the load was not delivered (the machine's doing, not DynamoDB's): "
            "whether the design serves its launch is not known",
        }
    return {"served": True, "why": "no pattern had more than 1% of its attempts throttled"}


def launch_how(patterns: list[dict[str, Any]]) -> str:
    """How the launch demand was made, in words, for its cost section."""
    executions = sum(p["per_s"] for p in patterns)
    model = [p["name"] for p in patterns if p["units_from"] == "model"]
    unknown = [p["name"] for p in patterns if p["units"] is None]
    how = (
        f"the load the run was asked to carry, {executions:,.1f} executions/s at AWS scale, "
        "each priced as if served, retries not counted; units per execution "
        + (
            "from the simulation's model of the design (items at their starting size)"
            if model and len(model) == len(patterns)
            else "as measured per request DynamoDB charged"
            if not model
            else f"from the model ({', '.join(model)}), else as measured"
        )
    )
    if unknown:
        how += f"; not priced: {', '.join(unknown)} (no request of it was charged)"
    return how
