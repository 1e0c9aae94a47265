"""The run report: a self-contained HTML page and its PNG charts."""

from __future__ import annotations

import base64
import json
import re
import subprocess
import sys
import warnings
from pathlib import Path

import pytest
from PIL import Image

from loadgen.errors import ConfigError
from loadgen.verdict.report import CHARTS, require_matplotlib, write_report
from tests.results_factory import event, make_results, op_row, steady

ROOT = Path(__file__).resolve().parents[2]


def orders_like():
    """A table and a hot status index, with throttles on the index key."""
    events = [
        event(
            s, "TransactWriteItems", "orders", [f"USER#{i % 7}", f"ORDER#{s}-{i}"],
            throttled=1 if i % 3 == 0 else 0, index_keys={"status": ["STATUS#<NEW>"]},
            refused_by="status",
        )
        for s in range(8)
        for i in range(25)
    ]  # fmt: skip
    operations = [
        op_row("orders.create", "TransactWriteItems", 200, failures=20, throttled=67, p99=900,
               errors={"TransactionCanceledException": 20},
               cancellations={"ThrottlingError": 20},
               scope_keys={"orders/status": {"key": "STATUS#<NEW>", "share": 1.0}}),
        op_row("orders.get", "GetItem", 40, p99=None, p50=None, p95=None),
    ]  # fmt: skip
    return make_results(events, operations, scale=0.02)


def test_page_embeds_every_chart_and_names_the_hot_key(tmp_path) -> None:
    page = write_report(orders_like(), tmp_path / "report")
    assert page == tmp_path / "report" / "report.html"
    text = page.read_text()
    sources = re.findall(r'src="([^"]*)"', text)
    assert len(sources) == len(CHARTS)
    # Self-contained: every image is inline data, and nothing else is fetched.
    assert all(src.startswith("data:image/png;base64,") for src in sources)
    assert not re.search(r'(href|src)="(?!data:|https://docs\.aws\.amazon\.com/)', text)
    for name, src in zip(CHARTS, sources, strict=True):
        png = (tmp_path / "report" / name).read_bytes()
        assert base64.b64decode(src.split(",", 1)[1]) == png
        with Image.open(tmp_path / "report" / name) as image:
            assert image.format == "PNG"
            assert image.width >= 1000 and image.height >= 200
    assert "A hot GSI key: STATUS#&lt;NEW&gt; on index status of orders" in text
    assert "bp-indexes-gsi-sharding.html" in text
    assert "<code>STATUS#&lt;NEW&gt;</code>" in text
    assert "TransactionCanceledException x20" in text
    assert "partition model at 0.02" in text


def test_quiet_run_and_hashed_keys_still_draw(tmp_path) -> None:
    results = make_results(steady("t", [f"k{i}" for i in range(50)]), hash_keys="salt", scale=None)
    text = write_report(results, tmp_path).read_text()
    assert "No hot spot" in text
    assert "no throttled attempts" not in text  # said in the chart, not the page


def test_report_command(tmp_path) -> None:
    results = tmp_path / "r.json"
    results.write_text(json.dumps(orders_like()))
    done = subprocess.run(
        [sys.executable, "-m", "loadgen", "report", str(results), "--out", str(tmp_path / "out")],
        cwd=ROOT, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"Report written to {tmp_path / 'out' / 'report.html'}"
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == sorted([*CHARTS, "report.html"])
    missing = subprocess.run(
        [sys.executable, "-m", "loadgen", "report", str(tmp_path / "nope.json")],
        cwd=ROOT, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert missing.returncode == 2
    assert missing.stderr.startswith("loadgen: error: cannot read results file")


def test_missing_matplotlib_is_one_line(monkeypatch) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    with pytest.raises(ConfigError, match=r"pip install 'partition-heat\[report\]'"):
        require_matplotlib()


def test_a_design_run_shows_its_pattern_verdicts_and_a_rate_run_its_rate() -> None:
    from loadgen.verdict.report import build_html
    from tests.results_factory import pattern, with_design

    results = with_design(
        orders_like(),
        [
            pattern("orders.create", "TransactWriteItems", 800.0),
            pattern("orders.get", "GetItem", 200.0, latency=(99.0, 10.0)),
        ],
        offered={"orders.create": (1600, 1600), "orders.get": (400, 400)},
    )
    results["load"]["rate"] = 1000.0
    results["operations"][0]["hot_key"] = {
        "key": "STATUS#<NEW>", "share": 1.0, "table": "orders", "index": "status",
    }  # fmt: skip
    page = build_html(results, dict.fromkeys(CHARTS, b""))
    assert "1,000 operations/s (open model, constant arrivals) for 10 s" in page
    assert "None users" not in page
    assert "<h2>Access patterns: verdicts</h2>" in page
    assert (
        "FAIL: 34% of attempts throttled: a partition&#x27;s ceiling on STATUS#&lt;NEW&gt; "
        "(index status of orders), writes"
    ) in page
    # Without a design, no verdict table.
    assert "Access patterns: verdicts" not in build_html(orders_like(), dict.fromkeys(CHARTS, b""))


def test_a_results_file_without_latencies_draws_its_latency_chart_without_a_warning() -> None:
    from loadgen.verdict import charts

    rows = [op_row("counter.increment", "UpdateItem", 100, p50=None, p95=None, p99=None)]
    results = make_results(steady("t", ["k"]), [{**rows[0], "max_ms": 0.0}], scale=None)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # matplotlib warns of equal left and right limits
        png = charts.latency(results)
    assert png.startswith(b"\x89PNG")


def refused() -> dict:
    """A run whose target said why: a hot partition and a table short of its on-demand
    capacity (the emulator's causes), a throttle that named nothing, a batch's items left
    unprocessed on an index, a failed condition with DynamoDB's message, and a cancelled
    transaction's reasons."""
    from tests.results_factory import throttle_row

    reason = "TableWriteKeyRangeThroughputExceeded"
    operations = [
        op_row("orders.create", "TransactWriteItems", 100, failures=9, throttled=41,
               throttles=[throttle_row(reason, "partition", 30, final=2),
                          throttle_row(reason, "capacity", 10),
                          throttle_row(None, None, 1, scope=None)],
               errors={"TransactionCanceledException": 9},
               error_messages=[{"code": "TransactionCanceledException", "count": 9,
                                "message": "Transaction cancelled, please refer cancellation "
                                           "reasons for specific reasons [ConditionalCheckFailed,"
                                           " None]"}],
               cancellations={"ConditionalCheckFailed": 7, "ThrottlingError": 2}),
        op_row("orders.load", "BatchWriteItem", 50, failures=1,
               throttles=[throttle_row("IndexWriteKeyRangeThroughputExceeded", "partition", 12,
                                       scope="t/status", exception="UnprocessedItems")],
               errors={"ValidationException": 1},
               error_messages=[{"code": "ValidationException", "count": 1,
                                "message": "Item size has exceeded the maximum allowed size "
                                           "<400 KB> & more"}]),
        op_row("orders.get", "GetItem", 40),
    ]  # fmt: skip
    return make_results(steady("t", ["k"]), operations)


def test_the_report_says_what_the_target_refused_in_its_words() -> None:
    from loadgen.verdict.report import build_html

    page = build_html(refused(), dict.fromkeys(CHARTS, b""))
    section = page.split("<h2>What the target refused, in its words</h2>", 1)[1]
    section = section.split("<h2>", 1)[0]
    rows = [
        re.sub(r"<[^>]+>", "|", row).strip("|").replace("||", "|")
        for row in re.findall(r"<tr>(.*?)</tr>", section)
    ]
    reason = "TableWriteKeyRangeThroughputExceeded"
    assert rows[1:5] == [
        f"orders.create|TransactWriteItems|{reason}|t|partition|30|0|2",
        f"orders.create|TransactWriteItems|{reason}|t|capacity|10|0|0",
        "orders.create|TransactWriteItems|not reported|not reported|not reported|1|0|0",
        "orders.load|BatchWriteItem|IndexWriteKeyRangeThroughputExceeded|t/status|partition|0|12|0",
    ]
    # DynamoDB's messages, escaped, per pattern; and the cancellation reasons by code.
    assert (
        "orders.load|BatchWriteItem|ValidationException|1|Item size has exceeded the maximum "
        "allowed size &lt;400 KB&gt; &amp; more"
    ) in rows
    assert "orders.create|TransactWriteItems|ConditionalCheckFailed x7, ThrottlingError x2" in rows
    assert "<400 KB>" not in page
    assert "orders.get" not in section  # refused nothing


def test_the_report_says_when_nothing_was_refused_or_the_file_kept_no_reasons() -> None:
    from loadgen.verdict.report import build_html

    quiet = make_results(steady("t", ["k"]), [op_row("w.put", "PutItem", 100)])
    assert "The target refused nothing" in build_html(quiet, dict.fromkeys(CHARTS, b""))
    # A results file written before reasons were kept: its codes, no message, no guess.
    old = make_results(
        steady("t", ["k"]),
        [op_row("w.put", "PutItem", 100, failures=3, throttled=5, errors={"X": 3})],
    )
    for row in (*old["operations"], old["totals"]):
        for name in ("throttles", "error_messages", "cancellations"):
            del row[name]
    page = build_html(old, dict.fromkeys(CHARTS, b""))
    assert "written before throttle reasons were kept: w.put." in page
    assert '<td class="text">X</td><td>3</td><td class="text">not reported</td>' in page
