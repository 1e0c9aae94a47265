"""A verdict per access pattern of a design run: was each pattern served as the design asks?

A run of a design file (``loadgen run DESIGN_FILE``) writes its patterns in the results file,
``results["design"]["patterns"]``: each with its id (the operation rows' ``name``), operation,
table and index, the rate asked at launch (operations/s at AWS scale) and, optionally, a
latency need (``{"percentile": 99.0, "ms": 10.0}``). Per pattern this module reads:

- the rate asked and the rate delivered, at AWS scale (an open-model run: achieved over
  offered times the rate asked; a closed-model run: requests/s over the run's scale);
- the throttled share: throttled attempts over attempts (the SDK's retries included);
- p50 and p99, and the percentile the latency need names, against the need;
- the hottest partition key the pattern touched and its share (``hot_key`` of its row);

and says PASS or FAIL with the reason in words: a throttle by what refused it (DynamoDB's
reason and the partition model's cause, `loadgen.verdict.throttles`), the key it fell on
where the cause is a partition's ceiling, an error with the target's message. What the run
could not judge is ``NOT JUDGED``, never a PASS or a FAIL: a pattern whose load the machine
did not deliver (and that throttled nothing; its reason says what became of its arrivals and
why, `loadgen.verdict.delivery`), whose reads mostly found no item or whose
conditions mostly failed (the starting data did not hold what it reads), or whose only need
is a latency a local engine cannot give. A run that started on an empty table
(``design.starting_data.empty``) never passes silently: what would pass is ``EMPTY``.

    for line in format_pattern_verdicts(pattern_verdicts(load_results("results.json"))):
        print(line)
"""

from __future__ import annotations

import html
import math
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace
from typing import Any

from loadgen.model.partitions import falls_behind
from loadgen.refusals import CAUSES, NOT_REPORTED
from loadgen.verdict.delivery import fell_behind, shortfall_words
from loadgen.verdict.throttles import cancelled_by_throttles, checked_patterns

__all__ = [
    "EMPTY",
    "FAIL",
    "MAX_FAILED_SHARE",
    "MAX_THROTTLED_SHARE",
    "MIN_ARRIVALS",
    "MIN_DELIVERED_SHARE",
    "MIN_FOUND_SHARE",
    "NOT_JUDGED",
    "PASS",
    "PatternVerdict",
    "format_pattern_verdicts",
    "pattern_verdicts",
    "pattern_verdicts_html",
]

PASS, FAIL, EMPTY, NOT_JUDGED = "PASS", "FAIL", "EMPTY", "NOT JUDGED"

MAX_THROTTLED_SHARE = 0.01
"""Throttled attempts over attempts above which a pattern fails. The SDK retries a throttle,
so a few throttles cost latency, not errors; but 1 in 100 attempts throttled means the key
or index runs at its ceiling at this rate, and any growth will show as failures."""
MAX_FAILED_SHARE = 0.01
"""Calls that finally failed (after the SDK's retries), over calls, above which a pattern
fails: an application sees these as errors."""
MIN_DELIVERED_SHARE = 0.95
"""The rate delivered over the rate asked below which a pattern fails: a pattern that was
not offered its load was not tested at it (the same 95% the open model's delivery test
asks of every window). The other figures still show; the cause is in the run's load lines."""

MIN_FOUND_SHARE = 0.5
"""Reads that found an item (or conditional writes whose condition held), over those made,
below which a pattern is not judged: a read of nothing costs and heats what an empty
partition does, not what the launch's data will."""

BUNCHING = 3.0
"""A scaled run's pattern throttled at most this many times the share the model expects of a
run at its scale, where the model expects it to pass at AWS scale, is not judged on them (a
model choice: the model's own draws of a run's seconds at a small scale)."""

MIN_ARRIVALS = 20
"""Arrivals a pattern must have been offered for its delivered share to be judged: at 9 of 10
arrivals, 90% says nothing of the load."""

_READS = frozenset({"GetItem", "Query", "Scan", "BatchGetItem", "TransactGetItems"})
_WRITES = frozenset({"PutItem", "UpdateItem", "DeleteItem", "BatchWriteItem", "TransactWriteItems"})
# The need's percentile, the row field that answers it, and how it is named: a percentile
# the results do not hold is read at the next one up, which can only overstate the latency.
_PERCENTILE_FIELDS = ((50.0, "p50_ms", "p50"), (95.0, "p95_ms", "p95"), (99.0, "p99_ms", "p99"))


@dataclass(frozen=True)
class PatternVerdict:
    """One access pattern's figures and verdict.

    verdict = pattern_verdicts(results)[0]
    verdict.status   # "FAIL"
    verdict.reason   # "FAIL: 38% of attempts throttled on STATUS#online (index GSI1), reads"
    """

    id: str
    description: str
    operation: str
    table: str
    index: str | None
    rate_asked: float
    """Operations/s at AWS scale the design asks for."""
    rate_delivered: float | None
    """Operations/s at AWS scale the run delivered; None when it cannot be told."""
    requests: int
    attempts: int
    throttled_attempts: int
    failures: int
    p50_ms: float | None
    p99_ms: float | None
    need_percentile: float | None
    """The percentile of the latency need (99.0 for p99); None without a need."""
    need_ms: float | None
    measured_ms: float | None
    """The latency at the need's percentile (or the next one the results hold)."""
    measured_as: str | None
    """Which figure ``measured_ms`` is: ``p99``, ``max``..."""
    hot_key: str | None
    hot_key_share: float | None
    hot_key_index: str | None
    """The index the hottest key is on; None for the table."""
    throttled_by: str = ""
    behind: str | None = None
    """A GSI of the pattern's table whose write buffer fills within a launch's hour at the
    run's rate (``table/index``): once full it refuses every write to the table."""
    """What refused the most of its throttled attempts, in words (a partition's ceiling on
    a key, a table's on-demand capacity, ..., or "reason not reported")."""
    found_share: float | None = None
    """Reads that found an item over reads made (None: it made none)."""
    condition_failed: int = 0
    """Calls whose condition failed (ConditionalCheckFailed, alone or in a transaction)."""
    units: dict[str, dict[str, float]] = field(default_factory=dict)
    """Units consumed per table and index, read and write, as the results' row has them."""
    status: str = PASS
    """``PASS``, ``FAIL``, ``NOT JUDGED`` (the run could not say: `reasons` says why) or
    ``EMPTY`` (nothing failed, but the run started on an empty table)."""
    reasons: tuple[str, ...] = ()
    """Why it failed, or why it is not judged, in words."""
    offered: int | None = None
    """Arrivals the open model offered the pattern (None for a closed-model run)."""
    latency_judged: bool = True
    """False on a local target: its engine's latency is not DynamoDB's, so the need is shown
    against the measured figure but does not decide the verdict (it does against AWS)."""
    shortfall: str = ""
    """Where its load was not delivered: what became of its arrivals and what held the run
    back, in words (`loadgen.verdict.delivery`)."""

    @property
    def throttled_share(self) -> float:
        """Throttled attempts over attempts."""
        return self.throttled_attempts / self.attempts if self.attempts else 0.0

    @property
    def delivered_share(self) -> float | None:
        """Rate delivered over rate asked."""
        if self.rate_delivered is None or not self.rate_asked:
            return None
        return self.rate_delivered / self.rate_asked

    @property
    def passed(self) -> bool:
        return self.status == PASS

    @property
    def judged(self) -> bool:
        """Whether the run could judge it (PASS, FAIL or EMPTY)."""
        return self.status != NOT_JUDGED

    @property
    def reason(self) -> str:
        """``PASS``, or the status and its reasons: ``FAIL: p99 84 ms over the 10 ms need``."""
        reasons = list(self.reasons)
        if self.offered is not None and self.offered < MIN_ARRIVALS:
            reasons.append(
                f"only {self.offered} arrival(s) offered, too few to judge delivery "
                "(run longer, or at a larger --scale)"
            )
        if not reasons:
            return self.status
        return f"{self.status}: {'; '.join(reasons)}"

    @property
    def latency_over(self) -> bool:
        """Whether the measured latency is over the need."""
        return (
            self.need_ms is not None
            and self.measured_ms is not None
            and self.measured_ms > self.need_ms
        )

    def to_dict(self) -> dict[str, Any]:
        """A JSON-able form, for the results file's ``verdicts``."""
        data = asdict(self)
        data["reasons"] = list(self.reasons)
        data["throttled_share"] = round(self.throttled_share, 6)
        share = self.delivered_share
        data["delivered_share"] = None if share is None else round(share, 6)
        data["reason"] = self.reason
        return data


def pattern_verdicts(results: dict[str, Any]) -> list[PatternVerdict]:
    """A verdict per pattern of ``results["design"]``, in the design's order; [] without one."""
    design = results.get("design")
    if not design:
        return []
    rows = {row["name"]: row for row in results["operations"]}
    load = results.get("load") or {}
    offered = {row["operation"]: row for row in load.get("operations") or ()}
    scale = _scale(results)
    starting = design.get("starting_data") or {}
    judged = is_aws(results)
    behind = [b for b in results.get("gsi_buffers") or () if falls_behind(b.get("full_in_s"))]
    return [
        _behind(
            _bunched(
                _verdict(
                    pattern, rows.get(pattern["id"]), offered, load, scale, starting, judged,
                    why=lambda pid: shortfall_words(
                        results, pid, throttled_over=MAX_THROTTLED_SHARE
                    ),
                ),
                rows.get(pattern["id"]) or {},
                results,
            ),
            behind,
        )
        for pattern in design.get("patterns") or ()
    ]  # fmt: skip


def _bunched(
    verdict: PatternVerdict, row: dict[str, Any], results: dict[str, Any]
) -> PatternVerdict:
    """A pattern that fails on its throttles alone, in a run at a scale below AWS's, where
    check expects it to pass at AWS scale and the model expects throttles of that size in a
    run at the run's scale (``design.at_scale``, `BUNCHING`): not judged. A partition's second
    at scale 0.05 holds a twentieth of AWS's arrivals, which vary about 4.5 times as much
    about their mean: a margin DynamoDB carries, a scaled run can refuse.

    Nor is one whose run fell behind its target (`fell_behind`): requests that waited on it
    reach the partition model in bunches its launch would not send, whatever the model
    expects at the scale."""
    expected = results["design"].get("at_scale") or {}
    shares = expected.get("throttled_share") or {}
    at_aws = checked_patterns(results).get(verdict.id)
    here = shares.get(verdict.id)
    behind = fell_behind(results)
    if (
        verdict.status != FAIL
        or at_aws is None
        or here is None
        or float(at_aws.get("throttled_share") or 0.0) > MAX_THROTTLED_SHARE
        or verdict.throttled_share <= 0.0
        or (behind is None and verdict.throttled_share > BUNCHING * float(here))
        or _failures(replace(verdict, throttled_attempts=0), row)
    ):
        return verdict
    scale = float(expected["scale"])
    by = f": {verdict.throttled_by}" if verdict.throttled_by else ""
    said = (
        f"{_percent(verdict.throttled_share)} of attempts throttled{by}, where the model "
        f"expects {_percent(float(here))} in a run at scale {scale:g} and "
        f"{_percent(float(at_aws.get('throttled_share') or 0.0))} at AWS scale: "
    )
    if behind is not None:
        said += (
            f"{behind}, so requests reached the partition model in bunches (judge it where "
            "the load is delivered: more cores, or --rate-scale below 1)"
        )
    else:
        said += (
            f"a scaled run's seconds vary {1 / math.sqrt(scale):.1f} times as much as AWS's "
            "(judge it at a larger --scale, or with loadgen simulate)"
        )
    reasons = [said, *(r for r in verdict.reasons[1:] if r.startswith("load not delivered"))]
    return replace(verdict, status=NOT_JUDGED, reasons=tuple(reasons))


def _behind(verdict: PatternVerdict, behind: list[dict[str, Any]]) -> PatternVerdict:
    """A write pattern whose table has a GSI falling behind fails: once the index's buffer is
    full, DynamoDB refuses every write to the table until it drains."""
    if verdict.operation not in _WRITES:
        return verdict
    for buffer in behind:
        if buffer["table"] != verdict.table:
            continue
        scope = f"{buffer['table']}/{buffer['index']}"
        said = (
            f"index {scope}'s write buffer is filling ({buffer.get('reason') or NOT_REPORTED}): "
            f"full in about {float(buffer['full_in_s']) / 60:,.0f} min at this run's rate, "
            f"then every write to {buffer['table']} is refused until it drains"
        )
        return replace(verdict, status=FAIL, reasons=(*verdict.reasons, said), behind=scope)
    return verdict


def is_aws(results: dict[str, Any]) -> bool:
    """Whether the run's target was DynamoDB itself (``loadgen run --aws``), where latency
    needs are judged; a local engine answers in its own time, not DynamoDB's."""
    return str(results["run"].get("target") or "").startswith("AWS")


def _scale(results: dict[str, Any]) -> float:
    """How the run's rates relate to AWS's: the open model's rate scale, else the model's."""
    plan_scale = (results.get("load") or {}).get("scale")
    if plan_scale:
        return float(plan_scale)
    scale = results["run"].get("scale")
    return float(scale) if scale else 1.0


def _delivered(
    pattern: dict[str, Any],
    row: dict[str, Any] | None,
    offered: dict[str, dict[str, Any]],
    load: dict[str, Any],
    scale: float,
) -> float | None:
    asked = float(pattern.get("rate") or 0.0)
    arrivals = offered.get(pattern["id"])
    if arrivals is not None and arrivals.get("offered"):
        # Answered: an arrival the SDK is still retrying reached the target on time.
        got = arrivals.get("answered", arrivals["achieved"])
        return asked * min(1.0, float(got) / float(arrivals["offered"]))
    if load:
        return 0.0 if asked else None  # a rate run that offered the pattern nothing
    if row is None:
        return 0.0
    # A row counts requests; a pattern's rate is of executions, some of several requests
    # (a Query over every shard: one a shard).
    return float(row["requests_per_s"]) / scale / int(pattern.get("calls") or 1)


def _latency(
    row: dict[str, Any], need: dict[str, Any] | None
) -> tuple[float | None, float | None, float | None, str | None]:
    """(need's percentile, need's ms, measured ms, what was measured)."""
    if not need:
        return None, None, None, None
    percentile, limit = float(need["percentile"]), float(need["ms"])
    for bound, name, label in _PERCENTILE_FIELDS:
        if percentile <= bound:
            return percentile, limit, row.get(name), label
    return percentile, limit, row.get("max_ms"), "max"


def _verdict(
    pattern: dict[str, Any],
    row: dict[str, Any] | None,
    offered: dict[str, dict[str, Any]],
    load: dict[str, Any],
    scale: float,
    starting: dict[str, Any],
    latency_judged: bool = True,
    why: Callable[[str], str] = lambda pattern: "",
) -> PatternVerdict:
    asked = float(pattern.get("rate") or 0.0)
    delivered = _delivered(pattern, row, offered, load, scale)
    arrivals = offered.get(pattern["id"]) if load else None
    if load and arrivals is None:
        arrivals = {"offered": 0}
    found = row or {}
    hot = found.get("hot_key") or {}
    need_p, need_ms, measured, measured_as = _latency(found, pattern.get("latency"))
    requests = int(found.get("requests") or 0)
    verdict = PatternVerdict(
        id=pattern["id"],
        description=pattern.get("description") or "",
        operation=pattern.get("operation") or found.get("operation") or "",
        table=pattern.get("table") or "",
        index=pattern.get("index"),
        rate_asked=asked,
        rate_delivered=None if delivered is None else round(delivered, 3),
        requests=requests,
        # Rows written before attempts were kept: each request at least one attempt.
        attempts=int(found.get("attempts") or requests + int(found.get("retries") or 0)),
        throttled_attempts=int(found.get("throttled_attempts") or 0),
        failures=int(found.get("failures") or 0),
        p50_ms=found.get("p50_ms"),
        p99_ms=found.get("p99_ms"),
        need_percentile=need_p,
        need_ms=need_ms,
        measured_ms=measured,
        measured_as=measured_as,
        hot_key=hot.get("key"),
        hot_key_share=hot.get("share"),
        hot_key_index=hot.get("index"),
        units=dict(found.get("units") or {}),
        offered=None if arrivals is None else int(arrivals.get("offered") or 0),
        latency_judged=latency_judged,
    )
    found_share, failed_conditions = _found(found)
    share = verdict.delivered_share
    verdict = replace(
        verdict,
        throttled_by=_throttled_by(found, verdict),
        found_share=found_share,
        condition_failed=failed_conditions,
        shortfall=why(verdict.id) if share is not None and share < MIN_DELIVERED_SHARE else "",
    )
    reasons = _failures(verdict, found)
    status = FAIL if reasons else PASS
    if status == PASS:
        unjudged = _not_judged(verdict)
        if unjudged:
            status, reasons = NOT_JUDGED, unjudged
    elif verdict.delivered_share is not None and verdict.delivered_share < MIN_DELIVERED_SHARE:
        reasons.append(_undelivered(verdict))
    if starting.get("empty"):
        # The section's own note says the same at length; the verdict line stays one line.
        note = "the tables were empty when the load began"
        if status in (PASS, NOT_JUDGED):
            status = EMPTY
            found_nothing = (
                "its reads found nothing to read"
                if verdict.operation in _READS
                else "its writes met no stored item"
            )
            reasons = [f"nothing failed, but {note}, so {found_nothing}"]
        else:
            reasons.append(note)
    return replace(verdict, status=status, reasons=tuple(reasons))


def _failures(verdict: PatternVerdict, row: dict[str, Any]) -> list[str]:
    """The reasons a pattern fails, in words; empty when it passes (or is not judged)."""
    few = verdict.offered is not None and verdict.offered < MIN_ARRIVALS
    if not verdict.requests:
        if few:
            return []  # said by the reason: too few arrivals to judge
        return ["the pattern made no calls"] if verdict.rate_asked else []
    reasons = []
    share = verdict.throttled_share
    if share > MAX_THROTTLED_SHARE:
        kind = "reads" if verdict.operation in _READS else "writes"
        by = f": {verdict.throttled_by}" if verdict.throttled_by else ""
        reasons.append(f"{_percent(share)} of attempts throttled{by}, {kind}")
    refused = [
        entry
        for entry in _explained(row.get("error_messages") or _codes_only(row), row)
        if entry["count"] and entry["code"] not in _NOT_FAILURES
    ]
    failed = sum(entry["count"] for entry in refused) / verdict.requests
    if failed > MAX_FAILED_SHARE:
        said = ", ".join(
            f"{e['code']} x{e['count']}" + (f": {e['message']}" if e["message"] else "")
            for e in refused[:2]
        )
        reasons.append(f"{_percent(failed)} of calls failed ({said})")
    if verdict.need_ms is not None and verdict.latency_judged:
        if verdict.measured_ms is None:
            reasons.append(f"no latency measured for the {_ms(verdict.need_ms)} ms need")
        elif verdict.measured_ms > verdict.need_ms:
            reasons.append(
                f"{verdict.measured_as} {_ms(verdict.measured_ms)} ms over the "
                f"{_ms(verdict.need_ms)} ms need"
                + (
                    f" (p{verdict.need_percentile:g} read at the maximum)"
                    if verdict.measured_as == "max"
                    else ""
                )
            )
    return reasons


# Final errors that are not the pattern's failure: a throttle is judged by its share of
# attempts; a failed condition is the item's answer (judged by `_not_judged`).
_NOT_FAILURES = frozenset(
    {
        "ProvisionedThroughputExceededException",
        "ThrottlingException",
        "RequestLimitExceeded",
        "ConditionalCheckFailedException",
    }
)


def _codes_only(row: dict[str, Any]) -> list[dict[str, Any]]:
    # Results written before messages were kept: codes only.
    return [{"code": c, "message": "", "count": n} for c, n in (row.get("errors") or {}).items()]


def _explained(entries: list[dict[str, Any]], row: dict[str, Any]) -> list[dict[str, Any]]:
    """Errors less the transactions cancelled for a failed condition or a throttle: those
    are the item's answer and a throttle, judged on their own."""
    cancelled = row.get("cancellations") or {}
    left = cancelled.get("ConditionalCheckFailed", 0) + cancelled_by_throttles(row)
    out = []
    for entry in entries:
        if entry["code"] == "TransactionCanceledException" and left:
            taken = min(left, entry["count"])
            left -= taken
            entry = {**entry, "count": entry["count"] - taken}
        out.append(entry)
    return out


def _found(row: dict[str, Any]) -> tuple[float | None, int]:
    """(reads that found an item over reads made, calls whose condition failed)."""
    looked = int(row.get("looked") or 0)
    share = int(row.get("found") or 0) / looked if looked else None
    failed = int((row.get("cancellations") or {}).get("ConditionalCheckFailed", 0))
    failed += int((row.get("errors") or {}).get("ConditionalCheckFailedException", 0))
    return share, failed


def _throttled_by(row: dict[str, Any], verdict: PatternVerdict) -> str:
    """What refused the pattern's throttled attempts, in words: the limit that refused most
    of them, then each other that refused over `MAX_THROTTLED_SHARE` of its attempts (as
    check's Expected column says them: a transaction refused by a hot key's partition and by
    its table's capacity is failed by both)."""
    refused: dict[tuple[str, str | None, str], int] = {}
    for t in row.get("throttles") or ():
        if t["attempts"]:
            limit = (t["cause"], t.get("scope"), t["reason"])
            refused[limit] = refused.get(limit, 0) + int(t["attempts"])
    if not refused:
        return ""
    ranked = sorted(refused.items(), key=lambda item: -item[1])
    attempts = verdict.attempts or sum(refused.values())
    said = [_limit_words(row, verdict, *ranked[0][0])]
    said += [
        _limit_words(row, verdict, *limit)
        for limit, count in ranked[1:]
        if count / attempts > MAX_THROTTLED_SHARE
    ]
    return "; also ".join(said)


def _limit_words(
    row: dict[str, Any], verdict: PatternVerdict, cause: str, scope: str | None, reason: str
) -> str:
    """One limit that refused a pattern's attempts, in words."""
    if cause == NOT_REPORTED:
        return f"{reason} on {scope}" if reason != NOT_REPORTED else "reason not reported"
    where = _scope_words(scope or verdict.table)
    if cause != "partition":
        return f"{CAUSES[cause]} of {where} ({reason})"
    key = ((row.get("scope_keys") or {}).get(scope or "") or {}).get("key")
    return (
        f"a partition's ceiling on {key} ({where})" if key else f"a partition's ceiling ({where})"
    )


def _scope_words(scope: str) -> str:
    table, _, index = scope.partition("/")
    return f"index {index} of {table}" if index else f"table {table}"


def _not_judged(verdict: PatternVerdict) -> list[str]:
    """Why the run cannot judge a pattern that nothing failed; empty when it can."""
    reasons = []
    delivered = verdict.delivered_share
    few = verdict.offered is not None and verdict.offered < MIN_ARRIVALS
    if delivered is not None and delivered < MIN_DELIVERED_SHARE and not few:
        reasons.append(_undelivered(verdict))
    if verdict.found_share is not None and verdict.found_share < MIN_FOUND_SHARE:
        reasons.append(
            f"only {_percent(verdict.found_share)} of its reads found an item: the starting "
            "data does not hold what it reads"
        )
    if verdict.requests and verdict.condition_failed / verdict.requests > 1 - MIN_FOUND_SHARE:
        reasons.append(
            f"{_percent(verdict.condition_failed / verdict.requests)} of its calls failed "
            "their condition: the starting data may not hold the items it reads"
        )
    if verdict.latency_over and not verdict.latency_judged:
        reasons.append(
            f"{verdict.measured_as} {_ms(verdict.measured_ms)} ms against the "
            f"{_ms(verdict.need_ms)} ms need: a local engine's latency is not DynamoDB's"
        )
    elif verdict.need_ms is not None and not verdict.latency_judged and not reasons:
        reasons.append(
            f"its {_need(verdict)} need is not judged on a local target (it met it here: "
            f"{verdict.measured_as} {_ms(verdict.measured_ms)} ms)"
        )
    return reasons


def _undelivered(verdict: PatternVerdict) -> str:
    delivered = _percent(verdict.delivered_share or 0.0)
    why = f" ({verdict.shortfall})" if verdict.shortfall else ""
    return f"load not delivered: {delivered} of the rate asked was delivered{why}"


def _percent(share: float) -> str:
    """38%, or 0.4% and 99.6% where a whole number would read as 0% or 100%."""
    value = share * 100
    if 0 < value < 1 or 99 < value < 100:
        return f"{value:.1f}%"
    return f"{value:.0f}%"


def _ms(value: float | None) -> str:
    if value is None:
        return "-"
    return f"{value:,.0f}" if value >= 10 else f"{value:.1f}".rstrip("0").rstrip(".")


def _rate(value: float | None) -> str:
    if value is None:
        return "-"
    return f"{value:,.0f}" if value >= 10 else f"{value:.2g}"


def _need(verdict: PatternVerdict) -> str:
    if verdict.need_ms is None or verdict.need_percentile is None:
        return "-"
    return f"p{verdict.need_percentile:g} < {_ms(verdict.need_ms)} ms"


def _hot(verdict: PatternVerdict) -> str:
    if verdict.hot_key is None or verdict.hot_key_share is None:
        return "-"
    where = f" ({verdict.hot_key_index})" if verdict.hot_key_index else ""
    return f"{verdict.hot_key}{where} {_percent(verdict.hot_key_share)}"


def _cells(verdict: PatternVerdict) -> list[str]:
    return [
        verdict.id,
        verdict.operation + (f" {verdict.index}" if verdict.index else ""),
        _rate(verdict.rate_asked),
        _rate(verdict.rate_delivered),
        _percent(verdict.throttled_share),
        _ms(verdict.p50_ms),
        _ms(verdict.p99_ms),
        _need(verdict),
        _hot(verdict),
        verdict.reason,
    ]


_HEADS = (
    "Pattern", "Operation", "Asked/s", "Delivered/s", "Throttled", "p50 ms", "p99 ms", "Need",
    "Hottest key (share)", "Verdict",
)  # fmt: skip
_RIGHT = frozenset({2, 3, 4, 5, 6})
# Column widths never shrink below these, so tables of several runs line up.
_MIN_WIDTHS = (16, 10, 8, 11, 9, 6, 6, 14, 20, 0)
_MAX_WIDTH = 36
# A key longer than this is cut with an ellipsis, so one long key does not widen every row.


def format_pattern_verdicts(verdicts: list[PatternVerdict]) -> list[str]:
    """A fixed-width table for the terminal: one line per pattern, the verdict last."""
    if not verdicts:
        return []
    rows = [[_clip(cell) for cell in _cells(v)] for v in verdicts]
    widths = [
        max(minimum, len(head), *(len(row[i]) for row in rows))
        for i, (head, minimum) in enumerate(zip(_HEADS, _MIN_WIDTHS, strict=True))
    ]
    widths[-1] = 0  # the verdict runs to the end of the line

    def line(cells: list[str] | tuple[str, ...]) -> str:
        parts = [
            cell.rjust(width) if i in _RIGHT else cell.ljust(width)
            for i, (cell, width) in enumerate(zip(cells, widths, strict=True))
        ]
        return "  ".join(parts).rstrip()

    head = line(_HEADS)
    passed = sum(v.passed for v in verdicts)
    unjudged = sum(not v.judged for v in verdicts)
    return [
        f"Access patterns: {passed} of {len(verdicts)} passed"
        + (f", {unjudged} not judged" if unjudged else ""),
        head,
        "-" * len(head),
        *(line(row) for row in rows),
    ]


def _clip(cell: str) -> str:
    if len(cell) <= _MAX_WIDTH or cell.startswith(("PASS", "FAIL", "EMPTY", "NOT JUDGED")):
        return cell
    return cell[: _MAX_WIDTH - 1] + "…"


def pattern_verdicts_html(verdicts: list[PatternVerdict]) -> str:
    """The verdicts as an HTML table, for the run report."""
    if not verdicts:
        return ""
    head = "".join(f"<th>{html.escape(h)}</th>" for h in _HEADS)
    rows = []
    for verdict in verdicts:
        cells = _cells(verdict)
        css = {PASS: "pass", FAIL: "fail", EMPTY: "empty", NOT_JUDGED: "empty"}[verdict.status]
        tds = [
            f'<td class="text">{html.escape(cell)}</td>'
            if i not in _RIGHT
            else f"<td>{html.escape(cell)}</td>"
            for i, cell in enumerate(cells[:-1])
        ]
        tds.append(f'<td class="text verdict {css}">{html.escape(cells[-1])}</td>')
        title = html.escape(verdict.description)
        rows.append(f'<tr title="{title}">{"".join(tds)}</tr>')
    return f'<table class="patterns"><tr>{head}</tr>{"".join(rows)}</table>'
