"""Who judged a run: the partition model, the engine alone, or DynamoDB itself; and whose
refusals its throttles were.

A results file's ``throttles`` rows (per operation, and in the totals) name each throttle's
``source``: ``model`` where the partition model of a ``loadgen emulator`` refused the attempt
(a partition's ceiling, or a table's capacity: its cause says which), ``engine`` where the target
refused it in its own answer. Against DynamoDB itself that answer is its partitions' (heat);
against a local engine it never is: DynamoDB Local and moto do not throttle, and LocalStack's
fault injection refuses requests at random, whatever the key. So a run against a local engine
says what share of its refusals was the model's and what share the engine's, and a run
without the model says plainly that no partition heat was modelled.

    >>> split = refusals(results)             # doctest: +SKIP
    >>> split.model, split.engine             # doctest: +SKIP
    (412, 37)
    >>> judged_lines(results)[0]              # doctest: +SKIP
    'Refusals: 449 throttled attempts: 412 (91.8%) by the partition model, ...'
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from loadgen.refusals import NOT_REPORTED
from loadgen.verdict.patterns import is_aws

__all__ = ["Refusals", "judged_lines", "modelled", "refusals"]


@dataclass(frozen=True)
class Refusals:
    """A run's throttled attempts (and batch items left unprocessed) by whose refusal."""

    model: int = 0
    """Refused by the partition model."""
    engine: int = 0
    """Refused by the engine in its own answer."""
    engine_reasons: Counter[str] = field(default_factory=Counter)
    """The engine's refusals by the reason it gave (`NOT_REPORTED` where it gave none)."""

    @property
    def total(self) -> int:
        return self.model + self.engine

    def share(self, count: int) -> float:
        return count / self.total if self.total else 0.0


def modelled(results: dict[str, Any]) -> bool:
    """Whether a partition model stood in front of the run's target (its scale is known)."""
    return results["run"].get("scale") is not None


def refusals(results: dict[str, Any]) -> Refusals | None:
    """The totals' throttles by source; None for results that keep no ``throttles`` rows."""
    rows = results["totals"].get("throttles")
    if rows is None:
        return None
    model, engine, reasons = 0, 0, Counter[str]()
    for row in rows:
        count = int(row.get("attempts") or 0)
        if row.get("source") == "model":
            model += count
        else:
            engine += count
            reasons[str(row.get("reason") or NOT_REPORTED)] += count
    return Refusals(model, engine, reasons)


def _engine(results: dict[str, Any]) -> str:
    run = results["run"]
    if run.get("engine") == "localstack" or run.get("localstack_faults") is not None:
        return "LocalStack"
    return "the engine"


def _faults(results: dict[str, Any]) -> str:
    """LocalStack's fault injection in its own variables' words, or nothing."""
    chosen = {k: v for k, v in (results["run"].get("localstack_faults") or {}).items() if v}
    if not chosen:
        return ""
    return ", ".join(f"{name}={value:g}" for name, value in chosen.items())


def judged_lines(results: dict[str, Any]) -> list[str]:
    """What judged the run and whose refusals its throttles were; nothing for a run on AWS
    (DynamoDB's own partitions judged it: its throttles are heat)."""
    if is_aws(results):
        return []
    engine = _engine(results)
    faults = _faults(results)
    lines = []
    if not modelled(results):
        lines.append(
            f"No partition model judged this run: {engine} answered every request itself and "
            "models no partitions, so no partition heat was modelled (hot keys above are shares "
            "of the traffic, not of a partition's capacity)."
        )
    split = refusals(results)
    if split is None:
        throttled = int(results["totals"].get("throttled_attempts") or 0)
        if not modelled(results) and throttled:  # no model: every refusal is the engine's
            split = Refusals(engine=throttled)
        else:
            return lines
    if not split.total:
        return lines
    said = ", ".join(f"{reason} x{n:,}" for reason, n in split.engine_reasons.most_common())
    why = f"{engine}'s own answers"
    if faults:
        why = f"{engine}'s fault injection ({faults}): at random, whatever the key, not heat"
    elif engine == "LocalStack":
        why = f"{engine}'s own answers, not heat"
    engine_part = f"{split.engine:,} ({split.share(split.engine):.1%}) by {why}" + (
        f"; reason {said}" if said else ""
    )
    if not modelled(results):
        lines.append(f"Refusals: {split.total:,} throttled, all {engine}'s: {engine_part}.")
        return lines
    if not split.engine:
        return lines  # the model's alone: the diagnosis says what refused, cause by cause
    lines.append(
        f"Refusals: {split.total:,} throttled: {split.model:,} "
        f"({split.share(split.model):.1%}) by the partition model, {engine_part}."
    )
    return lines
