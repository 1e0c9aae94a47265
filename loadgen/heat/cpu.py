"""The CPU each process of a run took, measured over the run: the load generator's
process(es), the embedded emulator's and its engine's (DynamoDB Local's JVM, a child of the
emulator; moto answers in the emulator's own process), and how busy the machine's cores were.

A rate run whose load was not delivered says which of them ran out (`ran_out`): a Python
process (the load generator, the emulator) runs its work on one core at a time, so one that
took 90% of a core over the run had no more to give; the engine's JVM runs on every core,
so it runs out with the machine, whose busy share names what each took and what processes
outside the run took.

    meter = CpuMeter([("load generator", os.getpid()), ("emulator", emulator_pid)])
    ...                  # the load runs
    cpu = meter.read()   # {"wall_s": 20.0, "cores": 2, "machine_busy": 0.97, "processes": [...]}
    ran_out(cpu)         # ["the emulator's process ran out of CPU (98% of a core over the run)"]
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # imported where a meter is made: `usable_cores` (loadgen check) needs none
    import psutil

__all__ = ["RAN_OUT", "CpuMeter", "format_cpu", "ran_out", "usable_cores"]

RAN_OUT = 0.9
"""A share of one core (a Python process), or of the machine's cores, at or above which the
process or the machine had no more CPU to give: where Locust warns of its own process."""

_ONE_CORE = frozenset({"load generator", "load-generator master", "emulator"})
"""Roles whose work runs on one core at a time (Python, its interpreter lock)."""


def _busy(process: psutil.Process) -> float:
    times = process.cpu_times()
    return float(times.user + times.system)


class CpuMeter:
    """CPU seconds of named processes from now to `read`, and of the machine's cores.

    Each ``(role, pid)`` is watched with its children at start under the child role
    ``engine`` for the emulator (its engine's JVM); a process that is gone by then is left out.
    """

    def __init__(self, processes: Iterable[tuple[str, int]]) -> None:
        import psutil

        self._watched: list[tuple[str, psutil.Process, float]] = []
        for role, pid in processes:
            try:
                process = psutil.Process(pid)
                self._watched.append((role, process, _busy(process)))
                if role == "emulator":
                    for child in process.children(recursive=True):
                        self._watched.append(("engine", child, _busy(child)))
            except psutil.Error:
                continue
        self._wall = time.monotonic()
        self._machine = psutil.cpu_times()
        self._held: dict[str, Any] | None = None

    def hold(self) -> None:
        """Read now and keep the reading for `read`: the end of the load, before processes
        that ran it (a run's workers) quit and their CPU can no longer be read."""
        self._held = self._now()

    def read(self) -> dict[str, Any]:
        """The run's CPU from the start to `hold` (or to now): per process its CPU seconds and
        the cores they make over the wall time (1.0: one core busy all along), and the
        machine's busy share."""
        return self._held or self._now()

    def _now(self) -> dict[str, Any]:
        import psutil

        wall = max(time.monotonic() - self._wall, 1e-6)
        rows = []
        for role, process, start in self._watched:
            try:
                used = _busy(process) - start
            except psutil.Error:
                continue  # it ended before the run did: its seconds are not known
            rows.append(
                {"role": role, "pid": process.pid, "cpu_s": round(used, 3),
                 "cores": round(used / wall, 3)}
            )  # fmt: skip
        now = psutil.cpu_times()
        total = sum(now) - sum(self._machine)
        idle = (now.idle + getattr(now, "iowait", 0.0)) - (
            self._machine.idle + getattr(self._machine, "iowait", 0.0)
        )
        cores = psutil.cpu_count() or os.cpu_count() or 1
        return {
            "wall_s": round(wall, 3),
            "cores": cores,
            "machine_busy": round((total - idle) / total, 3) if total > 0 else None,
            "processes": rows,
        }


def _roles(cpu: dict[str, Any]) -> dict[str, float]:
    """Cores taken per role, its processes together, in the order first seen."""
    taken: dict[str, float] = {}
    for row in cpu.get("processes") or ():
        taken[row["role"]] = taken.get(row["role"], 0.0) + float(row["cores"])
    return taken


def _name(row: dict[str, Any], cpu: dict[str, Any]) -> str:
    same = [r for r in cpu.get("processes") or () if r["role"] == row["role"]]
    if len(same) == 1:
        return f"the {row['role']}'s process"
    return f"{row['role']} process {same.index(row) + 1} of {len(same)}"


def ran_out(cpu: dict[str, Any]) -> list[str]:
    """Which process ran out of CPU over the run, in words; then the machine, where its cores
    were busy, with what each role took. Empty when none did."""
    said = [
        f"{_name(row, cpu)} ran out of CPU ({float(row['cores']):.0%} of a core over the run)"
        for row in cpu.get("processes") or ()
        if row["role"] in _ONE_CORE and float(row["cores"]) >= RAN_OUT
    ]
    busy = cpu.get("machine_busy")
    if busy is not None and busy >= RAN_OUT:
        said.append(
            f"the machine's {cpu['cores']} cores were {busy:.0%} busy (in cores: {_taken(cpu)})"
        )
    return said


def _taken(cpu: dict[str, Any]) -> str:
    """``the load generator 1.0, the emulator 0.7, other processes 0.2`` (cores)."""
    roles = _roles(cpu)
    parts = [f"the {role} {cores:.1f}" for role, cores in roles.items()]
    busy = cpu.get("machine_busy")
    if busy is not None:
        others = max(0.0, float(busy) * int(cpu["cores"]) - sum(roles.values()))
        parts.append(f"other processes {others:.1f}")
    return ", ".join(parts)


def format_cpu(cpu: dict[str, Any]) -> str:
    """The summary's line on what each process of the run took."""
    busy = cpu.get("machine_busy")
    machine = f"; the machine's {cpu['cores']} cores {busy:.0%} busy" if busy is not None else ""
    return f"CPU over the run, in cores: {_taken(cpu)}{machine}"


def usable_cores() -> int:
    """The cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1
