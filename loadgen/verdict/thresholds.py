"""The thresholds file of ``loadgen gate``: which gates apply to what, read and checked.

A YAML or TOML mapping with up to four sections; every gate is a name and a number:

.. code-block:: yaml

    settings:            # how figures are read (all optional)
      sustain_s: 5       # window of the key-rate gates, seconds
      partitions: 16     # partitions the skew gates split the hash space into
      scale: 0.1         # override the results' partition-model scale
    run:                 # the run's totals
      max_failure_ratio: 0.01
      max_p99_ms: 2000
      min_patterns_passed_ratio: 1   # a design run: every access pattern's verdict passes
      max_monthly_cost_usd: 3000     # the run's tables as run, a month (loadgen.verdict.cost)
    operations:          # per access pattern (``counter.increment``) or operation
      "counter.*":       # (``UpdateItem``); shell-style globs
        max_throttled_ratio: 0.05
        max_throttled_ratio_by_cause:  # a limit per class: the model's cause of a throttle
          partition: 0.01
          capacity: 0
          not reported: 0
    tables:              # per table or index (``ph-orders/status``); globs
      "*":
        max_hot_key_share: 0.25
        max_key_write_units_per_s: 500
        max_monthly_cost_usd: 1000

`GATES` lists every gate, where it applies and what values it takes; a gate per class
(``max_throttled_ratio_by_cause``, ``..._by_reason``) takes a mapping of classes to numbers and
becomes one `Gate` a class. A bad file raises
`ConfigError` with one line naming the gate and the value, and the CLI exits 2.

    thresholds = load_thresholds("examples/thresholds/counter.yaml")
    [gate.name for gate in thresholds.gates]
"""

from __future__ import annotations

import difflib
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from loadgen.configfile import read_yaml_or_toml
from loadgen.errors import ConfigError
from loadgen.verdict.reasons import CLASSES

__all__ = [
    "GATES",
    "SECTIONS",
    "Gate",
    "GateKind",
    "Settings",
    "Thresholds",
    "load_thresholds",
    "parse_thresholds",
]

SECTIONS = ("settings", "run", "operations", "tables")
"""Top-level sections of a thresholds file."""

_RUN = ("run", "operations")
_TABLES = ("tables",)
_ALL = ("run", "operations", "tables")


@dataclass(frozen=True)
class GateKind:
    """What one gate measures and which limits make sense for it."""

    sections: tuple[str, ...]
    """Where it applies: run, operations, tables."""
    unit: str
    """How its figures print: ratio, ms, per_s, count, x, pct, units_per_s, usd."""
    lowest: float = 0.0
    highest: float = math.inf
    expects: str = "a number >= 0"
    """Words for the error message."""
    baseline: bool = False
    """A regression gate: compares with ``--baseline`` and is skipped without one."""
    minimum: bool = False
    """The figure must be at least the limit (``min_*``), not at most."""
    integer: bool = False
    classes: str = ""
    """A limit per class of `loadgen.verdict.reasons.CLASSES` (``cause`` or ``reason``): the
    gate takes a mapping of classes to limits."""


_RATIO = "a ratio from 0 to 1"
_PER_REQUEST = "a number >= 0 (throttled attempts per request; can exceed 1)"
_PER_REQUEST_OF_CLASS = "a number >= 0 (throttles of the class per request; can exceed 1)"

GATES: dict[str, GateKind] = {
    # Absolute gates on the run's totals and on each operation row.
    "max_failure_ratio": GateKind(_RUN, "ratio", highest=1.0, expects=_RATIO),
    "max_throttled_ratio": GateKind(_ALL, "ratio", expects=_PER_REQUEST),
    # The same, per class of what the target said: the partition model's cause, or
    # DynamoDB's ThrottlingReason; "not reported" is a class of its own.
    "max_throttled_ratio_by_cause": GateKind(
        _RUN, "ratio", expects=_PER_REQUEST_OF_CLASS, classes="cause"
    ),
    "max_throttled_ratio_by_reason": GateKind(
        _RUN, "ratio", expects=_PER_REQUEST_OF_CLASS, classes="reason"
    ),
    "max_p50_ms": GateKind(_RUN, "ms", expects="milliseconds >= 0"),
    "max_p95_ms": GateKind(_RUN, "ms", expects="milliseconds >= 0"),
    "max_p99_ms": GateKind(_RUN, "ms", expects="milliseconds >= 0"),
    "min_requests_per_s": GateKind(_RUN, "per_s", minimum=True),
    "min_requests": GateKind(_RUN, "count", minimum=True, integer=True, expects="an integer >= 0"),
    # A rate run's delivery (always checked for one, at 0.95 unless the file says otherwise).
    "min_load_delivered_ratio": GateKind(
        ("run",), "ratio", highest=1.0, minimum=True, expects=_RATIO
    ),
    # A design run's verdicts per access pattern (`loadgen.verdict.patterns`): 1 asks that
    # every pattern passes.
    "min_patterns_passed_ratio": GateKind(
        ("run",), "ratio", highest=1.0, minimum=True, expects=_RATIO
    ),
    # Per table or index, from the hot-key sketches and the heat matrix.
    "max_hot_key_share": GateKind(_TABLES, "ratio", highest=1.0, expects=_RATIO),
    "max_partition_skew": GateKind(
        _TABLES, "x", lowest=1.0, expects="a number >= 1 (busiest partition over the mean)"
    ),
    "max_partition_gini": GateKind(_TABLES, "ratio", highest=1.0, expects=_RATIO),
    "max_key_write_units_per_s": GateKind(_TABLES, "units_per_s"),
    "max_key_read_units_per_s": GateKind(_TABLES, "units_per_s"),
    # What the run's traffic costs a month, its tables as run (provisioned where they had
    # throughput, else on demand) plus storage (`loadgen.verdict.cost`).
    "max_monthly_cost_usd": GateKind(
        ("run", "tables"), "usd", expects="US dollars a month, a number >= 0"
    ),
    # Regression gates against a baseline results file.
    "max_p50_regression_pct": GateKind(_RUN, "pct", baseline=True),
    "max_p95_regression_pct": GateKind(_RUN, "pct", baseline=True),
    "max_p99_regression_pct": GateKind(_RUN, "pct", baseline=True),
    "max_requests_per_s_drop_pct": GateKind(
        _RUN, "pct", highest=100.0, baseline=True, expects="a percentage from 0 to 100"
    ),
    "max_failure_ratio_increase": GateKind(
        _RUN, "ratio", highest=1.0, baseline=True, expects=_RATIO
    ),
    "max_throttled_ratio_increase": GateKind(_ALL, "ratio", baseline=True),
    "max_hot_key_share_increase": GateKind(
        _TABLES, "ratio", highest=1.0, baseline=True, expects=_RATIO
    ),
}
"""Every gate by name."""


@dataclass(frozen=True)
class Gate:
    """One gate as written: ``tables."ph-counter".max_hot_key_share = 0.25``."""

    section: str
    selector: str
    """A glob over operation or scope names; empty for the run section."""
    name: str
    limit: float
    of: str = ""
    """The class a gate per class limits (``partition``, ``not reported``, ...); else empty."""

    @property
    def kind(self) -> GateKind:
        return GATES[self.name]

    @property
    def title(self) -> str:
        """The gate's name, with its class: ``max_throttled_ratio_by_cause[partition]``."""
        return f"{self.name}[{self.of}]" if self.of else self.name

    @property
    def where(self) -> str:
        """``run`` or ``tables.ph-counter``: where the gate was written."""
        return self.section if not self.selector else f"{self.section}.{self.selector}"


@dataclass(frozen=True)
class Settings:
    """How the gates read a results file."""

    sustain_s: float = 5.0
    """Seconds a key's rate must hold to count (the key-rate gates)."""
    partitions: int = 16
    """Partitions of equal hash ranges that the skew gates compare."""
    scale: float | None = None
    """The partition model's scale; None reads it from the results (1 without the model)."""


@dataclass(frozen=True)
class Thresholds:
    """A checked thresholds file."""

    gates: tuple[Gate, ...]
    settings: Settings = field(default_factory=Settings)
    source: str = ""


def _number(where: str, value: Any, kind: GateKind) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or math.isnan(value):
        raise ConfigError(f"{where}: expected {kind.expects} (got {value!r})")
    if kind.integer and not float(value).is_integer():
        raise ConfigError(f"{where}: expected {kind.expects} (got {value!r})")
    if not kind.lowest <= value <= kind.highest:
        raise ConfigError(f"{where}: expected {kind.expects} (got {value!r})")
    return float(value)


def _mapping(where: str, value: Any) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise ConfigError(f"{where}: expected a mapping of gates (got {value!r})")
    return value


def _gates(where: str, section: str, selector: str, values: dict[str, Any]) -> list[Gate]:
    gates = []
    for name, value in values.items():
        at = f"{where}.{name}"
        kind = GATES.get(str(name))
        if kind is None:
            close = difflib.get_close_matches(str(name), GATES, n=1)
            hint = f" (did you mean {close[0]}?)" if close else ""
            raise ConfigError(f"{at}: unknown gate {name!r} = {value!r}{hint}")
        if section not in kind.sections:
            raise ConfigError(
                f"{at}: the gate applies to {' and '.join(kind.sections)}, not {section} "
                f"(got {value!r})"
            )
        if kind.classes:
            gates += _per_class(at, section, selector, str(name), value, kind)
        else:
            gates.append(Gate(section, selector, str(name), _number(at, value, kind)))
    return gates


def _per_class(
    at: str, section: str, selector: str, name: str, value: Any, kind: GateKind
) -> list[Gate]:
    """One gate per class of a gate's mapping (``{partition: 0.01, capacity: 0}``)."""
    known = CLASSES[kind.classes]
    if not isinstance(value, dict) or not value:
        raise ConfigError(
            f"{at}: expected a mapping of {kind.classes}s to limits, e.g. "
            f"{{{known[0]}: 0.01}} (got {value!r})"
        )
    gates = []
    for of, limit in value.items():
        if of not in known:
            close = difflib.get_close_matches(str(of), known, n=1)
            hint = f"did you mean {close[0]}?" if close else f"expected: {', '.join(known)}"
            raise ConfigError(f"{at}: unknown {kind.classes} {of!r} = {limit!r} ({hint})")
        gates.append(Gate(section, selector, name, _number(f"{at}.{of}", limit, kind), str(of)))
    return gates


def _settings(where: str, values: dict[str, Any]) -> Settings:
    known = {
        "sustain_s": GateKind((), "s", lowest=0.001, expects="seconds > 0"),
        "partitions": GateKind(
            (), "count", lowest=1, highest=1024, integer=True, expects="an integer from 1 to 1024"
        ),
        "scale": GateKind((), "x", lowest=1e-9, expects="a number > 0"),
    }
    parsed: dict[str, Any] = {}
    for name, value in values.items():
        at = f"{where}.{name}"
        kind = known.get(str(name))
        if kind is None:
            raise ConfigError(
                f"{at}: unknown setting {name!r} = {value!r} (expected: {', '.join(known)})"
            )
        parsed[str(name)] = _number(at, value, kind)
    if "partitions" in parsed:
        parsed["partitions"] = int(parsed["partitions"])
    return Settings(**parsed)


def parse_thresholds(data: Any, source: str = "thresholds") -> Thresholds:
    """Check an already loaded thresholds mapping (see the module docstring)."""
    if not isinstance(data, dict):
        raise ConfigError(f"{source}: expected a mapping with sections {', '.join(SECTIONS)}")
    settings = Settings()
    gates: list[Gate] = []
    for section, body in data.items():
        where = f"{source}: {section}"
        if section not in SECTIONS:
            raise ConfigError(
                f"{where}: unknown section {section!r} (expected: {', '.join(SECTIONS)})"
            )
        if section == "settings":
            settings = _settings(where, _mapping(where, body))
        elif section == "run":
            gates += _gates(where, section, "", _mapping(where, body))
        else:
            for selector, values in _mapping(where, body).items():
                at = f"{where}.{selector}"
                gates += _gates(at, section, str(selector), _mapping(at, values))
    if not gates:
        raise ConfigError(f"{source}: no gates (expected gates under run, operations or tables)")
    return Thresholds(tuple(gates), settings, source)


def load_thresholds(path: str | Path) -> Thresholds:
    """Read and check a YAML (.yaml, .yml) or TOML (.toml) thresholds file."""
    data = read_yaml_or_toml(path, "thresholds file")
    return parse_thresholds(data, Path(path).name)
