"""Counter workload: increments to named counters.

Designs:
- ``single``: every increment lands on one ``GLOBAL_COUNTER`` item (one attribute per counter
  name), the classic hot key: one partition-key value never gets more than 1,000 writes/s.
- ``sharded``: write sharding, ``COUNTER#<name>#SHARD#<0..N-1>`` with a random shard per
  increment; a read sums every shard of a counter with one BatchGetItem.

Counter names are drawn from the key distribution over ``--keys`` names.

    locust -f workloads/counter.py --headless -u 20 -t 30s -H http://127.0.0.1:8000 \\
        --design sharded --shards 10
"""

from __future__ import annotations

from typing import Any

from loadgen.workload import ConfigError, DynamoUser, WorkloadOptions, add_argument, register

GLOBAL_COUNTER = "GLOBAL_COUNTER"


class CounterUser(DynamoUser):
    designs = ("single", "sharded")
    default_table = "ph-counter"
    default_mix = {"increment": 9, "read": 1}

    @classmethod
    def add_arguments(cls, parser: Any) -> None:
        add_argument(
            parser, "--shards", type=int, default=10, help="Write shards per counter (sharded)"
        )

    @classmethod
    def create_table_request(cls, options: WorkloadOptions) -> dict[str, Any]:
        return {
            "TableName": options.table,
            "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
            "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}],
        }

    @classmethod
    def check_options(cls, parsed: Any) -> None:
        if parsed.shards < 1:
            raise ConfigError(f"--shards must be >= 1 (got {parsed.shards})")

    @classmethod
    def prefill_item(cls, options: WorkloadOptions, parsed: Any, number: int) -> dict[str, Any]:
        # sharded: every counter's shards in turn, counters past --keys once those are full.
        # single: the GLOBAL_COUNTER item with every counter's attribute, then one item per
        # counter (a table that also keeps each counter's own record).
        value = {"N": str(number % 997 + 1)}
        if options.design == "sharded":
            pk = f"COUNTER#c{number // parsed.shards}#SHARD#{number % parsed.shards}"
            return {"pk": {"S": pk}, "n": value}
        if number == 0:
            names = range(min(options.keys, 10_000))  # about 100 KB at most, under 400 KB
            return {"pk": {"S": GLOBAL_COUNTER}} | {f"c{k}": {"N": "1"} for k in names}
        return {"pk": {"S": f"COUNTER#c{number - 1}"}, "n": value}

    def on_start(self) -> None:
        self.shards = int(self.environment.parsed_options.shards)

    def _shard_key(self, name: str, shard: int) -> str:
        return f"COUNTER#{name}#SHARD#{shard}"

    def increment(self) -> None:
        name = f"c{self.keys.next()}"
        if self.options.design == "single":
            pk = GLOBAL_COUNTER
            names = {"#c": name}
        else:
            pk = self._shard_key(name, self.random.randrange(self.shards))
            names = {"#c": "n"}
        self.db.call(
            "UpdateItem",
            "counter.increment",
            table=self.options.table,
            pk=pk,
            Key={"pk": {"S": pk}},
            UpdateExpression="ADD #c :one",
            ExpressionAttributeNames=names,
            ExpressionAttributeValues={":one": {"N": "1"}},
        )

    def read(self) -> int:
        name = f"c{self.keys.next()}"
        table = self.options.table
        if self.options.design == "single":
            response = self.db.call(
                "GetItem",
                "counter.read",
                table=table,
                pk=GLOBAL_COUNTER,
                Key={"pk": {"S": GLOBAL_COUNTER}},
                ProjectionExpression="#c",
                ExpressionAttributeNames={"#c": name},
            )
            return int(response.get("Item", {}).get(name, {}).get("N", 0))
        keys = [self._shard_key(name, shard) for shard in range(self.shards)]
        total = 0
        # BatchGetItem reads at most 100 keys per call.
        for start in range(0, len(keys), 100):
            chunk = keys[start : start + 100]
            response = self.db.call(
                "BatchGetItem",
                "counter.read",
                table=table,
                partition_keys=chunk,
                RequestItems={table: {"Keys": [{"pk": {"S": k}} for k in chunk]}},
            )
            for item in response.get("Responses", {}).get(table, []):
                total += int(item.get("n", {}).get("N", 0))
        return total


register(CounterUser)
