"""DynamoDB's rules, with no I/O: what the emulator enforces and the heat accounting prices.

Owns: partitions and their ceilings, burst and adaptive capacity (`partitions`), capacity
units (`capacity`), the index entries a write touches (`index_writes`), item sizes
(`itemsize`), table and index schemas (`schema`), the exact throttle errors (`throttling`) and
the one key hash every part of the harness buckets by (`hashing`). Imports nothing of the
package but `loadgen.errors`; every other subpackage may import it.
"""
