"""The thresholds file: YAML and TOML read alike, every bad value refused on one line."""

from __future__ import annotations

import pytest

from loadgen.errors import ConfigError
from loadgen.verdict.thresholds import GATES, Gate, Settings, load_thresholds, parse_thresholds

YAML = """
settings:
  sustain_s: 3
  partitions: 8
  scale: 0.5
run:
  max_failure_ratio: 0.01
  min_requests: 100
operations:
  "counter.*":
    max_p99_ms: 800
tables:
  "*":
    max_hot_key_share: 0.25
  ph-orders/status:
    max_key_write_units_per_s: 500
"""

TOML = """
[settings]
sustain_s = 3
partitions = 8
scale = 0.5

[run]
max_failure_ratio = 0.01
min_requests = 100

[operations."counter.*"]
max_p99_ms = 800

[tables."*"]
max_hot_key_share = 0.25

[tables."ph-orders/status"]
max_key_write_units_per_s = 500
"""


def test_yaml_and_toml_read_alike(tmp_path) -> None:
    (tmp_path / "t.yaml").write_text(YAML)
    (tmp_path / "t.toml").write_text(TOML)
    from_yaml = load_thresholds(tmp_path / "t.yaml")
    from_toml = load_thresholds(tmp_path / "t.toml")
    assert from_yaml.gates == from_toml.gates
    assert from_yaml.settings == from_toml.settings == Settings(3.0, 8, 0.5)
    assert from_yaml.gates == (
        Gate("run", "", "max_failure_ratio", 0.01),
        Gate("run", "", "min_requests", 100.0),
        Gate("operations", "counter.*", "max_p99_ms", 800.0),
        Gate("tables", "*", "max_hot_key_share", 0.25),
        Gate("tables", "ph-orders/status", "max_key_write_units_per_s", 500.0),
    )


def test_every_gate_is_accepted_where_it_applies() -> None:
    for name, kind in GATES.items():
        value = {"not reported": 1} if kind.classes else 1
        for section in kind.sections:
            body = {name: value} if section == "run" else {"*": {name: value}}
            assert parse_thresholds({section: body}).gates[0].name == name


def test_a_limit_per_class_is_one_gate_a_class_in_yaml_and_toml(tmp_path) -> None:
    (tmp_path / "t.yaml").write_text(
        "operations:\n"
        '  "counter.*":\n'
        "    max_throttled_ratio_by_cause: {partition: 0.01, capacity: 0, not reported: 0}\n"
        "    max_throttled_ratio_by_reason:\n"
        "      IndexWriteKeyRangeThroughputExceeded: 0.02\n"
    )
    (tmp_path / "t.toml").write_text(
        '[operations."counter.*".max_throttled_ratio_by_cause]\n'
        'partition = 0.01\ncapacity = 0\n"not reported" = 0\n'
        '[operations."counter.*".max_throttled_ratio_by_reason]\n'
        "IndexWriteKeyRangeThroughputExceeded = 0.02\n"
    )
    gates = load_thresholds(tmp_path / "t.yaml").gates
    assert gates == load_thresholds(tmp_path / "t.toml").gates
    by_cause = "max_throttled_ratio_by_cause"
    assert gates == (
        Gate("operations", "counter.*", by_cause, 0.01, "partition"),
        Gate("operations", "counter.*", by_cause, 0.0, "capacity"),
        Gate("operations", "counter.*", by_cause, 0.0, "not reported"),
        Gate(
            "operations",
            "counter.*",
            "max_throttled_ratio_by_reason",
            0.02,
            "IndexWriteKeyRangeThroughputExceeded",
        ),
    )
    assert gates[0].title == "max_throttled_ratio_by_cause[partition]"


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (
            {"tables": {"t": {"max_hot_key_shar": 0.2}}},
            "thresholds: tables.t.max_hot_key_shar: unknown gate 'max_hot_key_shar' = 0.2 "
            "(did you mean max_hot_key_share?)",
        ),
        (
            {"tables": {"t": {"max_hot_key_share": -0.2}}},
            "thresholds: tables.t.max_hot_key_share: expected a ratio from 0 to 1 (got -0.2)",
        ),
        (
            {"tables": {"t": {"max_hot_key_share": 1.5}}},
            "thresholds: tables.t.max_hot_key_share: expected a ratio from 0 to 1 (got 1.5)",
        ),
        (
            {"run": {"max_p99_ms": "fast"}},
            "thresholds: run.max_p99_ms: expected milliseconds >= 0 (got 'fast')",
        ),
        (
            {"run": {"max_failure_ratio": True}},
            "thresholds: run.max_failure_ratio: expected a ratio from 0 to 1 (got True)",
        ),
        (
            {"run": {"max_throttled_ratio": -1}},
            "thresholds: run.max_throttled_ratio: expected a number >= 0 (throttled attempts "
            "per request; can exceed 1) (got -1)",
        ),
        (
            {"run": {"min_requests": 1.5}},
            "thresholds: run.min_requests: expected an integer >= 0 (got 1.5)",
        ),
        (
            {"tables": {"t": {"max_partition_skew": 0.5}}},
            "thresholds: tables.t.max_partition_skew: expected a number >= 1 (busiest partition "
            "over the mean) (got 0.5)",
        ),
        (
            {"tables": {"t": {"max_p99_ms": 100}}},
            "thresholds: tables.t.max_p99_ms: the gate applies to run and operations, not tables "
            "(got 100)",
        ),
        (
            {"run": {"max_hot_key_share": 0.2}},
            "thresholds: run.max_hot_key_share: the gate applies to tables, not run (got 0.2)",
        ),
        (
            {"tabels": {"t": {"max_hot_key_share": 0.2}}},
            "thresholds: tabels: unknown section 'tabels' (expected: settings, run, operations, "
            "tables)",
        ),
        (
            {"tables": {"t": 0.2}},
            "thresholds: tables.t: expected a mapping of gates (got 0.2)",
        ),
        (
            {"settings": {"partitions": 0}, "run": {"min_requests": 1}},
            "thresholds: settings.partitions: expected an integer from 1 to 1024 (got 0)",
        ),
        (
            {"settings": {"windows": 3}, "run": {"min_requests": 1}},
            "thresholds: settings.windows: unknown setting 'windows' = 3 (expected: sustain_s, "
            "partitions, scale)",
        ),
        (
            {"settings": {"sustain_s": 5}},
            "thresholds: no gates (expected gates under run, operations or tables)",
        ),
        ([1, 2], "thresholds: expected a mapping with sections settings, run, operations, tables"),
        (
            {"run": {"max_throttled_ratio_by_cause": 0.01}},
            "thresholds: run.max_throttled_ratio_by_cause: expected a mapping of causes to "
            "limits, e.g. {partition: 0.01} (got 0.01)",
        ),
        (
            {"run": {"max_throttled_ratio_by_cause": {"hot-key": 0.01}}},
            "thresholds: run.max_throttled_ratio_by_cause: unknown cause 'hot-key' = 0.01 "
            "(expected: partition, capacity, provisioned, account, maximum, buffer, not reported)",
        ),
        (
            {"run": {"max_throttled_ratio_by_cause": {"capacty": 0.01}}},
            "thresholds: run.max_throttled_ratio_by_cause: unknown cause 'capacty' = 0.01 "
            "(did you mean capacity?)",
        ),
        (
            {"run": {"max_throttled_ratio_by_reason": {"TableWriteKeyRange": 0}}},
            "thresholds: run.max_throttled_ratio_by_reason: unknown reason 'TableWriteKeyRange' "
            "= 0 (did you mean TableWriteKeyRangeThroughputExceeded?)",
        ),
        (
            {"run": {"max_throttled_ratio_by_cause": {"partition": -1}}},
            "thresholds: run.max_throttled_ratio_by_cause.partition: expected a number >= 0 "
            "(throttles of the class per request; can exceed 1) (got -1)",
        ),
        (
            {"tables": {"t": {"max_throttled_ratio_by_cause": {"partition": 0}}}},
            "thresholds: tables.t.max_throttled_ratio_by_cause: the gate applies to run and "
            "operations, not tables (got {'partition': 0})",
        ),
    ],
)
def test_bad_values_fail_on_one_line_naming_gate_and_value(data, message) -> None:
    with pytest.raises(ConfigError) as raised:
        parse_thresholds(data)
    assert str(raised.value) == message
    assert "\n" not in str(raised.value)


def test_bad_files(tmp_path) -> None:
    cases = {
        "t.json": "must end in .yaml, .yml or .toml",
        "t.yaml": "is not valid",
        "t.toml": "is not valid",
    }
    for name, message in cases.items():
        path = tmp_path / name
        path.write_text("run: [unclosed\n" if name != "t.toml" else "[run\n")
        with pytest.raises(ConfigError, match=message) as raised:
            load_thresholds(path)
        assert "\n" not in str(raised.value)
    with pytest.raises(ConfigError, match="cannot read thresholds file"):
        load_thresholds(tmp_path / "missing.yaml")
    empty = tmp_path / "empty.yaml"
    empty.write_text("")
    with pytest.raises(ConfigError, match="expected a mapping"):
        load_thresholds(empty)
