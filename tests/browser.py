"""Headless Chromium (Debian's package) for the tests that look at a page: the DOM once its
scripts ran, and a screenshot kept in ``out/test-artifacts/`` (or ``$PARTITION_HEAT_ARTIFACTS``).
"""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ARTIFACTS = Path(os.environ.get("PARTITION_HEAT_ARTIFACTS") or ROOT / "out" / "test-artifacts")
CHROMIUM_FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--hide-scrollbars",
]  # fmt: skip


def browse(
    chromium: str, url: str, tmp_path: Path, screenshot: Path | None = None, height: int = 1000
) -> str:
    """The DOM of ``url`` once its scripts ran (and a screenshot, when asked)."""
    profile = tmp_path / f"chromium-{time.monotonic_ns()}"
    flags = [*CHROMIUM_FLAGS, f"--user-data-dir={profile}", "--virtual-time-budget=6000"]
    size = f"--window-size=1280,{height}"
    if screenshot is not None:
        screenshot.parent.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            [chromium, *flags, size, f"--screenshot={screenshot}", url],
            capture_output=True, timeout=60, check=True,
        )  # fmt: skip
        assert screenshot.stat().st_size > 10_000
    done = subprocess.run(
        [chromium, *flags, size, "--dump-dom", url],
        capture_output=True, text=True, timeout=60, check=True,
    )  # fmt: skip
    return done.stdout
