"""``python -m loadgen.emulator`` under cProfile timed by CPU, not the clock.

Run in place of ``-m loadgen.emulator`` with the same arguments (`bench_target.py
--profile`): profiling starts on SIGUSR1 and the statistics are written on SIGUSR2, to the
file named by ``PROFILE_OUT``, so the engine's start and warm-up stay out of them. CPU time
(``time.process_time``), because on a shared machine the clock also counts the seconds the
emulator waited for a core. cProfile's own cost falls on every Python call, so read the
shares of the request path, not its absolute times.
"""

from __future__ import annotations

import cProfile
import os
import runpy
import signal
import sys
import time

profiler = cProfile.Profile(time.process_time)


def _start(signum: int, frame: object) -> None:
    profiler.enable()


def _write(signum: int, frame: object) -> None:
    profiler.disable()
    profiler.dump_stats(os.environ["PROFILE_OUT"])


if __name__ == "__main__":
    signal.signal(signal.SIGUSR1, _start)
    signal.signal(signal.SIGUSR2, _write)
    sys.argv = ["loadgen.emulator", *sys.argv[1:]]
    runpy.run_module("loadgen.emulator", run_name="__main__", alter_sys=True)
