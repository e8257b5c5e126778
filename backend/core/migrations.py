"""Numbered schema migrations, applied when the store opens; the version lives in ``PRAGMA user_version``.

Migration N brings a database from version N-1 to N. Never edit a released
migration: add the next one. Version 1 is the schema of the releases before
migrations existed (they left ``user_version`` at 0), written with
``IF NOT EXISTS`` so that such a database passes through it unchanged.

Several processes open the store at once (the app, each job), so migrations run
inside ``BEGIN IMMEDIATE``: the first process takes the write lock and migrates,
the others wait, re-read the version and find nothing left to do.
"""
from __future__ import annotations

import sqlite3

MIGRATIONS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("jobs and their metrics (the schema before migrations)", (
        """CREATE TABLE IF NOT EXISTS jobs (
            id INTEGER PRIMARY KEY, kind TEXT, name TEXT, args TEXT, target TEXT, status TEXT,
            pid INTEGER, progress REAL, log_path TEXT, run_dir TEXT, result TEXT, error TEXT,
            created_at REAL, started_at REAL, ended_at REAL)""",
        """CREATE TABLE IF NOT EXISTS metrics (
            job_id INTEGER REFERENCES jobs(id), step INTEGER, split TEXT, name TEXT, value REAL, time REAL)""",
        "CREATE INDEX IF NOT EXISTS idx_metrics_job_id_split_step ON metrics (job_id, split, step)",
    )),
    ("who launched a job, its target's options apart from its name, its latest progress line, its last change", (
        "ALTER TABLE jobs ADD COLUMN actor TEXT",
        "ALTER TABLE jobs ADD COLUMN target_options TEXT",
        """UPDATE jobs SET target_options = json_object('nproc', CAST(substr(target, 10) AS INTEGER)),
            target = 'torchrun' WHERE target LIKE 'torchrun:%'""",
        "UPDATE jobs SET target_options = json_object('flavor', substr(target, 4)), target = 'hf' "
        "WHERE target LIKE 'hf:%'",
        "UPDATE jobs SET target_options = '{}' WHERE target_options IS NULL",
        "ALTER TABLE jobs ADD COLUMN message TEXT",
        "ALTER TABLE jobs ADD COLUMN updated_at REAL",
        "UPDATE jobs SET actor = 'unknown (before accounts)', updated_at = COALESCE(ended_at, started_at, created_at)",
        "CREATE INDEX IF NOT EXISTS idx_jobs_kind_id ON jobs (kind, id)",
    )),
    ("annotation campaigns: items, candidate images with their seeds, annotators, assignments, answers", (
        """CREATE TABLE campaigns (
            id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, source TEXT, config TEXT,
            created_by TEXT, created_at REAL, updated_at REAL)""",
        """CREATE TABLE items (
            id INTEGER PRIMARY KEY, campaign_id INTEGER NOT NULL REFERENCES campaigns(id), position INTEGER,
            caption TEXT, negative_caption TEXT, type TEXT, subtype TEXT, image TEXT,
            gold INTEGER NOT NULL DEFAULT 0, truth TEXT, stage TEXT NOT NULL, extra_answers INTEGER NOT NULL DEFAULT 0,
            outcome TEXT, updated_at REAL)""",
        "CREATE INDEX idx_items_campaign_stage ON items (campaign_id, stage, gold)",
        """CREATE TABLE candidates (
            id INTEGER PRIMARY KEY, item_id INTEGER NOT NULL REFERENCES items(id), slot INTEGER NOT NULL,
            sha256 TEXT, path TEXT, display_path TEXT, generator TEXT, model TEXT, unet TEXT, revision TEXT,
            prompt TEXT, negative_prompt TEXT, seed INTEGER, steps INTEGER, guidance REAL, dtype TEXT,
            width INTEGER, height INTEGER, defect TEXT, shows_caption INTEGER, clip_negative REAL,
            clip_original REAL, clip_model TEXT, created_at REAL, UNIQUE (item_id, slot))""",
        """CREATE TABLE annotators (
            id INTEGER PRIMARY KEY, campaign_id INTEGER NOT NULL REFERENCES campaigns(id), external_id TEXT NOT NULL,
            source TEXT, study_id TEXT, session_id TEXT, started_at REAL, finished_at REAL,
            UNIQUE (campaign_id, external_id))""",
        """CREATE TABLE assignments (
            id INTEGER PRIMARY KEY, campaign_id INTEGER NOT NULL, item_id INTEGER NOT NULL REFERENCES items(id),
            stage TEXT NOT NULL, annotator_id INTEGER NOT NULL REFERENCES annotators(id), status TEXT NOT NULL,
            layout TEXT, assigned_at REAL, answered_at REAL, UNIQUE (item_id, stage, annotator_id))""",
        "CREATE INDEX idx_assignments_open ON assignments (campaign_id, stage, item_id, status)",
        "CREATE INDEX idx_assignments_annotator ON assignments (annotator_id, status)",
        """CREATE TABLE answers (
            id INTEGER PRIMARY KEY, assignment_id INTEGER UNIQUE REFERENCES assignments(id),
            campaign_id INTEGER NOT NULL, item_id INTEGER NOT NULL, stage TEXT NOT NULL, annotator_id INTEGER,
            choice TEXT NOT NULL, correct INTEGER, time_ms INTEGER, source TEXT NOT NULL, actor TEXT,
            created_at REAL)""",
        "CREATE INDEX idx_answers_item_stage ON answers (item_id, stage)",
    )),
    ("benchmark results with the model identity and data version, and every item's scores for the failure browser", (
        """CREATE TABLE eval_results (
            id INTEGER PRIMARY KEY, job_id INTEGER, model TEXT NOT NULL, activation TEXT, precision TEXT,
            architecture TEXT, device TEXT, benchmark TEXT NOT NULL, version TEXT, item_limit INTEGER,
            metrics TEXT NOT NULL, n_items INTEGER, seconds REAL, notes TEXT, created_at REAL)""",
        "CREATE INDEX idx_eval_results_benchmark_model ON eval_results (benchmark, model)",
        """CREATE TABLE eval_items (
            result_id INTEGER NOT NULL REFERENCES eval_results(id), position INTEGER NOT NULL, item_id TEXT,
            subtype TEXT, correct INTEGER, scores TEXT, texts TEXT, images TEXT, PRIMARY KEY (result_id, position))""",
        "CREATE INDEX idx_eval_items_result_correct ON eval_items (result_id, correct, subtype)",
    )),
    ("the job a resumed job continues (`jobs resume`), so a run's attempts read as one chain", (
        "ALTER TABLE jobs ADD COLUMN resumed_from INTEGER REFERENCES jobs(id)",
        "CREATE INDEX idx_jobs_resumed_from ON jobs (resumed_from)",
    )),
    ("the hash of each local annotator's resume key (backend.annotate.resume)", (
        "ALTER TABLE annotators ADD COLUMN resume_hash TEXT",
    )),
    ("each benchmark result's 95% bootstrap intervals, {metric: [low, high]} (backend.benchmarks.stats)", (
        "ALTER TABLE eval_results ADD COLUMN intervals TEXT",
    )),
    ("each annotator's session length, fixed when it starts, and when they were last seen (backend.annotate.assign)", (
        "ALTER TABLE annotators ADD COLUMN quota INTEGER",
        "ALTER TABLE annotators ADD COLUMN last_seen REAL",
    )),
    ("a campaign's Prolific study, its submissions as last polled, and bonuses with their payment state, each "
     "written before Prolific is asked to pay it (backend.annotate.prolific_study, prolific_bonus)", (
        """CREATE TABLE prolific_studies (
            id INTEGER PRIMARY KEY, campaign_id INTEGER NOT NULL UNIQUE REFERENCES campaigns(id),
            study_id TEXT NOT NULL UNIQUE,
            status TEXT NOT NULL, places INTEGER, reward_cents INTEGER, paused_reason TEXT, created_by TEXT,
            created_at REAL, updated_at REAL)""",
        """CREATE TABLE prolific_submissions (
            id TEXT PRIMARY KEY, campaign_id INTEGER NOT NULL REFERENCES campaigns(id), participant_id TEXT NOT NULL,
            status TEXT NOT NULL, started_at TEXT, completed_at TEXT, entered_code TEXT, released_at REAL,
            decision TEXT, reason TEXT, decided_at REAL, synced_at REAL)""",
        "CREATE INDEX idx_prolific_submissions_campaign ON prolific_submissions (campaign_id, status)",
        """CREATE TABLE prolific_bonuses (
            id INTEGER PRIMARY KEY, campaign_id INTEGER NOT NULL REFERENCES campaigns(id), study_id TEXT NOT NULL,
            state TEXT NOT NULL, bulk_id TEXT, csv TEXT NOT NULL, actor TEXT, note TEXT, created_at REAL,
            set_up_at REAL, pay_sent_at REAL, paid_at REAL)""",
        """CREATE TABLE prolific_bonus_lines (
            id INTEGER PRIMARY KEY, bonus_id INTEGER NOT NULL REFERENCES prolific_bonuses(id),
            campaign_id INTEGER NOT NULL,
            participant_id TEXT NOT NULL, reason TEXT NOT NULL, amount_cents INTEGER NOT NULL,
            UNIQUE (campaign_id, participant_id, reason))""",
    )),
    ("quality and abuse (issue 22, item 5): answers refused as too fast per annotator, the hashed client an "
     "annotator joined from, each campaign's secret (backend.annotate.quality)", (
        "ALTER TABLE annotators ADD COLUMN too_fast INTEGER NOT NULL DEFAULT 0",
        "ALTER TABLE annotators ADD COLUMN client TEXT",
        "CREATE INDEX idx_annotators_campaign_client ON annotators (campaign_id, client)",
        "ALTER TABLE campaigns ADD COLUMN secret TEXT",
    )),
    ("flagged annotators' answers set aside from resolution, with who did it, when and why, reversibly "
     "(backend.annotate.exclusion)", (
        """CREATE TABLE exclusions (
            id INTEGER PRIMARY KEY, campaign_id INTEGER NOT NULL REFERENCES campaigns(id),
            annotator_id INTEGER NOT NULL REFERENCES annotators(id), reasons TEXT NOT NULL, answer_ids TEXT NOT NULL,
            outcomes TEXT NOT NULL, actor TEXT NOT NULL, created_at REAL, restored_by TEXT, restored_at REAL)""",
        "CREATE INDEX idx_exclusions_campaign ON exclusions (campaign_id, annotator_id)",
        "ALTER TABLE annotators ADD COLUMN excluded INTEGER REFERENCES exclusions(id)",
    )),
    ("the batch a candidate image was drawn in, for its regeneration: JSON {index, prompts, seeds}, null when it was "
     "drawn alone (backend.generate.diffusion)", (
        "ALTER TABLE candidates ADD COLUMN batch TEXT",
    )),
)
LATEST = len(MIGRATIONS)


class SchemaError(RuntimeError):
    """The database cannot be used by this version of the code; the message says why and what to do."""


def version(connection: sqlite3.Connection) -> int:
    return connection.execute("PRAGMA user_version").fetchone()[0]


def migrate(connection: sqlite3.Connection, path: str = "the database") -> list[int]:
    """Apply every pending migration in one transaction; return the versions applied (often none)."""
    if version(connection) == LATEST:
        return []
    connection.execute("BEGIN IMMEDIATE")
    try:
        current = version(connection)
        if current > LATEST:
            raise SchemaError(f"{path} has schema version {current}, newer than this code knows ({LATEST}): "
                              "it was written by a newer release. Upgrade the code or use another database.")
        applied = []
        for number in range(current + 1, LATEST + 1):
            for statement in MIGRATIONS[number - 1][1]:
                connection.execute(statement)
            applied.append(number)
        connection.execute(f"PRAGMA user_version = {LATEST}")
        connection.execute("COMMIT")
    except BaseException:
        connection.execute("ROLLBACK")
        raise
    return applied
