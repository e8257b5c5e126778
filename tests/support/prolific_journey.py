"""What the scripted Prolific study (`tests/test_prolific_journey.py`) shares: the app as a Space runs it (its own
process, its backup on the fake Hub kept in a file), a participant's whole session, a participant in a real
browser, and the table of what each participant did and got."""
from __future__ import annotations

import os
import sys
import textwrap
import time
from pathlib import Path

from backend.annotate import db
from backend.annotate.exclusion import STEPS
from tests.support.appprocess import CLEARED
from tests.support.appserver import free_port
from tests.support.crowd_server import ServerProcess
from tests.support.fake_hub import CHILD, TOKEN
from tests.support.study_visitor import Participant, StudyApp, right_answer

# The campaign's minimum time per task, and an attentive participant's think time. A hasty press comes right after
# the page showed its task; 0.4 s leaves room for that round trip on a busy 2-core machine.
MIN_S, THINK_S = 0.4, 0.45
UNSTARTED_RECLAIM_S = 3.0  # the clock hook: holds of annotators who never answered come back after this (not 120 s)
# The real entry point (`app.main`, annotation mode) with its backup on the fake Hub, saved to a file at each commit
# (`tests.support.fake_hub.CHILD`), and the hoarder's holds reclaimed after seconds instead of minutes.
SPACE_CHILD = (f"from backend.annotate import quality\nquality.UNSTARTED_RECLAIM_S = {UNSTARTED_RECLAIM_S}\n"
               + textwrap.dedent(CHILD))
KEYS = {"none": "n", "left": "l", "right": "r", "both": "b"}
WAIT_MS = 30_000


def space_app(disk: Path, hub_file: Path, log: Path, extra_env: dict[str, str]) -> ServerProcess:
    """`app.py --mode annotate` as a Space runs it over `disk` (behind its proxy: X-Forwarded-For names the
    client), its campaigns backed up to the fake Hub in `hub_file` (restored from it on an empty disk)."""
    env = {**{k: v for k, v in os.environ.items() if k not in CLEARED}, "COMPLAB_WORKSPACE": str(disk),
           "COMPLAB_BACKUP_REPO": "lab/backup", "HF_TOKEN": TOKEN, "SPACE_ID": "lab/study",
           "GRADIO_SERVER_NAME": "127.0.0.1", "GRADIO_SERVER_PORT": str(free_port()), "HF_HUB_OFFLINE": "1",
           "GRADIO_ANALYTICS_ENABLED": "False", "PYTHONUNBUFFERED": "1",
           "PYTHONPATH": str(Path(__file__).resolve().parents[2]), "TEST_HUB_FILE": str(hub_file), **extra_env}
    server = ServerProcess([sys.executable, "-c", SPACE_CHILD], int(env["GRADIO_SERVER_PORT"]), env, log)
    server.start(240)
    return server


def session(person: Participant, app: StudyApp, store: Path, limit: int | None = None, hasty: int = 0) -> Participant:
    """`person` opens the link (unless a page is open) and answers rightly, `THINK_S` after each task appears, up to
    `limit` answers; with `hasty`, presses come at once until `hasty` of them were refused as too fast (one that
    the server measured slower, on a busy machine, is recorded like any other). A page that says "wait" waits for
    its timer. Stops at the session's end or when the server stops answering."""
    try:
        if person.visitor is None:
            person.open(app)
        given = 0
        while limit is None or given < limit:
            if person.shown.waiting:
                person.wait(app)
            if not person.shown.token:
                break
            before = len(person.acked)
            think = 0.0 if sum("You answered in" in line for line in person.refused) < hasty else THINK_S
            person.answer(app, right_answer(store, person.shown.token), think)
            given += len(person.acked) - before
    except Exception as error:  # the server went away mid-session (SIGTERM): the ledger stands
        person.refused.append(f"connection lost: {type(error).__name__}")
    return person


def set_aside_after_withdrawals(store: Path, pid: str, withdrawn: set[str]) -> int:
    """The participant's answers set aside because a withdrawn participant's answer at an earlier step of the
    same item was (the item went back to that step: `exclusion._reopen`, its later steps' answers with it)."""
    rows = db.rows(store, "select a.item_id, a.stage, n.external_id from answers a join annotators n on "
                          "n.id = a.annotator_id where a.source = 'excluded'")
    earlier = {(row["item_id"], row["stage"]) for row in rows if row["external_id"] in withdrawn}
    return sum(1 for row in rows if row["external_id"] == pid and any(
        (row["item_id"], step) in earlier for step in STEPS[:STEPS.index(row["stage"])]))


def stored(store: Path, pid: str, counted_only: bool = True) -> int:
    """The participant's stored answers: those counted (not set aside), or all of them."""
    counted = " and a.source = 'annotator'" if counted_only else ""
    return db.rows(store, "select count(*) n from answers a join annotators n on n.id = a.annotator_id where "
                          f"n.external_id = ?{counted}", (pid,))[0]["n"]


def quota(store: Path, pid: str) -> int | None:
    found = db.rows(store, "select quota from annotators where external_id = ?", (pid,))
    return found[0]["quota"] if found else None


def browser_counter(page, number: int) -> None:
    """Wait until the page shows task `number` (of any total); else fail with what the page shows."""
    try:
        page.wait_for_function("(n) => { const c = document.querySelector('#annotate-counter'); return c && "
                               "c.offsetParent !== null && c.innerText.trim().startsWith(n + ' / '); }",
                               arg=number, timeout=WAIT_MS)
    except Exception as error:  # playwright's TimeoutError: say what the person saw instead
        raise AssertionError(f"task {number} never came; the page says: {page.inner_text('body')[:600]!r}") from error


def browser_answer(page, store: Path, number: int) -> None:
    """Answer task `number` on screen rightly with the keyboard, after the think time."""
    browser_counter(page, number)
    page.bring_to_front()  # the keys go to the tab the person looks at
    token = page.locator("#annotate-token textarea, #annotate-token input").first.input_value()
    page.wait_for_timeout(int(THINK_S * 1000) + 50)
    page.keyboard.press(KEYS.get(right_answer(store, token), right_answer(store, token)))


def browser_ending(page) -> str:
    page.wait_for_function("() => { const d = document.querySelector('#annotate-done'); return d && "
                           "d.offsetParent !== null && d.innerText.trim().length > 0; }", timeout=WAIT_MS)
    return page.inner_text("#annotate-done")


def table(rows: list[dict]) -> str:
    """The closing note's table: what each participant did and got."""
    columns = ("participant", "behaviour", "answers stored", "counted", "code shown", "Prolific status", "decision",
               "bonus paid")
    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    lines += ["| " + " | ".join(str(row[c]) for c in columns) + " |" for row in rows]
    return "\n".join(lines)


def wait_until(predicate, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)
