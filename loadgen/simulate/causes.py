"""Why a simulation throttled: each pattern's throttled attempts by the limit that refused
them, and what each table's and index's limits refused.

Each second the model admits a table's or index's demand in bulk and says which units each
partition's own ceiling refused (`BulkAdmission.by_ceiling`) and which the keyspace's own
limit refused: its on-demand capacity, provisioned capacity, per-table quota or on-demand
maximum (`BulkAdmission.keyspace_throttle`). A pattern's throttled attempts in a second
(`loadgen.simulate.engine`) are split between the two limits as its most refused lane's
refused touches were. Each limit is named by DynamoDB's reason and the
model's cause (`loadgen.refusals.CAUSES`), never guessed from heat.

    causes = Causes(patterns=2)
    share = causes.keyspace(("t", None, "write"), units, bulk)   # each second, each keyspace
    causes.pattern(0, attempts, failed, [(bulk.throttle, 0.7), (bulk.keyspace_throttle, 0.3)])
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from loadgen.model.partitions import BulkAdmission
from loadgen.model.throttling import Throttle

__all__ = ["Causes", "LimitRecord", "PatternThrottles", "ScopeKind"]

ScopeKind = tuple[str, str | None, str]
"""(table, index or None, ``read`` or ``write``)."""


@dataclass
class PatternThrottles:
    """One pattern's throttled attempts refused by one limit, over the simulation."""

    throttle: Throttle
    """DynamoDB's reason, the resource and the model's cause (`Throttle.cause`)."""
    attempts: float = 0.0
    """Throttled attempts (retries included), in executions of the pattern."""
    final: float = 0.0
    """Executions that ran out of attempts (or of retry quota) on this limit."""


@dataclass
class LimitRecord:
    """What one limit of one table or index refused over the simulation."""

    throttle: Throttle
    refused_units: float = 0.0
    seconds: int = 0
    """Seconds in which it refused."""
    asked_sum: float = 0.0
    """Summed over those seconds: the units asked of what it limits (a partition's ceiling:
    the most asked partition it refused; the keyspace's limit: the whole keyspace)."""

    @property
    def asked(self) -> float:
        """Units per second asked of it in the seconds it refused, on average."""
        return self.asked_sum / self.seconds if self.seconds else 0.0


class Causes:
    """The accounts (see the module docstring)."""

    def __init__(self, patterns: int) -> None:
        self.by_pattern: list[dict[Throttle, PatternThrottles]] = [{} for _ in range(patterns)]
        self.limits: dict[Throttle, LimitRecord] = {}
        self.asked: dict[ScopeKind, float] = {}
        """Units asked of each table's and index's reads and writes over the simulation."""

    def keyspace(self, key: ScopeKind, units: np.ndarray, bulk: BulkAdmission) -> np.ndarray:
        """Account one second of one keyspace; returns, per partition, the share of its
        units its own ceiling refused."""
        self.asked[key] = self.asked.get(key, 0.0) + float(units.sum())
        if bulk.throttle is None:
            return np.zeros(len(units))
        ceiling = np.asarray(bulk.by_ceiling, dtype=np.float64)
        refused = units - np.asarray(bulk.admitted, dtype=np.float64)
        if bulk.partition_limited:
            hottest = int(np.argmax(np.where(ceiling > 0, units, -1.0)))
            self._limit(bulk.throttle, float(ceiling.sum()), float(units[hottest]))
        if bulk.keyspace_throttle is not None:
            rest = float(np.maximum(refused - ceiling, 0.0).sum())
            self._limit(bulk.keyspace_throttle, rest, float(units.sum()))
        with np.errstate(divide="ignore", invalid="ignore"):
            share: np.ndarray = np.where(units > 0, ceiling / np.where(units > 0, units, 1.0), 0.0)
        return share

    def _limit(self, throttle: Throttle, refused: float, asked: float) -> None:
        record = self.limits.get(throttle)
        if record is None:
            record = self.limits[throttle] = LimitRecord(throttle)
        record.refused_units += refused
        record.seconds += 1
        record.asked_sum += asked

    def pattern(
        self,
        number: int,
        attempts: float,
        final: float,
        split: Iterable[tuple[Throttle | None, float]],
    ) -> None:
        """Pattern ``number``'s throttled ``attempts`` and ``final`` failures this second,
        split between limits by share (a limit of None gives its share to the others)."""
        parts = [(throttle, share) for throttle, share in split if throttle is not None]
        total = sum(share for _, share in parts)
        if not parts or total <= 0:
            return
        accounts = self.by_pattern[number]
        for throttle, share in parts:
            account = accounts.get(throttle)
            if account is None:
                account = accounts[throttle] = PatternThrottles(throttle)
            account.attempts += attempts * share / total
            account.final += final * share / total
