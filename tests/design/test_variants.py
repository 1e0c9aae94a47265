"""A variant changes only what it gives: each merge rule of `DesignVariant`, one test each."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml

from loadgen.design import load_designs
from loadgen.design.loader import Design
from loadgen.errors import ConfigError

BASE: dict[str, Any] = {
    "tables": [
        {
            "TableName": "Tickets",
            "BillingMode": "PAY_PER_REQUEST",
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
    "generators": {"event": {"count": 100}, "shard": {"shard": 4}},
    "entities": {
        "order": {
            "item": {"PK": "ORDER#{event}", "SK": "O", "eventId": "{event}", "note": "n"},
            "populate": {"event": "all"},
        }
    },
    "access_patterns": [
        {"id": "by-event", "operation": "Query", "index": "ByEvent",
         "key": {"eventId": "{event}"}, "limit": 5, "rate": "10/s"},
    ],
}  # fmt: skip


def _variants(tmp_path: Path, designs: dict[str, Any], base: Any = None) -> dict[str, Design]:
    data = copy.deepcopy(base or BASE)
    data["designs"] = {"base": {}, **designs}
    path = tmp_path / "variants.yaml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    return {design.name: design for design in load_designs(str(path))}


def _table(design: Design, name: str = "Tickets") -> dict[str, Any]:
    return next(t for t in design.table_requests if t["TableName"] == name)


def test_a_three_line_variant_raises_only_the_warm_throughput(tmp_path: Path) -> None:
    text = """
  warm:
    tables:
      - {TableName: Tickets, WarmThroughput: {WriteUnitsPerSecond: 6000}}
"""
    designs = _variants(tmp_path, yaml.safe_load(text))
    base, warm = _table(designs["base"]), _table(designs["warm"])
    assert {k: v for k, v in warm.items() if k != "WarmThroughput"} == base
    assert warm["WarmThroughput"] == {"WriteUnitsPerSecond": 6000}
    assert designs["warm"].schemas["Tickets"].warm_write_units == 6000
    assert designs["base"].schemas["Tickets"].warm_write_units is None


def test_a_variant_naming_no_table_changes_the_only_one(tmp_path: Path) -> None:
    designs = _variants(tmp_path, {"capped": {"tables": [{"OnDemandThroughput": {
        "MaxWriteRequestUnits": 500}}]}})  # fmt: skip
    assert _table(designs["capped"])["OnDemandThroughput"] == {"MaxWriteRequestUnits": 500}
    two = copy.deepcopy(BASE)
    two["tables"].append({**copy.deepcopy(BASE["tables"][0]), "TableName": "Other"})
    two["access_patterns"][0]["table"] = two["entities"]["order"]["table"] = "Tickets"
    with pytest.raises(ConfigError, match=r"designs\.capped\.tables\[0\]\.TableName: name the"):
        _variants(tmp_path, {"capped": {"tables": [{"BillingMode": "PROVISIONED"}]}}, two)


def test_billing_mode_switches_and_null_removes_a_field(tmp_path: Path) -> None:
    units = {"ReadCapacityUnits": 100, "WriteCapacityUnits": 50}
    provisioned = {
        "BillingMode": "PROVISIONED",
        "ProvisionedThroughput": units,
        "GlobalSecondaryIndexes": [{"IndexName": "ByEvent", "ProvisionedThroughput": units}],
    }
    designs = _variants(tmp_path, {"provisioned": {"tables": [{"TableName": "Tickets",
                                                               **provisioned}]}})  # fmt: skip
    table = _table(designs["provisioned"])
    assert table["BillingMode"] == "PROVISIONED"
    schema = designs["provisioned"].schemas["Tickets"]
    assert schema.write_capacity == 50 and schema.index("ByEvent").write_capacity == 50
    (index,) = table["GlobalSecondaryIndexes"]
    assert index == {
        **BASE["tables"][0]["GlobalSecondaryIndexes"][0],
        "ProvisionedThroughput": units,
    }
    back_file = copy.deepcopy(BASE)
    back_file["tables"] = designs["provisioned"].table_requests
    designs = _variants(tmp_path, {"on-demand": {"tables": [{
        "TableName": "Tickets", "BillingMode": "PAY_PER_REQUEST", "ProvisionedThroughput": None,
        "GlobalSecondaryIndexes": [{"IndexName": "ByEvent", "ProvisionedThroughput": None}],
    }]}}, back_file)  # fmt: skip
    assert _table(designs["on-demand"]) == _table(_variants(tmp_path, {})["base"])
    assert "ProvisionedThroughput" not in _table(designs["on-demand"])
    assert designs["on-demand"].schemas["Tickets"].on_demand


def test_an_index_is_added_or_changed_by_its_name_the_others_kept(tmp_path: Path) -> None:
    designs = _variants(tmp_path, {"indexed": {"tables": [{
        "TableName": "Tickets",
        "AttributeDefinitions": [{"AttributeName": "day", "AttributeType": "S"}],
        "GlobalSecondaryIndexes": [
            {"IndexName": "ByEvent", "Projection": {"ProjectionType": "KEYS_ONLY"}},
            {"IndexName": "ByDay", "KeySchema": [{"AttributeName": "day", "KeyType": "HASH"}],
             "Projection": {"ProjectionType": "ALL"}},
        ],
    }]}})  # fmt: skip
    schema = designs["indexed"].schemas["Tickets"]
    assert [i.name for i in schema.global_indexes] == ["ByEvent", "ByDay"]
    by_event = schema.index("ByEvent")
    assert (by_event.partition_key, by_event.projection) == ("eventId", "KEYS_ONLY")
    assert dict(schema.attribute_types) == {"PK": "S", "SK": "S", "eventId": "S", "day": "S"}


def test_a_new_table_name_adds_a_table(tmp_path: Path) -> None:
    other = {
        "TableName": "Audit",
        "KeySchema": [{"AttributeName": "id", "KeyType": "HASH"}],
        "AttributeDefinitions": [{"AttributeName": "id", "AttributeType": "S"}],
    }
    named = copy.deepcopy(BASE)
    named["access_patterns"][0]["table"] = named["entities"]["order"]["table"] = "Tickets"
    designs = _variants(tmp_path, {"audited": {"tables": [other]}}, named)
    assert list(designs["audited"].schemas) == ["Tickets", "Audit"]
    assert list(designs["base"].schemas) == ["Tickets"]


def test_generators_are_replaced_entities_merged_patterns_fields_replaced(
    tmp_path: Path,
) -> None:
    designs = _variants(tmp_path, {"sharded": {
        "generators": {"event": {"count": 10, "distribution": "uniform"}},
        "entities": {"order": {"item": {"eventId": "{event}#{shard}", "note": None}}},
        "access_patterns": {"by-event": {"key": {"eventId": "{event}#{shard}"},
                                         "each": "shard", "limit": None}},
    }})  # fmt: skip
    sharded = designs["sharded"].spec
    assert sharded.generators["event"].count == 10 and sharded.generators["event"].named is None
    item = sharded.entities["order"].item
    assert item == {"PK": "ORDER#{event}", "SK": "O", "eventId": "{event}#{shard}"}
    assert sharded.entities["order"].populate == {"event": "all"}
    (pattern,) = sharded.access_patterns
    assert (pattern.each, pattern.limit, pattern.key) == (
        "shard",
        None,
        {"eventId": "{event}#{shard}"},
    )
