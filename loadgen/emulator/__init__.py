"""The partition emulator: a DynamoDB endpoint that throttles as a partitioned table does.

Owns: the HTTP server and request flow (`server`), DynamoDB's JSON protocol (`wire`), checking
requests against DynamoDB's API model (`validation`), capacity quotas (`quotas`), limits on
concurrent work (`admission`), backend failures as DynamoDB errors (`faults`), where
admitted requests go (`backends`: moto, an upstream, or nothing), what a request costs
(`pricing`, with `update_expression` to replay updates), its Prometheus metrics (`metrics`),
the trace of ``--capture`` (`capture`, written with `loadgen.traffic.trace`),
the child process a run starts (`embedded`) and ``loadgen emulator`` itself (`command`).
Imports `loadgen.model`, `loadgen.targets`, `loadgen.errors` and the trace format of
`loadgen.traffic` (`trace`, `facts`); never the workload or client layers, which talk to it
over HTTP only.

HTTP -> `admission` -> `wire` (parse) -> `validation`, `quotas` (answer malformed requests)
-> `pricing` (units) -> `loadgen.model.partitions` (admit or throttle) -> `backends` (forward)
-> `wire` (answer, with the model's ConsumedCapacity; `faults` for a failed backend).
"""
