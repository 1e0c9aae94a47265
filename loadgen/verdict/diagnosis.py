"""Why the run's requests were refused, named from what the target said, with the remedy.

The reason decides the finding (`loadgen.verdict.throttles`): each group of throttles (a table
or index, a side, a cause) is one finding, and the heat only says *where*
(`loadgen.verdict.hotspots`):

- **a partition's ceiling** (a hot key, a hot range, a time-ordered key): shard, sized on the
  launch's demand on the key;
- **an on-demand table's or index's capacity** (it serves 4,000 write and 12,000 read units/s
  at first, or its warm throughput, and twice its previous peak later): raise its
  ``WarmThroughput`` to the launch's demand, with the figure; sharding keys does not help;
- **provisioned capacity**: the capacity the launch needs; **the per-table quota** and **the
  on-demand maximum**: the limit, and what to raise it to;
- an index's write refusal throttles the table's writes (back-pressure): the index is named;
- throttles with no reason given (an engine's injected faults): counted, never heat.

Refusals that are not throttles are their own findings: requests DynamoDB refused before any
work (a ValidationException: they cost nothing and put no load on a key), conditions that
failed, transactions cancelled by a conflict. A transaction pattern that puts many
transactions a second on one item is warned of (DynamoDB cancels concurrent transactions on
an item; DynamoDB Local never does). Thresholds here decide what is worth naming, not what
fails CI (that is `loadgen.verdict.checks`).

    for finding in diagnose(load_results("results.json")):
        print(finding.title, finding.remedy)
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from loadgen.model.partitions import (
    ON_DEMAND_TABLE_QUOTA_UNITS,
    ON_DEMAND_WARM_READ_UNITS,
    ON_DEMAND_WARM_WRITE_UNITS,
    falls_behind,
)
from loadgen.model.sizing import UTILISATION, capacity_figure, provisioned_figure
from loadgen.refusals import CAUSES, CONTENTION_RATE, NOT_REPORTED
from loadgen.verdict import analysis
from loadgen.verdict.analysis import Scope
from loadgen.verdict.findings import GUIDES, Finding
from loadgen.verdict.hotspots import key_finding, moving_hot_spot
from loadgen.verdict.throttles import (
    Demand,
    ThrottleGroup,
    checked,
    demand,
    groups,
    row_scope,
)

__all__ = ["GUIDES", "Finding", "diagnose"]


_THROTTLE_CODES = frozenset(
    {"ProvisionedThroughputExceededException", "ThrottlingException", "RequestLimitExceeded"}
)
_CONDITION_CODES = frozenset({"ConditionalCheckFailedException"})
_WORKED = _THROTTLE_CODES | _CONDITION_CODES | {"TransactionCanceledException"}


def _what(scope: Scope) -> str:
    return f"index {scope.index} of {scope.table}" if scope.index else f"table {scope.table}"


def _table_row(results: dict[str, Any], scope: Scope) -> dict[str, Any]:
    for row in results.get("tables") or ():
        if row.get("table") == scope.table and row.get("index") == scope.index:
            return dict(row)
    return {}


def _provision(want: Demand | None) -> str:
    """Provisioned units that carry the launch's demand at auto scaling's target utilisation."""
    return f"{provisioned_figure(want.units_per_s):,}" if want is not None else "the peak's"


def _figures(want: Demand | None, provisioned: bool = False) -> tuple[float | None, int | None]:
    """A capacity finding's `Finding.asked` and `Finding.figure`: the launch's demand, and
    the warm throughput or maximum it needs (the provisioned units, for ``provisioned``)."""
    if want is None:
        return None, None
    units = want.units_per_s
    return units, provisioned_figure(units) if provisioned else capacity_figure(units)


def _asks(want: Demand | None, side: str) -> str:
    if want is None:
        return ""
    return f" The launch asks {want.units_per_s:,.0f} {side} units/s of it ({want.basis})."


def _back_pressure(group: ThrottleGroup) -> str:
    if group.scope.index is None or group.side != "write":
        return ""
    names = ", ".join(sorted(group.patterns))
    return (
        f" The index refused the table's writes (back-pressure): the writes of {names} to "
        f"{group.scope.table} were throttled for the index, not for the table."
    )


def _buffer(
    results: dict[str, Any],
    scope: Scope,
    reasons: list[str],
    want: Demand | None,
    attempts: float,
    patterns: Iterable[str],
    said: str,
) -> Finding:
    """A GSI's write buffer: full (the throttles say so) or filling within a launch's hour
    (``results["gsi_buffers"]``); what keeps the index up with its table's writes."""
    figure = capacity_figure(want.units_per_s) if want is not None else 0
    need = f"{figure:,}" if figure else "the launch's peak"
    explained = (
        f"{said} DynamoDB takes an index's writes into a buffer and applies them at the "
        f"index's own capacity; only an index that stays behind for minutes fills it, and then "
        f"every write to {scope.table} is refused until it drains, whether or not its item "
        f"goes to the index.{_asks(want, 'write')}"
    )
    if any("Provisioned" in reason for reason in reasons):
        remedy = (
            f"Provision the index's write capacity at its share of the table's writes: "
            f"{_provision(want)} write capacity units, or auto scaling with at least that."
        )
        guide = GUIDES["gsi-throttling"]
    else:
        # KeyRange: one partition of the index behind, or an on-demand index short of its
        # capacity; DynamoDB's reason is the same for both.
        remedy = (
            f"Where one key of {_what(scope)} takes over 1,000 write units/s, write-shard the "
            f"index's partition key (a suffix over N values, reads fanned out over them): "
            f"capacity does not help one key. Otherwise raise the index's WarmThroughput "
            f"WriteUnitsPerSecond to {need} before the launch."
        )
        guide = GUIDES["gsi-sharding"]
    provisioned = any("Provisioned" in reason for reason in reasons)
    return Finding(
        "gsi-buffer",
        scope.name,
        (),
        f"The write buffer of {_what(scope)}: it falls behind its table's writes",
        explained,
        remedy,
        guide,
        attempts,
        "buffer",
        tuple(patterns),
        *_figures(want, provisioned),
    )


def _behind(results: dict[str, Any], throttled: set[tuple[Scope, str]]) -> list[Finding]:
    """The GSIs whose buffer fills within a launch's hour at the run's rate, not yet full."""
    found = []
    for buffer in results.get("gsi_buffers") or ():
        if not falls_behind(buffer.get("full_in_s")):
            continue
        scope = Scope(buffer["table"], buffer["index"])
        if (scope, "write") in throttled:
            continue
        patterns = [v["id"] for v in results.get("verdicts") or () if v.get("behind") == scope.name]
        reason = buffer.get("reason") or NOT_REPORTED
        said = (
            f"Nothing refused yet, but the index's write buffer holds "
            f"{float(buffer.get('buffered_write_units') or 0):,.0f} of "
            f"{float(buffer.get('buffer_write_units') or 0):,.0f} units and fills in about "
            f"{float(buffer['full_in_s']) / 60:,.0f} min at this run's rate ({reason} once full)."
        )
        want = demand(results, scope, "write")
        found.append(_buffer(results, scope, [reason], want, 0.0, patterns, said))
    return found


def _capacity(results: dict[str, Any], group: ThrottleGroup, want: Demand | None) -> Finding:
    """The refusal of a table's or index's own capacity, quota or maximum: not a key's."""
    scope, side, cause = group.scope, group.side, group.cause
    unit = side.capitalize()
    table = _table_row(results, scope)
    figure = capacity_figure(want.units_per_s) if want is not None else 0
    need = f"{figure:,}" if figure else "the launch's peak"
    asked = f"{want.units_per_s:,.0f}" if want is not None else "the launch's peak"
    said = (
        f"{group.attempts:,.0f} {side} attempts throttled on {scope.name} "
        f"({', '.join(sorted(group.reasons))}); "
        + (group.inferred + ": " if group.inferred else "the partition model's cause: ")
        + f"{CAUSES[cause]} of {_what(scope)}, not a key."
    )
    if cause == "capacity":
        warm = table.get(f"warm_{side}_units")
        default = ON_DEMAND_WARM_READ_UNITS if side == "read" else ON_DEMAND_WARM_WRITE_UNITS
        serves = (
            f"{float(warm):,.0f} {side} units/s at once (its WarmThroughput)"
            if warm
            else f"{default:,.0f} {side} units/s at once (a new on-demand table's warm throughput)"
        )
        at_once = float(warm) if warm else default
        evidence = (
            f"{said} It serves {serves}, and twice its previous peak only once that peak is "
            f"30 minutes old.{_asks(want, side)}{_back_pressure(group)}"
        )
        if want is not None and want.units_per_s <= at_once:
            # The mean demand fits: the refused attempts came in seconds that bunched above it.
            return Finding(
                "table-capacity",
                scope.name,
                (),
                f"The on-demand capacity of {_what(scope)}: seconds of {side}s above it",
                f"{evidence} The launch's demand fits within it; these attempts met seconds "
                "whose arrivals bunched above it.",
                f"Nothing is needed for the launch's mean demand; for headroom against its "
                f"busiest seconds, raise WarmThroughput {unit}UnitsPerSecond above "
                f"{at_once:,.0f}.",
                GUIDES["warm-throughput"],
                group.attempts,
                cause,
                tuple(group.patterns),
                want.units_per_s,  # nothing to set: the demand fits
            )
        return Finding(
            "table-capacity",
            scope.name,
            (),
            f"The on-demand capacity of {_what(scope)}: {side}s past what it serves yet",
            evidence,
            f"Raise the {'index' if scope.index else 'table'}'s warm throughput before the "
            f"launch: WarmThroughput {unit}UnitsPerSecond {need} (UpdateTable; it only grows), "
            f"or provision {_provision(want)} {side} capacity units "
            f"for the launch. Sharding keys does not help: every partition has room, the "
            f"{'index' if scope.index else 'table'} does not.",
            GUIDES["warm-throughput"],
            group.attempts,
            cause,
            tuple(group.patterns),
            *_figures(want, cause == "provisioned"),
        )
    if cause == "buffer":
        return _buffer(
            results, scope, sorted(group.reasons), want, group.attempts, group.patterns, said
        )
    if cause == "provisioned":
        have = table.get(f"{side}_capacity")
        has = f" of {float(have):,.0f}" if have else ""
        return Finding(
            "provisioned-capacity",
            scope.name,
            (),
            f"The provisioned {side} capacity{has} of {_what(scope)}",
            f"{said} Burst holds at most 300 s of unused capacity.{_asks(want, side)}"
            f"{_back_pressure(group)}",
            f"Provision {_provision(want)} {side} capacity units "
            f"({asked} at the {UTILISATION:.0%} utilisation auto scaling targets), or turn on "
            f"auto scaling with a maximum of at least that, or switch to on-demand.",
            GUIDES["provisioned"],
            group.attempts,
            cause,
            tuple(group.patterns),
            *_figures(want, cause == "provisioned"),
        )
    if cause == "account":
        return Finding(
            "account-quota",
            scope.name,
            (),
            f"The per-table on-demand quota of {_what(scope)}",
            f"{said} The default quota is {ON_DEMAND_TABLE_QUOTA_UNITS:,.0f} {side} units/s "
            f"a table.{_asks(want, side)}{_back_pressure(group)}",
            f"Ask for a higher table-level {side} throughput quota (Service Quotas) of at "
            f"least {need} units/s before the launch.",
            GUIDES["quotas"],
            group.attempts,
            cause,
            tuple(group.patterns),
            *_figures(want, cause == "provisioned"),
        )
    cap = table.get(f"max_{side}_units")
    return Finding(
        "on-demand-maximum",
        scope.name,
        (),
        f"The on-demand maximum of {_what(scope)}"
        + (f": {float(cap):,.0f} {side} units/s" if cap else ""),
        f"{said}{_asks(want, side)}{_back_pressure(group)}",
        f"Raise OnDemandThroughput.Max{unit}RequestUnits to at least {need}, or remove it.",
        GUIDES["on-demand-maximum"],
        group.attempts,
        cause,
        tuple(group.patterns),
        *_figures(want),
    )


def _unreported(group: ThrottleGroup) -> Finding:
    names = ", ".join(sorted(group.patterns))
    return Finding(
        "engine-refusals",
        group.scope.name,
        (),
        f"Throttles the target gave no reason for, on {group.scope.name}",
        f"{group.attempts:,.0f} {group.side} attempts of {names} were refused as throttles "
        f"with no ThrottlingReasons: reason not reported. No partition model judged them, "
        f"so they say nothing of a key or a capacity (an engine's injected faults, such as "
        f"LocalStack's DYNAMODB_ERROR_PROBABILITY, answer these at random).",
        "None from this run: run against the partition model (the embedded target, or "
        "loadgen emulator in front of the engine) to see which limit a launch meets.",
        GUIDES["throttling"],
        group.attempts * 0.5,
        NOT_REPORTED,
        tuple(group.patterns),
    )


def _refused(results: dict[str, Any]) -> list[Finding]:
    """Refusals that are not throttles: before any work, conditions, conflicts."""
    found = []
    for row in results["operations"]:
        messages = row.get("error_messages") or [
            {"code": c, "message": "", "count": n} for c, n in (row.get("errors") or {}).items()
        ]
        rejected = [m for m in messages if m["code"] not in _WORKED]
        if rejected:
            count = sum(m["count"] for m in rejected)
            said = "; ".join(
                f"{m['code']} x{m['count']:,}: {m['message'] or NOT_REPORTED}" for m in rejected
            )
            found.append(
                Finding(
                    "rejected",
                    "",
                    (),
                    f"Requests refused before any work: {row['name']}",
                    f"{count:,} of {row['requests']:,} calls of {row['name']} were refused: "
                    f"{said}. DynamoDB refuses these before reading or writing anything: they "
                    "cost nothing and put no load on any key, so this run says nothing of "
                    "this pattern's capacity.",
                    "Fix the request as the message says, then run again.",
                    GUIDES["errors"],
                    float(count) * 2,
                    "rejected",
                    (row["name"],),
                )
            )
        cancelled = row.get("cancellations") or {}
        failed = sum(m["count"] for m in messages if m["code"] in _CONDITION_CODES)
        failed += cancelled.get("ConditionalCheckFailed", 0)
        said = "; ".join(
            f"{m['code']}: {m['message']}"
            for m in messages
            if m["message"]
            and (
                m["code"] in _CONDITION_CODES
                # A transaction a throttle cancelled is a throttle, not a failed condition.
                or (m["code"].startswith("Trans") and "ConditionalCheckFailed" in m["message"])
            )
        )
        if failed:
            found.append(
                Finding(
                    "condition-failed",
                    "",
                    (),
                    f"Conditions that failed: {row['name']}",
                    f"{failed:,} of {row['requests']:,} calls of {row['name']} failed their "
                    f"condition ({said or 'ConditionalCheckFailed'}): the item's state refused "
                    "the write, not its partition. DynamoDB charges a failed condition's "
                    "write units.",
                    "Not a throttle. If the items were missing, the starting data did not hold "
                    "what the condition reads; if the condition is the design's (stock sold "
                    "out), count these as the answer it gives.",
                    GUIDES["conditions"],
                    float(failed),
                    "condition",
                    (row["name"],),
                )
            )
        conflicts = cancelled.get("TransactionConflict", 0)
        conflicts += (row.get("errors") or {}).get("TransactionConflictException", 0)
        if conflicts:
            found.append(
                Finding(
                    "transaction-conflict",
                    "",
                    (),
                    f"Transactions that conflicted: {row['name']}",
                    f"{conflicts:,} calls of {row['name']} were cancelled because another "
                    "transaction or write held one of their items (TransactionConflict).",
                    "Spread the items transactions write (shard the contended item), or retry "
                    "with backoff; the SDK does not retry a cancelled transaction.",
                    GUIDES["transactions"],
                    float(conflicts),
                    "conflict",
                    (row["name"],),
                )
            )
    return found


def _contention(results: dict[str, Any]) -> list[Finding]:
    """Transaction patterns that put many transactions a second on one item: as check
    figured them where a design run keeps its answer, else from the run's hottest keys."""
    answer = checked(results)
    if answer is not None:
        return [
            _contended(
                found["pattern"],
                found["table"],
                found["key"],
                float(found["transactions_per_s"]),
                f"{found['transactions_per_s'] / rate:.0%} of its calls, as check figures it"
                if (rate := _asked_rate(results, found["pattern"]))
                else "as check figures it",
                f" ({found['sort']})" if found.get("sort") else "",
            )
            for found in answer.get("contention") or ()
            if float(found["transactions_per_s"]) >= CONTENTION_RATE
        ]
    found = []
    for row in results["operations"]:
        if not row["operation"].startswith("Transact"):
            continue
        hot = row.get("hot_key") or {}
        if row_scope(row) is None or not hot.get("key"):
            continue
        if hot.get("index"):
            continue  # an index entry is not an item a transaction holds
        seconds = float(results.get("duration_s") or 0)
        made = float(row["requests"]) / seconds / analysis.scale_of(results) if seconds else 0.0
        rate = _asked_rate(results, row["name"]) or made
        # The sketch's count may overstate by its error: the warning takes the least share.
        touches = float(hot.get("touches") or 0.0)
        least = (touches - float(hot.get("error") or 0.0)) / touches if touches else 1.0
        on_item = rate * float(hot.get("share") or 0.0) * max(0.0, least)
        if on_item < CONTENTION_RATE:
            continue
        share = f"{float(hot['share']):.0%} of its calls"
        found.append(_contended(row["name"], hot["table"], hot["key"], on_item, share))
    return found


def _contended(
    pattern: str, table: str, key: str, per_s: float, share: str, sort: str = ""
) -> Finding:
    return Finding(
        "transaction-contention",
        table,
        (key,),
        f"Transactions contend for one item: {key}{sort} ({pattern})",
        f"{pattern} puts {per_s:,.0f} transactions/s on {key}{sort} at launch ({share}). "
        "DynamoDB cancels a transaction that meets another in flight on the same item "
        "(TransactionConflict); DynamoDB Local and the emulator never do, so this run could "
        "not show it.",
        "Keep contended items out of transactions (update them on their own, or shard "
        f"them), or expect cancellations above {CONTENTION_RATE:g} a second on one item.",
        GUIDES["transactions"],
        0.5,
        "",
        (pattern,),
        per_s,
    )


def _asked_rate(results: dict[str, Any], pattern: str) -> float | None:
    for asked in (results.get("design") or {}).get("patterns") or ():
        if asked["id"] == pattern and asked.get("rate"):
            return float(asked["rate"])
    return None


def diagnose(
    results: dict[str, Any],
    *,
    partitions: int = 16,
    window_s: float = 5.0,
    scale: float | None = None,
) -> list[Finding]:
    """Findings of the run, most refused first; ``even`` when nothing was refused or near."""
    findings = _refused(results)
    throttled: set[tuple[Scope, str]] = set()
    for group in groups(results):
        throttled.add((group.scope, group.side))
        want = demand(results, group.scope, group.side)
        if group.cause == "partition":
            finding = key_finding(
                results, group.scope, group.side, group=group, want=want,
                window_s=window_s, scale=scale, partitions=partitions,
            )  # fmt: skip
            if finding is not None:
                findings.append(finding)
        elif group.cause in CAUSES:
            findings.append(_capacity(results, group, want))
        else:
            findings.append(_unreported(group))
    for scope in analysis.scopes(results):
        if any(s == scope for s, _ in throttled):
            continue
        moving = moving_hot_spot(results, scope, 0.0)
        if moving is not None:
            findings.append(moving)
            continue
        for side in ("write", "read"):
            risk = key_finding(
                results, scope, side, group=None, want=demand(results, scope, side),
                window_s=window_s, scale=scale, partitions=partitions,
            )  # fmt: skip
            if risk is not None:
                findings.append(risk)
                break
    findings += _behind(results, throttled)
    findings += _contention(results)
    findings.sort(key=lambda f: -f.severity)
    if not findings:
        findings.append(
            Finding(
                "even",
                "",
                (),
                "No hot spot",
                "No request was throttled or refused, and no key sustained half a partition's "
                "ceiling at AWS scale.",
                "Nothing to change for this load; run a larger one to find the next limit.",
                GUIDES["uniform-load"],
            )
        )
    return findings
