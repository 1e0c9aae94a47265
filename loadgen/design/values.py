"""The small languages of a design file: rates, latency needs and time spans.

    >>> rate_per_s("100k/day")
    1.1574074074074074
    >>> rate_per_s("3000/min"), rate_per_s("50/s"), rate_per_s(20)
    (50.0, 50.0, 20.0)
    >>> latency_need("p99 < 10ms")
    LatencyNeed(percentile=99.0, ms=10.0)

Each parser raises `ValueError` with the text it could not read and the form it expected;
the design loader adds the path of the field.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["LatencyNeed", "format_rate", "latency_need", "rate_per_s", "span_s"]

_PER = {
    "s": 1.0, "sec": 1.0, "second": 1.0,
    "m": 60.0, "min": 60.0, "minute": 60.0,
    "h": 3600.0, "hr": 3600.0, "hour": 3600.0,
    "d": 86400.0, "day": 86400.0,
    "month": 30 * 86400.0,
}  # fmt: skip
_MULTIPLIERS = {"": 1.0, "k": 1e3, "m": 1e6, "b": 1e9}
_RATE = re.compile(r"^\s*([0-9]*\.?[0-9]+)\s*([kmb]?)\s*/\s*([a-z]+?)s?\s*$", re.IGNORECASE)
_LATENCY = re.compile(
    r"^\s*p([0-9]+(?:\.[0-9]+)?)\s*(?:<=?)\s*([0-9]*\.?[0-9]+)\s*(ms|s|us)\s*$", re.IGNORECASE
)
_SPAN = re.compile(r"^\s*([+-]?)\s*([0-9]*\.?[0-9]+)\s*(s|m|h|d)\s*$")
_SPAN_UNITS = {"s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0}
RATE_FORM = "a rate like 50/s, 3000/min, 100k/day or a number of operations/s"


def rate_per_s(value: str | float | int) -> float:
    """Operations per second of ``value``: a number (per second) or ``N[k|m|b]/unit``."""
    if isinstance(value, bool):
        raise ValueError(f"{value!r} is not a rate (expected {RATE_FORM})")
    if isinstance(value, int | float):
        rate = float(value)
    else:
        match = _RATE.match(value)
        per = _PER.get(match.group(3).lower()) if match else None
        if match is None or per is None:
            raise ValueError(f"{value!r} is not a rate (expected {RATE_FORM})")
        rate = float(match.group(1)) * _MULTIPLIERS[match.group(2).lower()] / per
    if not rate > 0 or rate == float("inf"):
        raise ValueError(f"rate {value!r} must be more than 0 (expected {RATE_FORM})")
    return rate


def format_rate(per_s: float) -> str:
    """``1.16/s``, ``50/s``, ``20,000/s``: a rate as the summary prints it."""
    return f"{per_s:,.0f}/s" if per_s >= 100 else f"{per_s:.3g}/s"


@dataclass(frozen=True)
class LatencyNeed:
    """A latency need: the ``percentile`` of response times under ``ms`` milliseconds."""

    percentile: float
    ms: float

    def __str__(self) -> str:
        return f"p{self.percentile:g} < {self.ms:g} ms"


def latency_need(text: str) -> LatencyNeed:
    """``p99 < 10ms`` (also ``p50<=2ms``, ``p99.9 < 1s``, ``p95 < 500us``)."""
    match = _LATENCY.match(str(text))
    if match is None:
        raise ValueError(f"{text!r} is not a latency need (expected like 'p99 < 10ms')")
    percentile = float(match.group(1))
    if not 0 < percentile < 100:
        raise ValueError(f"percentile in {text!r} must be between 0 and 100 (exclusive)")
    unit = {"ms": 1.0, "s": 1000.0, "us": 0.001}[match.group(3).lower()]
    return LatencyNeed(percentile, float(match.group(2)) * unit)


def span_s(text: str | float | int) -> float:
    """Seconds of a signed span: ``-24h``, ``30m``, ``90s``, ``7d`` or a number of seconds."""
    if isinstance(text, int | float) and not isinstance(text, bool):
        return float(text)
    match = _SPAN.match(str(text))
    if match is None:
        raise ValueError(f"{text!r} is not a time span (expected like -24h, 30m, 90s or 7d)")
    sign = -1.0 if match.group(1) == "-" else 1.0
    return sign * float(match.group(2)) * _SPAN_UNITS[match.group(3)]
