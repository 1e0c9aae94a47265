"""What the target said of a run's refusals, read from its results: throttles by reason and
cause, final errors with their messages, cancelled transactions by reason, per access pattern.

The report, the web UI's heat tab and the gate's limits per reason class read them here, so
the three agree. The words are the target's (`loadgen.refusals`): DynamoDB's
``ThrottlingReasons`` and messages, the partition model's cause where the emulator gave it,
and `NOT_REPORTED` where the target said nothing, never a guess.

    for line in throttles(results):
        print(line.pattern, line.reason, line.scope, line.cause, line.attempts)
    by_class(results["totals"], "cause")   # {"partition": 80, "not reported": 3}
"""

from __future__ import annotations

import html
from dataclasses import dataclass
from typing import Any

from loadgen.refusals import CAUSES, NOT_REPORTED, THROTTLING_REASONS

__all__ = [
    "CLASSES",
    "Cancellations",
    "ErrorMessage",
    "Throttles",
    "by_class",
    "cancellations",
    "errors",
    "kept",
    "reasons_html",
    "throttles",
]

CLASSES: dict[str, tuple[str, ...]] = {
    "cause": (*CAUSES, NOT_REPORTED),
    "reason": (*THROTTLING_REASONS, NOT_REPORTED),
}
"""The classes a throttle falls in: by the model's cause, or by DynamoDB's reason; a target
that gave none is its own class."""


@dataclass(frozen=True)
class Throttles:
    """One access pattern's throttles for one reason, table or index, and cause."""

    pattern: str
    operation: str
    reason: str
    scope: str
    """``table`` or ``table/index`` the throttle named, or `NOT_REPORTED`."""
    cause: str
    attempts: int
    """Throttled attempts."""
    items: int
    """Batch items left unprocessed."""
    final: int
    """Calls that failed on it, once the SDK's retries were spent."""


@dataclass(frozen=True)
class ErrorMessage:
    """One access pattern's final errors of one code and message."""

    pattern: str
    operation: str
    code: str
    message: str
    """The target's message, or `NOT_REPORTED`."""
    count: int


@dataclass(frozen=True)
class Cancellations:
    """One access pattern's cancelled transactions, actions by ``CancellationReasons`` code."""

    pattern: str
    operation: str
    codes: dict[str, int]


def kept(row: dict[str, Any]) -> bool:
    """Whether a results row keeps what the target said (files written before do not)."""
    return "throttles" in row


def _grouped(row: dict[str, Any]) -> dict[tuple[str, str, str], list[int]]:
    """A row's throttles by (reason, scope, cause): [attempts, batch items, final]."""
    found: dict[tuple[str, str, str], list[int]] = {}
    for said in row.get("throttles") or ():
        key = (said["reason"], said["scope"] or NOT_REPORTED, said["cause"])
        counts = found.setdefault(key, [0, 0, 0])
        counts[1 if str(said["exception"]).startswith("Unprocessed") else 0] += said["attempts"]
        counts[2] += said.get("final") or 0
    return found


def throttles(results: dict[str, Any]) -> list[Throttles]:
    """Every access pattern's throttles, the most refused first within a pattern."""
    lines = []
    for row in results["operations"]:
        grouped = sorted(_grouped(row).items(), key=lambda kv: (-sum(kv[1][:2]), kv[0]))
        for (reason, scope, cause), (attempts, items, final) in grouped:
            said = (reason, scope, cause, attempts, items, final)
            lines.append(Throttles(row["name"], row["operation"], *said))
    return lines


def errors(results: dict[str, Any]) -> list[ErrorMessage]:
    """Every access pattern's final errors by code and message; a results file written
    before messages were kept gives its codes with the message `NOT_REPORTED`."""
    lines = []
    for row in results["operations"]:
        given = row.get("error_messages")
        if given is None:
            given = [{"code": c, "message": "", "count": n} for c, n in row["errors"].items()]
        for entry in given:
            lines.append(
                ErrorMessage(
                    row["name"],
                    row["operation"],
                    entry["code"],
                    entry["message"] or NOT_REPORTED,
                    entry["count"],
                )
            )
    return lines


def cancellations(results: dict[str, Any]) -> list[Cancellations]:
    """Every access pattern's cancelled transactions by reason code, if it had any."""
    return [
        Cancellations(row["name"], row["operation"], dict(sorted(row["cancellations"].items())))
        for row in results["operations"]
        if row.get("cancellations")
    ]


def by_class(row: dict[str, Any], of: str) -> dict[str, int]:
    """A row's throttles (attempts and batch items left unprocessed) per class: ``of``
    ``"cause"`` or ``"reason"`` (`CLASSES`); a word outside them keeps its own name."""
    found: dict[str, int] = {}
    for said in row.get("throttles") or ():
        name = said[of] or NOT_REPORTED
        found[name] = found.get(name, 0) + said["attempts"]
    return found


def _table(head: list[str], rows: list[list[str]], numbers: range) -> str:
    """An HTML table, every cell escaped; the ``numbers`` columns aligned right."""
    cells = "".join(f"<th>{html.escape(h)}</th>" for h in head)
    body = "".join(
        "<tr>"
        + "".join(
            f"<td>{html.escape(cell)}</td>"
            if i in numbers
            else f'<td class="text">{html.escape(cell)}</td>'
            for i, cell in enumerate(row)
        )
        + "</tr>"
        for row in rows
    )
    return f"<table><tr>{cells}</tr>{body}</table>"


def reasons_html(results: dict[str, Any]) -> str:
    """The report's section: throttles by reason and cause, final errors with their messages
    and cancelled transactions by reason, per access pattern (escaped: keys and messages
    are arbitrary text)."""
    parts = []
    found = throttles(results)
    if found:
        head = [
            "Access pattern", "Operation", "Reason (DynamoDB)", "Table or index",
            "Cause (partition model)", "Throttled attempts", "Batch items left", "Calls failed",
        ]  # fmt: skip
        rows = [
            [t.pattern, t.operation, t.reason, t.scope, t.cause]
            + [f"{n:,}" for n in (t.attempts, t.items, t.final)]
            for t in found
        ]
        parts.append(_table(head, rows, range(5, 8)))
    old = [r["name"] for r in results["operations"] if r["throttled_attempts"] and not kept(r)]
    if old:
        parts.append(
            '<p class="note">Throttled, but this results file was written before throttle '
            f"reasons were kept: {html.escape(', '.join(old))}.</p>"
        )
    said = errors(results)
    if said:
        parts.append(
            _table(
                ["Access pattern", "Operation", "Error", "Calls", "The target's message"],
                [[e.pattern, e.operation, e.code, f"{e.count:,}", e.message] for e in said],
                range(3, 4),
            )
        )
    cancelled = cancellations(results)
    if cancelled:
        parts.append(
            _table(
                ["Access pattern", "Operation", "Cancellation reasons (actions)"],
                [
                    [c.pattern, c.operation, ", ".join(f"{k} x{n:,}" for k, n in c.codes.items())]
                    for c in cancelled
                ],
                range(0),
            )
        )
    if not parts:
        return "<p>The target refused nothing: no throttle, no error.</p>"
    causes = "; ".join(f"{cause}: {limit}" for cause, limit in CAUSES.items())
    note = (
        '<p class="note">Reason: DynamoDB\'s ThrottlingReason (table or index, read or write, '
        f"and the limit). Cause: which limit of the partition model refused, as the emulator "
        f"tells it ({html.escape(causes)}). {NOT_REPORTED.capitalize()}: the target gave none "
        "(DynamoDB gives reasons but no cause). A batch item left unprocessed is a throttle "
        "the call itself did not fail on.</p>"
    )
    return "".join(parts) + note
