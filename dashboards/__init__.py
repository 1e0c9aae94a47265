"""Grafana dashboards as code, written with grafanalib.

Each module defines ``dashboard``; its JSON is committed beside it (``partition_heat.py``
gives ``partition_heat.json``), provisioned by docker-compose.yml's Grafana. Rebuild them
after changing a module, from the project directory:

    loadgen dashboards            # or: python -m dashboards
    loadgen dashboards --check    # exit 1 if a committed JSON differs from its source

tests/test_dashboards.py fails while the committed JSON and its source disagree.
"""
