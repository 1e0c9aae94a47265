"""Lanes whose items grow with their updates (`Lane.growth`), as a simulation charges them.

An update that adds drawn attribute names to the item it keeps writing (counter single's
``add: {"c{counter}": 1}``) grows that item, and DynamoDB charges an update by the larger of
the item before and after. `Growing` follows one such lane through a simulation: how many
updates its keys have taken (a run at a scale, by its own count), what a touch costs on each
partition and at each top key (worked out again when the updates grow by `REGROW`, the
partitions change or the lane's keys move on the run's clock), and what its admitted
executions were charged.

    growing = Growing(lane, len(profile.top))
    growing.follow(executed, scale, profile, starts, shares)   # each second
    heat_units = growing.charge(admitted, new, shares, recorded=True)
"""

from __future__ import annotations

import numpy as np

from loadgen.simulate.demand import KeyProfile, Lane

__all__ = ["REGROW", "Growing", "grown_units"]

REGROW = 0.02
"""A growing lane's units are worked out again when its keys' updates grow by this share."""


class Growing:
    """One growing lane's units as its keys' items grow (see the module docstring)."""

    def __init__(self, lane: Lane, top: int) -> None:
        self.lane = lane
        self.units: np.ndarray | float = lane.units
        """Units per touch, by partition (the lane's `Lane.units` until first worked out)."""
        self.top_units: np.ndarray | None = None
        """Units per touch of each of the lane's top keys (`KeyProfile.top`)."""
        self.top_charged = np.zeros(top)
        """Those units summed over the requests since the top keys were last reported."""
        self.charged = 0.0
        """Units the lane's admitted executions were charged."""
        self._fresh_from = 0.0  # executions when the lane's keys last moved
        self._worked_at = 0.0  # updates when the units were last worked out
        self._worked_on: list[int] = []  # and on which partitions

    def keys_moved(self, executed: float, top: int) -> None:
        """The lane's keys moved on the run's clock (``executed`` so far): new keys, new
        items, and ``top`` new top keys."""
        self._fresh_from = executed
        self._worked_on = []
        self.top_charged = np.zeros(top)

    def follow(
        self,
        executed: float,
        scale: float,
        profile: KeyProfile,
        starts: list[int],
        touches: np.ndarray,
    ) -> None:
        """Work the units out again where the updates grew by `REGROW` or the partitions
        (``starts``, the lane's ``touches`` there) changed. A run at a scale applies scale times
        the updates: its items grow as it counts them."""
        updates = (executed - self._fresh_from) * scale
        if updates > self._worked_at * (1 + REGROW) or self._worked_on != starts:
            self.units = grown_units(self.lane, profile, updates, starts, touches)
            top_weights = np.asarray([weight for _, weight in profile.top])
            self.top_units = self.lane.units_after(top_weights * updates)
            self._worked_at, self._worked_on = updates, starts

    def charge(
        self, admitted: float, new: float, shares: np.ndarray, recorded: bool
    ) -> np.ndarray | None:
        """Charge a second's ``admitted`` executions; the units of its ``new`` requests by
        partition for the heat where a run's recorder sees the lane (else None)."""
        per_execution = shares * self.units
        self.charged += float(admitted * per_execution.sum())
        if not recorded:
            return None
        if self.top_units is not None:
            self.top_charged += new * self.top_units
        heat: np.ndarray = new * per_execution
        return heat


def grown_units(
    lane: Lane, profile: KeyProfile, updates: float, starts: list[int], touches: np.ndarray
) -> np.ndarray:
    """Units per touch on each partition (``starts``; the lane's ``touches`` there) of a lane
    whose items grow, its keys having taken ``updates`` executions' updates (`Lane.growth`):
    each key's units at its own count, weighted by its touches; keys spread thin are at their
    first update."""
    exact = lane.units_after(profile.weights * updates)
    (first,) = lane.units_after(np.zeros(1))
    charged = KeyProfile(profile.hashes, profile.weights * exact, profile.spread * first, [])
    with np.errstate(divide="ignore", invalid="ignore"):
        units: np.ndarray = np.where(touches > 0, charged.shares(starts) / touches, first)
    return units
