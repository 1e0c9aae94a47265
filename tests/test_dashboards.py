"""The Grafana dashboards: committed JSON equal to its source, and every panel's PromQL
answered with data by a real Prometheus that scraped a real run.

Grafana does not run here, so the test does what Grafana would with the dashboards' queries:
it resolves the template variables from Prometheus as Grafana's Prometheus data source does
(``label_values`` from the series API, ``query_result`` from an instant query and the
variable's regex with its named ``text``/``value`` groups), substitutes them with Grafana's
escaping, replaces Grafana's ``$__rate_interval`` and ``$__range``, and runs each query.
A query that returns nothing, or nothing but NaN, is a broken panel.
"""

from __future__ import annotations

import json
import math
import re
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from dashboards import build
from tests.conftest import SCRAPE_INTERVAL_S, Prometheus, free_port, scrape_config

ROOT = Path(__file__).resolve().parent.parent


# --- the JSON and its source ------------------------------------------------------------------


def test_committed_json_is_what_the_source_builds() -> None:
    assert build.check() == [], "run: loadgen dashboards"


def test_loadgen_dashboards_writes_and_checks(tmp_path: Path) -> None:
    loadgen = [sys.executable, "-m", "loadgen", "dashboards"]
    check = subprocess.run(
        [*loadgen, "--check", "--out", str(tmp_path)], cwd=ROOT, capture_output=True, text=True
    )
    assert check.returncode == 1
    assert "partition_heat.json is out of date: run loadgen dashboards" in check.stderr
    written = subprocess.run(
        [*loadgen, "--out", str(tmp_path)], cwd=ROOT, capture_output=True, text=True
    )
    assert written.returncode == 0, written.stderr
    for name in build.DASHBOARDS:
        committed = (ROOT / "dashboards" / f"{name}.json").read_text()
        assert (tmp_path / f"{name}.json").read_text() == committed
    again = subprocess.run(
        [*loadgen, "--check", "--out", str(tmp_path)], cwd=ROOT, capture_output=True, text=True
    )
    assert again.returncode == 0, again.stderr


def panels(name: str) -> list[dict[str, Any]]:
    """The dashboard's panels, rows left out."""
    return [p for p in build.to_json(name)["panels"] if p["type"] != "row"]


@pytest.mark.parametrize("name", build.DASHBOARDS)
def test_panels_are_well_formed(name: str) -> None:
    dashboard = build.to_json(name)
    variables = {v["name"] for v in dashboard["templating"]["list"]}
    builtin = {"__rate_interval", "__range", "__interval"}
    ids = [p["id"] for p in dashboard["panels"]]
    assert len(ids) == len(set(ids))
    cells: set[tuple[int, int]] = set()
    for panel in dashboard["panels"]:
        pos = panel["gridPos"]
        assert pos["x"] + pos["w"] <= 24, panel["title"]
        area = {
            (x, y)
            for x in range(pos["x"], pos["x"] + pos["w"])
            for y in range(pos["y"], pos["y"] + pos["h"])
        }
        assert not area & cells, f"{panel['title']} overlaps another panel"
        cells |= area
    for panel in panels(name):
        assert panel["title"] and panel["description"], panel
        assert panel["datasource"] == {"type": "prometheus", "uid": "${datasource}"}
        assert panel["targets"], panel["title"]
        for target in panel["targets"]:
            assert target["datasource"] == panel["datasource"]
            used = set(re.findall(r"\$(\w+)", target["expr"])) - {"1"}
            assert used <= variables | builtin, (panel["title"], used)


# --- Grafana's part, done here ----------------------------------------------------------------


def regular_escape(value: str) -> str:
    """Grafana's prometheusRegularEscape: a single-valued variable without "All"."""
    return value.replace("\\", "\\\\").replace("'", "\\\\'")


def special_regex_escape(value: str) -> str:
    """Grafana's prometheusSpecialRegexEscape: a multi-valued or "All" variable."""
    return re.sub(r"([$^*{}\[\]'+?.()|])", r"\\\\\1", value.replace("\\", "\\\\\\\\"))


@dataclass
class Window:
    """The dashboard's time range, and Grafana's macros over it."""

    start: float
    end: float

    @property
    def macros(self) -> dict[str, str]:
        # $__rate_interval: max($__interval + scrape interval, 4 x scrape interval); a
        # short range has a $__interval of about the scrape interval.
        return {
            "$__rate_interval": f"{4 * SCRAPE_INTERVAL_S}s",
            "$__range": f"{max(1, round(self.end - self.start))}s",
        }


class Grafana:
    """Template variables and queries as Grafana's Prometheus data source runs them."""

    def __init__(self, prometheus: Prometheus, dashboard: dict[str, Any], window: Window):
        self.prometheus = prometheus
        self.variables = {v["name"]: v for v in dashboard["templating"]["list"]}
        self.window = window
        self.values: dict[str, str] = {}

    def interpolate(self, text: str) -> str:
        for macro, value in self.window.macros.items():
            text = text.replace(macro, value)
        for name, value in sorted(self.values.items(), key=lambda kv: -len(kv[0])):
            variable = self.variables[name]
            if value == variable.get("allValue") and variable["includeAll"]:
                escaped = value  # Grafana puts a custom "All" value in as it is
            elif variable["multi"] or variable["includeAll"]:
                escaped = special_regex_escape(value)
            else:
                escaped = regular_escape(value)
            text = text.replace(f"${name}", escaped)
        # Left: label_replace's "$1" and "$$" only, never a variable.
        assert not re.findall(r"\$[A-Za-z_]\w*", text), text
        return text

    def options(self, name: str) -> list[tuple[str, str]]:
        """The variable's options as (text, value), without "All"."""
        variable = self.variables[name]
        query = self.interpolate(variable["query"])
        match = re.fullmatch(r"label_values\((.*), (\w+)\)", query)
        if match:
            selector, label = match.groups()
            names = self._label_values(selector, label)
        else:
            inner = re.fullmatch(r"query_result\((.*)\)", query)
            assert inner, query
            names = [
                self._query_result_line(s) for s in self.prometheus.query(inner[1], self.window.end)
            ]
        options = []
        regex = variable.get("regex")
        for item in names:
            if not regex:
                options.append((item, item))
                continue
            pattern = re.compile(regex.strip("/").replace("(?<", "(?P<"))
            found = pattern.search(item)
            if found:
                options.append((found["text"], found["value"]))
        return sorted(set(options))

    def _label_values(self, selector: str, label: str) -> list[str]:
        params = urllib.parse.urlencode(
            {
                "match[]": selector,
                "start": f"{self.window.start:.3f}",
                "end": f"{self.window.end:.3f}",
            }
        )
        url = f"{self.prometheus.url}/api/v1/series?{params}"
        with urllib.request.urlopen(url, timeout=10) as response:
            series = json.load(response)["data"]
        return sorted({s[label] for s in series if label in s})

    @staticmethod
    def _query_result_line(sample: dict[str, Any]) -> str:
        # As Grafana's metric_find_query.ts formats a query_result sample.
        labels = dict(sample["metric"])
        name = labels.pop("__name__", "")
        inner = ",".join(f'{k}="{v}"' for k, v in labels.items())
        return f"{name}{{{inner}}} {sample['value'][1]} {int(sample['value'][0] * 1000)}"

    def run(self, target: dict[str, Any]) -> list[float]:
        """The target's values: at the range's end if instant, else over the range."""
        expr = self.interpolate(target["expr"])
        if target["instant"]:
            result = self.prometheus.query(expr, self.window.end)
            values = [float(s["value"][1]) for s in result]
        else:
            result = self.prometheus.query_range(expr, self.window.start, self.window.end)
            values = [float(v) for s in result for _, v in s["values"]]
        return [v for v in values if not math.isnan(v)]


# --- a real run, scraped ----------------------------------------------------------------------


@dataclass
class Scraped:
    prometheus: Prometheus
    window: Window
    """While both runs were live: Grafana's "last N minutes" during a run."""


def _wait_for(url: str, proc: subprocess.Popen[str], seconds: float = 30) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        assert proc.poll() is None, proc.communicate()
        try:
            with urllib.request.urlopen(url, timeout=2):
                return
        except OSError:
            time.sleep(0.2)
    pytest.fail(f"{url} did not answer")


@pytest.fixture(scope="module")
def scraped(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Scraped]:
    """Two workloads run at once through one emulator, and Prometheus scrapes all three.

    The sensor workload's by-time design and the orders workload's hot status GSI both
    throttle at the emulator's scale of 0.02 (a partition takes 20 write units/s); with
    botocore's standard retry mode (3 attempts) some calls fail too. Two runs give the
    workload variable two values to choose between. The emulator's engine is moto: the
    series come from the runs and the partition model, whatever the engine, and moto starts
    in a second where DynamoDB Local's JVM takes several.
    """
    from tests.conftest import running_prometheus

    tmp = tmp_path_factory.mktemp("dashboards")
    ports = {"emulator": free_port(), "sensor": free_port(), "orders": free_port()}
    with running_prometheus(tmp / "prometheus", scrape_config(ports)) as url:
        prometheus = Prometheus(url, ports)
        emulator = subprocess.Popen(
            [
                sys.executable, "-m", "loadgen", "emulator", "--port", str(ports["emulator"]),
                "--scale", "0.02", "--engine", "moto",
            ],
            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        )  # fmt: skip
        endpoint = f"http://127.0.0.1:{ports['emulator']}"
        runs: dict[str, subprocess.Popen[str]] = {}
        try:
            _wait_for(endpoint, emulator)
            duration = 12
            common = [
                "--endpoint", endpoint, "--duration", f"{duration}s", "--retry-mode", "standard",
                "--metrics-linger", "3",
            ]  # fmt: skip
            extra = {
                "sensor": ["--users", "6"],
                "orders": [
                    "--users", "4", "--billing-mode", "provisioned", "--read-capacity", "26000",
                    "--write-capacity", "26000",
                ],
            }  # fmt: skip
            started = time.time()
            for workload in ("sensor", "orders"):
                runs[workload] = subprocess.Popen(
                    [
                        sys.executable, "-m", "loadgen", "run", workload,
                        "--metrics-port", str(ports[workload]), *common, *extra[workload],
                    ],
                    cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                )  # fmt: skip
            outputs = {w: run.communicate(timeout=180)[0] for w, run in runs.items()}
            for workload, run in runs.items():
                assert run.returncode == 0, outputs[workload][-3000:]
            # Both runs were live from a few seconds after they started until their end.
            window = Window(started, started + duration)
            yield Scraped(prometheus, window)
        finally:
            for run in runs.values():
                run.kill()
            emulator.terminate()
            emulator.communicate(timeout=30)


def selections(grafana: Grafana, order: list[str]) -> list[dict[str, str]]:
    """Every combination of the variables' options, each variable's options given the
    values chosen before it (as Grafana chains them), on top of ``grafana.values``."""
    fixed = dict(grafana.values)
    combos = [fixed]
    for name in order:
        extended = []
        for combo in combos:
            grafana.values = dict(combo)
            options = grafana.options(name)
            assert options, f"variable {name} has no options with {combo}"
            extended += [{**combo, name: value} for _, value in options]
        combos = extended
    grafana.values = fixed
    return combos


@pytest.mark.slow
def test_every_partition_heat_query_returns_data(scraped: Scraped) -> None:
    dashboard = build.to_json("partition_heat")
    grafana = Grafana(scraped.prometheus, dashboard, scraped.window)
    assert {text for text, _ in grafana.options("workload")} == {"sensor", "orders"}
    checked = 0
    for workload in ("sensor", "orders"):
        grafana.values = {"workload": workload}
        port = scraped.prometheus.ports[workload]
        assert grafana.options("instance") == [(f"127.0.0.1:{port}", f"127.0.0.1:{port}")]
        combos = selections(grafana, ["instance", "table", "index"])
        indexes = {combo["index"] for combo in combos}
        # The table itself, everything, and for orders its GSIs.
        assert {"^$", ".*"} <= indexes and (len(indexes) > 2) == (workload == "orders")
        for combo in combos:
            grafana.values = combo
            for panel in panels("partition_heat"):
                for target in panel["targets"]:
                    expr = grafana.interpolate(target["expr"])
                    assert grafana.run(target), (combo, panel["title"], target["refId"], expr)
                    checked += 1
    assert checked > 100


def values_of(
    grafana: Grafana, title: str, ref: str = "A", dashboard: str = "partition_heat"
) -> list[float]:
    (panel,) = [p for p in panels(dashboard) if p["title"] == title]
    (target,) = [t for t in panel["targets"] if t["refId"] == ref]
    return grafana.run(target)


@pytest.mark.slow
def test_the_panels_show_the_sensor_hot_spot(scraped: Scraped) -> None:
    grafana = Grafana(scraped.prometheus, build.to_json("partition_heat"), scraped.window)
    grafana.values = {"workload": "sensor", "instance": ".*"}
    grafana.values["instance"] = grafana.options("instance")[0][1]
    grafana.values["table"] = grafana.options("table")[0][1]
    grafana.values["index"] = "^$"
    assert max(values_of(grafana, "Users and request rate", "A")) == 6
    assert max(values_of(grafana, "Users and request rate", "C")) > 0
    assert max(values_of(grafana, "Throttle ratio", "B")) > 0.1
    assert max(values_of(grafana, "Throttled attempts per bucket")) > 0
    # All readings of the hour go under one key: it holds (nearly) all the traffic.
    assert max(values_of(grafana, "Hottest partition keys", "B")) > 0.9
    assert max(values_of(grafana, "Failures by error code")) > 0


@pytest.mark.slow
def test_every_emulator_partitions_query_returns_data(scraped: Scraped) -> None:
    dashboard = build.to_json("emulator_partitions")
    grafana = Grafana(scraped.prometheus, dashboard, scraped.window)
    grafana.values = {}
    port = scraped.prometheus.ports["emulator"]
    assert grafana.options("instance") == [(f"127.0.0.1:{port}", f"127.0.0.1:{port}")]
    combos = selections(grafana, ["instance", "table", "index"])
    tables = {combo["table"] for combo in combos}
    checked = 0
    # A GSI's buffer is a series of the tables with a GSI (the orders' table); the seconds
    # until it is full, only while it fills faster than a split would help.
    with_gsi = {c["table"] for c in combos if c["index"] not in ("^$", ".*")}
    buffers = {"GSI write buffer", "Seconds until a GSI's buffer is full"}
    for combo in combos:
        grafana.values = combo
        for panel in panels("emulator_partitions"):
            for target in panel["targets"]:
                expr = grafana.interpolate(target["expr"])
                found = grafana.run(target)  # a query Prometheus refuses raises here
                if panel["title"] == "Seconds until a GSI's buffer is full" or (
                    panel["title"] in buffers and combo["table"] not in with_gsi
                ):
                    continue
                assert found, (combo, panel["title"], target["refId"], expr)
                checked += 1
    assert len(tables) == 2 and len(with_gsi) == 1 and checked > 50
    grafana.values = {"instance": f"127.0.0.1:{port}", "table": min(with_gsi), "index": ".*"}
    assert max(values_of(grafana, "GSI write buffer", "A", "emulator_partitions")) > 0
    assert min(values_of(grafana, "GSI write buffer", "B", "emulator_partitions")) > 0
    # The partition ceiling is 1,000 write units/s at scale 1: 20 at the test's 0.02.
    grafana.values = {"instance": f"127.0.0.1:{port}", "table": sorted(tables)[0], "index": "^$"}
    assert set(
        values_of(grafana, "Consumed write units per partition", "B", "emulator_partitions")
    ) == {20.0}


@pytest.mark.slow
def test_the_reason_panels_say_what_refused(scraped: Scraped) -> None:
    # The sensor's hour key is one hot partition of the table: the throttle names the table,
    # and the model's cause says a partition's ceiling.
    grafana = Grafana(scraped.prometheus, build.to_json("partition_heat"), scraped.window)
    (panel,) = [p for p in panels("partition_heat") if p["title"].startswith("Throttles by reason")]
    said = {}
    for workload in ("sensor", "orders"):
        grafana.values = {"workload": workload}
        grafana.values["instance"] = grafana.options("instance")[0][1]
        assert max(values_of(grafana, "Throttled attempts by reason")) > 0
        rows = scraped.prometheus.query(
            grafana.interpolate(panel["targets"][0]["expr"]), scraped.window.end
        )
        said[workload] = {
            (row["metric"]["reason"], row["metric"]["cause"], row["metric"].get("index", ""))
            for row in rows
        }
    assert ("TableWriteKeyRangeThroughputExceeded", "partition", "") in said["sensor"], said
    # The orders' PLACED status key is one hot partition of its status index: DynamoDB takes
    # the index's writes into a buffer for minutes before it pushes back (docs/fidelity.md),
    # so a short run shows the buffer filling, on the emulator's own metrics.
    (buffered,) = scraped.prometheus.query(
        'max(partition_heat_emulator_gsi_buffered_write_units{index="status"})',
        scraped.window.end,
    )
    assert float(buffered["value"][1]) > 0, said
