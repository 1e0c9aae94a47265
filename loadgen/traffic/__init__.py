"""Your own traffic: capture it, replay it at launch scale, and prefill a table before a test.

Owns: the trace file, its writer and its tolerant reader (`trace`), what a trace line says
about a request (`facts`), the botocore capture hook (`capture`, also `loadgen.capture`), turning
a trace into a Locust workload (`replay`, run by ``workloads/replay.py`` and ``loadgen replay``)
and filling a table with many BatchWriteItem calls in flight (`prefill`, ``loadgen prefill``).

`trace` and `facts` import only `loadgen.model` and `loadgen.errors`: the emulator writes
traces with them (``loadgen emulator --capture``). The rest may import `loadgen.workload`;
nothing here imports the emulator, the verdict, the CLI or the runner.
"""
