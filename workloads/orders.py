"""Orders workload: a single-table design with two GSIs.

Items:
- ``USER#<id>`` / ``PROFILE``: the user's profile (order count).
- ``USER#<id>`` / ``ORDER#<date>#<id>``: an order header.
- ``ORDER#<id>`` / ``ITEM#<sku>``: the order's line items.

Indexes:
- ``inverted`` (``gsi1pk``, ``gsi1sk``): header and items under ``ORDER#<id>``, to fetch an
  order by id.
- ``status`` (``gsi2pk``, ``gsi2sk``), sparse, on headers only. Designs:
  ``hot-status`` keys it ``STATUS#<status>``, so every new order lands on ``STATUS#PLACED``:
  one hot GSI partition whose write throttling pushes back on the base table;
  ``sharded-status`` keys it ``STATUS#<status>#<0..N-1>``.

Users are drawn from the key distribution over ``--keys`` users.
"""

from __future__ import annotations

import zlib
from collections import deque
from datetime import UTC, datetime, timedelta
from typing import Any

from loadgen.workload import ConfigError, DynamoUser, WorkloadOptions, add_argument, register

STATUSES = ("PLACED", "PAID", "SHIPPED", "DELIVERED", "CANCELLED")
START = datetime(2026, 1, 1, tzinfo=UTC)
SHIPPING = "s" * 900
"""A new order's shipping address and summary, as sized as the design file's (900 bytes)."""


def _s(value: str) -> dict[str, str]:
    return {"S": value}


class OrdersUser(DynamoUser):
    designs = ("hot-status", "sharded-status")
    default_table = "ph-orders"
    default_mix = {
        "create_order": 4,
        "get_order": 2,
        "list_user_orders": 2,
        "update_status": 2,
        "get_profile": 1,
        "list_by_status": 1,
    }

    @classmethod
    def add_arguments(cls, parser: Any) -> None:
        add_argument(
            parser,
            "--status-shards",
            type=int,
            default=10,
            help="Shards of the status GSI key (sharded-status)",
        )
        add_argument(
            parser, "--items-per-order", type=int, default=3, help="Most line items per order"
        )

    @classmethod
    def create_table_request(cls, options: WorkloadOptions) -> dict[str, Any]:
        def gsi(name: str, pk: str, sk: str) -> dict[str, Any]:
            return {
                "IndexName": name,
                "KeySchema": [
                    {"AttributeName": pk, "KeyType": "HASH"},
                    {"AttributeName": sk, "KeyType": "RANGE"},
                ],
                "Projection": {"ProjectionType": "ALL"},
            }

        attributes = ("pk", "sk", "gsi1pk", "gsi1sk", "gsi2pk", "gsi2sk")
        return {
            "TableName": options.table,
            "KeySchema": [
                {"AttributeName": "pk", "KeyType": "HASH"},
                {"AttributeName": "sk", "KeyType": "RANGE"},
            ],
            "AttributeDefinitions": [
                {"AttributeName": a, "AttributeType": "S"} for a in attributes
            ],
            "GlobalSecondaryIndexes": [
                gsi("inverted", "gsi1pk", "gsi1sk"),
                gsi("status", "gsi2pk", "gsi2sk"),
            ],
        }

    @classmethod
    def check_options(cls, parsed: Any) -> None:
        for flag, value in (
            ("--status-shards", parsed.status_shards),
            ("--items-per-order", parsed.items_per_order),
        ):
            if value < 1:
                raise ConfigError(f"{flag} must be >= 1 (got {value})")

    def on_start(self) -> None:
        parsed = self.environment.parsed_options
        self.status_shards = int(parsed.status_shards)
        self.items_per_order = int(parsed.items_per_order)
        # The orders this user placed, newest last: the ones it reads and updates.
        self.orders: deque[tuple[str, str, str]] = deque(maxlen=100)
        self._sequence = 0

    @classmethod
    def prefill_item(cls, options: WorkloadOptions, parsed: Any, number: int) -> dict[str, Any]:
        # Past orders' headers, users in turn, a day apart before the test's first order,
        # in every status (the status index holds them all).
        user = f"u{number % options.keys:07d}"
        order_id = f"p-{number:x}"
        date = (START - timedelta(days=1 + number // options.keys)).strftime("%Y-%m-%d")
        status = STATUSES[number % len(STATUSES)]
        return {
            "pk": _s(f"USER#{user}"),
            "sk": _s(f"ORDER#{date}#{order_id}"),
            "gsi1pk": _s(f"ORDER#{order_id}"),
            "gsi1sk": _s(f"USER#{user}"),
            "gsi2pk": _s(status_key(options.design, status, order_id, parsed.status_shards)),
            "gsi2sk": _s(f"{date}#{order_id}"),
            "status": _s(status),
            "total": {"N": str(100 + number * 7919 % 99_900)},
        }

    def _status_key(self, status: str, order_id: str) -> str:
        return status_key(self.options.design, status, order_id, self.status_shards)

    def _user(self) -> str:
        return f"u{self.keys.next():07d}"

    def create_order(self) -> None:
        user = self._user()
        self._sequence += 1
        order_id = f"{self.number:x}-{self._sequence:x}"
        date = (START + timedelta(minutes=self._sequence)).strftime("%Y-%m-%d")
        header_sk = f"ORDER#{date}#{order_id}"
        status_pk = self._status_key("PLACED", order_id)
        table = self.options.table
        items = [
            f"SKU{self.random.randrange(10_000):05d}"
            for _ in range(self.random.randint(1, self.items_per_order))
        ]
        writes: list[dict[str, Any]] = [
            {
                "Put": {
                    "TableName": table,
                    "Item": {
                        "pk": _s(f"USER#{user}"),
                        "sk": _s(header_sk),
                        "gsi1pk": _s(f"ORDER#{order_id}"),
                        "gsi1sk": _s(f"USER#{user}"),
                        "gsi2pk": _s(status_pk),
                        "gsi2sk": _s(f"{date}#{order_id}"),
                        "status": _s("PLACED"),
                        "total": {"N": str(self.random.randint(100, 100_000))},
                        # The shipping address and the order's summary: a header just over
                        # 1 KB, whose status-index entry costs 2 write units.
                        "shipping": _s(SHIPPING),
                    },
                }
            },
            {
                "Update": {
                    "TableName": table,
                    "Key": {"pk": _s(f"USER#{user}"), "sk": _s("PROFILE")},
                    "UpdateExpression": "ADD orders :one SET #n = if_not_exists(#n, :name)",
                    "ExpressionAttributeNames": {"#n": "name"},
                    "ExpressionAttributeValues": {":one": {"N": "1"}, ":name": _s(user)},
                }
            },
        ]
        for sku in dict.fromkeys(items):
            writes.append(
                {
                    "Put": {
                        "TableName": table,
                        "Item": {
                            "pk": _s(f"ORDER#{order_id}"),
                            "sk": _s(f"ITEM#{sku}"),
                            "gsi1pk": _s(f"ORDER#{order_id}"),
                            "gsi1sk": _s(f"ITEM#{sku}"),
                            "qty": {"N": str(self.random.randint(1, 5))},
                        },
                    }
                }
            )
        self.db.call(
            "TransactWriteItems",
            "orders.create_order",
            table=table,
            partition_keys=[f"USER#{user}", f"USER#{user}"]
            + [f"ORDER#{order_id}"] * (len(writes) - 2),
            index_keys={
                "status": [status_pk],
                "inverted": [f"ORDER#{order_id}"] * (len(writes) - 1),
            },
            TransactItems=writes,
        )
        self.orders.append((user, header_sk, order_id))

    def _known_order(self) -> tuple[str, str, str] | None:
        if not self.orders:
            return None
        return self.orders[self.random.randrange(len(self.orders))]

    def get_order(self) -> None:
        order = self._known_order()
        if order is None:
            return self.create_order()
        pk = f"ORDER#{order[2]}"
        self.db.call(
            "Query",
            "orders.get_order",
            table=self.options.table,
            index="inverted",
            pk=pk,
            IndexName="inverted",
            KeyConditionExpression="gsi1pk = :pk",
            ExpressionAttributeValues={":pk": _s(pk)},
        )

    def list_user_orders(self) -> None:
        pk = f"USER#{self._user()}"
        if self.random.random() < 0.5:
            condition = "pk = :pk AND begins_with(sk, :prefix)"
            values = {":pk": _s(pk), ":prefix": _s("ORDER#")}
        else:
            condition = "pk = :pk AND sk BETWEEN :lo AND :hi"
            values = {":pk": _s(pk), ":lo": _s("ORDER#2026-01-01"), ":hi": _s("ORDER#2026-01-31~")}
        self.db.call(
            "Query",
            "orders.list_user_orders",
            table=self.options.table,
            pk=pk,
            KeyConditionExpression=condition,
            ExpressionAttributeValues=values,
            ScanIndexForward=False,
            Limit=20,
        )

    def update_status(self) -> None:
        order = self._known_order()
        if order is None:
            return self.create_order()
        user, header_sk, order_id = order
        status = self.random.choice(STATUSES[1:])
        status_pk = self._status_key(status, order_id)
        pk = f"USER#{user}"
        self.db.call(
            "UpdateItem",
            "orders.update_status",
            table=self.options.table,
            pk=pk,
            sk=header_sk,
            index_keys={"status": [status_pk]},
            Key={"pk": _s(pk), "sk": _s(header_sk)},
            UpdateExpression="SET #s = :s, gsi2pk = :g",
            ExpressionAttributeNames={"#s": "status"},
            ExpressionAttributeValues={":s": _s(status), ":g": _s(status_pk)},
        )

    def get_profile(self) -> None:
        pk = f"USER#{self._user()}"
        self.db.call(
            "GetItem",
            "orders.get_profile",
            table=self.options.table,
            pk=pk,
            sk="PROFILE",
            Key={"pk": _s(pk), "sk": _s("PROFILE")},
        )

    def list_by_status(self) -> None:
        status = self.random.choice(STATUSES[:3])
        shard = self.random.randrange(self.status_shards)
        pk = (
            f"STATUS#{status}"
            if self.options.design == "hot-status"
            else f"STATUS#{status}#{shard}"
        )
        self.db.call(
            "Query",
            "orders.list_by_status",
            table=self.options.table,
            index="status",
            pk=pk,
            IndexName="status",
            KeyConditionExpression="gsi2pk = :pk",
            ExpressionAttributeValues={":pk": _s(pk)},
            ScanIndexForward=False,
            Limit=20,
        )


def status_key(design: str, status: str, order_id: str, shards: int) -> str:
    """The status index's partition key of an order in a design."""
    if design == "hot-status":
        return f"STATUS#{status}"
    return f"STATUS#{status}#{hash_shard(order_id, shards)}"


def hash_shard(order_id: str, shards: int) -> int:
    """A stable shard for an order id (Python's hash() differs between processes)."""
    return zlib.crc32(order_id.encode()) % shards


register(OrdersUser)
