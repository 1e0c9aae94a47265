"""A team's own design as a file: tables, item shapes, access patterns and launch rates.

    design = load_design("examples/designs/ecommerce.yaml", "good")
    patterns = design.compile(design.generators(seed=1))
    for call in patterns["get-order"].calls(Draws(generators)):
        client.call(call.operation, "get-order", table=call.table, pk=call.pk, ...)

Owns: the design file's format (`spec`, its JSON Schema in ``design.schema.json``), its
small languages (`values`: rates, latency needs; `templates`: ``USER#{user}``), value
generators (`generators`, over the harness's key distributions), access patterns compiled to
DynamoDB requests (`patterns`), reading a file and its variants (`loader`), AWS's
``dynamodb_data_model.json`` (`awsmodel`), starting data (`starting`) and the static check
(`check`). Imports `loadgen.model` (schemas, capacity units), `loadgen.workload.keys` (the
distributions) and `loadgen.errors`; never the client, the heat, the emulator or the verdict.
The generic Locust user that runs a design is ``workloads/design.py``.
"""

from loadgen.design.generators import Draws, RunClock
from loadgen.design.loader import DEFAULT_RATE, Design, is_design_file, load_design, load_designs
from loadgen.design.patterns import Call, CompiledPattern
from loadgen.design.values import LatencyNeed, latency_need, rate_per_s

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
]
