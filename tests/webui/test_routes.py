"""The routes on Locust's own Flask app: the tab's rows, the JSON, the page and the report."""

from __future__ import annotations

import io
import json
import sys
import zipfile
from collections.abc import Iterator
from typing import Any

import locust  # noqa: F401  (patches the standard library for gevent before boto3 loads)
import pytest
from locust import User, task
from locust.argument_parser import parse_options
from locust.env import Environment

from loadgen.webui import install
from loadgen.webui.routes import COLUMNS, TAB
from tests.results_factory import make_results, op_row, steady


class Idle(User):
    @task
    def nothing(self) -> None:
        pass


def hot_results() -> dict[str, Any]:
    events = steady("ph-counter", ["GLOBAL_COUNTER"], per_second=30, throttled=1)
    return make_results(events, [op_row("counter.increment", "UpdateItem", 300, throttled=300)])


@pytest.fixture(autouse=True)
def locust_argv(monkeypatch: pytest.MonkeyPatch) -> None:
    # Locust's UI reads its extra options from the command line: pytest's are not Locust's.
    monkeypatch.setattr(sys, "argv", ["locust"])


@pytest.fixture
def client() -> Iterator[Any]:
    environment = Environment(user_classes=[Idle])
    environment.create_local_runner()
    web_ui = environment.create_web_ui("127.0.0.1", 0, delayed_start=True)
    calls = []

    def results() -> dict[str, Any]:
        calls.append(1)
        return hot_results()

    assert install(environment, results)
    assert not install(environment, results)  # once per environment
    client = web_ui.app.test_client()
    client.calls = calls
    yield client
    environment.runner.quit()


def test_the_tab_is_declared_in_locusts_template_arguments(client: Any) -> None:
    page = client.get("/").get_data(as_text=True)
    args = json.loads(page.split("window.templateArgs = ", 1)[1].split("\n", 1)[0])
    assert {"title": "Partition heat", "key": TAB} in args["extended_tabs"]
    (table,) = [t for t in args["extended_tables"] if t["key"] == TAB]
    assert table["structure"] == COLUMNS
    hrefs = [f["href"] for f in args["extended_csv_files"]]
    assert hrefs == [
        "./partition-heat/report.html",
        "./partition-heat/report.zip",
        "./partition-heat/data.json",
    ]
    assert '<script src="./partition-heat/static/tab.js" defer></script></body>' in page


def test_the_tab_rows_ride_on_locusts_stats_poll(client: Any) -> None:
    body = client.get("/stats/requests").get_json()
    assert "stats" in body  # Locust's own answer is kept
    (extended,) = [e for e in body["extended_stats"] if e["key"] == TAB]
    (row,) = extended["data"]
    assert row["table"] == "ph-counter" and row["key"] == "GLOBAL_COUNTER"
    assert (row["share"], row["touches"], row["throttled"]) == (100.0, 300, 300)
    assert row["write_units"] == 300.0  # 30/s at scale 0.1
    assert {c["key"] for c in COLUMNS} == set(row)


def test_the_json_endpoint(client: Any) -> None:
    response = client.get("/partition-heat/data.json")
    assert response.status_code == 200 and response.mimetype == "application/json"
    view = response.get_json()
    assert view["state"] == "ready"
    assert view["tables"][0]["keys"][0]["key"] == "GLOBAL_COUNTER"
    assert view["diagnosis"][0]["kind"] == "hot-key"
    assert set(view["heat"]["scopes"]["ph-counter"]) == {
        "requests", "throttled_attempts", "write_units", "read_units",
    }  # fmt: skip
    assert view["throttles"][0]["throttled_attempts"] == 300
    one = client.get("/partition-heat/data.json?scope=ph-counter&field=requests&rows=4&top=1")
    heat = one.get_json()["heat"]
    assert heat["rows"] == 4 and list(heat["scopes"]["ph-counter"]) == ["requests"]
    assert len(heat["scopes"]["ph-counter"]["requests"]) == 4
    bare = client.get("/partition-heat/data.json?field=").get_json()
    assert bare["heat"]["scopes"] == {"ph-counter": {}}
    assert bare["diagnosis"] == view["diagnosis"]


def test_the_view_is_built_at_most_once_a_second(client: Any) -> None:
    for _ in range(5):
        client.get("/partition-heat/data.json")
        client.get("/stats/requests")
    assert len(client.calls) == 1


@pytest.mark.parametrize(
    ("query", "status", "message"),
    [
        ("rows=0", 400, "rows must be an integer from 1 to 1024 (got '0')"),
        ("rows=abc", 400, "rows must be an integer from 1 to 1024 (got 'abc')"),
        ("top=1000", 400, "top must be an integer from 1 to 100 (got '1000')"),
        ("field=heat", 400, "unknown field 'heat' (expected: requests, throttled_attempts, "
         "write_units, read_units)"),
        ("scope=nope", 404, "unknown table or index 'nope'"),
    ],
)  # fmt: skip
def test_a_bad_query_is_a_clear_error(client: Any, query: str, status: int, message: str) -> None:
    response = client.get(f"/partition-heat/data.json?{query}")
    assert response.status_code == status
    assert response.get_json() == {"error": message}


def test_the_heatmap_page_and_its_scripts_are_served_here(client: Any) -> None:
    page = client.get("/partition-heat/")
    assert page.status_code == 200
    text = page.get_data(as_text=True)
    assert '<canvas id="heatmap"' in text
    # Everything the page loads comes from this server: no other host, no CDN.
    assert "http://" not in text and "https://" not in text
    for name in ("heatmap.js", "heatmap.css", "tab.js"):
        asset = client.get(f"/partition-heat/static/{name}")
        assert asset.status_code == 200, name
        body = asset.get_data(as_text=True)
        assert "//cdn" not in body and "import(" not in body


def test_the_report_downloads_as_html_and_as_a_zip_with_its_charts(client: Any) -> None:
    page = client.get("/partition-heat/report.html")
    assert page.status_code == 200
    assert page.headers["Content-Disposition"].startswith("attachment;filename=partition-heat_")
    assert "One hot key: GLOBAL_COUNTER" in page.get_data(as_text=True)
    archive = client.get("/partition-heat/report.zip")
    assert archive.status_code == 200 and archive.mimetype == "application/zip"
    names = zipfile.ZipFile(io.BytesIO(archive.data)).namelist()
    assert sorted(name.split("/")[1] for name in names) == [
        "heatmap.png", "latency.png", "report.html", "throttles.png", "top-keys.png",
    ]  # fmt: skip


def test_a_failing_view_leaves_locusts_stats_alone() -> None:
    environment = Environment(user_classes=[Idle])
    environment.create_local_runner()
    web_ui = environment.create_web_ui("127.0.0.1", 0, delayed_start=True)

    def broken() -> dict[str, Any]:
        raise RuntimeError("no results")

    install(environment, broken)
    body = web_ui.app.test_client().get("/stats/requests").get_json()
    assert "stats" in body and body["extended_stats"] == [{"key": TAB, "data": []}]
    environment.runner.quit()


def test_locusts_reset_button_starts_the_heat_over() -> None:
    from loadgen.heat.recorder import RunRecorder

    environment = Environment(user_classes=[Idle])
    environment.create_local_runner()
    web_ui = environment.create_web_ui("127.0.0.1", 0, delayed_start=True)
    recorder = RunRecorder.of(environment)
    context = {
        "table": "t", "partition_keys": ["K"], "attempts": 2, "retries": 1,
        "throttled_attempts": 1, "unprocessed": 0,
        "consumed_capacity": {"TableName": "t", "CapacityUnits": 1.0},
    }  # fmt: skip
    environment.events.request.fire(
        request_type="PutItem", name="t.put", response_time=5.0, response_length=0,
        context=context, exception=None, start_time=1_800_000_000.0, response={},
    )  # fmt: skip
    assert recorder.operations and recorder.hottest(1)[0]["key"] == "K"
    assert web_ui.app.test_client().post("/stats/reset").status_code == 200
    assert recorder.operations == {} and recorder.hottest(1) == []
    environment.runner.quit()


def test_the_routes_follow_locusts_web_base_path() -> None:
    parsed = parse_options(args=["-f", "workloads/counter.py", "--web-base-path", "/ui"])
    environment = Environment(user_classes=[Idle], parsed_options=parsed)
    environment.create_local_runner()
    web_ui = environment.create_web_ui("127.0.0.1", 0, web_base_path="/ui", delayed_start=True)
    install(environment, hot_results)
    client = web_ui.app.test_client()
    assert client.get("/ui/partition-heat/data.json").status_code == 200
    assert client.get("/ui/partition-heat/").status_code == 200
    body = client.get("/ui/stats/requests").get_json()
    assert [e["key"] for e in body["extended_stats"]] == [TAB]
    assert "./partition-heat/static/tab.js" in client.get("/ui/").get_data(as_text=True)
    environment.runner.quit()
