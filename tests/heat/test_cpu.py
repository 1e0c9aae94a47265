"""The CPU each process of a run took: measured from the processes themselves, and said in
words where one ran out."""

from __future__ import annotations

import subprocess
import sys
import time

import psutil

from loadgen.heat.cpu import CpuMeter, ran_out

BUSY = "import time\nend = time.monotonic() + 3\nwhile time.monotonic() < end: pass\n"
SLEEPER = (
    "import subprocess, sys, time\nsubprocess.Popen([sys.executable, '-c', %r])\ntime.sleep(3)\n"
)


def test_the_meter_reads_each_process_and_the_emulators_children_as_the_engine() -> None:
    # A sleeping "emulator" whose child spins, as DynamoDB Local's JVM is the emulator's child.
    emulator = subprocess.Popen([sys.executable, "-c", SLEEPER % BUSY])
    try:
        for _ in range(50):  # until the child is there
            if psutil.Process(emulator.pid).children():
                break
            time.sleep(0.05)
        meter = CpuMeter([("emulator", emulator.pid), ("load generator", 999_999_999)])
        time.sleep(1.5)
        cpu = meter.read()
    finally:
        emulator.wait(timeout=30)
    rows = {row["role"]: row for row in cpu["processes"]}
    assert set(rows) == {"emulator", "engine"}  # a process that does not exist is left out
    assert rows["engine"]["cores"] > rows["emulator"]["cores"] + 0.2, cpu
    assert 1.4 < cpu["wall_s"] < 10 and cpu["cores"] >= 1
    assert 0.0 <= cpu["machine_busy"] <= 1.0


def test_a_python_process_runs_out_at_nine_tenths_of_a_core_the_engine_with_the_machine() -> None:
    def cpu(emulator: float, engine: float, busy: float) -> dict[str, object]:
        return {
            "wall_s": 10.0, "cores": 4, "machine_busy": busy,
            "processes": [{"role": "emulator", "pid": 2, "cpu_s": 10 * emulator, "cores": emulator},
                          {"role": "engine", "pid": 3, "cpu_s": 10 * engine, "cores": engine}],
        }  # fmt: skip

    assert ran_out(cpu(0.89, 2.5, 0.85)) == []  # a JVM at 2.5 cores of 4 had more to take
    assert ran_out(cpu(0.9, 0.1, 0.3)) == [
        "the emulator's process ran out of CPU (90% of a core over the run)"
    ]
    assert ran_out(cpu(0.5, 3.0, 0.95)) == [
        "the machine's 4 cores were 95% busy (in cores: the emulator 0.5, the engine 3.0, "
        "other processes 0.3)"
    ]
