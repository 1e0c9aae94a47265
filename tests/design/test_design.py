"""The design file: its languages, its errors, its compiled requests and its static check."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from scipy import stats

from loadgen.design import Draws, load_design, load_designs
from loadgen.design.awsmodel import request_of_command
from loadgen.design.generators import Choice
from loadgen.design.spec import SCHEMA_PATH, json_schema
from loadgen.design.values import latency_need, rate_per_s
from loadgen.errors import ConfigError
from loadgen.simulate.launch import check

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples" / "designs"


@pytest.mark.parametrize(
    ("text", "per_s"),
    [("100k/day", 100_000 / 86_400), ("3000/min", 50.0), ("50/s", 50.0), ("2.5k/h", 2500 / 3600),
     (20, 20.0), ("1m/day", 1e6 / 86_400), ("10/hours", 10 / 3600)],
)  # fmt: skip
def test_rates_read_as_operations_per_second(text: Any, per_s: float) -> None:
    assert rate_per_s(text) == pytest.approx(per_s)


@pytest.mark.parametrize("text", ["100 per day", "fast", "0/s", "-3/s", "5/fortnight", True])
def test_a_rate_that_does_not_parse_says_what_was_expected(text: Any) -> None:
    with pytest.raises(ValueError, match=r"50/s, 3000/min, 100k/day|more than 0"):
        rate_per_s(text)


def test_latency_needs_read_their_percentile_and_milliseconds() -> None:
    need = latency_need("p99 < 10ms")
    assert (need.percentile, need.ms) == (99.0, 10.0)
    assert latency_need("p99.9<=1s").ms == 1000.0
    with pytest.raises(ValueError, match="p99 < 10ms"):
        latency_need("under 10ms")


def test_the_json_schema_kept_in_the_repository_is_the_generated_one() -> None:
    kept = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    assert kept == json.loads(json.dumps(json_schema()))


def test_a_weighted_choice_draws_its_weights() -> None:
    choice = Choice({"pending": 0.7, "shipped": 0.25, "delivered": 0.05}, seed=3)
    draws = [choice.draw() for _ in range(20_000)]
    observed = [draws.count(c) for c in choice.choices]
    result = stats.chisquare(observed, [w * 20_000 for w in choice.weights])
    assert result.pvalue > 0.001, (observed, result)


def _write(tmp_path: Path, data: dict[str, Any], name: str = "design.yaml") -> str:
    path = tmp_path / name
    text = json.dumps(data) if name.endswith(".json") else yaml.safe_dump(data)
    path.write_text(text, encoding="utf-8")
    return str(path)


def _base() -> dict[str, Any]:
    return {
        "tables": [
            {
                "TableName": "t",
                "AttributeDefinitions": [
                    {"AttributeName": "pk", "AttributeType": "S"},
                    {"AttributeName": "sk", "AttributeType": "S"},
                    {"AttributeName": "g", "AttributeType": "S"},
                ],
                "KeySchema": [
                    {"AttributeName": "pk", "KeyType": "HASH"},
                    {"AttributeName": "sk", "KeyType": "RANGE"},
                ],
                "GlobalSecondaryIndexes": [
                    {
                        "IndexName": "byg",
                        "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
                        "Projection": {"ProjectionType": "ALL"},
                    }
                ],
            }
        ],
        "generators": {
            "user": {"count": 100},
            "status": {"choice": {"a": 0.5, "b": 0.5}},
            "day": {"time": "day"},
        },
        "access_patterns": [
            {
                "id": "get",
                "operation": "GetItem",
                "key": {"pk": "USER#{user}", "sk": "P"},
                "rate": "50/s",
            },
            {
                "id": "by-g",
                "operation": "Query",
                "index": "byg",
                "key": {"g": "S#{status}"},
                "rate": "5/s",
            },
        ],
    }


def _broken(change: Any) -> dict[str, Any]:
    data = _base()
    change(data)
    return data


BAD = {
    "unknown field": (
        lambda d: d["access_patterns"][0].update(limt=3),
        "access_patterns.get: unknown field 'limt' (known: id, description, operation",
    ),
    "bad placeholder": (
        lambda d: d["access_patterns"][0]["key"].update(pk="USER#{user"),
        "access_patterns.get.key.pk: bad template 'USER#{user'",
    ),
    "unknown generator": (
        lambda d: d["access_patterns"][0]["key"].update(pk="USER#{usr}"),
        "access_patterns.get.key.pk: unknown generator 'usr' (known: day, status, user)",
    ),
    "unknown table": (
        lambda d: d["access_patterns"][0].update(table="users"),
        "access_patterns.get.table: unknown table 'users' (known: t)",
    ),
    "unknown index": (
        lambda d: d["access_patterns"][1].update(index="GSI9"),
        "access_patterns.by-g.index: table 't' has no index 'GSI9' (its indexes: byg)",
    ),
    "rate": (
        lambda d: d["access_patterns"][0].update(rate="lots/s"),
        "access_patterns.get.rate: 'lots/s' is not a rate",
    ),
    "missing key attribute": (
        lambda d: d["access_patterns"][0]["key"].pop("sk"),
        "access_patterns.get.key: missing key attribute 'sk' of table 't' (its key: pk, sk)",
    ),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_a_bad_design_file_is_one_line_naming_the_field(tmp_path: Path, case: str) -> None:
    change, expected = BAD[case]
    path = _write(tmp_path, _broken(change))
    with pytest.raises(ConfigError) as error:
        load_designs(path)
    message = str(error.value)
    assert message.startswith(f"{path}: {expected}"), message
    assert "\n" not in message


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("name: x\ntables: [1, 2\n", "not valid YAML at line 3, column 1: while parsing a flow"),
        ("name: x\ntables: a: b\n", "not valid YAML at line 2, column 10: mapping values"),
    ],
)
def test_a_file_that_is_not_yaml_says_where_in_one_line(
    tmp_path: Path, text: str, expected: str
) -> None:
    path = tmp_path / "design.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError) as error:
        load_designs(str(path))
    assert str(error.value).startswith(f"{path}: {expected}"), error.value
    assert "\n" not in str(error.value)


def test_loadgen_check_refuses_a_bad_file_in_one_line_with_exit_2(tmp_path: Path) -> None:
    path = _write(tmp_path, _broken(BAD["unknown index"][0]))
    done = subprocess.run(
        [sys.executable, "-m", "loadgen", "check", path], capture_output=True, text=True
    )
    assert done.returncode == 2
    assert done.stderr.strip().count("\n") == 0, done.stderr
    assert "no index 'GSI9'" in done.stderr
    assert done.stdout == ""


def test_a_variant_changes_only_what_it_names(tmp_path: Path) -> None:
    data = _base()
    data["designs"] = {
        "plain": {},
        "sharded": {
            "generators": {"shard": {"shard": 4}},
            "access_patterns": {"by-g": {"key": {"g": "S#{status}#{shard}"}, "each": "shard"}},
        },
    }
    plain, sharded = load_designs(_write(tmp_path, data))
    assert (plain.name, sharded.name) == ("plain", "sharded")
    generators = sharded.generators(seed=2)
    calls = list(sharded.compile(generators)["by-g"].calls(Draws(generators)))
    keys = [call.pk for call in calls]
    # One execution queries every shard of one status.
    assert len({key.rsplit("#", 1)[0] for key in keys}) == 1  # type: ignore[union-attr]
    assert sorted(key.rsplit("#", 1)[1] for key in keys) == ["0", "1", "2", "3"]  # type: ignore[union-attr]
    assert all(call.index == "byg" for call in calls)
    plain_calls = list(plain.compile(plain.generators())["by-g"].calls(Draws(plain.generators())))
    assert len(plain_calls) == 1


def test_one_execution_names_one_value_in_every_template(tmp_path: Path) -> None:
    data = _base()
    data["entities"] = {"e": {"item": {"pk": "USER#{user}", "sk": "P", "g": "S#{user}",
                                       "bio": {"size": 300}}}}  # fmt: skip
    data["access_patterns"].append({"id": "put", "operation": "PutItem", "entity": "e"})
    design = load_design(_write(tmp_path, data))
    generators = design.generators()
    (call,) = design.compile(generators)["put"].calls(Draws(generators))
    item = call.params["Item"]
    assert item["pk"]["S"] == "USER#" + item["g"]["S"][2:]
    assert len(item["bio"]["S"]) == 300
    assert call.pk == item["pk"]["S"] and call.sk == "P"
    assert "1 pattern(s) run at 10/s (no rate in the file): put" in design.notes


def test_check_expects_the_hot_status_key_and_clears_the_sharded_one() -> None:
    bad, good = load_designs(str(EXAMPLES / "single-table.yaml"))
    hot = check(bad)
    assert hot.failed
    (over,) = [load for load in hot.keys if load.over]
    assert (over.scope, over.key, over.over) == ("store/GSI1", "STATUS#pending", "write")
    assert over.write == pytest.approx(1500.0)
    verdicts = {p.id: p.verdict for p in hot.patterns}
    assert verdicts["place-order"] == "FAIL" and verdicts["get-profile"] == "PASS"
    clear = check(good)
    assert not clear.failed
    shard = next(load for load in clear.keys if load.key == "STATUS#pending#0")
    assert (shard.scope, shard.write) == ("store/GSI1", pytest.approx(150.0))


@pytest.mark.parametrize(
    ("name", "design", "code"),
    [
        ("single-table.yaml", "status-key", 1),
        ("single-table.yaml", "sharded-status", 0),
        ("ecommerce.yaml", None, 0),
        ("dynamodb_data_model.json", None, 0),
    ],
)
def test_loadgen_check_exits_1_on_a_predicted_hot_key_only(
    name: str, design: str | None, code: int
) -> None:
    command = [sys.executable, "-m", "loadgen", "check", str(EXAMPLES / name)]
    command += ["--design", design] if design else []
    done = subprocess.run(command, capture_output=True, text=True)
    assert done.returncode == code, done.stdout + done.stderr
    assert "Expected:" in done.stdout


def test_aws_data_model_patterns_take_their_requests_from_the_cli_commands() -> None:
    design = load_design(str(EXAMPLES / "dynamodb_data_model.json"))
    assert [p.id for p in design.patterns] == ["1", "2", "3", "4", "5", "6"]
    assert any(
        "pattern 7 (Full-text search over messages) not taken: Full-text" in note
        for note in design.notes
    )
    generators = design.generators()
    (call,) = design.compile(generators)["5"].calls(Draws(generators))
    assert (call.operation, call.index, call.pk) == ("Query", "StatusIndex", "online")
    assert call.params["Limit"] == 100


def test_an_aws_traffic_section_adds_rates_and_templates(tmp_path: Path) -> None:
    data = json.loads((EXAMPLES / "dynamodb_data_model.json").read_text())
    data["traffic"] = {
        "generators": {"room": {"count": 1000}},
        "patterns": {
            "3": {"rate": "400/s", "latency": "p99 < 20ms", "values": {":pk": "ROOM#{room}"}}
        },
    }
    design = load_design(_write(tmp_path, data, "model.json"))
    assert design.rates["3"] == 400.0 and design.rates["1"] == 10.0
    generators = design.generators()
    (call,) = design.compile(generators)["3"].calls(Draws(generators))
    assert call.pk is not None and call.pk.startswith("ROOM#") and call.pk != "ROOM#r1"


def test_an_aws_cli_command_reads_as_its_request() -> None:
    operation, request = request_of_command(
        "aws dynamodb query --table-name T --index-name G --key-condition-expression 'a = :a' "
        '--expression-attribute-values \'{":a":{"S":"x"}}\' --no-scan-index-forward --limit 5'
    )
    assert operation == "Query"
    assert request == {
        "TableName": "T",
        "IndexName": "G",
        "KeyConditionExpression": "a = :a",
        "ExpressionAttributeValues": {":a": {"S": "x"}},
        "ScanIndexForward": False,
        "Limit": 5,
    }


def test_the_reference_page_is_generated_from_the_schema() -> None:
    from loadgen.design.spec import REFERENCE_PATH, reference_markdown

    assert REFERENCE_PATH.read_text(encoding="utf-8") == reference_markdown()


def test_the_design_modules_examples_hold() -> None:
    import doctest

    from loadgen.design import generators, keys, templates, values

    for module in (generators, keys, templates, values):
        failed, _ = doctest.testmod(module)
        assert failed == 0, module.__name__
