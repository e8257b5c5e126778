"""Issue 22's "Done when": one scripted Prolific study through the real app and the fake Prolific server.

An admin creates a small campaign (16 toy items, overlap 2, sessions of 4 tasks with a gold one, at least 0.4 s a
task) on a Space, makes its study draft and publishes it from the CLI. The app then runs as a Space runs it
(`app.main` in annotation mode, in its own process, backed up to a fake Hub). Thirty participants come in waves
on the study link (over HTTP exactly as the /study page calls the server, three in a real browser), each with a
submission on the fake Prolific: completers, two who return midway, two who time out, two who answer too fast,
two who reload mid-session, one with two tabs, and those who arrive once the campaign is full; besides them a bot
with made-up PIDs and a hoarder opening 25 study links from one address. The app gets SIGTERM in the middle of a
wave and comes back on an empty disk from its backup. Then the admin syncs, reviews (approve / reject in bulk with
reasons), pays a bonus to everyone approved, pays again and reconciles. At the end every participant is in
exactly one place, and the table of what each did and got is printed and written to the test's folder.
"""
from __future__ import annotations

import json
import os
import re
import signal
from concurrent.futures import ThreadPoolExecutor

import pytest

from backend.annotate import assign, campaigns, db, mirror, prolific_study, report
from backend.annotate.campaigns import CampaignConfig
from backend.cli import main
from backend.core.auth import cli_actor
from backend.core.settings import Settings
from backend.core.store import Store
from tests.support.annotate_fixtures import toy_campaign
from tests.support.appserver import annotate_app, workspace_settings
from tests.support.browser import new_page, screenshot
from tests.support.fake_hub import TOKEN, FakeHfApi, FakeHub, save
from tests.support.fake_prolific import PLACEHOLDERS, FakeProlific, prolific_env
from tests.support.prolific_crowd import arrive as arrive_in
from tests.support.prolific_crowd import work
from tests.support.prolific_journey import (
    MIN_S,
    browser_answer,
    browser_counter,
    browser_ending,
    quota,
    session,
    set_aside_after_withdrawals,
    space_app,
    stored,
    table,
    wait_until,
)
from tests.support.study_visitor import Participant, StudyApp

pytestmark = pytest.mark.system

APP_URL = "https://lab-study.hf.space"
CONFIG = {"overlap": 2, "tasks_per_session": 4, "gold_rate": 0.25, "gold_items": 4, "min_gold": 1,
          "min_seconds_per_task": MIN_S}
CODE = re.compile(r"completion code is \**(\w+)")  # Markdown (over HTTP) or as rendered (browser)


def disk_settings(disk, fake: FakeProlific) -> Settings:
    return Settings.load(env={"COMPLAB_WORKSPACE": str(disk), "COMPLAB_BACKUP_REPO": "lab/backup", "HF_TOKEN": TOKEN,
                              **prolific_env(fake)})


class Lab:
    """The admin's side: the CLI (`python -m backend campaign prolific ...`, in-process) over one disk's store."""

    def __init__(self, monkeypatch, capsys, fake: FakeProlific):
        self.monkeypatch, self.capsys = monkeypatch, capsys
        for key in ("COMPLAB_BACKUP_REPO", "HF_TOKEN", "SPACE_ID", "COMPLAB_CONFIG"):
            monkeypatch.delenv(key, raising=False)
        for key, value in prolific_env(fake).items():
            monkeypatch.setenv(key, value)

    def use(self, settings: Settings) -> None:
        self.monkeypatch.setenv("COMPLAB_WORKSPACE", str(settings.workspace))
        self.monkeypatch.setenv("COMPLAB_DB", str(settings.db))

    def __call__(self, *argv: str) -> dict:
        code = main(["campaign", "prolific", *argv, "--json"])
        out = self.capsys.readouterr()
        assert code == 0, out.err
        return json.loads(out.out)


def test_thirty_participants_a_bot_a_hoarder_and_a_sigterm_end_with_every_place_accounted_for(
        tmp_path, monkeypatch, capsys, browser):
    with FakeProlific() as fake:
        _journey(tmp_path, monkeypatch, capsys, browser, fake)


def _journey(tmp_path, monkeypatch, capsys, browser, fake):
    lab = Lab(monkeypatch, capsys, fake)
    first = disk_settings(tmp_path / "disk-a", fake)
    Store(first.db)
    lab.use(first)
    hub, hub_file = FakeHub(), tmp_path / "hub.json"
    backup = mirror.start(first, api=FakeHfApi(hub), every_minutes=60)
    try:  # the admin, on the Space: the campaign (backed up), then the study's draft, checked as Prolific got it
        toy_campaign(first.db, first.data_dir, "study", 16, CampaignConfig.from_dict(CONFIG))
        config = campaigns.get(first.db, "study")["config"]
        created = lab("create", "study", "--app-url", APP_URL, "--reward-cents", "150")
        study_id = created["study_id"]
        draft = fake.studies[study_id]
        assert draft["external_study_url"].startswith(f"{APP_URL}/study?campaign=study&")
        assert all(p in draft["external_study_url"] for p in PLACEHOLDERS)
        assert draft["prolific_id_option"] == "url_parameters" and draft["reward"] == 150
        assert [c["code"] for c in draft["completion_codes"]] == [config.completion_code]
        places = report.status(first.db, "study")["places"]
        assert draft["total_available_places"] == created["places"] == places["places"] == 22  # 16 x 2 x 2 / 3
        assert lab("publish", "study")["status"] == fake.studies[study_id]["status"] == "ACTIVE"
    finally:
        mirror.stop(backup)
    save(hub, hub_file)
    code = config.completion_code

    people: dict[str, Participant] = {}

    def arrive(name: str, behaviour: str, submission: bool = True, address: str = "") -> Participant:
        pid = f"{name.lower():0>24}"
        person = Participant(name, behaviour, pid, study_id, fake.add_submission(study_id, pid) if submission else "",
                             address or f"10.22.0.{len(people) + 1}")
        people[name] = person
        return person

    def wave(store, *jobs):
        with ThreadPoolExecutor(len(jobs)) as pool:
            return list(pool.map(lambda job: session(job[0], app, store, **job[1]), jobs))

    server = space_app(first.workspace, hub_file, tmp_path / "app-a.log", prolific_env(fake))
    try:
        app = StudyApp(server.url)
        # The hoarder: 25 study links (made-up PIDs) from one address, never answering
        hoard = [Participant(f"H{k:02}", "hoarder", f"{k:0>24}", study_id, "", "203.0.113.7") for k in range(25)]
        hoard_seen = [h.open(app) for h in hoard]
        marks = ",".join("?" * len(hoard))
        held = db.rows(first.db, "select count(*) n from assignments a join annotators n on n.id = a.annotator_id "
                                 f"where n.external_id in ({marks}) and a.status in ('reserved', 'held')",
                       tuple(h.pid for h in hoard))[0]["n"]
        # Prolific knows none of these submissions: every link is refused before a task is held (past 20 starts, by
        # the per-client rate limit first); without a token the caps on holds would stop it (test_annotate_quality_app)
        assert held == 0, "a made-up PID holds nothing"
        texts = [s.done + s.notice + s.error for s in hoard_seen]
        assert all("This link is not for this study" in t or "Too many session starts" in t for t in texts), texts
        assert not any(CODE.search(t) for t in texts)

        # The bot: two made-up PIDs (no submission on Prolific), from one address
        bots = [arrive(f"BOT{k}", "bot, made-up PID", submission=False, address="198.51.100.66") for k in (1, 2)]
        # Wave 1: completers, two who return midway, two who time out, two who answer too fast
        for k in range(1, 5):
            arrive(f"C{k:02}", "completes")
        arrive("R1", "returns after 1 answer")
        arrive("R2", "returns after 2 answers")
        arrive("T1", "times out on task 1")
        arrive("T2", "times out after 1 answer")
        arrive("F1", "answers too fast, then at pace")
        arrive("F2", "answers too fast, then at pace")
        limits = {"R1": 1, "R2": 2, "T1": 0, "T2": 1}
        wave(first.db, *[(p, {"limit": limits.get(p.name)}) for p in people.values() if p.name[0] != "F"])
        wave(first.db, *[(people[n], {"hasty": 3}) for n in ("F1", "F2")])  # by themselves: no wait before a press
        for name in ("F1", "F2"):
            assert sum("You answered in" in line for line in people[name].refused) == 3
        fake.set_status(people["R1"].submission_id, "RETURNED")
        fake.set_status(people["R2"].submission_id, "RETURNED")
        fake.set_status(people["T1"].submission_id, "TIMED-OUT")
        fake.set_status(people["T2"].submission_id, "TIMED-OUT")
        holding = {people[n].pid: db.rows(first.db, "select count(*) n from assignments a join annotators n on "
                                                    "n.id = a.annotator_id where n.external_id = ? and a.status in "
                                                    "('reserved', 'held')", (people[n].pid,))[0]["n"] for n in limits}
        synced = lab("sync", "study")
        assert synced["released"] == holding  # T1's may have come back already: never answered, gone 3 s
        assert all(holding[people[n].pid] == quota(first.db, people[n].pid)
                   - stored(first.db, people[n].pid, counted_only=False)
                   for n in ("R1", "R2", "T2"))
        left_behind = db.rows(first.db, "select a.item_id, a.stage, n.external_id from assignments a join annotators "
                                        "n on n.id = a.annotator_id where n.external_id in (?,?,?,?) and a.status = "
                                        "'released'", tuple(people[n].pid for n in limits))
        assert len(left_behind) >= sum(synced["released"].values()) > 0

        # Wave 2, cut by SIGTERM once a few of its answers are acknowledged
        second_wave = [arrive(f"C{k:02}", "completes across the restart") for k in range(5, 9)]
        with ThreadPoolExecutor(len(second_wave)) as pool:
            running = [pool.submit(session, p, app, first.db) for p in second_wave]
            wait_until(lambda: sum(len(p.acked) for p in second_wave) >= 4)
            os.kill(server.pid, signal.SIGTERM)
            assert server.process.wait(timeout=60) == 0, (tmp_path / "app-a.log").read_text()[-2000:]
            for job in running:
                job.result()
    finally:
        server.kill()
    committed = {row["assignment_id"] for row in db.rows(first.db, "select assignment_id from answers")}
    cut = [p for p in second_wave if not p.endings]
    assert cut, "the SIGTERM came in the middle of the wave"

    # The Space comes back on an empty disk, from its backup
    second = disk_settings(tmp_path / "disk-b", fake)
    Store(second.db)
    lab.use(second)
    server = space_app(second.workspace, hub_file, tmp_path / "app-b.log", prolific_env(fake))
    try:
        store = second.db
        restored = {row["assignment_id"] for row in db.rows(store, "select assignment_id from answers")}
        acknowledged = {token for p in people.values() for token in p.acked}
        assert acknowledged <= restored, sorted(acknowledged - restored)
        assert restored == committed, "the backup holds exactly what SQLite committed before the exit"
        app = StudyApp(server.url)
        lab("sync", "study")  # what the admin's cron line does; the returned ones' tasks stay free
        for person in second_wave:  # a fresh page for everyone cut off: each resumes at their next task
            shown = person.open(app)
            person.resumed_at.append((shown.number, stored(store, person.pid)))
            if shown.token:
                assert shown.number == stored(store, person.pid) + 1 and shown.total == quota(store, person.pid)
            else:
                assert CODE.search(shown.done)  # their session's last answer was acknowledged before the exit
        wave(store, *[(p, {}) for p in second_wave])

        # In a real browser: two who reload mid-session, one with two tabs
        for name in ("B1", "B2"):
            person = arrive(name, "reloads mid-session (browser)")
            with new_page(browser) as page:
                page.goto(f"{server.url}study?" + "&".join(f"{k}={v}" for k, v in person.params.items()))
                page.click("#study-agree")
                browser_counter(page, 1)
                total = int(page.inner_text("#annotate-counter").split("/")[1])
                for number in (1, 2):
                    browser_answer(page, store, number)
                page.reload()  # the same task, the same counter; no second intro
                browser_counter(page, 3)
                assert page.locator("#study-intro").is_hidden()
                for number in range(3, total + 1):
                    browser_answer(page, store, number)
                person.endings.append(browser_ending(page))
                screenshot(page, f"{name}-done.png")
        tabs = arrive("B3", "two tabs (browser)")
        with new_page(browser) as one:
            link = f"{server.url}study?" + "&".join(f"{k}={v}" for k, v in tabs.params.items())
            one.goto(link)
            one.click("#study-agree")
            browser_counter(one, 1)
            total = int(one.inner_text("#annotate-counter").split("/")[1])
            other = one.context.new_page()
            other.goto(link)  # the second tab resumes the session: the same task
            browser_counter(other, 1)
            browser_answer(one, store, 1)
            browser_counter(one, 2)
            browser_answer(other, store, 1)  # its task is answered already: recorded once, the next one comes
            for number in range(2, total + 1):
                browser_answer(other, store, number)
            tabs.endings.append(browser_ending(other))
            assert one.inner_text("#annotate-counter").strip() == f"2 / {total}", "the first tab did not move"

        # The rest arrive, five at a time, until the campaign is full
        fillers = [arrive(f"N{k:02}", "arrives late") for k in range(1, 14)]
        for start in range(0, len(fillers), 5):
            wave(store, *[(p, {}) for p in fillers[start:start + 5]])
        assert len(people) - len(bots) == 30
        for person in people.values():
            found = CODE.search(person.endings[-1]) if person.endings else None
            if person.submission_id and found:
                fake.set_status(person.submission_id, "AWAITING REVIEW", found[1])
            elif person.submission_id and person.name not in limits:  # told the study is full: they return
                fake.set_status(person.submission_id, "RETURNED")
        full = [p for p in people.values() if p.endings and "This study is full" in p.endings[-1]]
        assert len(full) >= 2, "some arrived after the campaign was full"
        finished_sync = lab("sync", "study")
        assert finished_sync["places_left"] == 0 and fake.studies[study_id]["status"] == "PAUSED"

        # Review, then a bonus for everyone approved, twice, and reconcile
        reviewed = lab("review", "study", "--apply", "--too-fast-s", "0.2")
        assert reviewed["applied"]
        paid = lab("bonus", "study", "--amount", "0.50", "--reason", "journey")
        again = lab("bonus", "study", "--amount", "0.50", "--reason", "journey")
        assert lab("bonus", "study", "--reconcile") == {"reconciled": {}}
        assert paid["state"] == "paid" and again["state"] is None and not paid["skipped"]
        assert sorted(again["skipped"]) == sorted(p for p, s in fake.payments.items() if s)
        _account(people, bots, hoard, fake, store, code, reviewed, left_behind, tmp_path, capsys)
    finally:
        server.stop()


def _account(people, bots, hoard, fake, store, code, reviewed, left_behind, tmp_path, capsys):
    """Every participant in exactly one place, the code shown only to those who completed, bonuses paid once."""
    submission = {s["participant"]: s for s in fake.submissions.values()}
    decisions = {d["participant_id"]: f"{d['action'].lower()} {d['category']}".strip() for d in reviewed["plan"]}
    rows, places = [], {}
    withdrawn = {pid for pid, sub in submission.items() if sub["status"] in ("RETURNED", "TIMED-OUT", "REJECTED")}
    for person in [*people.values(), *hoard[:1]]:
        answers, session_length = stored(store, person.pid, counted_only=False), quota(store, person.pid)
        counted = stored(store, person.pid)
        shown = bool(person.endings) and any(code in text for text in person.endings)
        sub = submission.get(person.pid)
        status = sub["status"] if sub else "no submission"
        if shown:
            place = "completed"
            assert answers == session_length, f"{person.name}: exactly the session's answers"
        elif sub and sub["status"] in ("RETURNED", "TIMED-OUT") and answers:
            place = "left midway"
        else:
            place = "never given a code"
        # Counted: every answer of an approved session, none of a withdrawn or rejected one; an approved
        # answer at a later step of an item a withdrawn answer had decided goes back with that item
        later = set_aside_after_withdrawals(store, person.pid, withdrawn) if status == "APPROVED" else 0
        assert counted == (answers - later if status == "APPROVED" else 0), (person.name, status, answers, counted)
        places[person.name] = place
        duplicates = db.rows(store, "select count(*) n from answers a join annotators n on n.id = a.annotator_id "
                                    "where n.external_id = ? and a.source = 'annotator' group by a.item_id, a.stage "
                                    "having n > 1", (person.pid,))
        assert not duplicates, f"{person.name} answered an item's step twice"
        rows.append({"participant": person.name, "behaviour": person.behaviour,
                     "answers stored": f"{answers} of {session_length}" if session_length else f"{answers}",
                     "counted": counted,
                     "code shown": "yes" if shown else "no", "Prolific status": status,
                     "decision": decisions.get(person.pid, "-"), "bonus paid": fake.payments.get(person.pid, 0)})
    hoard_row = rows[-1]
    hoard_row |= {"participant": "H00..H24", "behaviour": "hoarder: 25 study links from one address",
                  "answers stored": str(sum(stored(store, h.pid, counted_only=False) for h in hoard)),
                  "counted": sum(stored(store, h.pid) for h in hoard)}
    note = table(rows)
    (tmp_path / "participants.md").write_text(note + "\n")
    with capsys.disabled():
        print("\n" + note)

    real = {name: p for name, p in people.items() if p not in bots}
    assert len(real) == 30
    for name, person in real.items():
        status = submission[person.pid]["status"]
        if places[name] == "completed":
            assert status in ("APPROVED", "REJECTED")
        else:
            assert status in ("RETURNED", "TIMED-OUT") and fake.payments[person.pid] == 0
    for name in ("R1", "R2", "T2"):
        pid = real[name].pid
        assert places[name] == "left midway" and 0 < stored(store, pid, counted_only=False) < quota(store, pid)
    assert places["T1"] == "never given a code"
    assert {places[n] for n in ("C01", "C05", "C08", "B1", "B2", "B3", "F1", "F2")} == {"completed"}
    for name in ("F1", "F2"):  # flagged for speed, rejected
        row = next(r for r in report.status(store, "study")["annotators"] if r["annotator"] == real[name].pid)
        assert "speed" in row["flags"] and submission[real[name].pid]["status"] == "REJECTED"
    approved = {pid for pid, s in submission.items() if s["status"] == "APPROVED"}
    assert approved and all(fake.payments[pid] == 1 for pid in approved)
    assert set(fake.payments) == approved, "nobody else was paid"
    for bot in bots:  # refused at the study link (Prolific knows no such submission): no task, no code, no pay
        assert bot.pid not in submission and fake.payments[bot.pid] == 0
        assert places[bot.name] == "never given a code" and not stored(store, bot.pid, counted_only=False)
    assert all(places[h.name] == "never given a code" for h in hoard[:1]) and not any(
        stored(store, h.pid, counted_only=False) for h in hoard)
    # The tasks the returned and timed-out participants left were answered by others
    for task in left_behind:
        others = db.rows(store, "select count(*) n from answers a join annotators n on n.id = a.annotator_id where "
                                "a.item_id = ? and a.stage = ? and n.external_id != ?",
                         (task["item_id"], task["stage"], task["external_id"]))[0]["n"]
        item = db.rows(store, "select stage, gold from items where id = ?", (task["item_id"],))[0]
        assert others or item["stage"] == "dropped", (task, item)


# ----------------------------------------------------------------------------------------------------------------
# What the journey shows in short: a made-up PID refused at the link, a speed flag rejected for speed
# ----------------------------------------------------------------------------------------------------------------
def test_a_made_up_pid_is_refused_at_the_study_link_when_a_token_is_set(tmp_path):
    with FakeProlific() as fake:
        settings = workspace_settings(tmp_path, **prolific_env(fake))
        Store(settings.db)
        toy_campaign(settings.db, settings.data_dir, "study", 4, CampaignConfig.from_dict(
            {"overlap": 1, "gold_rate": 0, "tasks_per_session": 2}))
        study_id = prolific_study.create_study(cli_actor(), settings, "study", APP_URL, 100)["study_id"]
        prolific_study.publish(cli_actor(), settings, "study")
        with annotate_app(settings) as url:
            bot = Participant("BOT", "bot", "b0" * 12, study_id, "f" * 24)  # no such submission on Prolific
            shown = bot.open(StudyApp(url))
        assert not shown.token and not db.rows(settings.db, "select 1 from annotators"), shown


@pytest.mark.parametrize("gold_rate", [0.25, 0.0])
def test_a_participant_flagged_for_speed_is_rejected_for_speed(tmp_path, gold_rate):
    with FakeProlific() as fake:
        settings = workspace_settings(tmp_path, **prolific_env(fake))
        Store(settings.db)
        campaign_id = toy_campaign(settings.db, settings.data_dir, "study", 8, CampaignConfig.from_dict(
            {**CONFIG, "gold_rate": gold_rate}))
        study_id = prolific_study.create_study(cli_actor(), settings, "study", APP_URL, 100)["study_id"]
        annotator, submission = arrive_in(fake, settings.db, campaign_id, study_id, "P-HASTY")
        task = assign.serve(settings.db, annotator)
        for _ in range(3):  # three presses at once: refused, flagged
            assert not assign.submit(settings.db, annotator, task.assignment_id, task.options[0]).recorded
        work(settings.db, annotator)
        fake.set_status(submission, "AWAITING REVIEW", campaigns.get(settings.db, "study")["config"].completion_code)
        prolific_study.sync(cli_actor(), settings, "study")  # the submissions as Prolific has them
        plan = prolific_study.review_plan(settings.db, "study", too_fast_s=0.2)
        assert [(d["category"], "gold" in d["reason"]) for d in plan] == [("TOO_QUICKLY", False)], plan
