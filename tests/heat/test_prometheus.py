"""A real Prometheus server scrapes a real ``loadgen run --metrics-port``.

Prometheus (Debian's package: /usr/bin/prometheus) runs on loopback with a temporary
configuration and storage, scraping every second. The run's totals, as Prometheus stored
them, must agree with Locust's own request counts from the results file, per-bucket rates
must add up to the request rate, the throttles by reason and cause must be the results
file's, and the series must stay within the stated bound.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from tests.conftest import Prometheus
from tests.heat.test_exporter import promtool_or_skip

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_prometheus_scrapes_a_run(tmp_path: Path, prometheus: Prometheus) -> None:
    promtool = promtool_or_skip()
    out = tmp_path / "results.json"
    metrics_url = f"http://127.0.0.1:{prometheus.metrics_port}/metrics"
    started = time.time()
    # Increments only: every request touches exactly one partition key, so the bucket
    # counters and the per-pattern counters must add up to the same number. On moto: what is
    # scraped does not depend on the engine, and DynamoDB Local's start takes 4 to 5 s. At
    # scale 0.01 the new table's on-demand capacity (4,000 write units/s, 40 here) is short
    # of four users' increments although the shards spread them: the throttles carry a
    # reason and the model's cause ("capacity"), which the exporter labels.
    run = subprocess.Popen(
        [
            sys.executable, "-m", "loadgen", "run", "counter", "--design", "sharded",
            "--mix", "increment=1,read=0", "--users", "4", "--duration", "8s", "--engine", "moto",
            "--scale", "0.01", "--metrics-port", str(prometheus.metrics_port),
            "--metrics-linger", "3", "--out", str(out),
        ],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    exposition = ""
    try:
        deadline = time.monotonic() + 60
        while run.poll() is None and time.monotonic() < deadline:
            try:
                with urllib.request.urlopen(metrics_url, timeout=2) as response:
                    text = response.read().decode()
                if "partition_heat_bucket_requests_total" in text:
                    exposition = text
            except OSError:
                pass
            time.sleep(0.5)
        _, stderr = run.communicate(timeout=90)
    finally:
        run.kill()
    ended = time.time()
    assert run.returncode == 0, stderr[-3000:]
    assert f"Metrics: {metrics_url}" in stderr

    # promtool finds nothing to fix in what was served.
    assert exposition, "never scraped /metrics with heat in it"
    check = subprocess.run(
        [promtool, "check", "metrics"], input=exposition, capture_output=True, text=True
    )
    assert check.returncode == 0 and not (check.stdout + check.stderr).strip(), check

    results = json.loads(out.read_text())
    locust_requests = results["totals"]["requests"]
    assert locust_requests > 100

    # The last scrape (during --metrics-linger) saw the final counters; the target is gone
    # now, so read each series' last value over the run.
    window = f"{int(ended - started) + 30}s"
    requests = prometheus.scalar(f"sum(max_over_time(partition_heat_requests_total[{window}]))")
    touches = prometheus.scalar(
        f"sum(max_over_time(partition_heat_bucket_requests_total[{window}]))"
    )
    assert abs(requests - locust_requests) <= 0.01 * locust_requests, (requests, locust_requests)
    assert abs(touches - locust_requests) <= 0.01 * locust_requests, (touches, locust_requests)
    write_units = prometheus.scalar(
        f"sum(max_over_time(partition_heat_bucket_consumed_write_units_total[{window}]))"
    )
    assert write_units >= touches  # at least one write unit per increment

    # Per-bucket rates: many buckets warm at once, adding up to the request rate. irate
    # takes the last two scrapes of each series, which all share their timestamps, so the
    # sum of the per-bucket rates must equal the rate of calls (rate() would extrapolate
    # each series on its own, clamped at its zero point, and differ early in a run).
    per_bucket = prometheus.query_range(
        "sum(irate(partition_heat_bucket_requests_total[3s]))", started, ended
    )
    calls = prometheus.query_range("sum(irate(partition_heat_requests_total[3s]))", started, ended)
    warm = prometheus.query_range(
        "count(rate(partition_heat_bucket_requests_total[3s]) > 0)", started, ended
    )
    assert per_bucket and calls and warm
    by_time = {t: float(v) for t, v in calls[0]["values"]}
    pairs = [(by_time[t], float(v)) for t, v in per_bucket[0]["values"] if t in by_time]
    assert max(call_rate for call_rate, _ in pairs) > 10, pairs
    for call_rate, bucket_rate in pairs:
        assert abs(bucket_rate - call_rate) <= 0.01 * call_rate, pairs
    assert max(int(v) for _, v in warm[0]["values"]) > 20

    # The throttles by reason and cause, as stored, are the results file's.
    by_reason = prometheus.query(
        "sum by (reason, cause, table, index) "
        f"(max_over_time(partition_heat_throttled_attempts_by_reason_total[{window}]))"
    )
    scraped = {
        (s["metric"]["reason"], s["metric"]["cause"], s["metric"]["table"]): float(s["value"][1])
        for s in by_reason
    }
    throttles = results["totals"]["throttles"]
    assert scraped == {(t["reason"], t["cause"], t["scope"]): t["attempts"] for t in throttles}
    assert scraped.get(("TableWriteKeyRangeThroughputExceeded", "capacity", "ph-counter"), 0) > 0
    assert sum(scraped.values()) == results["totals"]["throttled_attempts"]

    # Series within the bound, at every scrape: 1 write lane x 3 x (B + 1), 1 table x
    # (2K + 2), one pattern x (5 + 16) and one per reason and cause it was throttled for, and
    # the bucket count, users and run info gauges. (Over a long window the stored series
    # also include keys that left the top K: per-key churn, not growth.)
    bound = 3 * (256 + 1) + (2 * 20 + 2) + (5 + 16) + len(throttles) + 3
    per_scrape = prometheus.scalar(f"max_over_time(scrape_samples_scraped[{window}])")
    assert 3 * 256 <= per_scrape <= bound, per_scrape

    # The results file holds the same heat, per second.
    (lane,) = results["heat"]["lanes"]
    assert sum(map(sum, lane["requests"])) == locust_requests
    by = {row["by"]: row for row in results["top_keys"]}
    assert len(by["requests"]["keys"]) == 20 and len(by["units"]["keys"]) == 20
