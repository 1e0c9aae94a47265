"""The SDK's standard retry mode, per second and in bulk: when a throttled attempt comes back,
and how many the retry quota allows.

botocore's standard mode waits ``random() * min(2 ** (n - 1), 20)`` seconds after its
``n``-th attempt fails (`ExponentialBackoff` in ``botocore/retries/standard.py``): 0-1 s after
the first, 0-2 s after the second. A throttle falls late in its second (once the partition's
bucket is empty), so a retry may come back in the same second, where the same key's bucket is
still empty and it is throttled again, in the next second, or in the one after.
`landing` gives, for a request throttled at one attempt, when its later attempts come.

botocore's legacy mode, its default, waits ``0.05 * 2 ** (n - 1)`` seconds for DynamoDB,
without jitter, up to 10 attempts, with no quota (``data/_retry.json``): its first four
retries come back within 0.75 s, most of them within the second that refused them.

A retry is the same request: the same key, so the same partition, which throttles it again
as likely as it throttles that partition's other requests. `Returning` carries a lane's
retried attempts back to the partitions that refused them.

    same, lands, spent = landing(0.5, 0, 3)  # half the second refused, first attempts
    lands[1, 1]   # of each such request: its second attempt arriving in the next second
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from loadgen.refusals import LEGACY_BASE_S, MAX_BACKOFF_S

__all__ = [
    "Landed",
    "Returning",
    "horizon",
    "landed",
    "landing",
    "mean_wait_s",
    "sdk_retries",
]

_STEPS = 16
"""Points per second of the grid the waits are spread on."""
_LEVELS = 32
"""A second's refused share is rounded to this many levels (the landings are cached)."""


def _backoff_s(attempt: int, mode: str = "standard") -> float:
    """Longest wait after attempt number ``attempt + 1`` (``attempt`` counts from 0); in the
    legacy mode the wait itself, which has no jitter."""
    if mode == "legacy":
        return LEGACY_BASE_S * 2.0**attempt
    return min(2.0**attempt, MAX_BACKOFF_S)


def mean_wait_s(attempt: int, mode: str = "standard") -> float:
    """The mean wait after attempt number ``attempt + 1``: half the standard mode's longest
    (its jitter is uniform), the legacy mode's own."""
    if mode == "legacy":
        return _backoff_s(attempt, mode)
    return _backoff_s(attempt) / 2


def sdk_retries(operation: str) -> bool:
    """Whether the SDK retries a throttled ``operation``. DynamoDB answers a throttled
    transaction ``TransactionCanceledException`` (reasons ``ThrottlingError``), which neither
    retry mode retries: the caller gets it at the first attempt."""
    return not operation.startswith("Transact")


@functools.lru_cache(maxsize=64)
def horizon(attempts: int, mode: str = "standard") -> int:
    """Seconds ahead a retry can land, counting the current one."""
    return 2 + math.ceil(max((_backoff_s(a, mode) for a in range(attempts - 1)), default=0.0))


def _wait(attempt: int, mode: str) -> np.ndarray:
    """The wait after attempt number ``attempt + 1``, as weights over grid steps from 0."""
    if mode == "legacy":  # a fixed wait: its two grid steps, shared by nearness
        steps = _backoff_s(attempt, mode) * _STEPS
        whole = int(steps)
        kernel = np.zeros(whole + 2)
        kernel[whole], kernel[whole + 1] = whole + 1 - steps, steps - whole
        return kernel
    width = max(1, round(_backoff_s(attempt) * _STEPS))
    # A wait of 0 to `width` grid steps: half weights at both ends centre it.
    kernel = np.full(width + 1, 1.0 / width)
    kernel[[0, -1]] /= 2
    return kernel


@functools.lru_cache(maxsize=4096)
def _landing(
    level: int, attempt: int, attempts: int, mode: str = "standard"
) -> tuple[np.ndarray, np.ndarray, float, float]:
    refused = level / _LEVELS
    seconds = horizon(attempts, mode)
    # Where in the second the throttles fall: evenly over its last `refused` share.
    first = 1.0 - refused
    edges = np.arange(_STEPS + 1) / _STEPS
    mass = np.clip(np.minimum(edges[1:], 1.0) - np.maximum(edges[:-1], first), 0.0, None)
    mass = mass / mass.sum() if mass.sum() else np.eye(1, _STEPS, _STEPS - 1)[0]
    same = np.zeros(attempts)
    lands = np.zeros((seconds, attempts))
    spent = waited = 0.0
    for a in range(attempt, attempts - 1):
        moved = np.convolve(mass, _wait(a, mode))
        spent += float(mass.sum())  # each one of these retries
        waited += float(mass.sum()) * mean_wait_s(a, mode)
        later = moved[_STEPS:]
        padded = np.zeros((seconds - 1) * _STEPS)
        padded[: len(later)] = later
        lands[1:, a + 1] += padded.reshape(seconds - 1, _STEPS).sum(axis=1)
        mass = moved[:_STEPS]
        same[a + 1] = float(mass.sum())  # back within this second: throttled again
    return same, lands, spent, waited


def landing(
    refused: float, attempt: int, attempts: int, mode: str = "standard"
) -> tuple[np.ndarray, np.ndarray, float]:
    """Where the later attempts of one request throttled at attempt ``attempt`` (from 0) go,
    when the second refused ``refused`` of its demand, retried in ``mode``
    (`loadgen.refusals.MODELLED_MODES`).

    Returns ``(same, lands, retries)``: ``same[k]``, attempts number ``k`` (from 0) that come
    back within this second and are throttled again (the key's bucket is empty until the next
    second); ``lands[s, k]``, attempts number ``k`` arriving ``s`` seconds later; ``retries``,
    the retries made in all (each takes the quota's tokens). What is left of one request,
    ``1 - lands.sum()``, ran out of attempts within the second.
    """
    return _landing(_level(refused), attempt, attempts, mode)[:3]


@dataclass(frozen=True)
class Landed:
    """`landing` with the sums a simulation takes of it, once."""

    again: float
    """Attempts back within this second (``same.sum()``)."""
    lands: np.ndarray
    """``[s, k]``: attempts number ``k`` arriving ``s`` seconds later."""
    by_second: np.ndarray
    """``[s]``: attempts arriving ``s`` seconds later, whatever their number."""
    later: float
    """Attempts arriving in later seconds (the rest ran out of attempts within this one)."""
    retries: float
    waited: float
    """Seconds its retries waited before they were sent, in all (`mean_wait_s` each)."""


def landed(refused: float, attempt: int, attempts: int, mode: str = "standard") -> Landed:
    """`landing` of a request throttled at attempt ``attempt``, with its sums."""
    return _landed(_level(refused), attempt, attempts, mode)


def _level(refused: float) -> int:
    return min(_LEVELS, max(1, round(refused * _LEVELS)))


@functools.lru_cache(maxsize=4096)
def _landed(level: int, attempt: int, attempts: int, mode: str) -> Landed:
    same, lands, retries, waited = _landing(level, attempt, attempts, mode)
    by_second = lands.sum(axis=1)
    return Landed(float(same.sum()), lands, by_second, float(by_second.sum()), retries, waited)


class Returning:
    """One lane's retried attempts on their way back: touches by partition of its table or
    index, by the second they arrive in (a ring of `horizon` seconds, by simulated second).

        back = Returning(horizon(3))
        back.relayout(old_starts, new_starts, shares)   # the partitions changed (a split)
        back.send(rows, landed, where)     # landed[s] executions in the second of rows[s]
        back.take(second)                  # the touches arriving this second, by partition

    The engine takes each second in turn: a ring whose every row has been taken since its
    last `send` is empty, and gives ``none`` without reading a row.
    """

    def __init__(self, seconds: int) -> None:
        self.seconds = seconds
        self.touches = np.zeros((seconds, 0))
        self.live = 0
        """Takes until every row has been emptied since the last `send` (0: the ring is
        empty, and `take` gives ``none``)."""
        self.none = np.zeros(0)
        """No touches by partition: what an empty ring gives (never changed in place)."""

    def take(self, second: int) -> np.ndarray:
        """The touches arriving in ``second``, by partition (and none left there)."""
        if not self.live:
            return self.none
        self.live -= 1
        row = second % self.seconds
        arriving: np.ndarray = self.touches[row].copy()
        self.touches[row] = 0.0
        return arriving

    def send(self, rows: np.ndarray, landed: np.ndarray, where: np.ndarray) -> None:
        """``landed[s]`` executions arrive in the second of ring row ``rows[s]`` (second
        ``t`` is row ``t % seconds``), each touching the partitions as ``where`` (touches per
        execution, by partition) says."""
        self.live = self.seconds  # each row is taken once before the ring is empty again
        by_row = np.zeros(self.seconds)
        by_row[rows] = landed
        # One product over the whole ring: faster than adding to the rows picked out.
        np.add(self.touches, by_row[:, None] * where, out=self.touches)

    def relayout(self, old: Sequence[int], new: Sequence[int], shares: np.ndarray) -> None:
        """The partitions starting at ``old`` became those starting at ``new`` (partitions
        split, never merge): each old partition's touches go to the new ones within it, in
        the lane's ``shares`` of them (the hot key's half of a split takes its retries), or
        evenly where the lane has none there."""
        self.none = np.zeros(len(new))
        if self.touches.shape[1] == 0 or not len(old):
            self.touches = np.zeros((self.seconds, len(new)))
            return
        parents = np.searchsorted(
            np.asarray(old, dtype=np.uint64), np.asarray(new, dtype=np.uint64), side="right"
        )
        parents = np.clip(parents - 1, 0, len(old) - 1)
        within = np.bincount(parents, weights=shares, minlength=len(old))[parents]
        count = np.bincount(parents, minlength=len(old))[parents]
        weights = np.where(within > 0, shares / np.where(within > 0, within, 1.0), 1.0 / count)
        self.touches = self.touches[:, parents] * weights
