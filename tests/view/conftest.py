"""A real headless Chromium for the viewer's tests: one browser per session, a fresh page per test.

Debian's ``chromium`` (``apt-get install chromium``; ``.ci/run`` installs it) driven by the ``playwright`` package
against that executable (never a browser playwright downloads).  Without either the tests skip, saying which
is absent; under ``LINEAGE_STRICT_SKIPS`` they fail instead (tests/conftest.py).
"""

from __future__ import annotations

import base64
import shutil
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import skip_for_want_of

CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
VIEWPORT = {"width": 1280, "height": 800}


def chromium_path() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.fixture(scope="session")
def browser() -> Iterator[Any]:
    executable = chromium_path()
    if executable is None:
        skip_for_want_of("Chromium (Debian's `chromium` package: apt-get install chromium)")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        skip_for_want_of("the playwright package (pip install -e '.[test]')")
    with sync_playwright() as driver:
        launched = driver.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS)
        yield launched
        launched.close()


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    """A page that fails the test on any script error or console error it logs."""
    context = browser.new_context(viewport=VIEWPORT)
    opened = context.new_page()
    problems: list[str] = []
    opened.on("pageerror", lambda error: problems.append(str(error)))
    opened.on("console", lambda message: problems.append(message.text) if message.type == "error" else None)
    yield opened
    context.close()
    assert problems == []


def open_view(page: Any, path: Path, query: str = "") -> dict[str, Any]:
    """Open a viewer page and wait for its first drawing; returns ``snapshot()``."""
    page.goto(path.resolve().as_uri() + query)
    return wait_for_drawing(page)


def wait_for_drawing(page: Any) -> dict[str, Any]:
    wait_until(page, "Boolean(window.lineageView && window.lineageView.drawn)")
    return snapshot(page)


def wait_until(page: Any, expression: str, arg: object = None, seconds: float = 30) -> None:
    """Poll ``expression`` (a function of ``arg`` when given) until it is true.  Not ``wait_for_function``: that
    evaluates its predicate with ``eval``, which the server's Content-Security-Policy (rightly) forbids."""
    deadline = time.monotonic() + seconds
    while not (page.evaluate(expression, arg) if arg is not None else page.evaluate(expression)):
        if time.monotonic() > deadline:
            raise AssertionError(f"still not true after {seconds} s: {expression}")
        time.sleep(0.02)


def snapshot(page: Any) -> dict[str, Any]:
    return page.evaluate("window.lineageView.snapshot()")


def canvas_box(page: Any) -> dict[str, float]:
    return page.evaluate(
        "(() => { const r = document.getElementById('canvas').getBoundingClientRect();"
        " return {left: r.left, top: r.top, width: r.width, height: r.height}; })()"
    )


def pixel_variety(page: Any, png: bytes) -> dict[str, float]:
    """Distinct colours and the share of pixels unlike the top-left one in a PNG, decoded by the browser."""
    script = """async (data) => {
        const bitmap = await createImageBitmap(await (await fetch('data:image/png;base64,' + data)).blob());
        const canvas = new OffscreenCanvas(bitmap.width, bitmap.height);
        const context = canvas.getContext('2d');
        context.drawImage(bitmap, 0, 0);
        const pixels = context.getImageData(0, 0, bitmap.width, bitmap.height).data;
        const colours = new Set();
        let unlike = 0;
        for (let i = 0; i < pixels.length; i += 4) {
            colours.add((pixels[i] << 16) | (pixels[i + 1] << 8) | pixels[i + 2]);
            if (pixels[i] !== pixels[0] || pixels[i + 1] !== pixels[1] || pixels[i + 2] !== pixels[2]) unlike++;
        }
        return {colours: colours.size, unlike: unlike / (pixels.length / 4)};
    }"""
    return page.evaluate(script, base64.b64encode(png).decode("ascii"))
