"""The partition emulator: a DynamoDB endpoint that throttles as a partitioned table does.

Owns: the request flow (`server`) and its HTTP server (`listener`), DynamoDB's JSON protocol
(`wire`), checking requests against DynamoDB's API model (`validation`), capacity quotas
(`quotas`), limits on concurrent work (`admission`), backend failures as DynamoDB errors
(`faults`), where admitted requests go (`backends`: moto, with shorter paths through it in
`moto_paths`, an upstream, or nothing), the embedded engine's choice and warm-up (`engines`),
what a request costs (`pricing`, replaying updates with `loadgen.model.update_expression`), its
Prometheus metrics (`metrics`), the trace of ``--capture`` (`capture`, written with
`loadgen.traffic.trace`), the child process a run starts (`embedded`), ``loadgen emulator``
itself (`command`) and ``loadgen engine``, which engines can run here (`engine_command`).
Imports `loadgen.model`, `loadgen.targets`, `loadgen.errors` and the trace format of
`loadgen.traffic` (`trace`, `facts`); never the workload or client layers, which talk to it
over HTTP only.

HTTP (`listener`) -> `admission` -> `wire` (parse) -> `validation`, `quotas` (answer malformed
requests) -> `pricing` (units) -> `loadgen.model.partitions` (admit or throttle) -> `backends`
(forward) -> `wire` (answer, with the model's ConsumedCapacity; `faults` for a failed backend).
"""
