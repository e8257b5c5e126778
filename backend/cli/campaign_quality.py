"""`python -m backend campaign competence|exclude|restore|adjudicate`: label quality beyond gold accuracy.

Dawid-Skene competence and per-item uncertainty (`backend.annotate.competence`), exclusion of flagged annotators
with its audit trail (`backend.annotate.exclusion`), and the adjudication queue, decided with the same override
as `campaign override` (`backend.annotate.resolution.override`). Acts as the machine's own admin.
"""
from __future__ import annotations

import argparse
from collections.abc import Callable

from backend.annotate import competence, exclusion, resolution
from backend.core.auth import cli_actor, require_admin
from backend.core.text import terminal_safe


def _percent(value: float | None) -> str:
    return "n/a" if value is None else f"{100 * value:.0f}%"


def competence_lines(state: dict) -> list[str]:
    """The annotator table and the queue's size, as `campaign competence` prints them."""
    lines = [f"threshold {_percent(state['threshold'])} after {state['min_answers']} answers; "
             "annotator\tanswers\tcompetence\tselect\tambiguity\tvalidate\tflags\texcluded"]
    for row in state["annotators"]:
        steps = "\t".join(_percent(row["by_step"].get(task)) for task in ("select", "ambiguity", "validate"))
        lines.append(f"{row['annotator']}\t{row['answers']}\t{_percent(row['competence'])}\t{steps}\t"
                     f"{','.join(row['flags']).upper() or '-'}\t{'yes' if row['excluded'] else ''}")
    lines.append(f"adjudication queue: {len(state['queue'])} task(s) (campaign adjudicate {state['name']})")
    return lines


def add_parsers(command: Callable[..., argparse.ArgumentParser], settings: Callable, show: Callable) -> None:
    """Add the quality commands through campaign.py's `command` helper (each has --db and --json)."""

    def run_competence(args: argparse.Namespace) -> int:
        state = competence.competence(settings(args).db, args.name, args.below)
        if args.json:
            show(state, True)
        else:
            print(terminal_safe("\n".join(competence_lines(state))))
        return 0

    def run_exclude(args: argparse.Namespace) -> int:
        actor, store = cli_actor(), settings(args).db
        require_admin(actor, "excluding annotators")
        names = args.annotator or None
        done = exclusion.exclude(actor, store, args.name, names) if args.apply else \
            exclusion.plan(actor, store, args.name, names)
        show({"applied" if args.apply else "plan (add --apply)": done, "history": exclusion.history(store, args.name)},
             args.json)
        return 0

    def run_restore(args: argparse.Namespace) -> int:
        show(exclusion.restore(cli_actor(), settings(args).db, args.name, args.annotator), args.json)
        return 0

    def run_adjudicate(args: argparse.Namespace) -> int:
        store = settings(args).db
        if args.item is not None:
            if not (args.task and args.decision):
                raise ValueError("--item needs --task and --decision")
            stage = resolution.override(store, args.item, args.task, args.decision, cli_actor().name)
            print(f"item {args.item} is now {stage}")
            return 0
        queue = competence.competence(store, args.name, args.below)["queue"]
        show({"queue": queue} if args.json else {entry["item_id"]: _entry_line(entry) for entry in queue}, args.json)
        return 0

    sub = command("competence", run_competence, "Dawid-Skene competence per annotator, flags, the queue's size")
    sub.add_argument("name")
    sub.add_argument("--below", type=float, default=competence.UNCERTAIN_BELOW,
                     help="highest posterior under which an item goes to the adjudication queue")
    sub = command("exclude", run_exclude, "set aside the answers of flagged annotators and reopen their items "
                                          "(a plan unless --apply)")
    sub.add_argument("name")
    sub.add_argument("--annotator", action="append", help="exclude this annotator (flagged or not); repeatable")
    sub.add_argument("--apply", action="store_true", help="do it (default: print the plan)")
    sub = command("restore", run_restore, "undo an annotator's exclusion: their answers return to resolution")
    sub.add_argument("name")
    sub.add_argument("annotator")
    sub = command("adjudicate", run_adjudicate, "the tasks the crowd left uncertain or tied; --item ... decides one")
    sub.add_argument("name")
    sub.add_argument("--below", type=float, default=competence.UNCERTAIN_BELOW)
    sub.add_argument("--item", type=int)
    sub.add_argument("--task", choices=resolution.OVERRIDABLE)
    sub.add_argument("--decision", help="1-4 or none (select); original, negative or both (ambiguity); false, "
                                        "true or disfluent (validate)")


def _entry_line(entry: dict) -> str:
    answers = ", ".join(f"{a['annotator']}={a['choice']} ({_percent(a['competence'])}"
                        f"{', excluded' if a['excluded'] else ''})" for a in entry["answers"])
    why = "rule tied" if entry["rule_tied"] else f"max posterior {entry['max_posterior']:.2f}"
    return f"{entry['task']}: {why}; resolution {entry['resolution']}, estimate {entry['estimate']}; {answers}"
