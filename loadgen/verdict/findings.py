"""What the diagnosis says: a `Finding` and the AWS guides its remedies come from.

Shared by the diagnosis (`loadgen.verdict.diagnosis`, which decides the cause from the
reasons the target gave) and the heat's account of which key or range ran hot
(`loadgen.verdict.hotspots`).
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["GUIDES", "Finding"]

_DEV = "https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/"
GUIDES = {
    "write-sharding": _DEV + "bp-partition-key-sharding.html",
    "gsi-sharding": _DEV + "bp-indexes-gsi-sharding.html",
    "gsi-throttling": _DEV + "gsi-throttling.html",
    "time-series": _DEV + "bp-time-series.html",
    "uniform-load": _DEV + "bp-partition-key-uniform-load.html",
    "caching": _DEV + "DAX.html",
    "sparse-index": _DEV + "bp-indexes-general-sparse-indexes.html",
    "warm-throughput": _DEV + "warm-throughput.html",
    "provisioned": _DEV + "provisioned-capacity-mode.html",
    "quotas": _DEV + "ServiceQuotas.html",
    "on-demand-maximum": _DEV + "on-demand-capacity-mode-max-throughput.html",
    "throttling": _DEV + "TroubleshootingThrottling.html",
    "errors": _DEV + "Programming.Errors.html",
    "conditions": _DEV + "Expressions.ConditionExpressions.html",
    "transactions": _DEV + "transaction-apis.html",
}
"""AWS's developer-guide pages each remedy comes from."""


@dataclass(frozen=True)
class Finding:
    """One thing the run shows, on one table or index (or of one pattern's requests)."""

    kind: str
    """``hot-key``, ``hot-gsi-key``, ``hot-range``, ``moving-hot-spot`` (a partition's
    ceiling); ``table-capacity`` (an on-demand table or index short of its demand),
    ``provisioned-capacity``, ``account-quota``, ``on-demand-maximum``; ``gsi-buffer`` (a
    GSI's write buffer full or filling: back-pressure on its table); ``engine-refusals``
    (refused with no reason given); ``rejected`` (refused before any work),
    ``condition-failed``, ``transaction-conflict``, ``transaction-contention``; ``even``."""
    scope: str
    keys: tuple[str, ...]
    """The hot keys named, hottest (or first in time) first."""
    title: str
    evidence: str
    remedy: str
    guide: str
    """The AWS page the remedy comes from."""
    severity: float = 0.0
    """For ordering: refused attempts or calls, then how close to the ceiling."""
    cause: str = ""
    """What refused: the model's cause (`loadgen.refusals.CAUSES`), one read from where the
    throttles fell, ``not reported``, or the kind of error; empty for a warning."""
    patterns: tuple[str, ...] = ()
    """The access patterns it concerns."""
    asked: float | None = None
    """Units/s the launch asks of what it names (a table's or index's side, or a hot key),
    where known: what its remedy is sized on."""
    figure: int | None = None
    """The remedy's figure, where it has one: the warm throughput, maximum or quota to set,
    the provisioned units, or the shards a hot key is split over."""
