"""DynamoDB's rules, with no I/O: what the emulator enforces and the heat accounting prices.

Owns: partitions and their ceilings, burst and adaptive capacity (`partitions`), capacity
units (`capacity`), the index entries a write touches (`index_writes`), item sizes
(`itemsize`), table and index schemas (`schema`), the exact throttle errors (`throttling`),
the one key hash every part of the harness buckets by (`hashing`), the expression grammar and
DynamoDB's first complaint about an expression (`expressions`, which the emulator answers with
and a design file is checked by), the replay of an update on a known item
(`update_expression`), the capacity a remedy sets for a launch's demand (`sizing`), and
DynamoDB's hard limits on a request and an item (`limits`).
Imports nothing of the package but `loadgen.errors`; every other subpackage may import it.
"""
