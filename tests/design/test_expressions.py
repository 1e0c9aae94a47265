"""A design file's expressions: values and names it gives, read as DynamoDB reads them.

`loadgen check`, `run` and `simulate` load a design the same way, so each refuses what
DynamoDB would refuse on every call, in one line naming the pattern by its id (exit 2).
"""

from __future__ import annotations

import copy
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from loadgen.design import Draws, load_design, load_designs
from loadgen.errors import ConfigError

ROOT = Path(__file__).resolve().parents[2]

TICKETS: dict[str, Any] = {
    "tables": [
        {
            "TableName": "Tickets",
            "AttributeDefinitions": [
                {"AttributeName": "PK", "AttributeType": "S"},
                {"AttributeName": "SK", "AttributeType": "S"},
                {"AttributeName": "eventId", "AttributeType": "S"},
            ],
            "KeySchema": [
                {"AttributeName": "PK", "KeyType": "HASH"},
                {"AttributeName": "SK", "KeyType": "RANGE"},
            ],
            "GlobalSecondaryIndexes": [
                {
                    "IndexName": "ByEvent",
                    "KeySchema": [{"AttributeName": "eventId", "KeyType": "HASH"}],
                    "Projection": {"ProjectionType": "ALL"},
                }
            ],
        }
    ],
    "generators": {"event": {"count": 50}, "order": {"id": True}},
    "entities": {
        "inventory": {"item": {"PK": "EVENT#{event}", "SK": "INVENTORY", "remaining": 100}},
        "order": {"item": {"PK": "ORDER#{order}", "SK": "ORDER", "eventId": "{event}"}},
    },
    "access_patterns": [
        {"id": "page-view", "operation": "Query", "index": "ByEvent",
         "key": {"eventId": "{event}"}, "rate": "50/s"},
        {"id": "purchase", "operation": "TransactWriteItems", "rate": "8/s", "actions": [
            {"operation": "Update", "key": {"PK": "EVENT#{event}", "SK": "INVENTORY"},
             "add": {"remaining": -1}, "condition": "remaining >= :one",
             "values": {":one": 1}},
            {"operation": "Put", "entity": "order"},
        ]},
    ],
}  # fmt: skip


def _file(tmp_path: Path, data: dict[str, Any]) -> str:
    path = tmp_path / "tickets.yaml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    return str(path)


def _changed(change: Any) -> dict[str, Any]:
    data = copy.deepcopy(TICKETS)
    change(data)
    return data


def _decrement(data: dict[str, Any]) -> dict[str, Any]:
    action: dict[str, Any] = data["access_patterns"][1]["actions"][0]
    return action


def test_a_conditional_decrement_carries_its_values_typed(tmp_path: Path) -> None:
    design = load_design(_file(tmp_path, TICKETS))
    generators = design.generators(seed=3)
    (call,) = design.compile(generators)["purchase"].calls(Draws(generators))
    update = call.params["TransactItems"][0]["Update"]
    assert update["ConditionExpression"] == "remaining >= :one"
    assert update["ExpressionAttributeValues"][":one"] == {"N": "1"}
    # The compiler's own placeholders are numbered around the file's.
    assert update["UpdateExpression"] == "ADD #n0 :v1"
    assert update["ExpressionAttributeValues"][":v1"] == {"N": "-1"}
    assert call.params["TransactItems"][1]["Put"]["Item"]["eventId"]["S"].isdigit()


def test_values_draw_from_generators_and_take_dynamodb_json(tmp_path: Path) -> None:
    def change(data: dict[str, Any]) -> None:
        data["access_patterns"][0].update(
            filter="#e = :mine AND contains(tags, :tag)",
            names={"#e": "eventId"},
            values={":mine": "{event}", ":tag": {"S": "vip-{event}"}},
        )

    design = load_design(_file(tmp_path, _changed(change)))
    generators = design.generators(seed=5)
    draws = Draws(generators)
    (call,) = design.compile(generators)["page-view"].calls(draws)
    values = call.params["ExpressionAttributeValues"]
    assert values[":mine"] == {"S": draws["event"]}
    assert values[":tag"] == {"S": f"vip-{draws['event']}"}
    assert call.params["FilterExpression"] == "#e = :mine AND contains(tags, :tag)"
    # The key condition reuses the file's #e for eventId rather than a second name.
    assert call.params["KeyConditionExpression"].startswith("#e = ")


def test_an_update_expression_is_written_as_dynamodb_reads_it(tmp_path: Path) -> None:
    def change(data: dict[str, Any]) -> None:
        action = _decrement(data)
        del action["add"]
        action["update"] = "SET remaining = remaining - :one"

    design = load_design(_file(tmp_path, _changed(change)))
    generators = design.generators()
    (call,) = design.compile(generators)["purchase"].calls(Draws(generators))
    update = call.params["TransactItems"][0]["Update"]
    assert update["UpdateExpression"] == "SET remaining = remaining - :one"
    assert update["ExpressionAttributeValues"] == {":one": {"N": "1"}}


def test_pattern_values_go_to_the_actions_that_name_them(tmp_path: Path) -> None:
    def change(data: dict[str, Any]) -> None:
        pattern = data["access_patterns"][1]
        pattern["values"] = _decrement(data).pop("values")
        pattern["actions"][1]["condition"] = "attribute_not_exists(PK)"

    design = load_design(_file(tmp_path, _changed(change)))
    generators = design.generators()
    (call,) = design.compile(generators)["purchase"].calls(Draws(generators))
    update, put = (next(iter(a.values())) for a in call.params["TransactItems"])
    assert update["ExpressionAttributeValues"][":one"] == {"N": "1"}
    assert "ExpressionAttributeValues" not in put


REFUSED = {
    "a literal in a condition": (
        lambda d: _decrement(d).update(condition="remaining > 0"),
        "access_patterns.purchase.actions[0].condition: Invalid ConditionExpression: Syntax "
        'error; token: "0", near: "> 0" (an expression takes no literal',
    ),
    "an undefined placeholder": (
        lambda d: _decrement(d).update(condition="remaining >= :zero"),
        "access_patterns.purchase.actions[0].condition: Invalid ConditionExpression: An "
        "expression attribute value used in expression is not defined; attribute value: :zero",
    ),
    "a consistent read of a GSI": (
        lambda d: d["access_patterns"][0].update(consistent=True),
        "access_patterns.page-view.consistent: Consistent reads are not supported on global "
        "secondary indexes (ByEvent of table Tickets is one",
    ),
    "a value no expression uses": (
        lambda d: _decrement(d)["values"].update({":two": 2}),
        "access_patterns.purchase.actions[0].values: Value provided in "
        "ExpressionAttributeValues unused in expressions: keys: {:two}",
    ),
    "a reserved word": (
        lambda d: _decrement(d).update(condition="size >= :one AND name <> :one"),
        "access_patterns.purchase.actions[0].condition: Invalid ConditionExpression: Attribute "
        "name is a reserved keyword; reserved keyword: name",
    ),
    "an empty name": (
        lambda d: d["access_patterns"][0].update(filter="#x = :one", names={"#x": ""},
                                                 values={":one": 1}),
        "access_patterns.page-view.names: ExpressionAttributeNames contains invalid value: "
        "Empty attribute name for key #x",
    ),
    "an expression over 4 KB": (
        lambda d: d["access_patterns"][0].update(projection=[f"a{i:04d}" for i in range(900)]),
        "access_patterns.page-view.projection: Invalid ProjectionExpression: Expression size "
        "has exceeded the maximum allowed size;",
    ),
    "an update of a key attribute": (
        lambda d: (_decrement(d).pop("add"), _decrement(d).update(update="SET SK = :one")),
        "access_patterns.purchase.actions[0].update: One or more parameter values were "
        "invalid: Cannot update attribute SK. This attribute is part of the key",
    ),
    "a placeholder without its sigil": (
        lambda d: _decrement(d).update(values={"one": 1}),
        "access_patterns.purchase.actions[0].values.one: a placeholder in values starts with "
        "':'",
    ),
    "a condition on a read": (
        lambda d: d["access_patterns"][0].update(condition="attribute_exists(PK)"),
        "access_patterns.page-view.condition: a Query takes no a ConditionExpression",
    ),
}  # fmt: skip


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_what_dynamodb_refuses_is_refused_at_load_naming_the_pattern(
    tmp_path: Path, case: str
) -> None:
    change, expected = REFUSED[case]
    path = _file(tmp_path, _changed(change))
    with pytest.raises(ConfigError) as error:
        load_designs(path)
    message = str(error.value)
    assert message.startswith(f"{path}: {expected}"), message
    assert "\n" not in message


@pytest.mark.parametrize(
    ("command", "case"),
    [
        ("check", "a literal in a condition"),
        ("check", "an undefined placeholder"),
        ("check", "a consistent read of a GSI"),
        ("run", "a literal in a condition"),
        ("simulate", "a literal in a condition"),
    ],
)
def test_check_run_and_simulate_refuse_alike_in_one_line(
    tmp_path: Path, command: str, case: str
) -> None:
    change, expected = REFUSED[case]
    path = _file(tmp_path, _changed(change))
    flags = [] if command == "check" else ["--duration", "5s"]
    done = subprocess.run(
        [sys.executable, "-m", "loadgen", command, path, *flags],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith(f"loadgen: error: {path}: {expected}"), lines[0]


def test_an_index_nothing_writes_is_named_with_the_pattern_that_reads_it(tmp_path: Path) -> None:
    def misspelt(data: dict[str, Any]) -> None:
        item = data["entities"]["order"]["item"]
        item["eventID"] = item.pop("eventId")

    assert not any("ByEvent" in note for note in load_design(_file(tmp_path, TICKETS)).notes)
    design = load_design(_file(tmp_path, _changed(misspelt)))
    (note,) = [note for note in design.notes if "ByEvent" in note]
    assert "access pattern 'page-view' reads index ByEvent of table Tickets" in note
    assert "'eventId'" in note
    done = subprocess.run(
        [sys.executable, "-m", "loadgen", "check", _file(tmp_path, _changed(misspelt))],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert f"note: {note}" in done.stdout


def test_an_error_in_the_base_names_no_variant(tmp_path: Path) -> None:
    data = _changed(REFUSED["a literal in a condition"][0])
    data["designs"] = {"plain": {}, "warm": {"generators": {"event": {"count": 10}}}}
    with pytest.raises(ConfigError) as error:
        load_designs(_file(tmp_path, data))
    assert "designs." not in str(error.value)
    assert "access_patterns.purchase.actions[0].condition" in str(error.value)
    data = copy.deepcopy(TICKETS)
    data["designs"] = {
        "plain": {},
        "broken": {"access_patterns": {"page-view": {"consistent": True}}},
    }
    with pytest.raises(ConfigError, match=r"designs\.broken: access_patterns\.page-view\."):
        load_designs(_file(tmp_path, data))
