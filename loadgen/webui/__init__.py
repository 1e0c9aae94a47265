"""Partition heat inside Locust's web UI, live: a tab, a heatmap page, JSON and the report.

    from loadgen.webui import install
    install(environment, lambda: results_of(environment, CounterUser))

Owns: the live view of a run's heat (`view`: top keys per table and index, the bucket heat
timeline, throttles, the diagnosis, offered against achieved load) and its routes on Locust's
Flask app with the pages' scripts (`routes`, `static/`). Reads what the heat recorder
gathered, as the results of the run so far, through the verdict's analysis and diagnosis;
imports `loadgen.verdict`, `loadgen.model` and `loadgen.errors`. Never a client, the emulator,
a target or the workload (which installs it).
"""

from loadgen.webui.routes import install

__all__ = ["install"]
