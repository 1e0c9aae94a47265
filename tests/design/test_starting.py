"""Starting data: cut to the hottest partitions above the cap, except what a condition reads."""

from __future__ import annotations

from pathlib import Path

import yaml

from loadgen.design import load_design
from loadgen.design.starting import read_by_writes, starting_plans

TICKETS = {
    "name": "tickets",
    "tables": [
        {
            "TableName": "Tickets",
            "BillingMode": "PAY_PER_REQUEST",
            "AttributeDefinitions": [
                {"AttributeName": "pk", "AttributeType": "S"},
                {"AttributeName": "sk", "AttributeType": "S"},
            ],
            "KeySchema": [
                {"AttributeName": "pk", "KeyType": "HASH"},
                {"AttributeName": "sk", "KeyType": "RANGE"},
            ],
        }
    ],
    "generators": {
        "event": {"count": 2000},
        "seat": {"count": 20},
        "order": {"id": True},
    },
    "entities": {
        # What a purchase's condition reads: one inventory item an event.
        "inventory": {
            "item": {"pk": "EVENT#{event}", "sk": "INVENTORY", "remaining": 1000},
            "populate": {"event": "all"},
        },
        # What the page views read: seats by event, the bulk of the data.
        "seat": {
            "item": {"pk": "EVENT#{event}", "sk": "SEAT#{seat}", "price": 50},
            "populate": {"event": "all", "seat": "all"},
        },
        "order": {"item": {"pk": "ORDER#{order}", "sk": "ORDER", "size": {"size": 2000}}},
    },
    "access_patterns": [
        {"id": "view", "operation": "Query", "key": {"pk": "EVENT#{event}"}, "rate": "5000/s"},
        {
            "id": "buy",
            "operation": "TransactWriteItems",
            "rate": "800/s",
            "actions": [
                {"operation": "Update", "key": {"pk": "EVENT#{event}", "sk": "INVENTORY"},
                 "add": {"remaining": -1}, "condition": "attribute_exists(pk)"},
                {"operation": "Put", "entity": "order"},
            ],
        },
    ],
}  # fmt: skip


def test_the_items_a_condition_reads_are_written_whatever_the_cap(tmp_path: Path) -> None:
    path = tmp_path / "tickets.yaml"
    path.write_text(yaml.safe_dump(TICKETS))
    design = load_design(str(path))
    assert read_by_writes(design) == {"inventory"}
    plans, notes = starting_plans(design, limit=20_000)
    (plan,) = plans
    # Every event's inventory item (2,000), and the seats cut to the hottest events.
    inventory = [plan.item(n) for n in range(2000)]
    assert {item["sk"]["S"] for item in inventory} == {"INVENTORY"}
    assert len({item["pk"]["S"] for item in inventory}) == 2000
    assert plan.count <= 20_000
    (cut,) = notes
    assert cut.startswith("seat: ") and "of 2,000 event values written" in cut
    # A cap below the inventory still writes all of it, and says so.
    plans, notes = starting_plans(design, limit=500)
    assert plans[0].count >= 2000
    assert any("all 2,000 item(s) written, over the 500-item cap" in note for note in notes)
