"""Small helpers for driving the Gradio app with playwright and Debian's chromium.

Never `playwright install`: the tests use the system chromium at CHROMIUM, which
`scripts/setup.sh` installs (and CI installs too).
"""
from __future__ import annotations

import os
import re
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.support.waiting import wait_for

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
VIEWPORT = {"width": 1400, "height": 1000}
DOCS = Path(__file__).resolve().parents[2] / "docs"


@contextmanager
def chromium():
    """A headless system chromium; a clear failure (not a skip) when it is not installed.

    Tests take the session's `browser` fixture (tests/conftest.py) instead: Playwright's sync API runs one
    instance per thread, so a second `chromium()` in a worker that already holds that browser fails."""
    if not CHROMIUM.exists():
        pytest.fail(f"{CHROMIUM} is missing: run `scripts/setup.sh` to install chromium "
                    "for the browser tests", pytrace=False)
    from playwright.sync_api import sync_playwright
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()


@contextmanager
def new_page(browser, timeout_ms: int = 30_000):
    """A blank page in a context of its own (its own storage and cookies: one test's page never sees another's),
    so a module can share one browser; `timeout_ms` is every wait's default."""
    context = browser.new_context(viewport=VIEWPORT)
    context.set_default_timeout(timeout_ms)
    try:
        yield context.new_page()
    finally:
        context.close()


def sign_in_to_campaigns(page, url: str, user: str, password: str) -> None:
    """Open the app at `url`, sign in as the admin through the page's form, and open the Campaigns tab."""
    page.goto(url)
    page.get_by_text("Admin sign-in").click()
    page.get_by_label("Admin user").fill(user)
    page.get_by_label("Password").fill(password)
    page.locator("#sign-in").click()
    page.get_by_role("tab", name="Campaigns").click()


def screenshot(page, name: str, *, settled: bool = False, drawn: str | None = None) -> Path | None:
    """A full-page screenshot for a person to look at, taken only where one asked for it: `SAVE_SCREENSHOT=1`
    writes it to docs/ (the pictures the docs show), `SCREENSHOT_DIR=<folder>` to that folder (to view a run's
    pages). Otherwise none is taken: no test reads the pictures, and each one cost chromium 2 to 4 s of software
    rendering on the 2-core machine (about 45 in a `make test`). First, with `settled`, wait until Gradio's
    fade-in animations are over (they leave new text pale), and with `drawn`, for that selector (a plot's
    first point)."""
    folder = DOCS if os.environ.get("SAVE_SCREENSHOT") == "1" else os.environ.get("SCREENSHOT_DIR")
    if not folder:
        return None
    if settled:
        page.wait_for_function("() => document.getAnimations().every(a => a.playState !== 'running')")
    if drawn:
        page.locator(drawn).first.wait_for()
    target = Path(folder) / name
    target.parent.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(target), full_page=True)
    return target


# Gradio's Dataframe renders only the rows in view (a virtual table), so reading every row
# means scrolling its viewport and collecting rows by their data-row index as they appear.
_READ_TABLE_JS = """
async (root) => {
  const frame = () => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)));
  const grid = root.querySelector('[role=grid]');
  const viewport = root.querySelector('.virtual-table-viewport');
  const total = Number(grid.getAttribute('aria-rowcount')) - 1;
  const headers = [...root.querySelectorAll('thead th[role=columnheader]')].map(th => th.title);
  const rows = {};
  viewport.scrollTop = 0;
  await frame();
  for (let step = 0; step < 1000; step++) {
    for (const row of root.querySelectorAll('[role=row][data-index]')) {
      const cells = [...row.querySelectorAll('[role=gridcell]')].map(cell => {
        const span = cell.querySelector('.cell-wrap span') || cell;
        return {text: span.textContent.trim(), html: span.innerHTML.trim()};
      });
      rows[row.dataset.index] = cells;
    }
    const done = Object.keys(rows).length >= total;
    const bottom = viewport.scrollTop + viewport.clientHeight >= viewport.scrollHeight - 1;
    if (done || bottom) break;
    viewport.scrollTop += Math.max(40, viewport.clientHeight * 0.7);
    await frame();
  }
  viewport.scrollTop = 0;
  const ordered = Object.keys(rows).map(Number).sort((a, b) => a - b).map(i => rows[i]);
  return {headers, total, rows: ordered};
}
"""


def read_table(page, elem_id: str) -> tuple[list[dict[str, dict[str, str]]], int]:
    """Every row of a Gradio Dataframe as {header: {"text", "html"}}, plus its row count."""
    result = page.locator(f"#{elem_id}").evaluate(_READ_TABLE_JS)
    rows = [dict(zip(result["headers"], cells)) for cells in result["rows"]]
    return rows, result["total"]


def upload_image(page, path: Path | str) -> None:
    """Set a file on the (hidden) file input inside the gr.Image component."""
    page.locator("[data-testid=image] input[type=file]").set_input_files(str(path))
    # The upload is done when the component shows the preview instead of the drop zone.
    page.locator("[data-testid=image] img").first.wait_for(state="visible")


def horizontal_overflow(page, elem_id: str) -> int:
    """How many pixels a Gradio Dataframe's rows stick out sideways (what its horizontal scrollbar scrolls)."""
    return page.locator(f"#{elem_id} .virtual-table-viewport").evaluate("v => v.scrollWidth - v.clientWidth")


def offered(page, label: str) -> list[str]:
    """The options a dropdown shows when a person opens it; closed again, and left (a dropdown still focused after
    Escape does not open again on the next click, so a poll that only pressed Escape saw no options ever after)."""
    box = page.get_by_label(label, exact=True)
    box.click()
    names = page.get_by_role("option").all_inner_texts()
    page.keyboard.press("Escape")
    box.blur()
    return [name.strip() for name in names]


def pick_option(page, label: str, option: str) -> None:
    """Add `option` to a multiselect gr.Dropdown and close its list."""
    page.get_by_label(label, exact=True).click()
    page.get_by_role("option", name=option, exact=True).click()
    page.keyboard.press("Escape")


def choose(page, label: str, option: str, timeout: float = 60) -> None:
    """Pick the first option whose name contains `option` in a single-select gr.Dropdown, as a person does: open
    it, and where the option is not there yet (its choices arrive with an event that answers late under load),
    close it and open it again; pick again until the box shows the option (a timer that refreshes the list,
    newest first, can shift the options under the click, which then lands on a neighbour)."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    box, name = page.get_by_label(label, exact=True), re.compile(re.escape(option))

    def picked() -> bool:
        box.click()
        wanted = page.get_by_role("option", name=name).first
        try:
            wanted.wait_for(timeout=2_000)
            wanted.click()
        except PlaywrightTimeout:
            page.keyboard.press("Escape")  # closed and left, or the next click does not open it (`offered`)
            box.blur()
            return False
        return bool(name.search(box.input_value()))

    wait_for(picked, timeout, f"{option!r} chosen in {label!r}")


def inside(inner: dict | None, outer: dict | None) -> bool:
    """Whether bounding box `inner` lies within `outer` (playwright boxes: x, y, width, height)."""
    return bool(inner and outer) and (outer["x"] <= inner["x"] and outer["y"] <= inner["y"]
                                      and inner["x"] + inner["width"] <= outer["x"] + outer["width"]
                                      and inner["y"] + inner["height"] <= outer["y"] + outer["height"])


def sign_in(page, user: str, password: str) -> None:
    """Sign in on the app's page as a person does: open the sign-in box, type, press Sign in."""
    page.get_by_text("Admin sign-in").click()
    page.get_by_label("Admin user").fill(user)
    page.get_by_label("Password").fill(password)
    page.locator("#sign-in").click()
