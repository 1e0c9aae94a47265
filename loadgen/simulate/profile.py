"""Launch traffic over time: a short YAML list of steps, ramps, holds, spikes and daily curves.

    # launch.yaml: executions per second over every access pattern, split by the design's mix
    - 0 -> 20k/s over 10m        # a linear ramp
    - hold 1h                    # keep the last rate
    - 5k/s for 30m               # a step
    - daily 2k/s..20k/s for 24h  # a day's curve: lowest at its start, highest 12 h in
    - x3 for 5m at 2h            # a spike: three times the rate from 2 h, for 5 minutes

Steps, ramps, holds and daily curves follow each other; a spike multiplies whatever runs at
its time. A rate is written as the design file writes one (``50/s``, ``3000/min``, ``20k/s``),
a duration as ``90s``, ``10m``, ``2h``, ``1d``.

    profile = parse_profile(["0 -> 20k/s over 5m", "hold 10m"])
    profile.duration_s, profile.rate(60)    # (900, 4000.0)
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import yaml

from loadgen.design.values import rate_per_s, span_s
from loadgen.errors import ConfigError

__all__ = ["Profile", "constant", "load_profile", "parse_profile"]

_RAMP = re.compile(r"^(?P<start>\S+)\s*->\s*(?P<end>\S+)\s+over\s+(?P<span>\S+)$")
_HOLD = re.compile(r"^hold\s+(?P<span>\S+)$")
_STEP = re.compile(r"^(?P<rate>\S+)\s+for\s+(?P<span>\S+)$")
_DAILY = re.compile(r"^daily\s+(?P<low>\S+?)\s*\.\.\s*(?P<high>\S+)\s+for\s+(?P<span>\S+)$")
_SPIKE = re.compile(r"^x(?P<factor>[0-9]*\.?[0-9]+)\s+for\s+(?P<span>\S+)\s+at\s+(?P<at>\S+)$")
FORMS = (
    "'0 -> 20k/s over 10m', 'hold 1h', '5k/s for 30m', 'daily 2k/s..20k/s for 24h' "
    "or 'x3 for 5m at 2h'"
)
DAY_S = 86400.0


@dataclass(frozen=True)
class Profile:
    """Executions per second, second by second, over the whole simulated time."""

    rates: tuple[float, ...]
    """The rate of each simulated second."""
    lines: tuple[str, ...] = ()
    """The lines it was read from, for the summary."""

    @property
    def duration_s(self) -> int:
        return len(self.rates)

    def rate(self, second: int) -> float:
        return self.rates[second]

    def array(self) -> np.ndarray:
        return np.asarray(self.rates, dtype=np.float64)


def constant(rate: float, duration_s: float) -> Profile:
    """``rate`` executions per second for ``duration_s`` seconds."""
    seconds = _seconds(duration_s, f"{duration_s}s")
    return Profile((float(rate),) * seconds, (f"{rate:g}/s for {seconds}s",))


def _rate(text: str, line: str) -> float:
    if text.strip() in ("0", "0/s"):
        return 0.0
    try:
        return rate_per_s(text)
    except ValueError as e:
        raise ConfigError(f"profile line {line!r}: {e}") from None


def _span(text: str, line: str) -> int:
    try:
        value = span_s(text)
    except ValueError as e:
        raise ConfigError(f"profile line {line!r}: {e}") from None
    return _seconds(value, line)


def _seconds(value: float, line: str) -> int:
    if not (math.isfinite(value) and value >= 1):
        raise ConfigError(f"profile line {line!r}: a duration of at least 1s is needed")
    return round(value)


def parse_profile(lines: Sequence[object]) -> Profile:
    """A profile from its lines (see the module docstring); `ConfigError` names a bad line."""
    rates: list[float] = []
    spikes: list[tuple[float, int, int]] = []
    last = 0.0
    for raw in lines:
        line = " ".join(str(raw).split())
        if (match := _RAMP.match(line)) is not None:
            start, end = _rate(match["start"], line), _rate(match["end"], line)
            n = _span(match["span"], line)
            # The rate in the middle of each second: the ramp's mean over that second.
            rates += [start + (end - start) * (i + 0.5) / n for i in range(n)]
            last = end
        elif (match := _HOLD.match(line)) is not None:
            rates += [last] * _span(match["span"], line)
        elif (match := _DAILY.match(line)) is not None:
            low, high = _rate(match["low"], line), _rate(match["high"], line)
            n = _span(match["span"], line)
            rates += [
                low + (high - low) * (1 - math.cos(2 * math.pi * (i + 0.5) / DAY_S)) / 2
                for i in range(n)
            ]
            last = rates[-1]
        elif (match := _SPIKE.match(line)) is not None:
            factor = float(match["factor"])
            if not factor > 0:
                raise ConfigError(f"profile line {line!r}: the factor must be more than 0")
            try:
                at = span_s(match["at"])
            except ValueError:
                at = -1.0
            if at < 0:
                raise ConfigError(f"profile line {line!r}: 'at' must be a time like 2h or 90m")
            spikes.append((factor, round(at), _span(match["span"], line)))
        elif (match := _STEP.match(line)) is not None:
            last = _rate(match["rate"], line)
            rates += [last] * _span(match["span"], line)
        else:
            raise ConfigError(f"profile line {line!r} does not parse (expected {FORMS})")
    if not rates:
        raise ConfigError(f"a profile needs at least one step, ramp, hold or daily line ({FORMS})")
    for factor, at, span in spikes:
        if at >= len(rates):
            raise ConfigError(
                f"profile spike 'x{factor:g} for {span}s at {at}s' starts after the profile's "
                f"end ({len(rates)}s)"
            )
        for second in range(at, min(len(rates), at + span)):
            rates[second] *= factor
    return Profile(tuple(rates), tuple(" ".join(str(raw).split()) for raw in lines))


def load_profile(path: str) -> Profile:
    """A profile file: a YAML list of lines, or a mapping with the list under ``profile``."""
    try:
        data = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    except OSError as e:
        raise ConfigError(f"cannot read profile {path!r}: {e.strerror}") from None
    except yaml.YAMLError as e:
        raise ConfigError(f"profile {path!r} is not valid YAML: {str(e).splitlines()[0]}") from None
    if isinstance(data, dict) and "profile" in data:
        data = data["profile"]
    if not isinstance(data, list):
        raise ConfigError(f"profile {path!r}: expected a list of lines ({FORMS})")
    try:
        return parse_profile(data)
    except ConfigError as e:
        raise ConfigError(f"{path}: {e}") from None
