"""DynamoDB's hard limits on a design file, whatever its form: counts, sizes, attributes."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from loadgen.design.loader import load_design
from loadgen.errors import ConfigError
from loadgen.model.expressions import attribute_uses
from tests.conftest import ROOT

LOBBY = ROOT / "examples" / "designs" / "game-lobby.yaml"
MODEL = ROOT / "examples" / "designs" / "dynamodb_data_model.json"


def _lobby(tmp_path: Path, change: Callable[[dict[str, Any]], None]) -> str:
    """The shipped game lobby with one change, written where the test can load it."""
    data = yaml.safe_load(LOBBY.read_text(encoding="utf-8"))
    change(data)
    path = tmp_path / "lobby.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return str(path)


def _refused(path: str) -> str:
    with pytest.raises(ConfigError) as refused:
        load_design(path)
    return str(refused.value)


def _pattern(data: dict[str, Any], pattern_id: str) -> dict[str, Any]:
    found: dict[str, Any] = next(p for p in data["access_patterns"] if p["id"] == pattern_id)
    return found


def _join(data: dict[str, Any]) -> dict[str, Any]:
    return _pattern(data, "join-game")


def test_check_refuses_a_transaction_of_101_actions_naming_the_pattern(tmp_path: Path) -> None:
    def actions(n: int) -> Callable[[dict[str, Any]], None]:
        def change(data: dict[str, Any]) -> None:
            _join(data)["actions"] = [{"operation": "Put", "entity": "player"}] * n

        return change

    load_design(_lobby(tmp_path, actions(100)))  # the limit itself is taken
    path = _lobby(tmp_path, actions(101))
    done = subprocess.run(
        [sys.executable, "-m", "loadgen", "check", path],
        cwd=ROOT, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        f"loadgen: error: {path}: access_patterns.join-game.actions: a TransactWriteItems "
        "takes at most 100 actions (101 given)"
    ]


@pytest.mark.parametrize(
    ("operation", "count", "message"),
    [
        ("BatchWriteItem", 26,
         "a BatchWriteItem takes at most 25 put and delete requests (26 given)"),
        ("BatchGetItem", 101, "a BatchGetItem takes at most 100 keys (101 given)"),
    ],
)  # fmt: skip
def test_a_batch_past_its_count_is_refused(
    tmp_path: Path, operation: str, count: int, message: str
) -> None:
    def batch(n: int) -> Callable[[dict[str, Any]], None]:
        def change(data: dict[str, Any]) -> None:
            data["access_patterns"].append(
                {"id": "players", "operation": operation, "entity": "player", "count": n}
            )

        return change

    load_design(_lobby(tmp_path, batch(count - 1)))
    assert _refused(_lobby(tmp_path, batch(count))).endswith(
        f"lobby.yaml: access_patterns.players.count: {message}"
    )


def test_a_transaction_given_whole_is_held_to_the_same_count(tmp_path: Path) -> None:
    item = {"PK": {"S": "G#{game}"}, "SK": {"S": "M"}}
    put = {"Put": {"TableName": "battle-royale", "Item": item}}

    def change(data: dict[str, Any]) -> None:
        join = _join(data)
        join.pop("actions")
        join["request"] = {"TransactItems": [put] * 101}

    assert _refused(_lobby(tmp_path, change)).endswith(
        "access_patterns.join-game.request: a TransactWriteItems takes at most 100 actions "
        "(101 given)"
    )


def test_an_item_past_400_kb_is_refused_where_the_pattern_writes_it(tmp_path: Path) -> None:
    def change(data: dict[str, Any]) -> None:
        data["entities"]["player"]["item"].update(bio={"size": 300_000}, art={"size": 110_000})

    message = _refused(_lobby(tmp_path, change))
    assert "access_patterns.join-game.actions[1].entity: an item of 410," in message
    assert message.endswith(
        "bytes (entity 'player'); DynamoDB stores items of at most 409,600 bytes (400 KB)"
    )


def test_an_item_an_update_grows_past_400_kb_is_refused_at_its_set(tmp_path: Path) -> None:
    def change(data: dict[str, Any]) -> None:
        data["entities"]["game"]["item"]["notes"] = {"size": 300_000}
        data["access_patterns"].append({
            "id": "describe", "operation": "UpdateItem", "entity": "game",
            "key": {"PK": "GAME#{game}", "SK": "METADATA"}, "set": {"story": {"size": 110_000}},
        })  # fmt: skip

    message = _refused(_lobby(tmp_path, change))
    assert "access_patterns.describe.set: an item of 410," in message
    assert "bytes after the update (entity 'game')" in message


def test_an_entity_past_400_kb_that_no_pattern_writes_is_refused(tmp_path: Path) -> None:
    def change(data: dict[str, Any]) -> None:
        data["entities"]["game"]["item"].update(a={"size": 300_000}, b={"size": 110_000})

    assert "entities.game.item: an item of 410," in _refused(_lobby(tmp_path, change))


def test_a_transaction_whose_items_pass_4_mb_is_refused(tmp_path: Path) -> None:
    def change(data: dict[str, Any]) -> None:
        for i in range(11):  # 11 items of about 390,000 bytes: 4.29 MB
            data["entities"][f"part{i}"] = {
                "item": {"PK": "GAME#{game}", "SK": f"PART#{i}", "body": {"size": 390_000}}
            }
        _join(data)["actions"] = [{"operation": "Put", "entity": f"part{i}"} for i in range(11)]

    message = _refused(_lobby(tmp_path, change))
    assert "access_patterns.join-game.actions: the items of one TransactWriteItems come to " in (
        message
    )
    assert message.endswith("DynamoDB takes at most 4,194,304 bytes (4 MB) in one transaction")

    # Ten of them (3.9 MB) are taken.
    def ten(data: dict[str, Any]) -> None:
        change(data)
        _join(data)["actions"] = _join(data)["actions"][:10]

    load_design(_lobby(tmp_path, ten))


def test_a_batch_get_past_16_mb_a_call_is_a_warning(tmp_path: Path) -> None:
    def change(data: dict[str, Any]) -> None:
        data["entities"]["player"]["item"]["bio"] = {"size": 390_000}
        data["access_patterns"].append({
            "id": "team", "operation": "BatchGetItem", "entity": "player", "count": 50,
            "key": {"PK": "GAME#{game}", "SK": "PLAYER#{user}"},
        })  # fmt: skip

    (note,) = [n for n in load_design(_lobby(tmp_path, change)).notes if "'team'" in n]
    assert note.startswith("access pattern 'team' reads 50 items of about 19,")
    assert note.endswith("one call returns: DynamoDB returns part of them and the rest as "
                         "UnprocessedKeys")  # fmt: skip


@pytest.mark.parametrize(
    ("pattern_id", "field", "change"),
    [
        ("join-game", "actions[0].condition",
         lambda p: p["actions"][0].update(condition="peeple < :limit")),
        ("join-game", "actions[0].update",
         lambda p: p["actions"][0].update(update="SET people = peeple + :one, mapName = :map")),
        ("game-page", "projection", lambda p: p.update(projection=["mapName", "peeple"])),
    ],
)  # fmt: skip
def test_a_misspelt_attribute_is_refused_naming_pattern_and_field(
    tmp_path: Path, pattern_id: str, field: str, change: Callable[[dict[str, Any]], None]
) -> None:
    message = _refused(_lobby(tmp_path, lambda data: change(_pattern(data, pattern_id))))
    assert message.endswith(
        f"lobby.yaml: access_patterns.{pattern_id}.{field}: attribute 'peeple' is carried by no "
        "entity, listed item or write of table battle-royale: DynamoDB never finds it; did "
        "you mean 'people'?"
    )


def test_a_misspelt_key_attribute_is_refused(tmp_path: Path) -> None:
    def change(data: dict[str, Any]) -> None:
        find = _pattern(data, "find-games")
        for name in ("index", "key", "limit"):
            find.pop(name)
        find["request"] = {
            "TableName": "battle-royale", "IndexName": "OpenGamesIndex",
            "KeyConditionExpression": "mapNme = :m",
            "ExpressionAttributeValues": {":m": {"S": "{map}"}},
        }  # fmt: skip

    assert _refused(_lobby(tmp_path, change)).endswith(
        "access_patterns.find-games.request: attribute 'mapNme' is not a key attribute of "
        "OpenGamesIndex (its key: mapName, PK)"
    )


def test_an_attribute_tested_absent_is_a_warning_not_an_error(tmp_path: Path) -> None:
    def change(data: dict[str, Any]) -> None:
        _join(data)["actions"][1]["condition"] = "attribute_not_exists(joind)"

    path = _lobby(tmp_path, change)
    notes = load_design(path).notes
    assert (
        "access pattern 'join-game' actions[1].condition: attribute 'joind' is carried by no "
        "entity, listed item or write of table battle-royale, and the expression tests it "
        "absent: it finds every item without it; did you mean 'joined'?"
    ) in notes
    done = subprocess.run(
        [sys.executable, "-m", "loadgen", "check", path],
        cwd=ROOT, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert "  note: access pattern 'join-game' actions[1].condition: attribute 'joind'" in (
        done.stdout
    )
    assert "error" not in done.stderr


def test_the_aws_model_is_held_to_the_same_attributes(tmp_path: Path) -> None:
    data = json.loads(MODEL.read_text(encoding="utf-8"))
    data["access_patterns"].append({
        "pattern": "90", "description": "Rename a room",
        "implementation": "aws dynamodb update-item --table-name Chat --key "
        "'{\"PK\": {\"S\": \"ROOM#r1\"}, \"SK\": {\"S\": \"META\"}}' --update-expression "
        "'SET title = :t' --condition-expression 'attribute_exists(PK) AND nmae = :t' "
        "--expression-attribute-values '{\":t\": {\"S\": \"x\"}}'",
    })  # fmt: skip
    path = tmp_path / "model.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    message = _refused(str(path))
    assert "access_patterns.90.request: attribute 'nmae' is carried by no entity" in message


def test_the_uses_of_each_attribute_are_read_from_the_expression() -> None:
    assert attribute_uses("ConditionExpression", "attribute_not_exists(a) OR a < :n") == [
        ("a", "absent"),
        ("a", "reads"),
    ]
    assert attribute_uses("UpdateExpression", "SET #c = if_not_exists(#c, :z) + :o REMOVE d") == [
        ("#c", "writes"),
        ("#c", "absent"),
        ("d", "absent"),
    ]
    assert attribute_uses("ProjectionExpression", "a.b[1], c") == [("a", "reads"), ("c", "reads")]


def test_a_filter_on_an_attribute_no_item_carries_is_a_warning(tmp_path: Path) -> None:
    def change(data: dict[str, Any]) -> None:
        _pattern(data, "find-games")["filter"] = "peeple < :most"
        _pattern(data, "find-games")["values"] = {":most": 10}

    assert (
        "access pattern 'find-games' filter: attribute 'peeple' is carried by no entity, "
        "listed item or write of table battle-royale: the filter never finds it; did you mean "
        "'people'?"
    ) in load_design(_lobby(tmp_path, change)).notes
