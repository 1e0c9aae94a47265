"""The design file's fields, as typed models: what `loadgen.design.loader` validates first.

A design file is YAML or JSON. Its shape is this module's `DesignFile`; the JSON Schema kept
in the repository (``loadgen/design/design.schema.json``, written by
``python -m loadgen.design.spec``) is generated from it, so the file, the docs' reference and
the validator cannot drift apart. These models check shapes and types; what needs the whole
file (a table a pattern names, a generator a template names, a key attribute a key lacks) is
checked by the loader.
"""

from __future__ import annotations

import json
import sys
import typing
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "OPERATIONS",
    "SCHEMA_PATH",
    "AccessPattern",
    "Action",
    "DesignFile",
    "DesignVariant",
    "Entity",
    "Generator",
    "SortCondition",
    "json_schema",
]

SCHEMA_PATH = Path(__file__).with_name("design.schema.json")

Operation = Literal[
    "GetItem",
    "PutItem",
    "UpdateItem",
    "DeleteItem",
    "Query",
    "Scan",
    "BatchGetItem",
    "BatchWriteItem",
    "TransactGetItems",
    "TransactWriteItems",
]
OPERATIONS: tuple[str, ...] = typing.get_args(Operation)
"""The operations an access pattern may name."""
Rate = str | float
"""Operations per second: a number, or ``50/s``, ``3000/min``, ``100k/day``."""
Value = str | int | float | bool | dict[str, Any]
"""An attribute's value: a template string (``ORDER#{order}``), a number, a boolean, or a
mapping: ``{size: 300}`` (a string of 300 bytes), ``{number: "{qty}"}``, ``{number: [1, 99]}``
(a random integer), ``{type: N, value: "{order}"}``, or DynamoDB's own JSON (``{N: "1"}``,
``{SS: [a, b]}``, ``{L: [...]}``, templates in its strings)."""
_VALUES = (
    "Expression attribute values by placeholder, as the expressions name them "
    "({':one': 1, ':event': 'EVENT#{event}'}): typed as DynamoDB types them (a number is N, "
    "text S, true/false BOOL; {number: ...}, {type: ..., value: ...} or DynamoDB JSON for "
    "others), templates drawing from the generators at each execution"
)
_NAMES = "Expression attribute names by placeholder ({'#s': status}), for reserved words"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Generator(_Strict):
    """Where a template's ``{name}`` comes from: give exactly one of count, choice, shard,
    time, sequence or id."""

    count: int | None = Field(None, ge=1, description="N values 0..N-1, drawn by distribution")
    distribution: str | None = Field(
        None,
        description="For count: uniform, zipf[:S], hotspot[:DATA[:OPS]], latest[:S], "
        "sequential, exponential[:P[:F]] (default: the run's --distribution)",
    )
    scramble: bool = Field(False, description="For count: scatter the hot values over 0..N-1")
    named: dict[str, float] | None = Field(
        None,
        description="For count: values pinned to shares of the draws, beside 0..N-1, e.g. "
        "{taylor: 0.4} (taylor takes 40%, the distribution over count the rest); the starting "
        "data and each reads them like any other value",
    )
    choice: dict[str, float] | None = Field(
        None, description="Weighted values, e.g. {pending: 0.7, shipped: 0.25, delivered: 0.05}"
    )
    shard: int | None = Field(None, ge=1, description="A write shard 0..N-1, uniform")
    time: Literal["minute", "hour", "day", "month", "iso", "epoch"] | None = Field(
        None,
        description="The run's clock: a bucket (minute, hour, day, month: one value for the "
        "whole bucket), iso (UTC to the microsecond, unique per draw: a key naming it never "
        "names an item twice) or epoch (whole seconds: every draw in a second alike)",
    )
    offset: str | None = Field(None, description="For time: shift the clock, e.g. -24h")
    format: str | None = Field(
        None,
        description="For time: a strftime format instead of the bucket's own (its resolution "
        "is the format's)",
    )
    sequence: bool | None = Field(None, description="Increasing numbers, new at each draw")
    id: bool | None = Field(None, description="A random 16-hex-digit id, new at each draw")


class SortCondition(_Strict):
    """A Query's condition on the sort key: give one of these."""

    eq: str | None = None
    begins_with: str | None = None
    between: tuple[str, str] | None = None
    lt: str | None = None
    le: str | None = None
    gt: str | None = None
    ge: str | None = None


class Entity(_Strict):
    """An item shape: the attributes an item of this kind carries, keys included."""

    table: str | None = Field(None, description="Its table (default: the only table)")
    item: dict[str, Value] = Field(description="Attribute name to value, keys included")
    populate: dict[str, int | Literal["all"]] | int | None = Field(
        None,
        description="Starting data: generator name to how many of its values to write items "
        "for ('all': its count), e.g. {room: all, message: 50}; or a number of items, each "
        "placeholder drawn (1: the one item a fixed key names, no generator needed)",
    )

    @property
    def population(self) -> dict[str, int | Literal["all"]]:
        """``populate`` as every reader of starting data takes it: generator name to how many
        of its values; ``populate: N`` is N values of an implicit generator (``_itemsN``)
        that no template names, so each item draws its own."""
        if isinstance(self.populate, int):
            return {f"_items{self.populate}": "all"}
        return dict(self.populate or {})


class Action(_Strict):
    """One item of a transaction."""

    operation: Literal["Put", "Update", "Delete", "ConditionCheck", "Get"]
    table: str | None = None
    entity: str | None = None
    key: dict[str, str] | None = None
    set: dict[str, Value] | None = None
    add: dict[str, float] | None = None
    update: str | None = Field(
        None, description="Update: the UpdateExpression as DynamoDB reads it, instead of set/add"
    )
    condition: str | None = Field(None, description="ConditionExpression, as DynamoDB reads it")
    values: dict[str, Value] | None = Field(None, description=_VALUES)
    names: dict[str, str] | None = Field(None, description=_NAMES)


class AccessPattern(_Strict):
    """One access pattern: what the application asks DynamoDB, and how often at launch."""

    id: str = Field(
        min_length=1,
        pattern=r"^[A-Za-z0-9][A-Za-z0-9_.:/#-]*$",
        description="Its name in the summary, results and metrics (letters, digits, _.:/#-)",
    )
    description: str = ""
    operation: Operation = Field(description="The DynamoDB operation")
    table: str | None = Field(None, description="Default: the entity's table, or the only one")
    index: str | None = Field(None, description="A GSI or LSI of the table (Query, Scan)")
    entity: str | None = Field(None, description="The item written (Put, BatchWrite) or keyed")
    key: dict[str, str] | None = Field(
        None, description="Key attribute to template; a Query gives its partition key"
    )
    sort_key: SortCondition | None = Field(None, description="A Query's sort-key condition")
    set: dict[str, Value] | None = Field(None, description="UpdateItem: SET these attributes")
    add: dict[str, float] | None = Field(None, description="UpdateItem: ADD to these numbers")
    update: str | None = Field(
        None,
        description="UpdateItem: the UpdateExpression as DynamoDB reads it, instead of set/add "
        "(e.g. 'SET remaining = remaining - :one')",
    )
    condition: str | None = Field(
        None,
        description="ConditionExpression, as DynamoDB reads it: no literals, a value is a "
        "placeholder given under values (e.g. 'remaining >= :one')",
    )
    filter: str | None = Field(None, description="Query, Scan: FilterExpression")
    values: dict[str, Value] | None = Field(None, description=_VALUES)
    names: dict[str, str] | None = Field(None, description=_NAMES)
    limit: int | None = Field(None, ge=1)
    consistent: bool = Field(
        False, description="Strongly consistent reads (a table or an LSI: a GSI has none)"
    )
    forward: bool = Field(True, description="Query: ScanIndexForward")
    projection: list[str] | None = Field(None, description="Attributes returned")
    each: str | None = Field(
        None,
        description="Run once per value of this generator (a shard key's every shard); a "
        "BatchGetItem reads every value's key in one call",
    )
    count: int | None = Field(
        None, ge=1, description="BatchGetItem: keys per call; BatchWriteItem: items per call"
    )
    actions: list[Action] | None = Field(None, description="Transactions: their items")
    request: dict[str, Any] | None = Field(
        None, description="The request as DynamoDB JSON, templates in its strings"
    )
    rate: Rate | None = Field(None, description="Launch traffic: 50/s, 3000/min, 100k/day")
    latency: str | None = Field(None, description="Latency need, e.g. 'p99 < 10ms'")


class DesignVariant(_Strict):
    """A named variant: what it changes, compared on the same patterns and rates. A variant
    changes only what it gives; everything else is the file's. Merge rules: a table it names
    (by TableName; the only table when it names none) changes field by field, mappings key by
    key (WarmThroughput, ProvisionedThroughput, a Projection), AttributeDefinitions and
    GlobalSecondaryIndexes or LocalSecondaryIndexes entry by entry (by AttributeName,
    IndexName: an index it names changes, one it adds is added, the others stay), any other
    field (KeySchema, BillingMode) replaced; a table it does not have is added. A generator
    it gives is replaced whole. An entity's fields merge key by key, its item attribute by
    attribute. An access pattern's fields it gives are replaced whole (a new key, a new set).
    Everywhere, null removes what it names (``ProvisionedThroughput: null``, ``each: null``)."""

    description: str = ""
    tables: list[dict[str, Any]] | None = Field(
        None,
        description="Tables it changes, each by its TableName: only the fields given change "
        "(e.g. [{TableName: Tickets, WarmThroughput: {WriteUnitsPerSecond: 6000}}]); a new "
        "TableName adds a table",
    )
    generators: dict[str, Generator] | None = Field(
        None, description="Generators it replaces whole, or adds"
    )
    entities: dict[str, dict[str, Any]] | None = Field(
        None, description="Entities it changes: fields key by key, the item attribute by attribute"
    )
    access_patterns: dict[str, dict[str, Any]] | None = Field(
        None, description="Pattern id to the fields it replaces (null: removes the field)"
    )


class DesignFile(_Strict):
    """A team's design: tables, item shapes, access patterns with their launch rates."""

    name: str = Field("", description="The design's name in summaries and reports")
    description: str = ""
    tables: list[dict[str, Any]] = Field(
        min_length=1, description="boto3 create_table shape (AWS's data-model JSON, CloudFormation)"
    )
    generators: dict[str, Generator] = Field(
        default_factory=dict, description="Where each {name} in a template comes from"
    )
    entities: dict[str, Entity] = Field(
        default_factory=dict, description="Item shapes, by name, and their starting data"
    )
    items: dict[str, list[dict[str, Any]]] | None = Field(
        None, description="Starting items in boto3 batch_write_item shape, per table"
    )
    access_patterns: list[AccessPattern] = Field(
        min_length=1, description="What the application asks, and how often at launch"
    )
    designs: dict[str, DesignVariant] = Field(
        default_factory=dict,
        description="Named variants (the bad design and the good), run on the same patterns",
    )
    default_rate: Rate | None = Field(None, description="Rate of a pattern that names none")
    clock_speed: float = Field(1.0, gt=0, description="The run's clock, x wall time")


def json_schema() -> dict[str, Any]:
    """The design file's JSON Schema."""
    schema = DesignFile.model_json_schema()
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["title"] = "Partition Heat design file"
    return schema


def _type(prop: dict[str, Any], defs: dict[str, Any]) -> str:
    if "$ref" in prop:
        return str(prop["$ref"]).rsplit("/", 1)[-1]
    if "anyOf" in prop:
        kinds = [_type(p, defs) for p in prop["anyOf"] if p.get("type") != "null"]
        return " or ".join(dict.fromkeys(kinds))
    if "enum" in prop:
        return " | ".join(map(str, prop["enum"]))
    if "const" in prop:
        return str(prop["const"])
    kind = prop.get("type", "any")
    if kind == "array":
        return f"list of {_type(prop.get('items', {}), defs)}"
    if kind == "object" and isinstance(prop.get("additionalProperties"), dict):
        return f"mapping to {_type(prop['additionalProperties'], defs)}"
    names = {"string": "text", "integer": "integer", "boolean": "boolean", "object": "mapping"}
    return str(names.get(kind, kind))


def reference_markdown() -> str:
    """The design file's reference, one table per model, from the JSON Schema."""
    schema = json_schema()
    defs = schema.get("$defs", {})
    models = [("DesignFile", schema), *sorted(defs.items())]
    lines = [
        "# Design file reference",
        "",
        "Generated from the design file's JSON Schema (`loadgen/design/design.schema.json`) by",
        "`python -m loadgen.design.spec`; a test holds this page to it. A field marked",
        "*required* must be given; the others take the default shown.",
    ]
    for name, model in models:
        lines += ["", f"## {name}", "", (model.get("description") or "").strip(), ""]
        lines += ["| field | type | default | meaning |", "|---|---|---|---|"]
        required = set(model.get("required", ()))
        for field_name, prop in model.get("properties", {}).items():
            if field_name in required:
                default = "*required*"
            elif "default" in prop:
                default = f"`{json.dumps(prop['default'])}`"
            else:
                default = "empty"
            meaning = (prop.get("description") or "").replace("|", "\\|").replace("\n", " ")
            kind = _type(prop, defs).replace("|", "\\|")
            lines.append(f"| `{field_name}` | {kind} | {default} | {meaning} |")
    return "\n".join(lines) + "\n"


REFERENCE_PATH = Path(__file__).resolve().parents[2] / "docs" / "design-reference.md"


def main(argv: list[str] | None = None) -> int:
    """Write the JSON Schema kept in the package and the reference page in docs/."""
    text = json.dumps(json_schema(), indent=2, sort_keys=True) + "\n"
    SCHEMA_PATH.write_text(text, encoding="utf-8")
    print(f"wrote {SCHEMA_PATH}")
    if REFERENCE_PATH.parent.is_dir():
        REFERENCE_PATH.write_text(reference_markdown(), encoding="utf-8")
        print(f"wrote {REFERENCE_PATH}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
