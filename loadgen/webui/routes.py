"""Partition heat in Locust's web UI: a tab, a live heatmap page, a JSON endpoint, the report.

`install` extends the Flask app of Locust's web UI (``environment.web_ui``), on a local
runner or a master (whose recorder holds the heat merged from its workers' reports):

- a **Partition heat** tab in Locust's own UI (``extended_tabs`` and ``extended_tables`` in the
  UI's template arguments; its rows ride on Locust's ``/stats/requests`` poll as
  ``extended_stats``, so the tab refreshes with the other tabs), with a panel under it
  naming the diagnosis, showing the live heatmap and linking the report and the JSON;
- ``/partition-heat/``: the live heatmap of hash buckets over time, drawn on a canvas by the
  page's own script (no chart library and nothing from another host), with the diagnosis;
- ``/partition-heat/data.json``: the view as JSON (`loadgen.webui.view.heat_view`);
- ``/partition-heat/report.html`` and ``/partition-heat/report.zip``: the run report of
  ``loadgen report`` (with its PNG charts in the zip), as Locust offers its own report; also
  listed in the UI's Download Data tab.

The view is built at most once a second however many pages poll it, and less often when
building it takes long (a run of many minutes): it runs on Locust's own loop.
"""

from __future__ import annotations

import io
import json
import logging
import re
import tempfile
import time
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from flask import Blueprint, Flask, Response, request, send_from_directory

from loadgen.errors import HarnessError
from loadgen.verdict import analysis
from loadgen.webui.view import FIELDS, heat_view, table_rows

__all__ = ["PREFIX", "TAB", "install"]

log = logging.getLogger(__name__)

PREFIX = "/partition-heat"
"""Where our routes live, under Locust's ``--web-base-path``."""
TAB = "partition-heat"
"""The tab's key in Locust's UI (``?tab=partition-heat``)."""
STATIC = Path(__file__).resolve().parent / "static"
CACHE_S = 1.0
"""The view is rebuilt at most this often: building it reads the whole heat matrix."""
BUSY = 4.0
"""... and at most every this many times what the last build took (a fifth of the loop)."""
MAX_TOP = 100

COLUMNS = [
    {"key": "table", "title": "Table or index"},
    {"key": "key", "title": "Partition key"},
    {"key": "share", "title": "Share of key touches (%)"},
    {"key": "touches", "title": "Key touches"},
    {"key": "write_units", "title": "Write units/s (last 5 s)"},
    {"key": "read_units", "title": "Read units/s (last 5 s)"},
    {"key": "throttled", "title": "Throttled attempts"},
    {"key": "throttled_ratio", "title": "Throttled per touch"},
]
"""The tab's table; units/s at AWS scale when the target is scaled."""


class _Views:
    """The run's results and its views, rebuilt at most every `CACHE_S` seconds, and never
    more often than `BUSY` times the last build took: on a long run, building the view
    must leave Locust's loop free for the rest of its work."""

    def __init__(self, results: Callable[[], dict[str, Any]]) -> None:
        self._results = results
        self._built = 0.0
        self._interval = CACHE_S
        self._current: dict[str, Any] | None = None
        self._memo: dict[Any, Any] = {}

    def results(self) -> dict[str, Any]:
        now = time.monotonic()
        if self._current is None or now - self._built >= self._interval:
            self._current, self._memo = self._results(), {}
            heat_view(self._current, memo=self._memo)  # what the tab and the page share
            took = time.monotonic() - now
            self._built = time.monotonic()
            self._interval = max(CACHE_S, BUSY * took)
        return self._current

    def view(self, **options: Any) -> dict[str, Any]:
        results = self.results()
        return heat_view(results, memo=self._memo, **options)


def install(environment: Any, results: Callable[[], dict[str, Any]]) -> bool:
    """Add the partition heat views to ``environment.web_ui``; False when there is none.

    ``results`` returns the results of the run so far (`loadgen.heat.results.build_results`,
    on a master: of all workers).
    """
    web_ui = getattr(environment, "web_ui", None)
    if web_ui is None or environment.__dict__.get("_loadgen_webui"):
        return False
    environment._loadgen_webui = True
    views = _Views(results)
    base = getattr(environment.parsed_options, "web_base_path", None) or ""
    auth: Callable[[Callable[[], Response]], Callable[[], Response]]
    auth = web_ui.auth_required_if_enabled  # Locust's --web-login, when it is on
    app: Flask = web_ui.app
    blueprint = Blueprint(
        "partition_heat",
        __name__,
        url_prefix=base + PREFIX,
        static_folder=str(STATIC),
        static_url_path="/static",
    )

    @blueprint.route("/")
    @auth
    def page() -> Response:
        return send_from_directory(STATIC, "heatmap.html", max_age=0)

    @blueprint.route("/data.json")
    @auth
    def data() -> Response:
        try:
            options = _query(request.args)
        except ValueError as e:
            return _json({"error": str(e)}, 400)
        scope = options.get("scope")
        if scope is not None and scope not in {s.name for s in analysis.scopes(views.results())}:
            return _json({"error": f"unknown table or index {scope!r}"}, 404)
        view = {**views.view(**options), "state": getattr(environment.runner, "state", None)}
        return _json(view)

    @blueprint.route("/report.html")
    @auth
    def report_html() -> Response:
        return _report(views.results(), zipped=False)

    @blueprint.route("/report.zip")
    @auth
    def report_zip() -> Response:
        return _report(views.results(), zipped=True)

    app.register_blueprint(blueprint)

    @app.after_request
    def extend(response: Response) -> Response:
        path = request.path.removeprefix(base)
        if path == "/stats/requests" and response.is_json and response.status_code == 200:
            body = response.get_json()
            if isinstance(body, dict):
                try:
                    rows = table_rows(views.view())
                except Exception:  # the tab must never take Locust's own stats down
                    log.exception("partition heat view failed")
                    rows = []
                extended = [e for e in body.get("extended_stats") or [] if e.get("key") != TAB]
                body["extended_stats"] = [*extended, {"key": TAB, "data": rows}]
                response.set_data(json.dumps(body))
        elif path in ("", "/") and response.mimetype == "text/html":
            # The bar under the tab: diagnosis and links, shown while the tab is open.
            script = f'<script src=".{PREFIX}/static/tab.js" defer></script></body>'
            response.set_data(response.get_data(as_text=True).replace("</body>", script, 1))
        return response

    args = web_ui.template_args
    args["extended_tabs"] = [
        *[t for t in args.get("extended_tabs") or [] if t.get("key") != TAB],
        {"title": "Partition heat", "key": TAB},
    ]
    args["extended_tables"] = [
        *[t for t in args.get("extended_tables") or [] if t.get("key") != TAB],
        {"key": TAB, "structure": COLUMNS},
    ]
    args["extended_csv_files"] = [
        *(args.get("extended_csv_files") or []),
        {"href": f".{PREFIX}/report.html", "title": "Download partition heat report (HTML)"},
        {"href": f".{PREFIX}/report.zip", "title": "Download partition heat report (HTML, PNGs)"},
        {"href": f".{PREFIX}/data.json", "title": "Partition heat (JSON)"},
    ]
    return True


def _query(args: Any) -> dict[str, Any]:
    """``top``, ``rows``, ``scope`` and ``field`` from a query; ValueError naming a bad one."""
    options: dict[str, Any] = {}
    for name, low, high in (("top", 1, MAX_TOP), ("rows", 1, 1024)):
        if name in args:
            text = args[name]
            if not text.isdigit() or not low <= int(text) <= high:
                raise ValueError(f"{name} must be an integer from {low} to {high} (got {text!r})")
            options[name] = int(text)
    if "scope" in args:
        options["scope"] = args["scope"]
    if "field" in args:
        # field= (empty) asks for no heat grid: the tables and the diagnosis alone.
        fields = tuple(filter(None, args["field"].split(",")))
        unknown = [f for f in fields if f not in FIELDS]
        if unknown:
            raise ValueError(f"unknown field {unknown[0]!r} (expected: {', '.join(FIELDS)})")
        options["fields"] = fields
    return options


def _json(body: dict[str, Any], status: int = 200) -> Response:
    return Response(json.dumps(body, allow_nan=False), status=status, mimetype="application/json")


def _report(results: dict[str, Any], *, zipped: bool) -> Response:
    """The run report as ``loadgen report`` writes it: the page, or the page and its PNGs."""
    from loadgen.verdict.report import write_report

    run = results["run"]
    name = _safe(f"partition-heat_{run.get('workload')}_{run.get('design')}_{time.time():.0f}")
    with tempfile.TemporaryDirectory(prefix="partition-heat-report-") as directory:
        try:
            page = write_report(results, directory)
        except HarnessError as e:
            return Response(f"{e}\n", status=503, mimetype="text/plain")
        if zipped:
            buffer = io.BytesIO()
            with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
                for path in sorted(Path(directory).iterdir()):
                    archive.write(path, f"{name}/{path.name}")
            body, mimetype, suffix = buffer.getvalue(), "application/zip", "zip"
        else:
            body, mimetype, suffix = page.read_bytes(), "text/html", "html"
    response = Response(body, mimetype=mimetype)
    response.headers["Content-Disposition"] = f"attachment;filename={name}.{suffix}"
    return response


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", name)
