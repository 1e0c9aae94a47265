"""The manual as a reader sees it: the site built by MkDocs, opened in headless Chromium.

The screenshot of the "Your design" page is kept in ``out/test-artifacts/docs/``.
"""

from __future__ import annotations

import os
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pytest
import yaml

from tests.browser import ARTIFACTS, browse
from tests.conftest import installed

ROOT = Path(__file__).resolve().parents[2]


class Page(HTMLParser):
    """The texts of a rendered page's h1 and nav links, and its code blocks."""

    def __init__(self) -> None:
        super().__init__()
        self.h1 = ""
        self.nav: list[str] = []
        self.code_blocks = 0
        self._in: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        classes = (dict(attrs).get("class") or "").split()
        if tag == "h1":
            self._in.append("h1")
        elif tag == "a" and "md-nav__link" in classes:
            self._in.append("nav")
            self.nav.append("")
        elif tag == "div" and "highlight" in classes:
            self.code_blocks += 1

    def handle_endtag(self, tag: str) -> None:
        if self._in and (tag, self._in[-1]) in (("h1", "h1"), ("a", "nav")):
            self._in.pop()

    def handle_data(self, data: str) -> None:
        if self._in and self._in[-1] == "h1":
            self.h1 += data
        elif self._in and self._in[-1] == "nav":
            self.nav[-1] += data


def _titles(nav: list[object]) -> list[str]:
    titles = []
    for entry in nav:
        assert isinstance(entry, dict)
        for title, target in entry.items():
            titles += _titles(target) if isinstance(target, list) else [title]
    return titles


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("site")
    done = subprocess.run(
        [str(ROOT / ".venv/bin/mkdocs"), "build", "--strict", "--site-dir", str(out)],
        cwd=ROOT, env={**os.environ, "NO_MKDOCS_2_WARNING": "1"}, capture_output=True,
        text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    return out


def test_the_your_design_page_renders_with_every_page_in_its_nav(
    site: Path, tmp_path: Path
) -> None:
    chromium = installed("chromium")
    screenshot = ARTIFACTS / "docs" / "your-design.png"
    dom = browse(chromium, (site / "your-design" / "index.html").as_uri(), tmp_path,
                 screenshot=screenshot, height=1500)  # fmt: skip
    page = Page()
    page.feed(dom)
    assert page.h1.strip().startswith("Your design")
    nav = {" ".join(text.split()) for text in page.nav}
    config = yaml.load((ROOT / "mkdocs.yml").read_text(), Loader=yaml.BaseLoader)
    missing = [title for title in _titles(config["nav"]) if title not in nav]
    assert not missing, f"not in the rendered navigation: {missing}"
    assert page.code_blocks >= 8  # the walkthrough's YAML and commands, highlighted
