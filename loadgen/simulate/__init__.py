"""Launch day in seconds: hours of a traffic profile through the partition model, at AWS scale.

    design = load_design("examples/designs/counter.yaml", "single")
    result = simulate(design, parse_profile(["0 -> 20k/s over 5m", "hold 30m"]))
    print("\\n".join(timeline_lines(result)))
    write_results(build_results(result), "simulated.json")   # loadgen report / gate read it

Owns: launch traffic over time (`profile`), what each access pattern asks of each table and
index key by key (`demand`), the virtual-clock loop that admits a second's demand per partition
in bulk (`engine`), the SDK's retries and where they come back (`retries`), items that grow
with their updates (`growth`), which limit refused each throttle (`causes`), the timeline, first
failures and results file (`output`), the ``loadgen simulate`` command (`command`) and
``loadgen check``: the file's launch rates through the model, limit by limit (`launch`).
Imports `loadgen.model`, `loadgen.design`, `loadgen.errors` and the results writer of
`loadgen.heat.results`; never Locust, the client, the emulator or the workload: no request
is sent.
"""

from __future__ import annotations

from loadgen.simulate.engine import Settings, SimulationResult, simulate
from loadgen.simulate.launch import LAUNCH_S, check, launch_profile
from loadgen.simulate.output import build_results, timeline_lines
from loadgen.simulate.profile import Profile, constant, load_profile, parse_profile

__all__ = [
    "LAUNCH_S",
    "Profile",
    "Settings",
    "SimulationResult",
    "build_results",
    "check",
    "constant",
    "launch_profile",
    "load_profile",
    "parse_profile",
    "simulate",
    "timeline_lines",
]
