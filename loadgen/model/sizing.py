"""How a remedy is sized: the figure a warm throughput or a maximum is set to, the provisioned
units that carry it, and the shards a hot key is split over.

One rule for every door: the run's diagnosis (`loadgen.verdict.diagnosis`) names these figures
and ``loadgen check --remedy`` (`loadgen.simulate.remedy`) writes them into the design file.
Imports nothing of the project.

    >>> capacity_figure(4_800)
    5800
    >>> provisioned_figure(4_800)
    6900
    >>> shards_for(2_400, "write")
    5
"""

from __future__ import annotations

import math

__all__ = [
    "HEADROOM",
    "RISK",
    "UTILISATION",
    "capacity_figure",
    "provisioned_figure",
    "shards_for",
]

HEADROOM = 1.2
"""A warm throughput or maximum is set this far above the launch's mean: its busiest seconds
(arrivals bunch) ask more than the mean, and a limit at the mean refuses them."""
UTILISATION = 0.7
"""Target utilisation provisioned capacity is sized at, as auto scaling's default target."""
RISK = 0.5
"""A shard is sized to carry at most this share of a partition's ceiling."""
_CEILINGS = {"read": 3000.0, "write": 1000.0}
"""A partition's ceiling, units/s (`loadgen.model.partitions`' figures)."""


def _hundreds(units: float) -> int:
    return int(math.ceil(units / 100.0 - 1e-9) * 100) if units > 0 else 0


def capacity_figure(units: float) -> int:
    """The warm throughput or maximum to set for a launch asking ``units``/s: `HEADROOM`
    over it, rounded up to the next hundred."""
    return _hundreds(units * HEADROOM)


def provisioned_figure(units: float) -> int:
    """Provisioned units that carry ``units``/s at auto scaling's target utilisation."""
    return _hundreds(units / UTILISATION)


def shards_for(units: float, kind: str) -> int:
    """Shards that keep each of a key's ``units``/s of ``kind`` (read, write) under `RISK` of
    a partition's ceiling: 2 at least."""
    return max(2, math.ceil(units / (RISK * _CEILINGS[kind])))
