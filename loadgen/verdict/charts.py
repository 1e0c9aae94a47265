"""The run report's charts, drawn with matplotlib's Agg renderer into PNG bytes.

Each function takes a results file's contents and returns PNG bytes:

- `heatmap`: key touches and throttled attempts over time across the hash space, one row
  per table and index; the hottest key is labelled where it sits.
- `top_keys`: the hottest keys of each table and index by share of its key touches.
- `throttles`: key touches and throttled attempts per second, per table or index and lane.
- `latency`: p50, p95, p99 and max per operation.

Figures are built from `matplotlib.figure.Figure` without pyplot: no global state and no
display, so a report can be drawn in any process (a Locust run included).
"""

from __future__ import annotations

import io
from typing import Any

from matplotlib.colors import LinearSegmentedColormap, LogNorm, Normalize
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter, NullFormatter

from loadgen.model.hashing import bucket_of
from loadgen.verdict import analysis

__all__ = ["DISPLAY_ROWS", "heatmap", "latency", "throttles", "top_keys"]

DISPLAY_ROWS = analysis.DISPLAY_ROWS
"""Rows of the heatmap (see `loadgen.verdict.analysis.DISPLAY_ROWS`)."""
_MAX_SCOPES = 6
# More tables and indexes than this make panels too small to read; the hottest are shown.
_DPI = 110
_LABELLED = 6
# Keys named beside a heatmap panel at most: the hottest, and any with 5% of the touches.


def _png(figure: Figure) -> bytes:
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=_DPI)
    return buffer.getvalue()


def _shown_scopes(results: dict[str, Any]) -> list[analysis.Scope]:
    scopes = [s for s in analysis.scopes(results) if analysis.lanes_of(results, s)]

    def touches(scope: analysis.Scope) -> float:
        return sum(map(sum, analysis.bucket_series(results, scope)))

    if len(scopes) > _MAX_SCOPES:
        scopes = sorted(scopes, key=touches, reverse=True)[:_MAX_SCOPES]
    return sorted(scopes, key=analysis.Scope.sort_key)


def _key_labels(results: dict[str, Any], scope: analysis.Scope) -> list[tuple[float, str]]:
    """(bucket height, label) of the scope's hottest keys, spaced so labels never overlap."""
    heat = results["heat"]
    if heat.get("keys_hashed"):
        return []
    buckets = heat["buckets"]
    total = analysis.key_total(results, scope) or 1.0
    labels: list[tuple[float, str]] = []
    for row in analysis.top_keys(results, scope)[:_LABELLED]:
        share = row["count"] / total
        if labels and share < 0.05:
            break
        y = (bucket_of(row["key"], buckets) + 0.5) * 1.0
        if all(abs(y - other) > 0.045 * buckets for other, _ in labels):
            key = str(row["key"])
            key = key if len(key) <= 32 else key[:31] + "…"
            labels.append((y, f"{key} {share:.0%}"))
    return labels


def _plain(value: float, _position: Any = None) -> str:
    return f"{value:g}"


def heatmap(results: dict[str, Any]) -> bytes:
    """Key touches/s and throttled attempts/s over time and hash space, per table and index."""
    heat = results["heat"]
    scopes = _shown_scopes(results)
    resolution = heat["resolution_s"]
    buckets = heat["buckets"]
    rows = min(DISPLAY_ROWS, buckets)
    seconds = max(1, heat["columns"]) * resolution
    figure = Figure(figsize=(13, 1.2 + 3.0 * max(1, len(scopes))), layout="constrained")
    axes = figure.subplots(max(1, len(scopes)), 2, squeeze=False, width_ratios=(1.25, 1))
    figure.suptitle(
        "Partition heat over time: where in the hash space the key touches land\n"
        f"(each row is 1/{rows} of the hash space; a bright horizontal line is one hot key, "
        "a band that steps to new heights is a key that changes with time)",
        fontsize=11,
    )
    throttle_colors = LinearSegmentedColormap.from_list(
        "throttles", ["#f5b7b1", "#c0392b", "#641e16"]
    )
    for scope, (left, right) in zip(scopes, axes, strict=False):
        for ax, field, what in (
            (left, "requests", "key touches/s"),
            (right, "throttled_attempts", "throttled attempts/s"),
        ):
            folded = analysis.fold_rows(analysis.bucket_series(results, scope, field), rows)
            rates = [[v / resolution for v in row] for row in folded]
            positive = [v for row in rates for v in row if v > 0]
            ax.set_title(f"{scope.name}: {what}", fontsize=10, loc="left")
            ax.set_xlim(0, seconds)
            ax.set_ylim(0, buckets)
            ax.set_ylabel(f"hash bucket (of {buckets})")
            ax.set_xlabel("seconds since the run started")
            ax.set_facecolor("0.96")
            if not positive:
                ax.text(0.5, 0.5, f"no {what.removesuffix('/s')}", ha="center", va="center",
                        transform=ax.transAxes, color="0.4")  # fmt: skip
                continue
            peak = max(positive)
            masked = [[v if v > 0 else float("nan") for v in row] for row in rates]
            # Touches span decades (one hot key against a spread): log colours show both.
            # Throttles are compared linearly, and the palette starts visibly red.
            norm: Normalize = (
                LogNorm(vmin=min(min(positive), peak / 100), vmax=peak)
                if field == "requests" and peak > min(positive)
                else Normalize(vmin=0, vmax=peak)
            )
            image = ax.imshow(
                masked,
                aspect="auto",
                origin="lower",
                interpolation="nearest",
                extent=(0, seconds, 0, buckets),
                cmap="viridis" if field == "requests" else throttle_colors,
                norm=norm,
            )
            bar = figure.colorbar(image, ax=ax, label=what, pad=0.01)
            bar.ax.yaxis.set_major_formatter(FuncFormatter(_plain))
            bar.ax.yaxis.set_minor_formatter(NullFormatter())
        labels = _key_labels(results, scope)
        if labels:
            # Key names on a right-hand axis, level with their buckets: never over the data.
            names = left.secondary_yaxis("right")
            names.set_yticks([y for y, _ in labels], [text for _, text in labels], fontsize=8)
            names.tick_params(length=6, color="#c0392b")
    return _png(figure)


def top_keys(results: dict[str, Any], limit: int = 10) -> bytes:
    """The hottest keys of each table and index, by share of its key touches."""
    scopes = [s for s in _shown_scopes(results) if analysis.top_keys(results, s)]
    figure = Figure(figsize=(12, 1.0 + 2.4 * max(1, len(scopes))), layout="constrained")
    axes = figure.subplots(max(1, len(scopes)), 1, squeeze=False)
    figure.suptitle("Top partition keys: share of their table's or index's key touches",
                    fontsize=11)  # fmt: skip
    # One scale for every panel, so a 10% key never looks as hot as a 66% one.
    hottest = [analysis.hot_key(results, scope) for scope in scopes]
    widest = max((100.0 * hot.share for hot in hottest if hot), default=10.0)
    for scope, (ax,) in zip(scopes, axes, strict=False):
        keys = analysis.top_keys(results, scope)[:limit]
        total = analysis.key_total(results, scope) or 1.0
        shares = [100.0 * row["count"] / total for row in keys]
        labels = [str(row["key"]) if len(str(row["key"])) <= 40 else str(row["key"])[:39] + "…"
                  for row in keys]  # fmt: skip
        colors = ["#c0392b" if share >= 20 else "#2e86c1" for share in shares]
        # The same slots in every panel: one key draws one thin bar, not a wall.
        positions = [limit - 1 - i for i in range(len(keys))]
        ax.set_ylim(-0.6, limit - 0.4)
        ax.barh(positions, shares, color=colors)
        ax.set_yticks(positions, labels, fontsize=8)
        # Room right of the longest bar for its label; no tick beyond 100%.
        ax.set_xlim(0, max(10.0, widest * 1.3))
        ax.set_xticks([t for t in ax.get_xticks() if 0 <= t <= 100])
        ax.set_xlabel("% of key touches (red: 20% or more)")
        ax.set_title(f"{scope.name}: {total:.0f} key touches", fontsize=10, loc="left")
        for pos, share, row in zip(positions, shares, keys, strict=True):
            ax.text(
                share, pos, f" {share:.1f}%  ({row['count']:g} touches)", va="center", fontsize=8
            )
    if not scopes:
        axes[0][0].text(0.5, 0.5, "no keys recorded", ha="center", va="center")
    return _png(figure)


def throttles(results: dict[str, Any]) -> bytes:
    """Key touches/s (top) and throttled attempts/s (bottom) per table or index and lane."""
    heat = results["heat"]
    resolution = heat["resolution_s"]
    figure = Figure(figsize=(12, 6.5), layout="constrained")
    touches_ax, throttled_ax = figure.subplots(2, 1, sharex=True)
    figure.suptitle("Throttles over time, with the traffic that met them", fontsize=11)
    any_throttle = False
    for scope in _shown_scopes(results):
        for lane in analysis.lanes_of(results, scope):
            label = f"{scope.name} {lane['access']}s"
            times = [(t + 0.5) * resolution for t in range(len(lane["requests"]))]
            touched = [sum(row) / resolution for row in lane["requests"]]
            throttled = [sum(row) / resolution for row in lane["throttled_attempts"]]
            (line,) = touches_ax.plot(times, touched, marker=".", label=label)
            if any(throttled):
                any_throttle = True
                throttled_ax.plot(times, throttled, marker=".", label=label, color=line.get_color())
    touches_ax.set_ylabel("key touches/s")
    touches_ax.legend(fontsize=8, loc="upper left", ncols=2)
    touches_ax.grid(alpha=0.3)
    throttled_ax.set_ylabel("throttled attempts/s")
    throttled_ax.set_xlabel("seconds since the run started (each point is one second's count)")
    throttled_ax.grid(alpha=0.3)
    if any_throttle:
        throttled_ax.legend(fontsize=8, loc="upper left", ncols=2)
    else:
        throttled_ax.text(0.5, 0.5, "no throttled attempts", ha="center", va="center",
                          transform=throttled_ax.transAxes, color="0.4")  # fmt: skip
    touches_ax.set_ylim(bottom=0)
    throttled_ax.set_ylim(bottom=0)
    return _png(figure)


def latency(results: dict[str, Any]) -> bytes:
    """p50, p95 and p99 per operation as bars, the maximum as a tick."""
    rows = [row for row in results["operations"] if row["requests"]]
    figure = Figure(figsize=(12, 1.4 + 0.55 * max(1, len(rows))), layout="constrained")
    ax = figure.subplots()
    figure.suptitle("Latency percentiles per access pattern (SDK retries included)", fontsize=11)
    height = 0.26
    for i, (field, color) in enumerate((("p50_ms", "#85c1e9"), ("p95_ms", "#2e86c1"),
                                        ("p99_ms", "#1b4f72"))):  # fmt: skip
        positions = [len(rows) - 1 - n + (1 - i) * height for n in range(len(rows))]
        values = [row[field] or 0 for row in rows]
        ax.barh(positions, values, height=height, color=color, label=field.removesuffix("_ms"))
    maxima = [row["max_ms"] for row in rows]
    centers = [len(rows) - 1 - n for n in range(len(rows))]
    ax.scatter(maxima, centers, marker="|", s=300, color="#c0392b", label="max", zorder=3)
    for center, row in zip(centers, rows, strict=True):
        if row["p99_ms"] is not None:
            right = max(row["p99_ms"], row["max_ms"])
            ax.text(right, center - height, f"  p99 {row['p99_ms']:.0f}", va="center", fontsize=8)
    ax.set_yticks(centers, [f"{row['name']}\n{row['operation']}" for row in rows], fontsize=8)
    ax.set_xlabel("milliseconds")
    slowest = max(maxima, default=0.0)
    ax.set_xlim(0, (slowest or 1.0) * 1.12)
    if not slowest:  # a simulation: no request was sent, no time measured
        ax.text(0.5, 0.5, "no latencies measured (a simulation sends no requests)", ha="center",
                va="center", transform=ax.transAxes, color="0.4")  # fmt: skip
    ax.grid(axis="x", alpha=0.3)
    figure.legend(fontsize=8, loc="outside upper right", ncols=4)
    return _png(figure)
