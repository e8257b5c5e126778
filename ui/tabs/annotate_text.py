"""What the annotator's page says (`ui.tabs.annotate`): each task's question and keys, and the end of a session.

The question stays on screen for every kind of task: the instructions are folded away after the first task of a
kind, and step 4's question went with them.
"""
from __future__ import annotations

from backend.annotate import assign, prolific
from backend.core.markup import literal

WAIT_POLL_S = 5  # how often a waiting page asks the server again for a task
KEYS = {"select": "Keys: 1-4 pick an image, N none.", "ambiguity": "Keys: 1 or L left, 2 or R right, B both.",
        "i2t": "Keys: 1 first description, 2 second.", "t2i": "Keys: 1 or L left, 2 or R right."}
# BiVLC's questions (appendix H.1, `annotations/instructions/`), one line each
QUESTIONS = {"select": "Which image shows this description? (None if no image does)",
             "ambiguity": "Which image best matches this description? (Both if both match it equally well)",
             "t2i": "Which image best matches this description?",
             "i2t": "Which description best represents the image?"}


def caption(task: assign.Task) -> str:
    """The task's question, and the description it is about (an I2T task's two are on its buttons)."""
    if task.task == "i2t":
        return f"**{QUESTIONS['i2t']}**"
    return f"**{QUESTIONS[task.task]}**\n\n### {literal(task.text)}"


def ending(source: str, completion_code: str, ended: assign.Ended) -> str:
    """What the page says when there is no task to show. The completion code only when the session's
    last answer is stored; a wait says it goes on by itself; a full study asks a participant to return."""
    prolific_link = source == "prolific"
    if ended.state == "done":
        return farewell(source, completion_code)
    if ended.state == "wait":
        where = f"You answered {ended.answered} of {ended.quota}. " if ended.quota else ""
        return (f"## Please wait a moment\n{where}Every open task is being answered by someone else right now. "
                f"Keep this page open: it checks every {WAIT_POLL_S} seconds and shows your next task by "
                "itself as soon as one is free.")
    if ended.state == "limit":
        return ("## Too many sessions from your connection\nYour connection already holds as many tasks as one "
                "participant may. Finish or close your other sessions of this study; tasks left unanswered come "
                "back after a few minutes.")
    if ended.answered:
        return (f"## No task is left for you\nThe tasks kept for you went to others while you were away, and "
                f"none is left. Your {ended.answered} answers are stored."
                + (" Please return your submission on Prolific and message the researcher." if prolific_link
                   else ""))
    if prolific_link:
        return ("## This study is full: please return your submission\nEvery task already has its answers or "
                "is taken. Please return your submission on Prolific; there is no completion code to enter.")
    return "## No task for you\nThis campaign has no open task for you right now."


def farewell(source: str, completion_code: str) -> str:
    """Shown only once every answer is stored (the submit that ended the session has committed)."""
    if source != "prolific":
        return "## Thank you!\nAll your answers are stored. You can close this page."
    url = prolific.completion_url(completion_code)
    return (f"## Thank you!\nAll your answers are stored. Your completion code is **{completion_code}**."
            f"\n\n[Return to Prolific to complete your submission]({url})")


def too_many(what: str, wait_s: float) -> str:
    """A client over its rate of `what` (session starts, answers): the sentence the page shows."""
    return (f"Too many {what} from your connection: wait {max(1, round(wait_s))} s. Nothing was recorded "
            "(a person takes a few seconds per task).")
