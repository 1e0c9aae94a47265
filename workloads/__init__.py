"""The shipped workloads: one locustfile per workload (``counter.py``, ``sensor.py``,
``orders.py``), ``design.py`` for any design file, ``replay.py`` for a captured trace.

``loadgen run counter`` runs them from the installed package (``loadgen.workloads``), from any
folder. Their user classes are a library too: a team's own locustfile may subclass one,

    import loadgen.workloads.counter as counter

    class NightlyCounter(counter.CounterUser):
        default_mix = {"increment": 1, "read": 1}

imported by its module (Locust runs every user class a locustfile names at its top level).
"""
