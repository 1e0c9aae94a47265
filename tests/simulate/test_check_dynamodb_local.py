"""``loadgen check``'s units per operation against DynamoDB Local's own ConsumedCapacity.

DynamoDB Local computes ConsumedCapacity by AWS's rules (``ReturnConsumedCapacity: INDEXES``
gives the table's and each index's units): for the very request a pattern compiles to, check's
units on the table and on each index must be what it charges. The cases are where the old
arithmetic beside the model was wrong: a 1.9 KB item put into a table with a ``KEYS_ONLY``
index (it priced the index entry by the whole item, 2 units), and AWS's data model's update
that sets an index key through ``ExpressionAttributeNames`` (it saw no index write).
"""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

import boto3
import pytest
import yaml

from loadgen.design.generators import Draws
from loadgen.design.loader import load_design
from loadgen.simulate import check

pytestmark = pytest.mark.dynamodb_local

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def client(dynamodb_local_endpoint: str) -> Any:
    return boto3.client(
        "dynamodb",
        endpoint_url=dynamodb_local_endpoint,
        region_name="us-east-1",
        aws_access_key_id="local",
        aws_secret_access_key="local",
    )


def consumed(client: Any, design: Any, pattern_id: str) -> tuple[float, dict[str, float]]:
    """Create the design's tables, write the items its file lists, send one execution of the
    pattern and return the table's units and each index's, as DynamoDB Local charged them."""
    for request in design.table_requests:
        client.create_table(**request)
    for table, rows in (design.spec.items or {}).items():
        client.batch_write_item(RequestItems={table: rows})
    generators = design.generators(seed=1)
    (call,) = design.compile(generators)[pattern_id].calls(Draws(generators))
    send = getattr(client, {"PutItem": "put_item", "UpdateItem": "update_item"}[call.operation])
    answer = send(**call.params, ReturnConsumedCapacity="INDEXES")["ConsumedCapacity"]
    indexes = {
        name: float(units["CapacityUnits"])
        for name, units in (answer.get("GlobalSecondaryIndexes") or {}).items()
    }
    return float(answer["Table"]["CapacityUnits"]), indexes


def test_a_keys_only_index_entry_of_a_large_item_costs_one_unit(
    client: Any, tmp_path: Path
) -> None:
    table = f"check-{uuid.uuid4().hex[:8]}"
    data = {
        "name": "keys only",
        "tables": [
            {
                "TableName": table,
                "BillingMode": "PAY_PER_REQUEST",
                "AttributeDefinitions": [
                    {"AttributeName": "pk", "AttributeType": "S"},
                    {"AttributeName": "g", "AttributeType": "S"},
                ],
                "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
                "GlobalSecondaryIndexes": [
                    {
                        "IndexName": "byg",
                        "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
                        "Projection": {"ProjectionType": "KEYS_ONLY"},
                    }
                ],
            }
        ],
        "generators": {"user": {"count": 1000}},
        "entities": {
            "doc": {"item": {"pk": "DOC#{user}", "g": "G#{user}", "body": {"size": 1900}}}
        },
        "access_patterns": [{"id": "put", "operation": "PutItem", "entity": "doc"}],
    }
    path = tmp_path / "keys-only.yaml"
    path.write_text(yaml.safe_dump(data))
    design = load_design(str(path))
    (put,) = check(design).patterns
    table_units, index_units = consumed(client, design, "put")
    assert (table_units, index_units) == (2.0, {"byg": 1.0})  # DynamoDB Local's answer
    assert put.scopes == {table: [0.0, 2.0], f"{table}/byg": [0.0, 1.0]}


def test_an_update_of_an_index_key_through_attribute_names_moves_its_entry(
    client: Any, tmp_path: Path
) -> None:
    # AWS's data model, its table renamed for this session: pattern 6 sets the index key
    # `status` through "#s" on an item the file lists as online.
    table = f"Chat{uuid.uuid4().hex[:8]}"
    text = (ROOT / "examples/designs/dynamodb_data_model.json").read_text()
    path = tmp_path / "dynamodb_data_model.json"
    path.write_text(text.replace("Chat", table))
    design = load_design(str(path))
    report = check(design)
    update = next(p for p in report.patterns if p.id == "6")
    table_units, index_units = consumed(client, design, "6")
    # The entry leaves `online` and lands on `offline`: two index writes.
    assert (table_units, index_units) == (1.0, {"StatusIndex": 2.0})
    assert update.scopes == {table: [0.0, 1.0], f"{table}/StatusIndex": [0.0, 2.0]}
    assert json.loads(text)["access_patterns"][5]["pattern"] == "6"
