"""The Train, Benchmarks and Campaigns forms offer the Slurm target on a server whose settings configure one, and
what an admin launches there runs on a real one-node Slurm (tests.support.slurm).

The partition, account, time limit and extra #SBATCH lines are the server's settings: a form sends only the place
and the job's size, and the job script carries the settings' values. An anonymous visitor launches nothing.
A server without those settings offers no such choice (tests/test_train_tab.py: a hand-made call is refused).
"""
import re

import pytest
from gradio_client import Client

from backend.core.store import Store
from backend.jobs import slurm
from tests.support.admin import CREDENTIALS
from tests.support.appserver import running_app, workspace_settings
from tests.support.browser import new_page, screenshot
from tests.support.clients import local_client
from tests.support.forms import create, form
from tests.support.slurm import SLURM_ENV, ensure_cluster
from tests.support.waiting import wait_for

pytestmark = pytest.mark.system

SETTINGS = {**CREDENTIALS, **SLURM_ENV, "COMPLAB_SLURM_SBATCH": "--comment=from-the-settings"}
BENCHMARK = "toy-sugarcrepe"


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    ensure_cluster()
    workspace = tmp_path_factory.mktemp("slurm-forms")
    with pytest.MonkeyPatch.context() as patch, running_app(workspace, ["toyworld"], workspace, **SETTINGS) as url:
        patch.setattr(slurm, "POLL_S", 1.0)  # the app's watchers look every second, not every 10
        yield url, workspace_settings(workspace, **SETTINGS)


def sign_in(url: str) -> Client:
    client = local_client(url)
    status, *_ = client.predict("admin", "s3cret pass", api_name="/login")
    assert "(admin)" in status
    return client


def _script(settings, job) -> str:
    return (slurm.slurm_folder(job, settings) / "job.sbatch").read_text()


def test_a_training_run_launched_from_the_train_tab_is_a_slurm_job_with_the_servers_settings(app):
    url, settings = app
    store = Store(settings.db)
    with pytest.raises(Exception, match="admin"):
        local_client(url).predict(*form(target="slurm"), api_name="/launch")
    assert store.list_jobs() == []
    admin = sign_in(url)
    admin.predict(*form(name="on-slurm", loss="negclip", steps=400, target="slurm", nodes=1, gpus_per_node=2),
                  api_name="/launch")
    [job] = store.list_jobs()
    assert job["target"] == "slurm" and job["target_options"]["gpus_per_node"] == 2
    script = _script(settings, job)
    assert "#SBATCH --partition=debug" in script and "#SBATCH --time=0:30:00" in script
    assert "#SBATCH --comment=from-the-settings" in script and "--nproc_per_node=2" in script
    wait_for(lambda: store.get_job(job["id"])["status"] == "running", 120, "Slurm to start the run")
    status, _ = admin.predict(job["id"], api_name="/cancel")
    assert "**cancelled**" in status
    slurm_id = store.get_job(job["id"])["target_options"][slurm.SLURM_ID]
    wait_for(lambda: slurm.slurm_state(slurm_id, settings) in (None, "CANCELLED"), 60, "scancel to end the job")


def test_an_evaluation_launched_from_the_benchmarks_tab_runs_on_slurm_and_fills_the_leaderboard(app):
    url, settings = app
    store = Store(settings.db)
    admin = sign_in(url)
    status = admin.predict(["toyworld"], [BENCHMARK], 12, "slurm", api_name="/launch_evaluate")
    job_id = int(re.search(r"#(\d+) evaluate", status).group(1))
    job = store.get_job(job_id)
    assert job["target"] == "slurm" and "#SBATCH --partition=debug" in _script(settings, job)
    wait_for(lambda: store.get_job(job_id)["status"] in ("done", "failed"), 300, "the evaluation on Slurm")
    assert store.get_job(job_id)["status"] == "done", store.get_job(job_id).get("error")
    table, _chart = admin.predict([], api_name="/leaderboard")
    assert any("toyworld" in str(row[0]) for row in table["data"])


def test_campaign_images_generated_from_the_campaigns_tab_on_slurm_are_stored(app):
    url, settings = app
    store = Store(settings.db)
    admin = sign_in(url)
    create(admin, "on-slurm", n_items=2)
    message, _ = admin.predict("on-slurm", "toyworld", "", "slurm", api_name="/launch_generation")
    job_id = int(message.split("#")[1].rstrip("."))
    assert store.get_job(job_id)["target"] == "slurm"
    wait_for(lambda: store.get_job(job_id)["status"] in ("done", "failed"), 300, "the generate job on Slurm")
    assert store.get_job(job_id)["status"] == "done", store.get_job(job_id).get("error")
    _, *_, generating = admin.predict("on-slurm", api_name="/campaign_status")
    assert "**done**, 100%" in generating and "Candidate images: **48 of 48** stored" in generating


@pytest.mark.browser
def test_the_forms_show_the_cluster_to_the_signed_in_admin(app, browser):
    url, _ = app
    with new_page(browser) as page:
        page.goto(url)
        page.get_by_text("Admin sign-in").click()
        page.get_by_label("Admin user", exact=True).fill(CREDENTIALS["COMPLAB_ADMIN_USER"])
        page.get_by_label("Password", exact=True).fill(CREDENTIALS["COMPLAB_ADMIN_PASSWORD"])
        page.locator("#sign-in").click()
        page.get_by_role("tab", name="Train").click()
        target = page.locator("#train-target")
        target.get_by_text("Slurm cluster (partition debug)").wait_for()
        assert page.get_by_label("Nodes (Slurm)").is_visible()
        assert page.get_by_label("GPUs per node (Slurm)").is_visible()
        screenshot(page, "train-slurm.png")
        for tab, picker in (("Benchmarks", "#bench-target"), ("Campaigns", "#campaign-target")):
            page.get_by_role("tab", name=tab).click()
            page.locator(picker).get_by_text("Slurm cluster (partition debug)").wait_for()
        screenshot(page, "campaigns-slurm.png")
        page.get_by_role("tab", name="Benchmarks").click()
        screenshot(page, "benchmarks-slurm.png")
