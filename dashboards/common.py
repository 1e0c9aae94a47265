"""What both dashboards share: the data source, the template variables, the panel kinds.

Panels target Grafana 11 (the version docker-compose.yml runs). Where grafanalib 0.7.1 still
writes a panel in a pre-Grafana-8 shape (its ``Heatmap`` and ``BarGauge``), the panel here is
written in the current shape on grafanalib's ``Panel`` base, so that Grafana shows it as
written instead of migrating it.

Every query selects through the template variables, so that the test that runs each panel's
PromQL against a real Prometheus (tests/test_dashboards.py) substitutes them as Grafana
does. Time-window macros are Grafana's own: ``$__rate_interval`` (at least four scrape
intervals, so a rate always spans two samples) and ``$__range`` (the dashboard's range).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import attr
from grafanalib import core

DATASOURCE = {"type": "prometheus", "uid": "${datasource}"}
"""Every panel and query reads from the data source the ``datasource`` variable picks."""

RATE = "$__rate_interval"
RANGE = "$__range"


# --- template variables -----------------------------------------------------------------------


def datasource_variable() -> core.Template:
    """A Prometheus data source picker: provisioned Grafana preselects its default one, an
    imported dashboard asks for one."""
    return core.Template(
        name="datasource",
        label="Data source",
        query="prometheus",
        type="datasource",
        default="Prometheus",
    )


def query_variable(
    name: str,
    label: str,
    query: str,
    *,
    include_all: bool = False,
    multi: bool = False,
    regex: str | None = None,
) -> core.Template:
    """A variable from a Prometheus query (``label_values(...)`` or ``query_result(...)``),
    refreshed whenever the time range changes so that a new run's labels appear."""
    template = core.Template(
        name=name,
        label=label,
        query=query,
        dataSource=DATASOURCE,
        includeAll=include_all,
        # ".*" rather than Grafana's list of the values it knows: it also matches series
        # that appeared after the options were loaded.
        allValue=".*" if include_all else None,
        multi=multi,
        regex=regex,
        refresh=core.REFRESH_ON_TIME_RANGE_CHANGE,
    )
    if include_all:
        # Open on "All", written as Grafana writes it ($__all); without a current value
        # Grafana opens on the first option.
        template._current = {
            "selected": True,
            "text": ["All"] if multi else "All",
            "value": ["$__all"] if multi else "$__all",
        }
    return template


INDEX_REGEX = '/index_name="(?<text>[^"]+)",index_regex="(?<value>[^"]+)"/'
"""Grafana's named capture groups: the option shows ``text`` and puts ``value`` in queries."""


def index_variable(selector: str) -> core.Template:
    """The table itself, one of its GSIs, or all of them together.

    The exporters leave ``index`` empty for the table itself, and Prometheus stores an empty
    label as no label at all, so ``label_values`` cannot offer the table. This variable's
    options come from a query instead: ``(table)`` selects ``index=~"^$"`` (no index), a GSI
    its name, ``(all)`` everything. A single-valued variable without an "All" option is not
    regex-escaped by Grafana's Prometheus data source, so ``^$`` reaches the query intact.
    """
    series = (
        f"label_replace(label_replace(label_replace(label_replace({selector}, "
        '"index_name", "$1", "index", "(.+)"), '
        '"index_name", "(table)", "index", ""), '
        '"index_regex", "$1", "index", "(.+)"), '
        '"index_regex", "^$$", "index", "")'
    )
    everything = (
        'label_replace(label_replace(vector(1), "index_name", "(all)", "", ""), '
        '"index_regex", ".*", "", "")'
    )
    template = query_variable(
        "index",
        "Index",
        f"query_result(count by (index_name, index_regex) ({series}) or {everything})",
        regex=INDEX_REGEX,
    )
    # Open on the table itself rather than on whichever option sorts first.
    template._current = {"selected": True, "text": "(table)", "value": "^$"}
    return template


# --- panels -----------------------------------------------------------------------------------


def target(expr: str, legend: str = "", *, ref: str = "A", instant: bool = False) -> core.Target:
    """One PromQL query of a panel; ``instant`` ones (tables, bar gauges) give one value."""
    return core.Target(
        expr=expr,
        legendFormat=legend,
        refId=ref,
        instant=instant,
        format=core.TABLE_TARGET_FORMAT if instant else core.TIME_SERIES_TARGET_FORMAT,
        # grafanalib's default of 2 would halve the resolution of every graph.
        intervalFactor=1,
        datasource=DATASOURCE,
    )


def targets(*queries: tuple[str, str], instant: bool = False) -> list[core.Target]:
    """Targets A, B, C, ... from (expression, legend) pairs."""
    return [
        target(expr, legend, ref=chr(ord("A") + i), instant=instant)
        for i, (expr, legend) in enumerate(queries)
    ]


def grid(x: int, y: int, w: int, h: int) -> core.GridPos:
    return core.GridPos(h=h, w=w, x=x, y=y)


def timeseries(
    title: str,
    description: str,
    queries: list[core.Target],
    position: core.GridPos,
    *,
    unit: str = "short",
    overrides: Sequence[dict[str, Any]] = (),
    stacked: bool = False,
    draw_style: str = "line",
) -> core.TimeSeries:
    return core.TimeSeries(
        title=title,
        description=description,
        dataSource=DATASOURCE,
        targets=queries,
        gridPos=position,
        unit=unit,
        overrides=list(overrides),
        drawStyle=draw_style,
        fillOpacity=10,
        showPoints="never",
        stacking={"mode": "normal", "group": "A"} if stacked else {},
        legendDisplayMode="table",
        legendPlacement="right",
        legendCalcs=["max", "lastNotNull"],
        tooltipMode="multi",
        tooltipSort="desc",
    )


def on_right_axis(series: str, unit: str) -> dict[str, Any]:
    """A field override: the series named ``series`` on its own axis on the right."""
    return {
        "matcher": {"id": "byName", "options": series},
        "properties": [
            {"id": "custom.axisPlacement", "value": "right"},
            {"id": "unit", "value": unit},
        ],
    }


def as_ceiling(series: str, *, pattern: bool = False) -> dict[str, Any]:
    """A field override: the series named ``series`` (or, with ``pattern``, every series the
    regular expression ``series`` matches) as a dashed red limit line."""
    return {
        "matcher": {"id": "byRegexp" if pattern else "byName", "options": series},
        "properties": [
            {"id": "color", "value": {"mode": "fixed", "fixedColor": "red"}},
            {"id": "custom.lineStyle", "value": {"fill": "dash", "dash": [10, 10]}},
            {"id": "custom.fillOpacity", "value": 0},
            {"id": "custom.lineWidth", "value": 2},
        ],
    }


@attr.s
class BucketHeatmap(core.Panel):
    """Grafana's heatmap (the one since Grafana 9) of series that are already the rows.

    Each series of the query is one row (its legend, the bucket number, names it), so the
    panel must not bucket the values again (``calculate: false``). Grafana sorts rows whose
    names are all numbers numerically: bucket 0 at the bottom, B-1 at the top.
    """

    unit = attr.ib(default="short")
    scheme = attr.ib(default="Oranges")

    def to_json_data(self) -> dict[str, Any]:
        return self.panel_json(
            {
                "type": "heatmap",
                "fieldConfig": {
                    "defaults": {
                        "custom": {
                            "hideFrom": {"legend": False, "tooltip": False, "viz": False},
                            "scaleDistribution": {"type": "linear"},
                        },
                    },
                    "overrides": [],
                },
                "options": {
                    "calculate": False,
                    "cellGap": 0,
                    "color": {
                        "mode": "scheme",
                        "scheme": self.scheme,
                        # The brightest cell is the hottest of the window: one hot bucket
                        # stands out against a cool key space whatever the absolute rate.
                        "scale": "exponential",
                        "exponent": 0.5,
                        "steps": 64,
                        "fill": "dark-orange",
                        "reverse": False,
                    },
                    "filterValues": {"le": 1e-9},
                    "rowsFrame": {"layout": "auto", "value": self.unit},
                    "yAxis": {"axisPlacement": "left", "axisLabel": "bucket", "reverse": False},
                    "cellValues": {"unit": self.unit},
                    "tooltip": {"mode": "single", "yHistogram": False, "showColorScale": True},
                    "legend": {"show": True},
                    "showValue": "never",
                    "exemplars": {"color": "rgba(255,0,255,0.7)"},
                },
            }
        )


def heatmap(
    title: str, description: str, expr: str, position: core.GridPos, *, unit: str
) -> BucketHeatmap:
    return BucketHeatmap(
        title=title,
        description=description,
        dataSource=DATASOURCE,
        targets=[target(expr, "{{bucket}}")],
        gridPos=position,
        unit=unit,
        # One column per pixel pair is plenty; more only costs the browser.
        maxDataPoints=400,
    )


@attr.s
class BarGauge(core.Panel):
    """Grafana's bar gauge in its current shape: one bar per series, last value."""

    unit = attr.ib(default="percentunit")
    max = attr.ib(default=1.0)

    def to_json_data(self) -> dict[str, Any]:
        return self.panel_json(
            {
                "type": "bargauge",
                "fieldConfig": {
                    "defaults": {
                        "unit": self.unit,
                        "min": 0,
                        "max": self.max,
                        "color": {"mode": "thresholds"},
                        "thresholds": {
                            "mode": "percentage",
                            "steps": [
                                {"color": "green", "value": None},
                                {"color": "orange", "value": 70},
                                {"color": "red", "value": 90},
                            ],
                        },
                    },
                    "overrides": [],
                },
                "options": {
                    "displayMode": "gradient",
                    "orientation": "horizontal",
                    "showUnfilled": True,
                    "valueMode": "color",
                    "namePlacement": "auto",
                    "sizing": "auto",
                    "minVizHeight": 10,
                    "maxVizHeight": 40,
                    "reduceOptions": {"calcs": ["lastNotNull"], "fields": "", "values": False},
                },
            }
        )


def stat(
    title: str, description: str, queries: list[core.Target], position: core.GridPos
) -> core.Stat:
    return core.Stat(
        title=title,
        description=description,
        dataSource=DATASOURCE,
        targets=queries,
        gridPos=position,
        reduceCalc="lastNotNull",
        graphMode="area",
        noValue="0",
    )


def dashboard(
    title: str,
    uid: str,
    description: str,
    variables: Iterable[core.Template],
    panels: Iterable[core.Panel],
) -> core.Dashboard:
    """A dashboard over the last 15 minutes, refreshed every 10 seconds, UTC."""
    return core.Dashboard(
        title=title,
        uid=uid,
        description=description,
        tags=["partition-heat", "dynamodb"],
        timezone="utc",
        refresh="10s",
        time=core.Time("now-15m", "now"),
        graphTooltip=core.GRAPH_TOOLTIP_MODE_SHARED_CROSSHAIR,
        templating=core.Templating(list=[datasource_variable(), *variables]),
        panels=list(panels),
        # Grafana 11 reads version 39 as its own and migrates nothing.
        schemaVersion=39,
    ).auto_panel_ids()


def row(title: str, y: int) -> core.RowPanel:
    return core.RowPanel(title=title, gridPos=grid(0, y, 24, 1))
