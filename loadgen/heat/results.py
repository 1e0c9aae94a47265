"""A run's results: the summary table, the hottest keys and the results file.

The results file (``loadgen run --out FILE``) holds the same figures as the printed summary,
as JSON, plus the per-second bucket heat matrix (``heat``), the top keys per table and
index by requests and by consumed units (``top_keys``) and, for a rate run, the offered and
achieved load and whether it was delivered (``load``, `loadgen.heat.load`); later stages
(gates, reports) read it.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any, TextIO

from loadgen.heat.load import format_load
from loadgen.heat.recorder import OperationCounts, RunRecorder
from loadgen.refusals import NOT_REPORTED

__all__ = ["SCHEMA_VERSION", "build_results", "format_refusals", "format_summary", "write_results"]

SCHEMA_VERSION = 1
PERCENTILES = (0.50, 0.95, 0.99)


def _operation_row(entry: Any, counts: OperationCounts | None, duration_s: float) -> dict[str, Any]:
    counts = counts or OperationCounts()
    row: dict[str, Any] = {
        "operation": entry.method,
        "name": entry.name,
        "requests": entry.num_requests,
        "failures": entry.num_failures,
        "requests_per_s": entry.num_requests / duration_s if duration_s > 0 else 0.0,
        "avg_ms": entry.avg_response_time,
        "max_ms": entry.max_response_time,
        "attempts": counts.attempts,
        "throttled_attempts": counts.throttled_attempts,
        "throttled_first_attempts": counts.throttled_first_attempts,
        "retries": counts.retries,
        "unprocessed_items": counts.unprocessed,
        "errors": dict(counts.failures),
        # What the target said of each refusal: throttles by DynamoDB's reason (and the
        # partition model's cause, where the emulator gave it), final errors with their
        # messages, a cancelled transaction's reasons.
        "throttles": counts.throttle_rows(),
        "error_messages": counts.message_rows(),
        "cancellations": dict(counts.cancellations),
        "rejected": counts.rejected,
        # Reads: items asked for and found (a read of nothing says little of its design).
        "looked": counts.looked,
        "found": counts.found,
        # Units per table and index, read and write, as the heat lanes got them, and the
        # pattern's hottest partition key.
        "units": counts.units(),
        "hot_key": counts.hot_key(),
        "scope_keys": counts.scope_keys(),
    }
    for p in PERCENTILES:
        value = entry.get_response_time_percentile(p) if entry.num_requests else None
        row[f"p{round(p * 100)}_ms"] = value
    return row


def build_results(
    stats: Any,
    recorder: RunRecorder,
    *,
    run: dict[str, Any],
    duration_s: float,
    hot_keys: int = 10,
) -> dict[str, Any]:
    """Results from Locust's ``RequestStats``, our recorder and the run's settings."""
    operations = []
    for (name, method), entry in sorted(stats.entries.items()):
        counts = recorder.operations.get((method, name))
        operations.append(_operation_row(entry, counts, duration_s))
    total = OperationCounts()
    for counts in recorder.operations.values():
        total.merge(counts)
    totals = _operation_row(stats.total, total, duration_s)
    totals["operation"], totals["name"] = "", "Aggregated"
    results = {
        "schema_version": SCHEMA_VERSION,
        "run": run,
        "duration_s": duration_s,
        "operations": operations,
        "totals": totals,
        "hot_keys": recorder.hottest(hot_keys),
        "top_keys": recorder.heat.top_keys_dict(),
        "heat": recorder.heat.matrix(),
    }
    load = recorder.load.summary()
    if load is not None:
        results["load"] = load  # an open-model run: offered, achieved, dropped, delivered
    return results


def _ms(value: float | None) -> str:
    return "-" if value is None else f"{value:.0f}"


def format_summary(results: dict[str, Any]) -> str:
    """The summary table and the hottest keys, as printed at the end of a run."""
    run = results["run"]
    head = (
        f"{'Operation':<20} {'Name':<28} {'Reqs':>8} {'Req/s':>8} {'p50':>6} {'p95':>6} "
        f"{'p99':>6} {'Errors':>7} {'Throttled':>10} {'Retries':>8}"
    )
    design = results.get("design") or {}
    # A design run draws its keys by the file's generators: the workload's distribution and
    # key count are not what it ran.
    what = (
        f"Design {design.get('title') or design.get('file')} ({design.get('name')}), "
        f"{len(design.get('patterns') or ())} access patterns"
        if design
        else f"Workload {run['workload']} ({run['design']}), distribution "
        f"{run['distribution']} over {run['keys']} keys"
    )
    lines = [
        f"{what}, target {run['target']}"
        + (f", scale {run['scale']:g}" if run.get("scale") is not None else ""),
        "",
        head,
        "-" * len(head),
    ]
    for row in [*results["operations"], results["totals"]]:
        if row is results["totals"]:
            lines.append("-" * len(head))
        lines.append(
            f"{row['operation']:<20} {row['name']:<28} {row['requests']:>8} "
            f"{row['requests_per_s']:>8.1f} {_ms(row['p50_ms']):>6} {_ms(row['p95_ms']):>6} "
            f"{_ms(row['p99_ms']):>6} {row['failures']:>7} {row['throttled_attempts']:>10} "
            f"{row['retries']:>8}"
        )
    lines += format_refusals(results)
    if results.get("load"):
        lines += ["", *format_load(results["load"])]
    lines += ["", "Hottest partition keys (share of their table's or index's key touches):"]
    if not results["hot_keys"]:
        lines.append("  (none)")
    for row in results["hot_keys"]:
        lines.append(
            f"  {row['share'] * 100:6.2f}%  {row['requests']:>9.0f}  "
            f"{row['table']:<24} {row['key']}"
        )
    return "\n".join(lines)


def format_refusals(results: dict[str, Any]) -> list[str]:
    """What the target said of the run's refusals: throttles by reason, per pattern, and
    final errors with their messages and a cancelled transaction's reasons."""
    lines: list[str] = []
    rows = [row for row in results["operations"] if row.get("throttles")]
    if rows:
        lines += ["", "Throttles, by what the target said (reason; the model's cause):"]
        for row in rows:
            for throttle in row["throttles"]:
                scope = throttle["scope"] or NOT_REPORTED
                what = (
                    "batch items" if throttle["exception"].startswith("Unprocessed") else "attempts"
                )
                final = f", {throttle['final']:,} calls failed" if throttle["final"] else ""
                lines.append(
                    f"  {row['name']:<24} {throttle['attempts']:>8,} {what}  "
                    f"{throttle['reason']} on {scope} ({throttle['cause']}){final}"
                )
    errors = [row for row in results["operations"] if row.get("failures")]
    if errors:
        lines += ["", "Errors, with the target's message:"]
        for row in errors:
            for entry in row.get("error_messages") or _unexplained(row):
                message = entry["message"] or NOT_REPORTED
                lines.append(f"  {row['name']:<24} {entry['code']} x{entry['count']:,}: {message}")
            cancelled = row.get("cancellations") or {}
            if cancelled:
                reasons = ", ".join(f"{c} x{n:,}" for c, n in sorted(cancelled.items()))
                lines.append(f"  {'':<24} cancellation reasons: {reasons}")
    return lines


def _unexplained(row: dict[str, Any]) -> list[dict[str, Any]]:
    # Results written before messages were kept: codes only.
    return [{"code": c, "message": "", "count": n} for c, n in sorted(row["errors"].items())]


def write_results(results: dict[str, Any], path: str | os.PathLike[str]) -> None:
    """Write the results file atomically, so a reader never sees half of it."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.")
    with os.fdopen(fd, "w") as f:
        _dump(results, f)
    os.replace(tmp, target)


def _dump(results: dict[str, Any], f: TextIO) -> None:
    json.dump(results, f, indent=2, sort_keys=False)
    f.write("\n")
