"""Why a rate run did not deliver a pattern's load, in words: what became of its own
arrivals, and what held the run back.

A pattern's arrivals were dropped (no in-flight slot free, or the generator behind its clock)
or were still in flight when the run ended; the run's load lines name what it saw while the
load fell short (`loadgen.heat.load`: a process out of CPU as measured over the run, the
arrival clock, the in-flight cap, the target's latency). Where the cap was reached, this
says what held its slots: retries of throttled requests (the design's doing, and a finding
in itself: an application's own concurrency would be held the same way) or slow answers.

    why = shortfall_words(results, "join-game", throttled_over=0.01)
    # "6,715 of its 9,777 arrivals dropped, 762 in flight at the run's end; the emulator's
    #  process ran out of CPU (98% of a core over the run); in-flight cap reached ..."
"""

from __future__ import annotations

from typing import Any

__all__ = ["HELD_SHARE", "cap_holders", "fell_behind", "shortfall_words"]

HELD_SHARE = 0.5
"""The share of the in-flight slots' time that the throttled patterns must have held for the
cap to be said to be held by their retries."""


def shortfall_words(results: dict[str, Any], pattern: str, *, throttled_over: float) -> str:
    """What became of ``pattern``'s arrivals and why the run fell short; "no cause measured"
    where neither the pattern's counts nor the run's load lines say."""
    load = results.get("load") or {}
    said = []
    row = next((r for r in load.get("operations") or () if r["operation"] == pattern), None)
    if row is not None and row.get("offered"):
        offered, achieved = int(row["offered"]), int(row["achieved"])
        dropped = int(row.get("dropped") or 0)
        cut = max(0, offered - achieved - dropped)
        counts = [f"{dropped:,} of its {offered:,} arrivals dropped"] if dropped else []
        if cut:
            counts.append(f"{cut:,} in flight at the run's end")
        said.append(", ".join(counts))
    bottleneck = load.get("bottleneck")
    if bottleneck:
        said.append(bottleneck)
    if load.get("dropped_at_cap"):
        said.append(cap_holders(results, throttled_over=throttled_over))
    return "; ".join(filter(None, said)) or "no cause measured"


def fell_behind(results: dict[str, Any]) -> str | None:
    """Where a run that did not deliver its load fell behind its target (``load.answer_ms_grew``,
    the time to a first answer grown), in words; None otherwise. Requests that waited on the
    target reach the partition model in bunches its launch would not send."""
    load = results.get("load") or {}
    grew = load.get("answer_ms_grew")
    if load.get("delivered", True) or not grew:
        return None
    early, worst = grew
    return (
        f"the target fell behind (a first answer took {early:.0f} ms at the start, "
        f"{worst:.0f} ms at the worst)"
    )


def cap_holders(results: dict[str, Any], *, throttled_over: float) -> str:
    """What held the in-flight cap's slots: each pattern's slot time is its operations' time
    from launch to end (those the run's end cut off aside); the throttled patterns' retries,
    where they held `HELD_SHARE` of it, else the slowest answers."""
    load = results.get("load") or {}
    held = {
        r["operation"]: float(r.get("service_mean_ms") or 0.0) * int(r.get("achieved") or 0)
        for r in load.get("operations") or ()
    }
    total = sum(held.values())
    if not total:
        return ""
    rows = {row["name"]: row for row in results.get("operations") or ()}

    def throttled(name: str) -> float:
        row = rows.get(name) or {}
        attempts = int(row.get("attempts") or 0)
        retried = int(row.get("retries") or 0) or attempts - int(row.get("requests") or 0)
        share = int(row.get("throttled_attempts") or 0) / attempts if attempts else 0.0
        return share if retried > 0 and share > throttled_over else 0.0

    ranked = sorted(held, key=lambda name: -held[name])
    retrying = [name for name in ranked if throttled(name)]
    if retrying and sum(held[name] for name in retrying) / total >= HELD_SHARE:
        who = ", ".join(
            f"{name} {held[name] / total:.0%} of the slot time, {throttled(name):.0%} of its "
            "attempts throttled"
            for name in retrying[:3]
        )
        return (
            f"the cap's slots were held by retries of throttled requests ({who}): the design's "
            "doing, a finding in itself (its retries would hold an application's concurrency "
            "as they held the run's)"
        )
    slow = ranked[0]
    mean = float(next(r for r in load["operations"] if r["operation"] == slow)["service_mean_ms"])
    return (
        f"the cap's slots were held by slow answers ({slow} {held[slow] / total:.0%} of the "
        f"slot time, {mean:,.0f} ms mean from launch to end)"
    )
