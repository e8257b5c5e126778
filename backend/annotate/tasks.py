"""What one task shows and what an answer to it means: the layout on screen, the images and texts of each kind of
task (BiVLC's steps 3 and 4 and the human baseline; a validation campaign's question), an answer read as the side
or slot it meant, and whether it matches a known truth. `backend.annotate.assign` decides who gets which task;
this module, what the task is.
"""
from __future__ import annotations

import json
import random
import sqlite3
from dataclasses import dataclass

from backend.annotate import db, images, quality

SIDE_OPTIONS = {"ambiguity": ("left", "right", "both"), "t2i": ("left", "right"), "i2t": ("1", "2")}
KEY_ALIASES = {"l": "left", "r": "right", "b": "both", "n": "none"}  # keys the annotation page sends besides the words
# A validation task's answers ("is the second text false of the image?"), and the keys and words that mean them.
VALIDATE_OPTIONS = ("false", "true", "disfluent")
VALIDATE_ALIASES = {"y": "false", "yes": "false", "1": "false", "n": "true", "no": "true", "2": "true",
                    "f": "disfluent", "3": "disfluent"}


class TaskError(ValueError):
    """An answer that cannot be taken (not this annotator's task, not a valid choice); the message says why."""


@dataclass(frozen=True)
class Task:
    """What one annotator sees for one question. Image paths are relative to the campaign folder."""

    assignment_id: int
    item_id: int
    task: str
    text: str
    texts: tuple[str, ...]  # the two captions of an i2t question; a validation task's caption (`text`: its negative)
    images: tuple[str, ...]
    options: tuple[str, ...]
    instructions: str
    number: int  # 1-based position in the session
    total: int
    names: tuple[str | None, ...] = ()  # what each image is served as (`backend.annotate.images`): nothing public


def layout_of(task: str, rng: random.Random) -> dict:
    """What goes where on screen: BiVLC randomises left/right so position gives nothing away."""
    pair = ["original", "negative"]
    rng.shuffle(pair)
    if task == "i2t":
        return {"image": rng.choice(["original", "negative"]), "texts": pair}
    if task == "t2i":
        return {"text": rng.choice(["original", "negative"]), "images": pair}
    return {"images": pair} if task == "ambiguity" else {}


def choice_of(task: str, layout: dict, answer: str, n_images: int) -> str:
    """The answer as stored: a slot ("1".."4") or "none" for select; for the others, which side was meant:
    "original", "negative" (or "both"); for a validation task, "false" (a valid negative), "true" (still true of
    the image) or "disfluent"."""
    answer = str(answer).strip().lower()
    if task == "validate":
        answer = VALIDATE_ALIASES.get(answer, answer)
        if answer in VALIDATE_OPTIONS:
            return answer
    elif task == "select":
        answer = KEY_ALIASES.get(answer, answer)
        if answer == "none" or (answer.isdigit() and 1 <= int(answer) <= n_images):
            return answer
    else:
        answer = KEY_ALIASES.get(answer, answer)
        if task != "i2t":
            answer = {"1": "left", "2": "right"}.get(answer, answer)
        if answer in SIDE_OPTIONS[task]:
            if answer == "both":
                return "both"
            return (layout["texts"] if task == "i2t" else layout["images"])[{"left": 0, "1": 0}.get(answer, 1)]
    shown = f"{answer[:40]!r}" + ("…" if len(answer) > 40 else "")  # the page shows it: never echo a huge value
    raise TaskError(f"{shown} is not an answer to this {task} task")


def correct(item: sqlite3.Row, task: str, layout: dict, choice: str) -> int | None:
    """Whether an answer matches the known truth (gold and toy items, and always the baseline questions)."""
    if task == "i2t":
        return int(choice == layout["image"])
    if task == "t2i":
        return int(choice == layout["text"])
    truth = db.loads(item["truth"], {})
    if task not in truth:
        return None
    return int(choice in truth[task]) if task == "select" else int(choice == truth[task])


def view(conn: sqlite3.Connection, row: sqlite3.Row, config: dict, number: int, quota: int) -> Task:
    """Task `number` of `quota` in its session: the assignment `row` as its annotator sees it."""
    item = conn.execute("select * from items where id = ?", (row["item_id"],)).fetchone()
    layout = json.loads(row["layout"])
    sides = {"original": item["image"], "negative": chosen_image(conn, item)}
    texts = {"original": item["caption"], "negative": item["negative_caption"]}
    task = row["stage"]
    pair: tuple[str, ...]  # the texts shown besides `text`: an i2t task's two, a validation task's caption
    if task == "select":
        shown = [c["display_path"] or c["path"] for c in
                 conn.execute("select display_path, path from candidates where item_id = ? order by slot",
                              (item["id"],))]
        text, pair, options = item["negative_caption"], (), (*(str(k + 1) for k in range(len(shown))), "none")
    elif task == "i2t":
        shown, text, pair, options = [sides[layout["image"]]], "", tuple(texts[t] for t in layout["texts"]), ("1", "2")
    elif task == "validate":  # the image, its caption and the negative to judge
        shown, text, pair, options = [item["image"]], item["negative_caption"], (item["caption"],), VALIDATE_OPTIONS
    else:
        shown = [sides[side] for side in layout["images"]]
        text = item["caption"] if task == "ambiguity" else texts[layout["text"]]
        pair, options = (), SIDE_OPTIONS[task]
    secret = quality.campaign_secret(conn, row["campaign_id"])
    names = tuple(images.image_name(secret, row["id"], slot) if path else None for slot, path in enumerate(shown))
    return Task(row["id"], item["id"], task, text, pair, tuple(shown), tuple(options), config["instructions"][task],
                number, quota, names)


def chosen_image(conn: sqlite3.Connection, item: sqlite3.Row) -> str | None:
    """The negative image of an item: the one step 3 chose (a gold item's: its known right one)."""
    outcome, truth = db.loads(item["outcome"], {}), db.loads(item["truth"], {})
    slot = outcome.get("select", {}).get("decision")
    if slot in (None, "none"):
        slot = next((s for s in truth.get("select", []) if s != "none"), None)
    if slot is None:
        return None
    row = conn.execute("select display_path, path from candidates where item_id = ? and slot = ?",
                       (item["id"], int(slot) - 1)).fetchone()
    return (row["display_path"] or row["path"]) if row else None
