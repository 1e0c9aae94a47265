"""AWS's ``dynamodb_data_model.json`` read as it is, into a design.

AWS's DynamoDB data-modeling assistant writes ``tables`` (boto3 ``create_table`` shape),
``items`` (boto3 ``batch_write_item`` shape, per table) and ``access_patterns``: ``pattern``,
``description``, ``table``, ``index``, ``dynamodb_operation`` and ``implementation``, an AWS
CLI command. The command gives each pattern its request: operation, index, expressions and
key values. What it lacks is traffic, so an optional ``traffic`` section (ours) adds a rate,
a latency need and generators per pattern id, and templates for the values the command
names literally::

    "traffic": {
      "default_rate": "20/s",
      "generators": {"user": {"count": 100000, "distribution": "zipf:1.1"}},
      "patterns": {"1": {"rate": "200/s", "latency": "p99 < 10ms",
                         "values": {":pk": "USER#{user}"}}}
    }

``values`` maps an expression placeholder (``:pk``) or a key or item attribute (``PK``) to a
template. A pattern that cannot be taken (only a ``reason``, no command, a command that is
not DynamoDB's) is listed in one line and the rest runs.
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Mapping
from typing import Any

from loadgen.design.expressions import request_problem
from loadgen.errors import ConfigError
from loadgen.model.schema import TableSchema

__all__ = ["is_aws_model", "request_of_command", "to_design"]

_COMMANDS = {
    "get-item": "GetItem",
    "put-item": "PutItem",
    "update-item": "UpdateItem",
    "delete-item": "DeleteItem",
    "query": "Query",
    "scan": "Scan",
    "batch-get-item": "BatchGetItem",
    "batch-write-item": "BatchWriteItem",
    "transact-get-items": "TransactGetItems",
    "transact-write-items": "TransactWriteItems",
}
_ALIASES = {"TransactWrite": "TransactWriteItems", "TransactGet": "TransactGetItems"}
_DROPPED = {"ReturnConsumedCapacity", "ReturnItemCollectionMetrics", "Output", "Region",
            "EndpointUrl", "Profile", "NoCliPager", "Debug"}  # fmt: skip
_MULTI = ("BatchGetItem", "BatchWriteItem", "TransactGetItems", "TransactWriteItems")
_INTEGERS = {"Limit", "TotalSegments", "Segment", "MaxItems", "PageSize"}


def is_aws_model(data: Any) -> bool:
    """Whether ``data`` is AWS's data-model JSON (patterns named ``pattern``, not ``id``)."""
    if not isinstance(data, Mapping):
        return False
    patterns = data.get("access_patterns")
    return isinstance(patterns, list) and any(
        isinstance(p, Mapping) and ("pattern" in p or "dynamodb_operation" in p) for p in patterns
    )


def _pascal(flag: str) -> str:
    return "".join(part.capitalize() for part in flag.split("-"))


def request_of_command(command: str) -> tuple[str, dict[str, Any]]:
    """(operation, DynamoDB JSON request) of an ``aws dynamodb ...`` command line."""
    # A command as a shell reads it: lines continued with a backslash joined, the first
    # command of a list (``... && ...``, ``;``, ``|``) taken.
    text = re.sub(r"\\\r?\n", " ", command).strip().split("\n")[0]
    try:
        words = shlex.split(text)
    except ValueError as e:
        raise ValueError(f"cannot split the command: {e}") from None
    for i, word in enumerate(words):
        if word in ("&&", "||", ";", "|"):
            words = words[:i]
            break
    if len(words) < 3 or words[0] != "aws" or words[1] != "dynamodb":
        raise ValueError("not an 'aws dynamodb ...' command")
    operation = _COMMANDS.get(words[2])
    if operation is None:
        raise ValueError(f"'aws dynamodb {words[2]}' is not a data operation")
    request: dict[str, Any] = {}
    i = 3
    while i < len(words):
        word = words[i]
        if not word.startswith("--"):
            raise ValueError(f"unexpected {word!r}")
        flag = word[2:]
        has_value = i + 1 < len(words) and not words[i + 1].startswith("--")
        if not has_value:
            if flag.startswith("no-"):
                request[_pascal(flag[3:])] = False
            else:
                request[_pascal(flag)] = True
            i += 1
            continue
        text = words[i + 1]
        name = _pascal(flag)
        value: Any = text
        if text.lstrip().startswith(("{", "[")):
            try:
                value = json.loads(text)
            except ValueError as e:
                raise ValueError(f"--{flag} is not JSON: {e}") from None
        elif name in _INTEGERS:
            value = int(text)
        request[name] = value
        i += 2
    for name in _DROPPED & set(request):
        del request[name]
    return operation, request


def _template(request: dict[str, Any], values: Mapping[str, str]) -> dict[str, Any]:
    """The request with the literal values ``values`` names replaced by templates."""

    def replace(attributes: dict[str, Any] | None, names: Mapping[str, str]) -> None:
        for name, template in names.items():
            if attributes and name in attributes:
                ((tag, _),) = attributes[name].items()
                attributes[name] = {tag: template}

    replace(request.get("ExpressionAttributeValues"), values)
    for part in ("Key", "Item"):
        replace(request.get(part), values)
    for action in request.get("TransactItems") or ():
        for body in action.values():
            replace(body.get("ExpressionAttributeValues"), values)
            replace(body.get("Key"), values)
            replace(body.get("Item"), values)
    for body in (request.get("RequestItems") or {}).values():
        rows = body.get("Keys", []) if isinstance(body, dict) else body
        for row in rows:
            if "PutRequest" in row:
                replace(row["PutRequest"].get("Item"), values)
            elif "DeleteRequest" in row:
                replace(row["DeleteRequest"].get("Key"), values)
            else:
                replace(row, values)
    return request


def _schemas(tables: Any) -> dict[str, TableSchema]:
    """The model's tables that read as tables (the loader names what is wrong with the rest)."""
    schemas = {}
    for table in tables if isinstance(tables, list) else ():
        try:
            schema = TableSchema.from_create_table({"BillingMode": "PAY_PER_REQUEST", **table})
        except (ConfigError, KeyError, TypeError, ValueError):
            continue
        schemas[schema.name] = schema
    return schemas


def to_design(data: Mapping[str, Any], path: str) -> tuple[dict[str, Any], list[str]]:
    """The design file AWS's data model reads as, and one note per pattern not taken."""
    traffic = data.get("traffic") or {}
    if not isinstance(traffic, Mapping):
        raise ConfigError(
            f"{path}: traffic: expected a mapping of default_rate, generators, patterns"
        )
    unknown = set(data) - {"tables", "items", "access_patterns", "traffic"}
    if unknown:
        raise ConfigError(
            f"{path}: unknown field {sorted(unknown)[0]!r} (known: tables, items, "
            "access_patterns, traffic)"
        )
    per_pattern: Mapping[str, Any] = traffic.get("patterns") or {}
    notes: list[str] = []
    patterns: list[dict[str, Any]] = []
    tables = {t.get("TableName") for t in data.get("tables") or () if isinstance(t, Mapping)}
    schemas = _schemas(data.get("tables"))
    for i, raw in enumerate(data.get("access_patterns") or ()):
        if not isinstance(raw, Mapping):
            notes.append(f"access_patterns[{i}] not taken: expected a mapping (got {raw!r:.60})")
            continue
        pattern_id = str(raw.get("pattern", i + 1))
        described = str(raw.get("description") or "").strip()
        where = f"pattern {pattern_id}" + (f" ({described})" if described else "")
        command = raw.get("implementation")
        if not command:
            why = raw.get("reason") or "no implementation"
            notes.append(f"{where} not taken: {why}")
            continue
        try:
            operation, request = request_of_command(str(command))
        except ValueError as e:
            notes.append(f"{where} not taken: {e}")
            continue
        named = raw.get("dynamodb_operation")
        if named and _ALIASES.get(named, named) != operation:
            notes.append(
                f"{where}: dynamodb_operation {named} but the command runs {operation}; "
                f"running {operation}"
            )
        table = request.get("TableName") or raw.get("table")
        if operation not in ("BatchGetItem", "BatchWriteItem", "TransactGetItems",
                             "TransactWriteItems") and table not in tables:  # fmt: skip
            notes.append(f"{where} not taken: no table of the model named ({table!r})")
            continue
        # What DynamoDB would refuse whatever the values (a key not the table's, a table the
        # model lacks, a batch too large): the pattern is left out, the rest runs.
        problem = request_problem(operation, request, schemas)
        if problem is not None:
            notes.append(f"{where} not taken: {problem}")
            continue
        extra = per_pattern.get(pattern_id) or {}
        if not isinstance(extra, Mapping):
            raise ConfigError(f"{path}: traffic.patterns.{pattern_id}: expected a mapping")
        bad = set(extra) - {"rate", "latency", "values"}
        if bad:
            raise ConfigError(
                f"{path}: traffic.patterns.{pattern_id}: unknown field {sorted(bad)[0]!r} "
                "(known: rate, latency, values)"
            )
        request = _template(request, extra.get("values") or {})
        if operation in (
            "BatchGetItem",
            "BatchWriteItem",
            "TransactGetItems",
            "TransactWriteItems",
        ):
            table = table or next(iter(request.get("RequestItems") or {}), None)
            if table is None:
                for action in request.get("TransactItems") or ():
                    table = next(iter(action.values())).get("TableName")
                    break
        pattern: dict[str, Any] = {
            "id": pattern_id,
            "description": str(raw.get("description") or ""),
            "operation": operation,
            "table": table,
            "request": request,
        }
        if request.get("IndexName"):
            pattern["index"] = request["IndexName"]
        for name in ("rate", "latency"):
            if name in extra:
                pattern[name] = extra[name]
        patterns.append(pattern)
    unknown_ids = set(per_pattern) - {p["id"] for p in patterns}
    if unknown_ids:
        raise ConfigError(
            f"{path}: traffic.patterns.{sorted(unknown_ids)[0]}: no access pattern taken with "
            f"that id (taken: {', '.join(p['id'] for p in patterns)})"
        )
    if not patterns:
        raise ConfigError(f"{path}: no access pattern could be taken ({'; '.join(notes)})")
    design: dict[str, Any] = {
        "name": str(traffic.get("name") or ""),
        "tables": data.get("tables") or [],
        "access_patterns": patterns,
        "generators": traffic.get("generators") or {},
    }
    if data.get("items"):
        design["items"] = data["items"]
    if traffic.get("default_rate") is not None:
        design["default_rate"] = traffic["default_rate"]
    return design, notes
