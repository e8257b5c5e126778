"""What the annotator's page says (`ui.tabs.annotate`): each task's question and keys, and the end of a session;
and what the page adds to Gradio's: the keyboard script and the style the theme has no setting for.

The question stays on screen for every kind of task: the instructions are folded away after the first task of a
kind, and step 4's question went with them.
"""
from __future__ import annotations

from backend.annotate import assign, prolific
from backend.core.markup import literal

WAIT_POLL_S = 5  # how often a waiting page asks the server again for a task
KEYS = {"select": "Keys: 1-4 pick an image, N none.", "ambiguity": "Keys: 1 or L left, 2 or R right, B both.",
        "i2t": "Keys: 1 first description, 2 second.", "t2i": "Keys: 1 or L left, 2 or R right.",
        "validate": "Keys: Y or 1 yes, it is false; N or 2 no, it is still true; F or 3 not fluent."}
# BiVLC's questions (appendix H.1, `annotations/instructions/`), one line each
QUESTIONS = {"select": "Which image shows this description? (None if no image does)",
             "ambiguity": "Which image best matches this description? (Both if both match it equally well)",
             "t2i": "Which image best matches this description?",
             "i2t": "Which description best represents the image?",
             "validate": "Is the second text false of the image?"}
# A validation task's buttons: (element id suffix, label, answer sent; `backend.annotate.tasks.VALIDATE_OPTIONS`)
VALIDATE_BUTTONS = [("false", "Yes, it is false", "false"), ("true", "No, it is still true", "true"),
                    ("disfluent", "It is not fluent", "disfluent")]

# Gradio has no shortcut API: this script (given to `launch(head=...)`) clicks the answer buttons by id, the
# first one on screen: only the current task's panel is.
KEYBOARD_SCRIPT = """<script>
document.addEventListener("keydown", (event) => {
  const target = event.target;
  if (event.ctrlKey || event.metaKey || event.altKey || event.repeat) return;
  if (target && (target.isContentEditable || ["INPUT", "TEXTAREA", "SELECT"].includes(target.tagName))) return;
  const ids = {"1": ["answer-1", "answer-left", "answer-text-1", "answer-false"],
               "2": ["answer-2", "answer-right", "answer-text-2", "answer-true"], "3": ["answer-3", "answer-disfluent"],
               "4": ["answer-4"], "n": ["answer-none", "answer-true"], "l": ["answer-left"], "r": ["answer-right"],
               "b": ["answer-both"], "y": ["answer-false"], "f": ["answer-disfluent"]};
  for (const id of ids[event.key.toLowerCase()] || []) {
    const button = document.getElementById(id);
    if (button && button.offsetParent !== null && !button.disabled) {
      event.preventDefault();
      button.click();
      return;
    }
  }
});
</script>"""

# Style the theme has no setting for, added to the page's head by an empty gr.HTML.
PAGE_STYLE = """<style>
/* None is another kind of answer than 1-4 (the Soft theme draws every button alike): set apart, dashed. */
#answer-none { background: #f3f4f6; border: 2px dashed #9ca3af; margin-left: 1.5rem; }
/* The images have no toolbar buttons; the toolbar's empty box in their corner goes too. */
#annotate-task .icon-button-wrapper { display: none; }
</style>"""


def caption(task: assign.Task) -> str:
    """The task's question, and the description it is about (an I2T task's two are on its buttons)."""
    if task.task == "i2t":
        return f"**{QUESTIONS['i2t']}**"
    if task.task == "validate":  # the caption, then the text to judge
        return (f"**{QUESTIONS['validate']}**\n\nCaption: {literal(task.texts[0])}\n\n"
                f"### Second text: {literal(task.text)}")
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
