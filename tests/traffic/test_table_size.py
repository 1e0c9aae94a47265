"""A table's data size drives its partition count: the shadow counts bytes, the model splits."""

from __future__ import annotations

import pytest

from loadgen.emulator.pricing import ItemShadow
from loadgen.errors import ConfigError
from loadgen.model.partitions import PARTITION_BYTES, PartitionModel
from loadgen.model.schema import TableSchema

TABLE = {
    "TableName": "t",
    "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
    "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}],
    "BillingMode": "PROVISIONED",
    "ProvisionedThroughput": {"ReadCapacityUnits": 100, "WriteCapacityUnits": 100},
}


def _partitions(model: PartitionModel) -> int:
    return len(model.snapshot()[0].partitions)


def test_partitions_hold_10_gb_times_the_scale_each() -> None:
    model = PartitionModel(scale=0.1)
    model.create_table(TableSchema.from_create_table(TABLE))
    assert model.partition_bytes == PARTITION_BYTES * 0.1
    assert _partitions(model) == 1
    model.resize("t", PARTITION_BYTES * 0.1 * 2.5)  # 2.5 partitions of data: 4 after doubling
    assert _partitions(model) == 4
    assert model.snapshot()[0].size_bytes == PARTITION_BYTES * 0.1 * 2.5
    model.resize("t", 0)  # partitions never merge
    assert _partitions(model) == 4
    model.resize("unknown", 10**12)  # ignored


def test_a_bad_partition_size_is_named() -> None:
    with pytest.raises(ConfigError, match="partition size"):
        PartitionModel(partition_bytes=0)


def test_the_shadow_counts_a_tables_bytes_as_items_come_grow_and_go() -> None:
    sizes: list[tuple[str, float]] = []
    shadow = ItemShadow(10, on_size=lambda table, size: sizes.append((table, size)))
    shadow.put("t", ("a",), {"pk": {"S": "a"}, "v": {"S": "x" * 10}})  # 2 + 1 + 1 + 10
    shadow.put("t", ("b",), {"pk": {"S": "b"}})  # 3
    shadow.put("t", ("a",), {"pk": {"S": "a"}, "v": {"S": "x" * 20}})  # 24
    shadow.put("t", ("b",), None)
    assert sizes == [("t", 14), ("t", 17), ("t", 27), ("t", 24)]
    assert shadow.table_bytes == {"t": 24}
    shadow.drop_table("t")
    assert shadow.table_bytes == {}
