"""Heat accounting: what a run did to each key, partition and index, and where it goes.

Owns: the run's recorder (`recorder`, one Locust request listener), the hot-key sketch
(`sketch`), the heat map of hash buckets over time (`heatmap`), consumed units computed from
item sizes (`consumed`), the open model's offered, achieved and dropped load and its
delivery verdict (`load`), the CPU each process of a run took (`cpu`), the Prometheus
exporter (`exporter`) and the results file (`results`). Imports `loadgen.model` and
`loadgen.errors`; not the client, the emulator or the verdict.
"""
