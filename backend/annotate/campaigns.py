"""Campaigns: their settings, their items, and the candidate images generation adds to them.

Two kinds (``CampaignConfig.kind``). ``bivlc``: an item is one BiVLC instance: an original caption (and image,
when there is one), a negative caption, and the candidate images generated for the negative.
Its ``stage`` says how far it got, in the issue's words: ``pending`` (images
missing) -> ``generated`` (awaiting step 3, "select") -> ``selected``
(awaiting step 4, "ambiguity") -> ``unambiguous`` (awaiting the optional
human baseline) -> ``done``; or ``dropped`` with the reason in ``outcome``.

``validate`` (SugarCrepe's last step, `backend.annotate.validation`): an item is an image, its caption and one
generated negative; it needs no generated image, so it is ``ready`` at once, and one question ("is the second text
false of the image?") takes it to ``done`` (a valid negative) or ``dropped``.

Gold items have known answers (they come from the built-in world, where the
oracle decides what each image shows); they check annotators and are never
exported or counted in agreement.
"""
from __future__ import annotations

import json
import math
import secrets
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from backend.annotate import db, quality
from backend.core import text
from backend.core.paths import check_slug
from backend.jobs.kinds import check_known_keys

ROOT = Path(__file__).resolve().parents[2]
INSTRUCTIONS_DIR = ROOT / "annotations" / "instructions"
INTRO_FILE = ROOT / "annotations" / "intro.md"
TASKS = ("select", "ambiguity", "i2t", "t2i")  # a BiVLC campaign's tasks
VALIDATE = "validate"  # the one task of a validation campaign
ALL_TASKS = (*TASKS, VALIDATE)  # every task with instructions
KINDS = ("bivlc", "validate")
RESOLUTION_RULES = ("majority", "third")
STAGES = ("pending", "generated", "selected", "unambiguous", "ready", "done", "dropped")
INSERT_BATCH = 500  # items per write transaction when a campaign is created (~10 ms of the write lock each)
RECOMMENDED_MIN_SECONDS = 1.0  # what the Campaigns tab's form offers: nobody compares four images faster
IMPORTING = "importing"  # a new campaign's source until its last item is stored


def default_instructions() -> dict[str, str]:
    """Every task's wording from `annotations/instructions/`: the BiVLC paper's (appendix H.1) for its tasks,
    `annotations/protocol-validate.md`'s for the validation question."""
    return {task: (INSTRUCTIONS_DIR / f"{task}.md").read_text() for task in ALL_TASKS}


def default_intro() -> str:
    """What a study link shows before the first task (the study, its length, the data kept, consent)."""
    return INTRO_FILE.read_text()


@dataclass
class CampaignConfig:
    """How a campaign collects answers. Stored with the campaign as JSON; every field is validated."""

    kind: str = "bivlc"  # "bivlc" (generated images, steps 3 and 4) or "validate" (is a generated negative false?)
    overlap: int = 2  # answers per item and task, from different annotators
    resolution: str = "third"  # "majority" or "third": a tie calls one more annotator
    tasks_per_session: int = 50
    gold_rate: float = 0.1  # share of each annotator's tasks that are gold items
    gold_items: int = 10
    gold_threshold: float = 0.7  # gold accuracy below this flags an annotator...
    min_gold: int = 3  # ...once they answered at least this many gold items
    gold_from: str = ""  # an earlier campaign whose admin-decided items are the gold items (annotate.gold_reviewed)
    competence_threshold: float = 0.6  # Dawid-Skene competence below this flags an annotator (annotate.competence)
    reclaim_after_s: float = 600.0  # a task held this long without an answer goes to someone else
    min_seconds_per_task: float = 0.0  # an answer given sooner after its task was shown is refused (0: no minimum)
    human_baseline: bool = False  # also ask BiVLC's separate I2T and T2I questions
    images_per_item: int = 4
    generator: str = "bivlc"  # a backend.generate preset (a plug-in's source sets its own generator's)
    completion_code: str = ""  # Prolific completion code; made up when blank
    instructions: dict = field(default_factory=default_instructions)
    intro: str = field(default_factory=default_intro)  # Markdown: the study link's first page, with consent

    @classmethod
    def from_dict(cls, values: dict) -> CampaignConfig:
        check_known_keys(cls, values, "campaign settings")
        missing = set(ALL_TASKS) - set(values.get("instructions", ALL_TASKS))
        if missing:  # a campaign stored before a task existed gets that task's default wording
            values = {**values, "instructions": {**default_instructions(), **values["instructions"]}}
        config = cls(**values)
        config.validate()
        return config

    def validate(self) -> None:
        problems = []
        if self.kind not in KINDS:
            problems.append(f"kind must be one of {KINDS}, not {self.kind!r}")
        if self.kind == VALIDATE and self.human_baseline:
            problems.append("the human baseline (BiVLC's I2T and T2I questions) needs generated images: a validation "
                            "campaign has none")
        if not 1 <= self.overlap <= 10:
            problems.append(f"overlap must be 1..10, not {self.overlap}")
        if self.resolution not in RESOLUTION_RULES:
            problems.append(f"resolution must be one of {RESOLUTION_RULES}, not {self.resolution!r}")
        if not 0 <= self.gold_rate < 1:
            problems.append(f"gold_rate must be in [0, 1), not {self.gold_rate}")
        if not 0 <= self.gold_threshold <= 1:
            problems.append(f"gold_threshold must be in [0, 1], not {self.gold_threshold}")
        if not 0 <= self.competence_threshold <= 1:
            problems.append(f"competence_threshold must be in [0, 1], not {self.competence_threshold}")
        if self.tasks_per_session < 1 or self.images_per_item < 2 or self.reclaim_after_s <= 0:
            problems.append("tasks_per_session >= 1, images_per_item >= 2 and reclaim_after_s > 0 are required")
        if not 0 <= self.min_seconds_per_task <= 600:
            problems.append(f"min_seconds_per_task must be in [0, 600], not {self.min_seconds_per_task}")
        if self.gold_items < 0 or self.min_gold < 1:
            problems.append("gold_items >= 0 and min_gold >= 1 are required")
        if self.gold_from:
            check_slug(self.gold_from, "gold_from (an earlier campaign's name)")
        if not str(self.intro or "").strip():
            problems.append("the intro (the study link's first page) is empty")
        missing = set(ALL_TASKS) - set(self.instructions)
        if missing:
            problems.append(f"instructions missing for {sorted(missing)}")
        if problems:
            raise ValueError("; ".join(problems))
        if not self.completion_code:
            self.completion_code = secrets.token_hex(4).upper()

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class ItemSpec:
    """One instance before it is stored: what a source file, the built-in world or a probe gives."""

    caption: str
    negative_caption: str
    type: str = ""
    subtype: str = ""
    image: str | None = None  # the original image: a path relative to the campaign folder, or absolute
    truth: dict | None = None  # known answers: {"select": ["2"] or ["none"], "ambiguity": "original"}
    gold: bool = False


@dataclass(frozen=True)
class ImageRequest:
    """An item that still lacks candidate images (what the `generate` job asks for)."""

    item_id: int
    caption: str
    negative_caption: str
    missing_slots: list[int]
    gold: bool


def normalise_caption(caption: str) -> str:
    """The lab's text rules (`backend.core.text`: NFKC, no control or invisible characters, not empty), then
    BiVLC's normalisation: collapsed spaces, a capital first letter, a final period."""
    caption = " ".join(text.clean(caption, "the caption").split())
    caption = caption[0].upper() + caption[1:]
    return caption if caption[-1] in ".!?" else caption + "."


def campaign_dir(data_dir: Path, campaign: str) -> Path:
    """Where a campaign's images live: ``<data_dir>/campaigns/<name>``."""
    return Path(data_dir) / "campaigns" / check_slug(campaign, "campaign name")


def create(store_path: Path | str, name: str, items: list[ItemSpec], config: CampaignConfig, source: str,
           actor: str = "", secret: bytes | None = None) -> int:
    """Store a new campaign and its items (gold items included) with its `secret` (a new one when None: the one
    its gold items were drawn from, `backend.annotate.service`); returns its id.

    Items go in `INSERT_BATCH` at a time, each batch a transaction of its own, so that a large file never holds
    the store's write lock for long: the crowd's answers are written between batches (a 1,000,000-row file held
    it 6 s in one). Until the last batch the campaign's source reads ``importing`` (no item is assigned before
    the campaign is whole: a BiVLC item waits for its images, a validation item is ``ready`` only once the last
    batch is in); a failure removes what was written."""
    check_slug(name, "campaign name")
    if not items:
        raise ValueError(f"campaign {name!r} has no items")
    now = time.time()
    rows = [(position, normalise_caption(item.caption), normalise_caption(item.negative_caption), item.type,
             item.subtype, item.image, int(item.gold), json.dumps(item.truth) if item.truth else None, now)
            for position, item in enumerate(items)]
    with db.write(store_path) as conn:
        if conn.execute("select 1 from campaigns where name = ?", (name,)).fetchone():
            raise ValueError(f"a campaign named {name!r} exists already; choose another name")
        campaign_id = db.insert(
            conn, "insert into campaigns (name, source, config, created_by, created_at, updated_at, secret) "
            "values (?,?,?,?,?,?,?)", (name, IMPORTING, json.dumps(config.to_dict()), actor, now, now,
                                       (secret or quality.new_secret()).hex()))
    try:
        for start in range(0, len(rows), INSERT_BATCH):
            with db.write(store_path) as conn:
                conn.executemany(
                    "insert into items (campaign_id, position, caption, negative_caption, type, subtype, image, "
                    "gold, truth, stage, updated_at) values (?,?,?,?,?,?,?,?,?,'pending',?)",
                    [(campaign_id, *row) for row in rows[start:start + INSERT_BATCH]])
                for (item_id,) in conn.execute("select id from items where campaign_id = ? and position >= ? "
                                               "order by id", (campaign_id, start)):
                    db.changed(conn, "items", item_id)
                if start + INSERT_BATCH >= len(rows):
                    if config.kind == VALIDATE:  # nothing to generate: every item is ready once all are in
                        conn.execute("update items set stage = 'ready' where campaign_id = ?", (campaign_id,))
                        for (item_id,) in conn.execute("select id from items where campaign_id = ?", (campaign_id,)):
                            db.changed(conn, "items", item_id)
                    conn.execute("update campaigns set source = ? where id = ?", (source, campaign_id))
                    db.changed(conn, "campaigns", campaign_id)
    except BaseException:
        with db.write(store_path) as conn:
            conn.execute("delete from items where campaign_id = ?", (campaign_id,))
            conn.execute("delete from campaigns where id = ?", (campaign_id,))
        raise
    return campaign_id


def get(store_path: Path | str, name: str) -> dict[str, Any]:
    """A campaign row with its config decoded; a clear error names the campaigns that exist."""
    found = db.rows(store_path, "select * from campaigns where name = ?", (name,))
    if not found:
        names = [row["name"] for row in db.rows(store_path, "select name from campaigns order by id")]
        raise ValueError(f"no campaign named {name!r}; campaigns: {', '.join(names) or 'none yet'}")
    row = found[0]
    row["config"] = CampaignConfig.from_dict(json.loads(row["config"]))
    return row


def list_campaigns(store_path: Path | str) -> list[dict[str, Any]]:
    return db.rows(store_path, "select id, name, source, created_by, created_at from campaigns order by id desc")


def update_config(store_path: Path | str, name: str, **changes: Any) -> CampaignConfig:
    """Change a campaign's settings (e.g. its instructions); the whole config is re-validated first."""
    config = CampaignConfig.from_dict({**get(store_path, name)["config"].to_dict(), **changes})
    with db.write(store_path) as conn:
        conn.execute("update campaigns set config = ?, updated_at = ? where name = ?",
                     (json.dumps(config.to_dict()), time.time(), name))
        db.changed(conn, "campaigns", conn.execute("select id from campaigns where name = ?", (name,)).fetchone()[0])
    return config


def image_requests(store_path: Path | str, campaign: str, images_per_item: int) -> list[ImageRequest]:
    """Items (gold included) lacking some of their candidate slots, in item order: what generation still owes."""
    campaign_id = get(store_path, campaign)["id"]
    have: dict[int, set[int]] = {}
    for row in db.rows(store_path, "select c.item_id, c.slot from candidates c join items i on i.id = c.item_id "
                                   "where i.campaign_id = ?", (campaign_id,)):
        have.setdefault(row["item_id"], set()).add(row["slot"])
    requests = []
    for item in db.rows(store_path, "select id, caption, negative_caption, gold from items where campaign_id = ? "
                                    "order by gold desc, id", (campaign_id,)):
        missing = [slot for slot in range(images_per_item) if slot not in have.get(item["id"], set())]
        if missing:
            requests.append(ImageRequest(item["id"], item["caption"], item["negative_caption"], missing,
                                         bool(item["gold"])))
    return requests


CANDIDATE_FIELDS = ("sha256", "path", "display_path", "generator", "model", "unet", "revision", "prompt",
                    "negative_prompt", "seed", "steps", "guidance", "dtype", "width", "height", "defect",
                    "shows_caption", "batch")


def add_candidate(store_path: Path | str, item_id: int, slot: int, record: dict) -> None:
    """Record one stored candidate image (idempotent on item and slot); an item whose slots are all there
    moves from ``pending`` to ``generated``, ready for step 3. A plug-in generator's candidates know what they
    show (``shows_caption``), so such an item's right answer is derived here."""
    values = {name: record.get(name) for name in CANDIDATE_FIELDS}
    if isinstance(values["batch"], dict):  # the batch it was drawn in (backend.generate.diffusion), as JSON text
        values["batch"] = json.dumps(values["batch"])
    if values["shows_caption"] is not None:
        values["shows_caption"] = int(bool(values["shows_caption"]))
    with db.write(store_path) as conn:
        conn.execute(f"insert or ignore into candidates (item_id, slot, {', '.join(values)}, created_at) "
                     f"values (?, ?, {', '.join('?' * len(values))}, ?)",
                     (item_id, slot, *values.values(), time.time()))
        db.changed(conn, "candidates", conn.execute("select id from candidates where item_id = ? and slot = ?",
                                                    (item_id, slot)).fetchone()[0])
        item = conn.execute("select i.stage, i.truth, c.config from items i join campaigns c on c.id = i.campaign_id "
                            "where i.id = ?", (item_id,)).fetchone()
        wanted = json.loads(item["config"])["images_per_item"]
        slots = conn.execute("select slot, shows_caption from candidates where item_id = ? order by slot",
                             (item_id,)).fetchall()
        if item["stage"] != "pending" or len(slots) < wanted:
            return
        truth = db.loads(item["truth"], {})
        if all(row["shows_caption"] is not None for row in slots) and "select" not in truth:
            truth["select"] = [str(row["slot"] + 1) for row in slots if row["shows_caption"]] or ["none"]
            truth.setdefault("ambiguity", "original")
        conn.execute("update items set stage = 'generated', truth = ?, updated_at = ? where id = ?",
                     (json.dumps(truth) if truth else None, time.time(), item_id))
        db.changed(conn, "items", item_id)


def candidates(store_path: Path | str, item_id: int) -> list[dict[str, Any]]:
    return db.rows(store_path, "select * from candidates where item_id = ? order by slot", (item_id,))


def gold_count(config: CampaignConfig) -> int:
    """Gold items to add to a campaign: the configured number, at least enough for one
    session's gold tasks so that no annotator sees a gold item twice."""
    per_session = math.ceil(config.tasks_per_session * config.gold_rate)
    return max(config.gold_items, per_session) if config.gold_rate > 0 else 0
