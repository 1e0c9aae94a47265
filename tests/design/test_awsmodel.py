"""AWS's ``dynamodb_data_model.json``: every operation its patterns may name is read, or left
out in one line saying why; ``loadgen check`` names its patterns by their descriptions."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from loadgen.design import Draws, load_design
from loadgen.design.awsmodel import request_of_command
from loadgen.design.starting import starting_plans
from loadgen.simulate import check
from loadgen.simulate.demand import pattern_demands

ROOT = Path(__file__).resolve().parents[2]
MODEL = ROOT / "examples" / "designs" / "dynamodb_data_model.json"
PROFILE = {"PK": {"S": "USER#u1"}, "SK": {"S": "PROFILE"}}


def _command(operation: str, **members: Any) -> str:
    flags = " ".join(
        f"--{flag} '{json.dumps(value)}'" if not isinstance(value, str) else f"--{flag} {value}"
        for flag, value in members.items()
    )
    return f"aws dynamodb {operation} {flags}"


TAKEN = {
    "Write two messages": _command("batch-write-item", **{"request-items": {"Chat": [
        {"PutRequest": {"Item": {"PK": {"S": "ROOM#r1"}, "SK": {"S": "MSG#1"}}}},
        {"DeleteRequest": {"Key": {"PK": {"S": "ROOM#r1"}, "SK": {"S": "MSG#0"}}}}]}}),
    "Read two profiles": _command("batch-get-item", **{"request-items": {"Chat": {
        "Keys": [PROFILE, {"PK": {"S": "USER#u2"}, "SK": {"S": "PROFILE"}}],
        "ProjectionExpression": "#n", "ExpressionAttributeNames": {"#n": "name"}}}}),
    "Join a room": _command("transact-write-items", **{"transact-items": [
        {"ConditionCheck": {"TableName": "Chat", "Key": PROFILE,
                            "ConditionExpression": "attribute_exists(PK)"}},
        {"Update": {"TableName": "Chat", "Key": {"PK": {"S": "ROOM#r1"}, "SK": {"S": "META"}},
                    "UpdateExpression": "ADD members :one",
                    "ExpressionAttributeValues": {":one": {"N": "1"}}}},
        {"Delete": {"TableName": "Chat", "Key": {"PK": {"S": "INVITE#u1"}, "SK": {"S": "r1"}}}}]}),
    "Profile and room": _command("transact-get-items", **{"transact-items": [
        {"Get": {"TableName": "Chat", "Key": PROFILE}}]}),
    "Messages with text": "aws dynamodb scan \\\n  --table-name Chat \\\n  --filter-expression "
        "'attribute_exists(#t)' --expression-attribute-names '{\"#t\": \"text\"}'",
}  # fmt: skip
LEFT_OUT = {
    "Two tables": (
        _command("batch-write-item", **{"request-items": {"Chat": [{"PutRequest": {
            "Item": PROFILE}}], "Archive": [{"PutRequest": {"Item": PROFILE}}]}}),
        "no table of the design is named 'Archive' (it has: Chat)",
    ),
    "Too many keys": (
        _command("batch-get-item", **{"request-items": {"Chat": {"Keys": [
            {"PK": {"S": f"USER#{i}"}, "SK": {"S": "PROFILE"}} for i in range(101)]}}}),
        "a BatchGetItem takes at most 100 keys (101 given)",
    ),
    "Wrong key": (
        _command("get-item", **{"table-name": "Chat", "key": {"PK": {"S": "USER#u1"}}}),
        "The provided key element does not match the schema (the key of table Chat: PK, SK",
    ),
    "From a file": (
        "aws dynamodb batch-write-item --request-items file://items.json",
        "Invalid type for parameter RequestItems, value: file://items.json",
    ),
    "A query with no key": (
        _command("query", **{"table-name": "Chat"}),
        "Either the KeyConditions or KeyConditionExpression parameter must be specified",
    ),
    "PartiQL": ("aws dynamodb execute-statement --statement 'SELECT * FROM Chat'",
                "'aws dynamodb execute-statement' is not a data operation"),
}  # fmt: skip


@pytest.fixture(scope="module")
def model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    data = json.loads(MODEL.read_text())
    for i, (description, command) in enumerate(
        [*TAKEN.items(), *((d, c) for d, (c, _) in LEFT_OUT.items())], start=10
    ):
        data["access_patterns"].append(
            {"pattern": str(i), "description": description, "implementation": command}
        )
    path = tmp_path_factory.mktemp("model") / "model.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_every_operation_is_read_or_left_out_in_one_line(model: Path) -> None:
    design = load_design(str(model))
    taken = {p.description: p for p in design.patterns}
    assert set(TAKEN) <= set(taken)
    for description, (_, why) in LEFT_OUT.items():
        assert description not in taken
        (note,) = [n for n in design.notes if f"({description}) not taken" in n]
        assert why in note and "\n" not in note, note
    # Each taken pattern builds its requests, is checked and simulated without a traceback.
    generators = design.generators()
    compiled = design.compile(generators)
    for description in TAKEN:
        (call,) = compiled[taken[description].id].calls(Draws(generators))
        assert call.operation == taken[description].operation
    report = check(design)
    assert {p.id for p in report.patterns} == set(compiled)
    assert len(pattern_demands(design, generators)) == len(compiled)
    assert starting_plans(design)[0]


def test_check_names_each_aws_pattern_by_its_description(model: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "loadgen", "check", str(model)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    assert "1. Get a user's profile" in done.stdout
    assert "10. Write two messages" in done.stdout
    assert "note: pattern 7 (Full-text search over messages) not taken: Full-text" in done.stdout


def test_a_command_continued_over_lines_and_followed_by_another_is_read() -> None:
    operation, request = request_of_command(
        'aws dynamodb get-item \\\n  --table-name Chat \\\n  --key \'{"PK": {"S": "a"}}\' '
        "&& echo done"
    )
    assert (operation, request) == ("GetItem", {"TableName": "Chat", "Key": {"PK": {"S": "a"}}})


@pytest.mark.parametrize(
    ("design", "code", "shown"),
    [("all", 1, "Throttled at launch: status-key"), ("sharded-status", 0, "sharded-status")],
)
def test_check_takes_design_all_as_run_does(design: str, code: int, shown: str) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "loadgen", "check", "examples/designs/single-table.yaml",
         "--design", design],
        cwd=ROOT, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == code, done.stderr
    assert shown in done.stdout
