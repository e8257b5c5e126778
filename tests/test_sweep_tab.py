"""The Sweep tab through a real server on 127.0.0.1 (gradio_client) and a real `sweep` job, and as the admin
sees it in Debian's chromium (one labelled point per alpha drawn on the curve).

The finetuned model is the shipped toy model with a small perturbation of every
weight, saved as a checkpoint the way training saves one; three alphas and a
few items per type keep the sweep short. `SAVE_SCREENSHOT=1` also writes docs/sweep.png.
"""
import re

import numpy as np
import pytest
import torch
from gradio_client import handle_file

from backend.benchmarks import evaluate_many
from backend.core.store import Store
from backend.models.checkpoint import save_checkpoint
from backend.models.loading import load_model
from backend.toyworld.grammar import parse
from backend.toyworld.negative_images import scene_for_caption
from backend.toyworld.render import render, to_pil
from tests.support.admin import CREDENTIALS
from tests.support.appserver import running_app
from tests.support.browser import choose, new_page, screenshot
from tests.support.clients import local_client
from tests.support.waiting import wait_for

ALPHAS = "0, 0.5, 1"
CAPTION = "a red circle above a blue square"
NEGATIVE = "- a blue circle above a red square"  # an extra caption, so the probe has something to compare


def perturbed_toy_checkpoint(folder) -> str:
    """The shipped toy model with 20% Gaussian noise (relative to each tensor's spread) on its float weights."""
    loaded = load_model("toyworld", device="cpu", precision="fp32")
    generator = torch.Generator().manual_seed(0)
    with torch.no_grad():
        for tensor in loaded.model.state_dict().values():
            if tensor.is_floating_point() and tensor.numel() > 1:
                tensor.add_(0.2 * tensor.std() * torch.randn(tensor.shape, generator=generator))
    save_checkpoint(folder, loaded.model, loaded.architecture, {"trained_from": "toyworld"})
    return f"local-dir:{folder}"


def form(pretrained="toyworld", finetuned="", alphas=ALPHAS, compositional="toy-sugarcrepe/overall",
         object_centric="toy-zeroshot-shape/top1", tolerance=1.0, limit=6):
    return [pretrained, finetuned, alphas, compositional, object_centric, tolerance, limit]


@pytest.fixture(scope="module")
def swept(tmp_path_factory):
    """A server whose admin swept toyworld -> its perturbed copy over three alphas through the tab."""
    workspace = tmp_path_factory.mktemp("sweep-tab")
    finetuned = perturbed_toy_checkpoint(workspace / "perturbed-toy")
    store = Store(workspace / "lab.db")
    with running_app(workspace, ["toyworld"], workspace, **CREDENTIALS) as url:
        admin = local_client(url)
        admin.predict("admin", "s3cret pass", api_name="/login")
        message, _choices = admin.predict(*form(finetuned=finetuned), api_name="/launch_sweep")
        job_id = int(re.search(r"sweep #(\d+)", message).group(1))
        job = wait_for(lambda: (row := store.get_job(job_id))["status"] in ("done", "failed") and row, 120,
                       "the sweep to end")
        assert job["status"] == "done", job.get("error")
        yield {"url": url, "admin": admin, "store": store, "job": job, "finetuned": finetuned,
               "workspace": workspace}


@pytest.mark.system
def test_the_curve_has_a_labelled_point_per_alpha_and_the_recommendation(swept):
    status, plot, points, best, alpha = swept["admin"].predict(swept["job"]["id"], api_name="/sweep_status")
    rows = swept["job"]["result"]["rows"]
    assert f"**#{swept['job']['id']} sweep: done**, 100%" in status
    assert [row[0] for row in points["data"]] == [0.0, 0.5, 1.0]
    for (_alpha, x, y), row in zip(points["data"], rows):
        assert (x, y) == (round(100 * row["toy-zeroshot-shape/top1"], 2), round(100 * row["toy-sugarcrepe/overall"], 2))
    assert plot.count('class="sweep-point"') == 3 and all(f">α={a:g}</text>" in plot for a in (0, 0.5, 1))
    recommended = swept["job"]["result"]["recommended"]
    assert alpha == recommended["alpha"] and f"Recommended alpha: {recommended['alpha']:g}" in best
    assert recommended["criterion"] in best and plot.count('class="sweep-recommended"') == 1


@pytest.mark.system
@pytest.mark.browser
def test_the_page_draws_a_labelled_point_per_alpha_for_the_signed_in_admin(swept, browser):
    with new_page(browser) as page:
        page.goto(swept["url"])
        page.get_by_role("tab", name="Benchmarks").wait_for()  # the tabs are drawn
        assert page.get_by_role("tab", name="Sweep").count() == 0, "the tab is for admins"
        page.get_by_text("Admin sign-in").click()
        page.get_by_label("Admin user", exact=True).fill(CREDENTIALS["COMPLAB_ADMIN_USER"])
        page.get_by_label("Password", exact=True).fill(CREDENTIALS["COMPLAB_ADMIN_PASSWORD"])
        page.locator("#sign-in").click()
        page.get_by_role("tab", name="Sweep").click()
        page.get_by_role("button", name="↻", exact=True).click()  # the list as it is now, for the admin
        choose(page, "Sweep", f"#{swept['job']['id']} ")
        points = page.locator("#sweep-plot circle.sweep-point")
        wait_for(lambda: points.count() == 3 and page.locator("#sweep-plot circle.sweep-recommended").count()
                 and "sweep: done" in page.locator("#sweep-status").inner_text(), 30,
                 "three points, the recommended ring and the sweep done")
        boxes = [points.nth(i).bounding_box() for i in range(3)]
        assert all(box and box["width"] > 4 for box in boxes) and len({(b["x"], b["y"]) for b in boxes}) == 3
        labels = page.locator("#sweep-plot text.sweep-label")
        assert [t.strip() for t in labels.all_text_contents()] == ["α=0", "α=0.5", "α=1"]
        assert all((box := labels.nth(i).bounding_box()) and box["width"] > 10 for i in range(3)), "labels drawn"
        recommended = swept["job"]["result"]["recommended"]
        assert f"Recommended alpha: {recommended['alpha']:g}" in page.locator("#sweep-recommended").inner_text()
        screenshot(page, "sweep.png")


def export(client, job_id: int, name: str, alpha: float) -> str:
    message, *_lists = client.predict(job_id, name, alpha, api_name="/export_patched")
    return re.search(r"`(local-dir:[^`]+)`", message).group(1)


@pytest.mark.system
def test_the_job_logged_each_alpha_and_the_recommended_export_scores_as_swept(swept):
    """The job's process reported a point per alpha as it went, and the exported recommendation, loaded back from
    its folder, scores on the compositional axis what the sweep measured for that alpha."""
    job, store = swept["job"], swept["store"]
    assert sorted({row["step"] for row in store.metrics(job["id"], "sweep")}) == [0, 1, 2]
    assert [row["alpha"] for row in job["result"]["rows"]] == [0, 0.5, 1]
    best = job["result"]["recommended"]
    spec = export(swept["admin"], job["id"], "toy-rescored", best["alpha"])
    rescored = evaluate_many(["toy-sugarcrepe"], load_model(spec, device="cpu"), limit=6)
    assert rescored["toy-sugarcrepe/overall"] == pytest.approx(best["compositional"])


@pytest.mark.system
def test_export_puts_the_patched_model_in_the_model_lists_and_it_loads(swept, tmp_path):
    admin, job = swept["admin"], swept["job"]
    recommended = job["result"]["recommended"]["alpha"]
    spec = export(admin, job["id"], "toy-recommended", recommended)
    assert spec.endswith("/patched/toy-recommended")
    with pytest.raises(Exception, match="already exists"):
        admin.predict(job["id"], "toy-recommended", 0.5, api_name="/export_patched")
    half = export(admin, job["id"], "toy-half", 0.5)
    labels = {value: label for label, value in admin.predict(api_name="/model_choices")["choices"]}
    assert labels[spec] == f"toy-recommended (patched, alpha {float(recommended)})"
    assert labels[half] == "toy-half (patched, alpha 0.5)"

    ends = [load_model(s, device="cpu").model.state_dict() for s in ("toyworld", swept["finetuned"], half)]
    key = "visual.conv1.weight"
    assert torch.allclose(ends[2][key], 0.5 * ends[0][key] + 0.5 * ends[1][key], atol=1e-6)
    picture = tmp_path / "scene.png"
    to_pil(render(scene_for_caption(parse(CAPTION), np.random.default_rng(0)), 128)).save(picture)
    summary, table, *_rest = admin.predict(handle_file(str(picture)), CAPTION, [half], [], 0, NEGATIVE, False,
                                           api_name="/probe")
    column = table["headers"].index("toy-half (patched, alpha 0.5)")  # the list's label names the column
    assert "not loaded" not in summary and re.match(r"-?\d\.\d{4}", table["data"][0][column])


@pytest.mark.system
def test_anonymous_visitors_cannot_sweep_or_export(swept):
    anonymous = local_client(swept["url"])
    before = len(swept["store"].list_jobs())
    with pytest.raises(Exception, match="Launching a sweep needs an admin"):
        anonymous.predict(*form(finetuned=swept["finetuned"]), api_name="/launch_sweep")
    with pytest.raises(Exception, match="Exporting a patched model needs an admin"):
        anonymous.predict(swept["job"]["id"], "sneaky", 0.5, api_name="/export_patched")
    with pytest.raises(Exception, match="Viewing sweeps needs an admin"):
        anonymous.predict(swept["job"]["id"], api_name="/sweep_status")
    assert len(swept["store"].list_jobs()) == before


@pytest.mark.parametrize("overrides, message", [
    ({"alphas": "zero to one"}, "write start:stop:step"),
    ({"alphas": "0, 1.5"}, "alphas must be between 0 and 1"),
    ({"compositional": "overall"}, "must name a benchmark metric as <benchmark>/<metric>"),
    ({"finetuned": ""}, "finetuned model is required"),
])
@pytest.mark.system
def test_a_bad_sweep_is_a_message_and_starts_nothing(swept, overrides, message):
    before = len(swept["store"].list_jobs())
    with pytest.raises(Exception, match=re.escape(message)):
        swept["admin"].predict(*form(**{"finetuned": swept["finetuned"], **overrides}), api_name="/launch_sweep")
    assert len(swept["store"].list_jobs()) == before


def test_alpha_ranges_read_as_written():
    from ui.tabs.sweep import parse_alphas

    assert parse_alphas("0:1:0.1") == [round(0.1 * i, 4) for i in range(11)]
    assert parse_alphas("0, 0.25 1") == [0.0, 0.25, 1.0]
