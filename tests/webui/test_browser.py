"""Locust's web UI in a real browser during a real run: headless Chromium (Debian's package)
loads the UI of ``locust -f workloads/counter.py`` against ``loadgen emulator``, and the
rendered pages must show the hot key with its throttles, what the target said of them (the
reason and cause, the errors' messages) and a drawn heatmap.

Screenshots are kept as test artifacts in ``out/test-artifacts/webui/`` (or
``$PARTITION_HEAT_ARTIFACTS``).
"""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from loadgen.emulator.embedded import EmbeddedEmulator
from loadgen.webui.routes import COLUMNS
from tests.browser import ARTIFACTS, browse
from tests.conftest import free_port, installed

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def chromium() -> str:
    return installed("chromium")


@pytest.fixture(scope="module")
def emulator() -> Iterator[str]:
    with EmbeddedEmulator(scale=0.1) as target:
        yield target.endpoint_url


def get_json(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=10) as response:
        return json.load(response)


@contextlib.contextmanager
def locust_ui(
    endpoint: str,
    design: str,
    table: str,
    tmp_path: Path,
    *,
    workers: int = 0,
    extra: tuple[str, ...] = (),
) -> Iterator[str]:
    """``locust -f workloads/counter.py`` with its web UI on a free loopback port, started
    at once (a master and ``workers`` workers when asked, ``extra`` flags); yields the UI's
    URL."""
    web_port = free_port()
    common = ["-f", "workloads/counter.py"]
    run = [
        *common, "--design", design, "--table", table, "-H", endpoint, "--web-host",
        "127.0.0.1", "--web-port", str(web_port), "--autostart", "-u", "8", "-r", "8",
        "-t", "40s", *extra,
    ]  # fmt: skip
    processes = []
    log = (tmp_path / "master.log").open("w")
    if workers:
        master_port = free_port()
        run += ["--master", "--master-bind-host", "127.0.0.1", "--master-bind-port",
                str(master_port), "--expect-workers", str(workers)]  # fmt: skip
    processes.append(
        subprocess.Popen([sys.executable, "-m", "locust", *run], cwd=ROOT, stdout=log, stderr=log)
    )
    worker = [sys.executable, "-m", "locust", *common, "--worker", "--master-host", "127.0.0.1"]
    for _ in range(workers):
        processes.append(
            subprocess.Popen(
                [*worker, "--master-port", str(master_port)],
                cwd=ROOT,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
        )
    try:
        yield f"http://127.0.0.1:{web_port}"
    finally:
        for process in processes:
            process.terminate()
        for process in processes:
            try:
                process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        log.close()


def wait_for(url: str, ready: Any, timeout: float = 30.0) -> dict[str, Any]:
    """Poll the JSON endpoint until ``ready(view)`` holds; the view."""
    deadline = time.monotonic() + timeout
    view: dict[str, Any] | None = None
    while time.monotonic() < deadline:
        try:
            view = get_json(f"{url}/partition-heat/data.json?rows=1")
        except OSError:
            view = None
        if view is not None and ready(view):
            return view
        time.sleep(0.5)
    pytest.fail(f"the view never got ready: {json.dumps(view)[:2000]}")


class Cells(HTMLParser):
    """Table rows (lists of cell texts) and the attributes of elements with an id."""

    def __init__(self) -> None:
        super().__init__()
        self.rows: list[list[str]] = []
        self.ids: dict[str, dict[str, str | None]] = {}
        self._cell: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        named = dict(attrs)
        if named.get("id"):
            self.ids[str(named["id"])] = named
        if tag == "tr":
            self.rows.append([])
        elif tag in ("td", "th"):
            self._cell = []

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th") and self._cell is not None and self.rows:
            self.rows[-1].append("".join(self._cell).strip())
            self._cell = None

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)


def parse(dom: str) -> Cells:
    cells = Cells()
    cells.feed(dom)
    return cells


def number(text: str) -> float:
    return float(text.replace(",", "").rstrip("%"))


def hot_key_has_throttled(view: dict[str, Any]) -> bool:
    tables = view["tables"]
    return (
        bool(tables)
        and tables[0]["keys"][0]["throttled_attempts"] > 0
        and (view["heat"]["columns"] >= 4)
    )


@pytest.mark.slow
def test_the_tab_and_the_heatmap_show_the_hot_key(
    chromium: str, emulator: str, tmp_path: Path
) -> None:
    # Two attempts a call (botocore's standard mode, one retry): some increments fail on
    # the hot partition from the first seconds, so the tab has an error and its message to
    # show beside the throttles.
    def failed_too(view: dict[str, Any]) -> bool:
        return hot_key_has_throttled(view) and bool(view["refusals"]["errors"])

    with locust_ui(
        emulator, "single", "ph-counter-webui-single", tmp_path,
        extra=("--retry-mode", "standard", "--max-attempts", "2"),
    ) as url:  # fmt: skip
        view = wait_for(url, failed_too)
        assert view["scale"] == 0.1  # learnt from the emulator: rates read at AWS scale
        tab = browse(chromium, f"{url}/?tab=partition-heat", tmp_path,
                     ARTIFACTS / "webui" / "partition-heat-tab.png")  # fmt: skip
        heatmap = browse(chromium, f"{url}/partition-heat/", tmp_path,
                         ARTIFACTS / "webui" / "partition-heat-heatmap.png")  # fmt: skip
    # Locust's React UI rendered our tab and its table: the hottest key first, throttled.
    rows = parse(tab).rows
    head = [column["title"] for column in COLUMNS]
    assert head in rows
    first = rows[rows.index(head) + 1]
    assert first[:2] == ["ph-counter-webui-single", "GLOBAL_COUNTER"]
    assert number(first[2]) == 100
    assert number(first[6]) > 0  # throttled attempts
    # The panel under the tab names the diagnosis and holds the live heatmap.
    ids = parse(tab).ids
    assert ids["partition-heat-diagnosis"].get("data-kind") == "hot-key"
    assert ids["partition-heat-heatmap"].get("src") == "./partition-heat/?embed=1"
    assert "One hot key: GLOBAL_COUNTER" in tab and "Open the live heatmap" in tab
    # Beside the hot keys, what the target said: the throttles by DynamoDB's reason with the
    # model's cause, and the errors with DynamoDB's message.
    reason = ["TableWriteKeyRangeThroughputExceeded", "ph-counter-webui-single", "partition"]
    said = next(row for row in rows if row[:4] == ["counter.increment", *reason])
    assert number(said[4]) > 0 and number(said[6]) > 0  # attempts, calls failed
    error = next(row for row in rows if row[:2] == ["counter.increment", "ThrottlingException"])
    assert number(error[2]) > 0
    assert error[3].startswith("Throughput exceeds the current capacity of your table or index")
    # The running cost a month, under the tab and on the heatmap page, sourced and placed:
    # measured and at launch demand.
    assert "Cost a month so far (a month of 730 h, as AWS's Pricing Calculator counts it): " in tab
    assert "at launch demand $" in tab
    assert "us-east-1, AWS Price List 2026-08-15; USD" in tab
    assert "cost" in parse(heatmap).ids
    assert "So far, a month of this traffic (a month of 730 h" in heatmap
    # The heatmap page drew the hot key's band and named it beside its row.
    page = parse(heatmap)
    canvas = page.ids["heatmap"]
    assert canvas.get("data-scope") == "ph-counter-webui-single"
    assert int(canvas.get("data-cells") or 0) >= 4  # one cell per second of the band
    assert int(canvas.get("data-labels") or 0) >= 1
    assert "One hot key: GLOBAL_COUNTER on ph-counter-webui-single" in heatmap
    keys = next(row for row in page.rows if row and row[0] == "GLOBAL_COUNTER")
    assert keys[1] == "100%" and number(keys[7]) > 0
    assert ["counter.increment", "UpdateItem", *reason] in [row[:5] for row in page.rows]
    assert any(row[2:3] == ["ThrottlingException"] and row[4].startswith("Throughput exceeds")
               for row in page.rows)  # fmt: skip
    assert "capacity: the on-demand capacity" in heatmap  # the causes' legend


@pytest.mark.slow
def test_a_sharded_counter_spreads_the_heat(chromium: str, emulator: str, tmp_path: Path) -> None:
    def spread(view: dict[str, Any]) -> bool:
        return bool(view["tables"]) and view["heat"]["columns"] >= 4

    # Priced in the run's region and currency: China (Beijing), yuan.
    region = ("--prices-region", "cn-north-1")
    with locust_ui(emulator, "sharded", "ph-counter-webui-sharded", tmp_path, extra=region) as url:
        view = wait_for(url, spread)
        heatmap = browse(chromium, f"{url}/partition-heat/", tmp_path,
                         ARTIFACTS / "webui" / "partition-heat-sharded.png")  # fmt: skip
    (table,) = view["tables"]
    assert table["keys"][0]["key"] != "GLOBAL_COUNTER"
    assert table["keys"][0]["share"] < 0.2
    canvas = parse(heatmap).ids["heatmap"]
    # Touches land all over the hash space: many rows lit, not one band.
    assert int(canvas.get("data-cells") or 0) >= 4 * 20
    assert "GLOBAL_COUNTER" not in heatmap
    assert view["cost"]["region"] == "cn-north-1" and view["cost"]["currency"] == "CNY"
    assert "provisioned ¥" in heatmap and "; CNY, Standard table class" in heatmap
    assert "$" not in view["cost"]["text"]["provisioned_usd"]


@pytest.mark.slow
def test_a_master_shows_the_view_merged_from_two_workers(
    chromium: str, emulator: str, tmp_path: Path
) -> None:
    with locust_ui(emulator, "single", "ph-counter-webui-dist", tmp_path, workers=2) as url:
        wait_for(url, hot_key_has_throttled)
        stats = get_json(f"{url}/stats/requests")
        tab = browse(chromium, f"{url}/?tab=partition-heat", tmp_path,
                     ARTIFACTS / "webui" / "partition-heat-master.png")  # fmt: skip
        urllib.request.urlopen(urllib.request.Request(f"{url}/stop", method="POST"), timeout=10)
        # Stopped: the last worker reports are in; every call touched GLOBAL_COUNTER once.
        view = wait_for(url, lambda v: v["state"] == "stopped", timeout=20)
    assert stats["worker_count"] == 2
    assert {w["state"] for w in stats["workers"]} <= {"running", "spawning"}
    (hot,) = view["tables"][0]["keys"]
    assert hot["key"] == "GLOBAL_COUNTER"
    assert hot["touches"] == view["totals"]["requests"] > 0
    assert hot["throttled_attempts"] == view["totals"]["throttled_attempts"] > 0
    assert "GLOBAL_COUNTER" in tab and "One hot key: GLOBAL_COUNTER" in tab
