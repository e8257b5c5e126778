"""The Probe tab driven through a real browser (Debian chromium via playwright).

`SAVE_SCREENSHOT=1` also writes a full-page screenshot of a finished probe to docs/probe.png.
"""
import os
from pathlib import Path

import pytest

from tests.appserver import running_app
from tests.browser import VIEWPORT, chromium, read_table, upload_image
from tests.tiny import solid_image

pytestmark = pytest.mark.browser

CAPTION = "the brown dog and the white cat"
SWAPPED = "the white dog and the brown cat"
WAIT_MS = 60_000
SCREENSHOT = Path(__file__).resolve().parents[1] / "docs" / "probe.png"


@pytest.fixture(scope="module")
def app_url(tiny_checkpoints, tmp_path_factory):
    downloads = tmp_path_factory.mktemp("browser-downloads")
    with running_app(tiny_checkpoints.directory, [tiny_checkpoints.dir_spec], downloads) as url:
        yield url


@pytest.fixture(scope="module")
def browser():
    with chromium() as launched:
        yield launched


@pytest.fixture
def page(browser, app_url):
    context = browser.new_context(viewport=VIEWPORT)
    context.set_default_timeout(WAIT_MS)
    page = context.new_page()
    page.goto(app_url)
    page.get_by_role("button", name="Probe", exact=True).wait_for()
    yield page
    context.close()


@pytest.fixture(scope="module")
def image_path(tmp_path_factory):
    path = tmp_path_factory.mktemp("browser-img") / "dog.png"
    solid_image((120, 80, 40), size=64).save(path)
    return path


def _probe(page, caption, extra=None):
    page.get_by_label("Caption", exact=True).fill(caption)
    if extra is not None:
        page.get_by_text("Perturbations and extra captions").click()  # open the accordion
        page.get_by_label("Extra captions", exact=False).fill(extra)
    page.get_by_role("button", name="Probe", exact=True).click()


def _wait_for_results(page):
    """Wait until the Variants table has real headers and an 'original' row; return all rows."""
    kind_header = page.locator("#probe-table thead th[title=kind]")
    kind_header.wait_for()
    column = kind_header.get_attribute("aria-colindex")
    page.locator(f"#probe-table [role=gridcell][aria-colindex='{column}']",
                 has_text="original").first.wait_for()
    rows, total = read_table(page, "probe-table")
    assert len(rows) == total > 1, f"read {len(rows)} of {total} table rows"
    return rows


def _expected_verdict(score: str, original: str) -> str:
    """The strict rule on the scores the page shows: a negative must score below the original."""
    assert score != original, f"scores tie at display precision ({score}): pick another image or caption"
    return "ok" if float(score) < float(original) else "FAIL: not below original"


def _check_results(rows, label):
    assert rows[0]["kind"]["text"] == "original"
    assert rows[0]["text"]["text"] == CAPTION
    swapped = [row for row in rows if row["text"]["text"] == SWAPPED]
    assert swapped, f"no row reads {SWAPPED!r}: {[row['text']['text'] for row in rows]}"
    assert "<mark>" in swapped[0]["text"]["html"]
    assert swapped[0]["kind"]["text"] == "negative"
    original = rows[0][f"{label} score"]["text"]
    swapped_score = swapped[0][f"{label} score"]["text"]
    assert swapped[0][f"{label} verdict"]["text"] == _expected_verdict(swapped_score, original)
    generated = [row for row in rows if row["kind"]["text"] == "negative" and row["family"]["text"] != "user"]
    assert len(generated) > 1
    for row in generated:
        verdict, score = row[f"{label} verdict"]["text"], row[f"{label} score"]["text"]
        assert verdict == _expected_verdict(score, original), (row["text"]["text"], score, original)


def test_probe_fills_the_table_with_highlighted_variants(page, image_path, tiny_checkpoints):
    upload_image(page, image_path)
    _probe(page, CAPTION, extra=f"-{CAPTION}")  # a user negative identical to the original
    rows = _wait_for_results(page)
    _check_results(rows, "tiny-dir")
    (identical,) = [row for row in rows if row["family"]["text"] == "user"]
    assert (identical["kind"]["text"], identical["text"]["text"]) == ("negative", CAPTION)
    assert identical["tiny-dir score"]["text"] == rows[0]["tiny-dir score"]["text"]
    assert identical["tiny-dir verdict"]["text"] == "FAIL: not below original"  # a tie counts as wrong
    if os.environ.get("SAVE_SCREENSHOT") == "1":
        page.locator("[aria-roledescription=point]").first.wait_for()  # the scatter plot is drawn
        SCREENSHOT.parent.mkdir(exist_ok=True)
        page.screenshot(path=str(SCREENSHOT), full_page=True)


def test_empty_caption_shows_an_error_toast_and_the_page_recovers(page, image_path, tiny_checkpoints):
    upload_image(page, image_path)
    _probe(page, "")
    toast = page.locator("[data-testid=toast-body].error")
    toast.filter(has_text="caption is empty").wait_for()
    assert page.locator("#probe-table [role=gridcell]", has_text="original").count() == 0  # nothing scored
    page.locator("[data-testid=toast-close]").first.click()
    _probe(page, CAPTION)
    _check_results(_wait_for_results(page), "tiny-dir")
