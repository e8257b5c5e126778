"""The Probe tab driven through a real browser (Debian chromium via playwright).

`SAVE_SCREENSHOT=1` also writes a full-page screenshot of a finished probe to docs/probe.png.
"""

import pytest

from backend.perturb import FAMILIES
from tests.support.appserver import running_app
from tests.support.browser import (
    horizontal_overflow,
    inside,
    new_page,
    pick_option,
    read_table,
    screenshot,
    upload_image,
)
from tests.support.tiny import solid_image
from tests.support.waiting import wait_for

pytestmark = [pytest.mark.browser, pytest.mark.system]

CAPTION = "the brown dog and the white cat"
SWAPPED = "the white dog and the brown cat"
WAIT_MS = 60_000


EXAMPLE_CAPTION = "a red square"


@pytest.fixture(scope="module")
def app_url(tiny_checkpoints, tmp_path_factory):
    downloads = tmp_path_factory.mktemp("browser-downloads")
    example = downloads / "example.png"
    solid_image((200, 30, 30), size=64).save(example)
    with running_app(tiny_checkpoints.directory, [tiny_checkpoints.dir_spec, "toyworld"], downloads,
                     examples=[[str(example), EXAMPLE_CAPTION]]) as url:
        yield url


@pytest.fixture
def page(browser, app_url):
    with new_page(browser, WAIT_MS) as page:
        page.goto(app_url)
        page.get_by_role("button", name="Probe", exact=True).wait_for()
        yield page


@pytest.fixture(scope="module")
def image_path(tmp_path_factory):
    path = tmp_path_factory.mktemp("browser-img") / "dog.png"
    solid_image((120, 80, 40), size=64).save(path)
    return path


def _open_options(page):
    page.get_by_text("Perturbations and extra captions").click()  # open the accordion


def _probe(page, caption, extra=None):
    page.get_by_label("Caption", exact=True).fill(caption)
    if extra is not None:
        _open_options(page)
        page.get_by_label("Extra captions", exact=False).fill(extra)
    page.get_by_role("button", name="Probe", exact=True).click()


def _wait_for_results(page, text=None):
    """Wait until the Variants table shows an 'original' row (reading `text`, if given); return all rows."""
    kind_header = page.locator("#probe-table thead th[title=kind]")
    kind_header.wait_for()
    column = kind_header.get_attribute("aria-colindex")
    page.locator(f"#probe-table [role=gridcell][aria-colindex='{column}']",
                 has_text="original").first.wait_for()
    if text is not None:
        page.locator("#probe-table [role=gridcell]", has_text=text).first.wait_for()
    rows, total = read_table(page, "probe-table")
    assert len(rows) == total > 1, f"read {len(rows)} of {total} table rows"
    return rows


def _cell(row, label):
    """(score, verdict) as a model's column shows them: "0.1234 · verdict · margin +0.0100"."""
    score, _, verdict = row[label]["text"].partition(" · ")
    return score, verdict.split(" · margin ")[0]


def _expected_verdict(score: str, original: str) -> str:
    """The strict rule on the scores the page shows: a negative must score below the original."""
    assert score != original, f"scores tie at display precision ({score}): pick another image or caption"
    return "ok" if float(score) < float(original) else "FAIL: not below original"


def _check_results(rows, label):
    assert rows[0]["kind"]["text"] == "original"
    assert rows[0]["text"]["text"] == CAPTION
    assert [row["#"]["text"] for row in rows] == [str(index) for index in range(len(rows))]
    swapped = [row for row in rows if row["text"]["text"] == SWAPPED]
    assert swapped, f"no row reads {SWAPPED!r}: {[row['text']['text'] for row in rows]}"
    assert "<mark>" in swapped[0]["text"]["html"]
    assert swapped[0]["kind"]["text"] == "negative"
    original, _ = _cell(rows[0], label)
    swapped_score, swapped_verdict = _cell(swapped[0], label)
    assert swapped_verdict == _expected_verdict(swapped_score, original)
    generated = [row for row in rows if row["kind"]["text"] == "negative" and row["family"]["text"] != "user"]
    assert len(generated) > 1
    for row in generated:
        score, verdict = _cell(row, label)
        assert verdict == _expected_verdict(score, original), (row["text"]["text"], score, original)


def test_a_bad_image_is_refused_then_the_probe_fills_the_table_with_highlighted_variants(page, image_path, tmp_path):
    """After an example was loaded too: Gradio rebuilds a component that an event updates."""
    page.get_by_text(EXAMPLE_CAPTION, exact=True).click()
    page.locator("[data-testid=image] img").first.wait_for(state="visible")
    bogus = tmp_path / "notes.png"
    bogus.write_text("not an image")
    page.locator("[data-testid=image] input[type=file]").set_input_files(str(bogus))
    message = "Could not read the image 'notes.png': it is not an image file this app can open"
    toast = page.locator("[data-testid=toast-body].error").filter(has_text=message)
    toast.first.wait_for()  # on upload, before any probe
    _close_toasts(page)
    page.get_by_label("Caption", exact=True).fill(CAPTION)
    page.get_by_role("button", name="Probe", exact=True).click()
    toast.first.wait_for()  # and again on probing it
    _close_toasts(page)
    upload_image(page, image_path)
    _probe(page, CAPTION, extra=f"-{CAPTION}")  # a user negative identical to the original
    rows = _wait_for_results(page)
    _check_results(rows, "tiny-dir")
    blind = page.locator("tr").filter(has_text="text only (blind)")  # the text-only scorer's row, under the model's
    assert blind.count() == 1 and "% of " in blind.inner_text()
    (identical,) = [row for row in rows if row["family"]["text"] == "user"]
    assert (identical["kind"]["text"], identical["text"]["text"]) == ("negative", CAPTION)
    assert _cell(identical, "tiny-dir") == (_cell(rows[0], "tiny-dir")[0], "FAIL: same text as the original")
    screenshot(page, "probe.png", drawn="[aria-roledescription=point]")  # once the scatter plot is drawn


def test_an_empty_caption_and_no_family_checked_are_refused_and_the_page_recovers(page, image_path):
    upload_image(page, image_path)
    _probe(page, "")
    page.locator("[data-testid=toast-body].error").filter(has_text="caption is empty").wait_for()
    _close_toasts(page)
    _open_options(page)
    families = page.locator("#probe-families input[type=checkbox]")
    families.first.wait_for()  # the accordion has opened
    assert families.count() == len(FAMILIES)
    for family in families.all():
        family.uncheck()
    _probe(page, CAPTION)
    page.locator("[data-testid=toast-body].error").filter(has_text="No perturbation family is checked").wait_for()
    assert page.locator("#probe-table [role=gridcell]", has_text="original").count() == 0  # nothing scored
    _close_toasts(page)
    for family in families.all():
        family.check()
    _probe(page, CAPTION)
    _check_results(_wait_for_results(page), "tiny-dir")


def test_a_refused_probe_keeps_the_results_shown_before_it_and_no_error_badge(page, image_path):
    """Gradio marks every output of a failed event "Error" until its next event: the earlier results were
    hidden under three badges that outlived the toast saying why (`ui.refusals.keep_shown`)."""
    upload_image(page, image_path)
    _probe(page, CAPTION)
    shown = _wait_for_results(page)
    _probe(page, "")
    page.locator("[data-testid=toast-body].error").filter(has_text="caption is empty").wait_for()
    _close_toasts(page)
    badges = page.get_by_text("Error", exact=True)
    wait_for(lambda: badges.count() == 0, timeout=30, what="no 'Error' badge on the results")
    assert read_table(page, "probe-table")[0] == shown
    assert page.locator("tr").filter(has_text="text only (blind)").count() == 1  # the summary stays too


def test_two_models_fit_the_table_the_plot_names_both_and_unknown_words_are_warned_of(page, image_path):
    """A second model added after a first probe: the plot drew only the first result's series before."""
    assert page.viewport_size["width"] == 1400
    upload_image(page, image_path)
    _probe(page, CAPTION)
    _wait_for_results(page)
    page.locator("#probe-plot .role-legend-label text", has_text="tiny-dir: negative").wait_for()
    pick_option(page, "Models", "toyworld")
    _probe(page, "The brown dog, and the white cat.", extra="")  # ARO shuffles need a reference row
    rows = _wait_for_results(page, text="reference")
    assert [label in rows[0] for label in ("tiny-dir", "toyworld")] == [True, True]
    assert (rows[1]["kind"]["text"], rows[1]["text"]["text"]) == ("reference", "the brown dog and the white cat")
    assert horizontal_overflow(page, "probe-table") == 0, "the table scrolls sideways"
    legend = page.locator("#probe-plot .role-legend-label text")
    legend.filter(has_text="toyworld: negative").wait_for()
    labels = legend.all_text_contents()
    for series in ("tiny-dir: reference", "tiny-dir: negative", "toyworld: reference", "toyworld: negative"):
        assert series in labels
    plot_box = page.locator("#probe-plot").bounding_box()
    for label in legend.all():
        assert inside(label.bounding_box(), plot_box), f"legend entry {label.text_content()!r} is cut off"
    _check_tooltip_names_the_row(page, rows)
    _check_words_outside_the_vocabulary_are_warned_of(page)


def _check_tooltip_names_the_row(page, rows):
    """Hovering a point shows its row's # and text: the plot links back to the table."""
    page.locator("#probe-plot [aria-roledescription=point]").first.hover()
    tooltip = page.locator("#vg-tooltip-element")
    tooltip.wait_for()
    shown = tooltip.evaluate("""t => Object.fromEntries([...t.querySelectorAll('tr')]
        .map(tr => [tr.querySelector('.key').textContent, tr.querySelector('.value').textContent]))""")
    assert shown["text"] == rows[int(shown["#"])]["text"]["text"]


def _check_words_outside_the_vocabulary_are_warned_of(page):
    """With both models picked, a caption the word-level toy model cannot read gets a warning above the table."""
    _probe(page, "a cheetah to the left of a big blue square")
    _wait_for_results(page, text="cheetah")
    warning = page.locator(".probe-warning")
    warning.filter(has_text="cheetah").wait_for()
    assert warning.count() == 1, "only the word-level model misreads the caption"
    assert warning.inner_text().startswith("⚠ toyworld: its numbers are not meaningful for this caption.")
    assert "as <unk> (outside its vocabulary): cheetah" in warning.inner_text()
    note = page.get_by_text("toyworld: read as <unk>, outside this model's vocabulary:")
    assert note.is_visible() and "cheetah" in note.inner_text()
    warning_box, table_box = warning.bounding_box(), page.locator("#probe-table").bounding_box()
    assert warning_box["y"] + warning_box["height"] <= table_box["y"], "the warning is above the table"


def _close_toasts(page):
    for close in page.locator("[data-testid=toast-close]").all():
        close.click()
    page.locator("[data-testid=toast-body]").first.wait_for(state="detached")
