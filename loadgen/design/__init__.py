"""A team's own design as a file: tables, item shapes, access patterns and launch rates.

    design = load_design("examples/designs/ecommerce.yaml", "good")
    generators = design.generators(seed=1)
    patterns = design.compile(generators)
    for call in patterns["get-order"].calls(Draws(generators)):
        client.call(call.operation, "get-order", table=call.table, pk=call.pk, ...)

Owns: the design file's format (`spec`, its JSON Schema in ``design.schema.json``), its
small languages (`values`: rates, latency needs; `templates`: ``USER#{user}``), the key
distributions every workload draws from (`keys`) and the value generators built on them
(`generators`), access patterns compiled to DynamoDB requests (`patterns`) and read as
DynamoDB reads them (`expressions`), reading a file (`loader`) and its variants
(`variants`), AWS's ``dynamodb_data_model.json`` (`awsmodel`), starting data (`starting`) and
what ``loadgen check`` reports (`check`: its figures are the partition model's, asked by
`loadgen.simulate.launch`), and the pipeline recipe that checks, runs and gates a design file
in a team's CI (`pipeline`: ``loadgen ci``). Imports `loadgen.model` (schemas, capacity units,
expressions), `loadgen.pricing`, `loadgen.refusals` and `loadgen.errors`; never Locust, the
client, the workload, the heat, the emulator or the verdict, so ``loadgen check`` reads a
design without starting Locust. The generic Locust user that runs a design is
``workloads/design.py``.

The names below load on first use: `keys` alone stays light for the workloads that import it.
"""

from __future__ import annotations

import importlib
from typing import Any

__all__ = [
    "DEFAULT_RATE",
    "Call",
    "CompiledPattern",
    "Design",
    "Draws",
    "LatencyNeed",
    "RunClock",
    "is_design_file",
    "latency_need",
    "load_design",
    "load_designs",
    "rate_per_s",
    "stored_bytes",
]

_HOMES = {
    "DEFAULT_RATE": "loader",
    "Call": "patterns",
    "CompiledPattern": "patterns",
    "Design": "loader",
    "Draws": "generators",
    "LatencyNeed": "values",
    "RunClock": "generators",
    "is_design_file": "loader",
    "latency_need": "values",
    "load_design": "loader",
    "load_designs": "loader",
    "rate_per_s": "values",
    "stored_bytes": "check",
}


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'loadgen.design' has no attribute {name!r}")
    return getattr(importlib.import_module(f"loadgen.design.{home}"), name)
