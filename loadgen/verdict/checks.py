"""The gate's checks: pass or fail a run against a thresholds file, for CI.

``loadgen gate`` (`loadgen.verdict.gate`) runs them. Every gate of the thresholds file
(`loadgen.verdict.thresholds`) is checked against each run total, operation row, table or index
its selector matches; each such check is one test case of the JUnit file. Exit codes: 0 every
check passed (skipped ones allowed), 1 a check failed, 2 bad input (a bad thresholds or results
file, one line on stderr).

A rate run (results with a ``load`` section) is always checked for delivery
(`DELIVERY_GATE`): when the achieved load fell below 95% of the offered load in a window after
the ramp, the gate fails whatever the other checks say.

A selector that matches nothing in the results fails its check: a renamed table or access
pattern must not silently turn a gate off. Regression gates are skipped without a baseline,
and for rows the baseline lacks.

The cost gate (``max_monthly_cost_usd``, on the run or per table and index) reads the run's
cost at launch demand (`loadgen.verdict.cost`: what the demand the run was asked to carry
costs as if served, not what its served requests consumed, which a design that throttles
keeps low): the tables as they ran, provisioned where they had throughput and on demand
otherwise, plus storage, a month, at the results' own prices unless ``--prices`` names others.
Its detail gives the measured figure beside it, and says so when the design did not serve its
launch.

Key rates are read at AWS scale (`loadgen.verdict.analysis`): ``max_key_write_units_per_s: 500``
on a run at scale 0.1 fails when a key sustains more than 50 measured units/s, which stands for
500 on DynamoDB, half a partition's 1,000 write units/s.

    outcome = evaluate(load_results("r.json"), load_thresholds("t.yaml"))
    outcome.exit_code
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from fnmatch import fnmatchcase
from typing import Any

from loadgen.errors import ConfigError
from loadgen.pricing import MONTH, Prices, currency_of, format_money, window_of
from loadgen.refusals import NOT_REPORTED
from loadgen.verdict import analysis, reasons
from loadgen.verdict.analysis import Scope
from loadgen.verdict.cost import cost_of
from loadgen.verdict.patterns import pattern_verdicts
from loadgen.verdict.thresholds import Gate, Thresholds

__all__ = [
    "DELIVERY_GATE",
    "FAIL",
    "PASS",
    "SKIP",
    "Check",
    "Outcome",
    "evaluate",
    "format_value",
]

PASS, FAIL, SKIP = "pass", "fail", "skip"


@dataclass(frozen=True)
class Check:
    """One gate checked against one target: the run, an operation row, a table or index."""

    gate: Gate
    target: str
    """What was checked: ``run``, ``counter.increment (UpdateItem)``, ``ph-orders/status``."""
    status: str
    """`PASS`, `FAIL` or `SKIP`."""
    measured: float | None
    detail: str
    """One line: what was measured, on what key, against which limit."""

    @property
    def classname(self) -> str:
        """The JUnit class name: the section and the target."""
        return "run" if self.gate.section == "run" else f"{self.gate.section}.{self.target}"


@dataclass(frozen=True)
class Outcome:
    """Every check of one gate run."""

    checks: tuple[Check, ...]
    results: dict[str, Any]
    thresholds: Thresholds
    baseline: dict[str, Any] | None = None

    @property
    def failed(self) -> list[Check]:
        return [c for c in self.checks if c.status == FAIL]

    @property
    def exit_code(self) -> int:
        """0 when no check failed, 1 otherwise."""
        return 1 if self.failed else 0


def format_value(value: float | None, unit: str) -> str:
    """A figure as the gate prints it, by the gate's unit.

    >>> format_value(0.0512, "ratio"), format_value(712.4, "ms")
    ('5.12%', '712 ms')
    """
    if value is None:
        return "-"
    return {
        "ratio": f"{value:.2%}",
        "ms": f"{value:.0f} ms",
        "per_s": f"{value:.1f}/s",
        "count": f"{value:.0f}",
        "x": f"{value:.2f}x",
        "pct": f"{value:+.1f}%",
        "units_per_s": f"{value:.0f} units/s at AWS scale",
        "usd": f"${value:,.2f} a month",
    }.get(unit, f"{value:g}")


def _ratio(part: float, whole: float) -> float:
    return part / whole if whole else 0.0


# Figures of a run total or an operation row, by gate name (None: not measurable).
_ROW_FIGURES: dict[str, Callable[[dict[str, Any]], float | None]] = {
    "max_failure_ratio": lambda row: _ratio(row["failures"], row["requests"]),
    "max_throttled_ratio": lambda row: _ratio(row["throttled_attempts"], row["requests"]),
    "max_p50_ms": lambda row: row.get("p50_ms"),
    "max_p95_ms": lambda row: row.get("p95_ms"),
    "max_p99_ms": lambda row: row.get("p99_ms"),
    "min_requests_per_s": lambda row: float(row["requests_per_s"]),
    "min_requests": lambda row: float(row["requests"]),
}


def _row_regression(name: str, row: dict[str, Any], base: dict[str, Any]) -> float | None:
    if name.endswith("_regression_pct"):
        field = name.removeprefix("max_").removesuffix("_regression_pct") + "_ms"
        new, old = row.get(field), base.get(field)
        return None if new is None or not old else (new - old) / old * 100.0
    if name == "max_requests_per_s_drop_pct":
        old = base["requests_per_s"]
        return (old - row["requests_per_s"]) / old * 100.0 if old else None
    source = _ROW_FIGURES[name.removesuffix("_increase")]
    new_ratio, old_ratio = source(row), source(base)
    return None if new_ratio is None or old_ratio is None else new_ratio - old_ratio


def _verdict(gate: Gate, target: str, measured: float | None, what: str, note: str = "") -> Check:
    kind = gate.kind
    if measured is None:
        return Check(gate, target, SKIP, None, note or "nothing to measure")
    failed = measured < gate.limit if kind.minimum else measured > gate.limit
    sign = ">=" if kind.minimum else "<="
    detail = (
        f"{what}{format_value(measured, kind.unit)} "
        f"(limit {sign} {format_value(gate.limit, kind.unit).lstrip('+')})"
    )
    return Check(gate, target, FAIL if failed else PASS, measured, detail + note)


def _row_check(gate: Gate, target: str, row: dict[str, Any], base: dict[str, Any] | None) -> Check:
    if gate.of:
        return _class_check(gate, target, row)
    if gate.kind.baseline:
        if base is None:
            return _verdict(gate, target, None, "", "no baseline row to compare with")
        value = _row_regression(gate.name, row, base)
        return _verdict(gate, target, value, "change from the baseline: ", "")
    return _verdict(gate, target, _ROW_FIGURES[gate.name](row), _row_words(gate.name, row))


def _class_check(gate: Gate, target: str, row: dict[str, Any]) -> Check:
    """Throttles of one class (the model's cause, or DynamoDB's reason) per call: throttled
    attempts and batch items left unprocessed, as the target named them."""
    of = gate.kind.classes
    if not reasons.kept(row):
        return _verdict(gate, target, None, "", "the results file keeps no throttle reasons")
    counts = reasons.by_class(row, of)
    n = counts.get(gate.of, 0)
    what = f"{n} throttles ({of} {gate.of}) in {row['requests']} calls: "
    # Throttles the target named no class for may be of any class: say so beside the figure.
    unsaid = counts.get(NOT_REPORTED, 0) if gate.of != NOT_REPORTED else 0
    note = f"; {unsaid} more whose {of} was not reported" if unsaid else ""
    return _verdict(gate, target, _ratio(n, row["requests"]), what, note)


def _row_words(name: str, row: dict[str, Any]) -> str:
    if name == "max_failure_ratio":
        return f"{row['failures']} of {row['requests']} calls failed: "
    if name == "max_throttled_ratio":
        return f"{row['throttled_attempts']} throttled attempts in {row['requests']} calls: "
    if name.endswith("_ms"):
        return f"{name.removeprefix('max_').removesuffix('_ms')}: "
    return "requests/s: " if name == "min_requests_per_s" else "calls: "


def _table_check(
    gate: Gate,
    scope: Scope,
    results: dict[str, Any],
    baseline: dict[str, Any] | None,
    thresholds: Thresholds,
) -> Check:
    name, settings = gate.name, thresholds.settings
    target = scope.name
    if gate.kind.baseline:
        if baseline is None or scope not in analysis.scopes(baseline):
            return _verdict(gate, target, None, "", f"{target} is not in the baseline")
        if name == "max_throttled_ratio_increase":
            new = analysis.throttled_ratio(results, scope)
            old = analysis.throttled_ratio(baseline, scope)
            return _verdict(gate, target, new - old, "change from the baseline: ")
        hot, base_hot = analysis.hot_key(results, scope), analysis.hot_key(baseline, scope)
        new_share = hot.share if hot else 0.0
        old_share = base_hot.share if base_hot else 0.0
        return _verdict(gate, target, new_share - old_share, "hottest key's share changed by ")
    if name == "max_throttled_ratio":
        ratio = analysis.throttled_ratio(results, scope)
        return _verdict(gate, target, ratio, "throttled attempts per key touch: ")
    if name == "max_hot_key_share":
        hot = analysis.hot_key(results, scope)
        if hot is None:
            return _verdict(gate, target, 0.0, "no key touched: ")
        return _verdict(gate, target, hot.share, f"{hot.key} takes ")
    if name in ("max_partition_skew", "max_partition_gini"):
        loads = analysis.partition_loads(results, scope, settings.partitions)
        if name == "max_partition_gini":
            return _verdict(
                gate, target, analysis.gini(loads), f"Gini over {settings.partitions} partitions: "
            )
        skew = analysis.partition_skew(results, scope, settings.partitions)
        return _verdict(gate, target, skew, f"busiest of {settings.partitions} partitions: ")
    access = "write" if name == "max_key_write_units_per_s" else "read"
    rate = analysis.key_rate(
        results, scope, access, window_s=settings.sustain_s, scale=settings.scale
    )
    if rate is None:
        return _verdict(gate, target, 0.0, f"no {access}s: ")
    scale = analysis.scale_of(results, settings.scale)
    basis = "" if rate.basis == "units" else ", one unit counted per index write"
    note = (
        f"; {rate.measured_per_s:.1f} measured at scale {scale:g}, busiest {settings.sustain_s:g} s"
        f"{basis}"
    )
    return _verdict(gate, target, rate.units_per_s, f"{rate.key} ({access}s) sustains ", note)


def _operation_targets(
    results: dict[str, Any], selector: str
) -> Iterator[tuple[str, dict[str, Any]]]:
    for row in results["operations"]:
        if fnmatchcase(row["name"], selector) or fnmatchcase(row["operation"], selector):
            yield f"{row['name']} ({row['operation']})", row


def _baseline_row(baseline: dict[str, Any] | None, row: dict[str, Any]) -> dict[str, Any] | None:
    if baseline is None:
        return None
    for base in baseline["operations"]:
        if (base["operation"], base["name"]) == (row["operation"], row["name"]):
            return dict(base)
    return None


def _nothing_matched(gate: Gate, have: list[str]) -> Check:
    noun = "operation or access pattern" if gate.section == "operations" else "table or index"
    listed = ", ".join(have) or "none"
    return Check(
        gate, gate.selector, FAIL, None, f"{gate.selector!r} matches no {noun} (have: {listed})"
    )


DELIVERY_GATE = Gate("run", "", "min_load_delivered_ratio", 0.95)
"""Checked on every rate run: a verdict on load that never arrived is not a pass."""


def _delivery_check(gate: Gate, results: dict[str, Any]) -> Check:
    load = results.get("load")
    if not load:
        why = "a closed-model run (--users) offers no set load"
        if results.get("simulation"):
            why = "a simulation delivers the load it simulates: no arrivals to fall short"
        return _verdict(gate, "run", None, "", why)
    worst = load.get("worst_window")
    if worst is None:
        return Check(gate, "run", FAIL, None, "no whole second of load to measure")
    # Results files before first answers were counted have the completions instead.
    got, counted = next((worst[k], k) for k in ("answered", "achieved") if k in worst)
    what = f"worst {worst['seconds']} s window {counted} {got} of {worst['offered']} arrivals: "
    check = _verdict(gate, "run", float(worst["ratio"]), what)
    if check.status == FAIL and load.get("bottleneck"):
        check = Check(
            gate, "run", FAIL, check.measured, f"{check.detail}; bottleneck: {load['bottleneck']}"
        )
    return check


def _patterns_check(gate: Gate, results: dict[str, Any]) -> Check:
    """The share of a design run's access patterns whose verdict passed, naming the others."""
    if not results.get("design"):
        return _verdict(gate, "run", None, "", "not a design run: no access patterns to judge")
    verdicts = pattern_verdicts(results)
    if not verdicts:
        return Check(gate, "run", FAIL, None, "the design lists no access patterns")
    # What the run could not judge (the load not delivered, reads of missing items, a
    # latency on a local engine) neither passes nor fails: it is left out, and named.
    judged = [v for v in verdicts if v.judged]
    unjudged = "; ".join(f"{v.id}: {v.reason}" for v in verdicts if not v.judged)
    if not judged:
        return _verdict(gate, "run", None, "", f"no pattern could be judged: {unjudged}")
    passed = sum(v.passed for v in judged)
    check = _verdict(
        gate, "run", passed / len(judged), f"{passed} of {len(judged)} judged patterns passed: "
    )
    failing = "; ".join(f"{v.id}: {v.reason}" for v in judged if not v.passed)
    detail = check.detail + (f"; {failing}" if failing else "")
    detail += f"; not judged: {unjudged}" if unjudged else ""
    return Check(gate, "run", check.status, check.measured, detail)


def _cost_check(gate: Gate, target: str, section: dict[str, Any]) -> Check:
    """The run's (``target`` run) or one table's or index's cost a month at launch demand,
    as run, beside the measured one; a design that did not serve its launch says so (its
    measured figure is lower because DynamoDB refused its load)."""
    launch = section.get("launch") or section  # results written before launch demand
    basis = "at launch demand" if section.get("launch") else "measured"
    status = section.get("served") or {}
    after = f"; {section['stamp']}; {window_of(section)['words']}"
    if status.get("served") is False:
        after += f"; did NOT serve its launch: {status['why']}"
    if target == "run":
        measured = section["total"]["monthly_usd"]
        after = f"; measured {format_money(measured, currency_of(section))}{after}"
        return _verdict(
            gate, "run", launch["total"]["monthly_usd"], f"the tables as run, {basis}: ", after
        )
    table = launch["tables"].get(target)
    if table is not None:
        how = "provisioned as run" if table["provisioned_as_run"] else "on demand"
        stored = "" if table["storage_usd"] is None else " plus storage"
        return _verdict(gate, target, table["monthly_usd"], f"{how}{stored}, {basis}: ", after)
    for row in launch["scopes"]:
        if row["scope"] == target:
            as_run = row["provisioned_as_run"]
            usd = (as_run or {}).get("usd", row["on_demand_usd"])["standard"]
            how = "provisioned as run" if as_run else "on demand"
            return _verdict(gate, target, usd, f"{how}, {basis}: ", after)
    return _verdict(gate, target, 0.0, "no units asked: ", after)


COST_GATE = "max_monthly_cost_usd"


def refuse_other_currency(thresholds: Thresholds, currency: str, region: str) -> None:
    """The cost gate's limit is in US dollars: a region priced in another currency is a
    ConfigError naming it, never a yuan figure held to a dollar limit (no rate is applied)."""
    if currency != "USD" and any(g.name == COST_GATE for g in thresholds.gates):
        raise ConfigError(
            f"{COST_GATE} is a limit in USD, but {region}'s prices are in {currency} and no "
            "exchange rate is applied: gate the cost at prices in USD (--prices-region "
            "us-east-1, or a --prices file) or leave the cost gate out"
        )


def evaluate(
    results: dict[str, Any],
    thresholds: Thresholds,
    baseline: dict[str, Any] | None = None,
    prices: Prices | None = None,
) -> Outcome:
    """Check every gate against every target it selects; a rate run's delivery always.

    ``prices`` reprices the run's cost for the cost gate (default: the results' own cost
    section, or the package's prices for results without one).
    """
    checks: list[Check] = []
    scopes = analysis.scopes(results)
    gates = thresholds.gates
    if results.get("load") and not any(g.name == DELIVERY_GATE.name for g in gates):
        gates = (DELIVERY_GATE, *gates)
    for gate in gates:
        if gate.name == DELIVERY_GATE.name:
            checks.append(_delivery_check(gate, results))
            continue
        if gate.name == "min_patterns_passed_ratio":
            checks.append(_patterns_check(gate, results))
            continue
        if gate.name == COST_GATE:
            # The gate's limit is a month's: a section of another window is worked out again.
            section = cost_of(results, prices, scale=thresholds.settings.scale, window=MONTH)
            refuse_other_currency(thresholds, currency_of(section), section["prices"]["region"])
            if gate.section == "run":
                checks.append(_cost_check(gate, "run", section))
                continue
            selected = [s for s in scopes if fnmatchcase(s.name, gate.selector)]
            for scope in selected:
                checks.append(_cost_check(gate, scope.name, section))
            if not selected:
                checks.append(_nothing_matched(gate, [s.name for s in scopes]))
            continue
        if gate.kind.baseline and baseline is None:
            checks.append(Check(gate, gate.selector or "run", SKIP, None, "no --baseline given"))
            continue
        if gate.section == "run":
            base = baseline["totals"] if baseline else None
            checks.append(_row_check(gate, "run", results["totals"], base))
        elif gate.section == "operations":
            matched = list(_operation_targets(results, gate.selector))
            for target, row in matched:
                checks.append(_row_check(gate, target, row, _baseline_row(baseline, row)))
            if not matched:
                have = sorted({row["name"] for row in results["operations"]})
                checks.append(_nothing_matched(gate, have))
        else:
            selected = [s for s in scopes if fnmatchcase(s.name, gate.selector)]
            for scope in selected:
                checks.append(_table_check(gate, scope, results, baseline, thresholds))
            if not selected:
                checks.append(_nothing_matched(gate, [s.name for s in scopes]))
    return Outcome(tuple(checks), results, thresholds, baseline)
