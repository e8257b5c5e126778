"""`python -m backend campaign prolific ...`: a campaign's Prolific study from the command line.

create, publish, pause, sync (poll submissions, release the tasks of those who left, pause when full),
review (approve or reject; --apply sends it), bonus (paid exactly once; --reconcile finishes unfinished ones),
status. The same functions as the Campaigns tab's Prolific panel (`backend.annotate.prolific_study`,
`prolific_bonus`), acting as the machine's own admin. The token is the PROLIFIC_TOKEN setting.
"""
from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path
from typing import Any

from backend.annotate import prolific_bonus, prolific_study
from backend.cli import options
from backend.core.auth import cli_actor
from backend.core.settings import Settings


def add_parsers(commands, settings_of: Callable[[argparse.Namespace], Settings],
                show: Callable[[Any, bool], None]) -> None:
    """Add `prolific` under the `campaign` command's subparsers; `settings_of` and `show` are the campaign
    command's own (the store named by --db, its output as lines or --json)."""
    parser = commands.add_parser("prolific", help="run the campaign's Prolific study (needs PROLIFIC_TOKEN)",
                                 description=__doc__.split("\n\n")[1].replace("\n", " "))
    actions = parser.add_subparsers(dest="prolific_command", required=True)

    def action(name: str, run: Callable[[argparse.Namespace, Settings], Any], help_text: str):
        sub = actions.add_parser(name, help=help_text, description=help_text)
        sub.add_argument("name", help="the campaign")
        options.add_db(sub, Path)
        options.add_json(sub)

        def handler(args: argparse.Namespace) -> int:
            show(run(args, settings_of(args)), args.json)
            return 0
        sub.set_defaults(handler=handler)
        return sub

    create = action("create", lambda a, s: prolific_study.create_study(
        cli_actor(), s, a.name, a.app_url, a.reward_cents, a.minutes, a.places, a.title or "", a.description or ""),
        "create the study's draft on Prolific (the study link, its placeholders, the completion code)")
    create.add_argument("--app-url", required=True, help="the app's public address, e.g. https://owner-name.hf.space")
    create.add_argument("--reward-cents", type=int, required=True, help="what a participant earns, in cents/pence")
    create.add_argument("--minutes", type=int, help="estimated completion time (default: a full session at "
                                                    f"{prolific_study.SECONDS_PER_TASK} s a task)")
    create.add_argument("--places", type=int, help="participants (default and most: the places the campaign can "
                                                   "still fill, as `campaign status` says)")
    create.add_argument("--title")
    create.add_argument("--description")

    action("publish", lambda a, s: prolific_study.publish(cli_actor(), s, a.name),
           "publish the draft (or start a paused study again)")
    action("pause", lambda a, s: prolific_study.pause(cli_actor(), s, a.name), "pause the study")
    action("sync", lambda a, s: prolific_study.sync(cli_actor(), s, a.name),
           "poll submissions, release the tasks of returned/timed-out/rejected ones, pause when the campaign is full")

    review = action("review", lambda a, s: prolific_study.review(cli_actor(), s, a.name, a.apply, a.too_fast_s),
                    "approve or reject the submissions awaiting review (a plan unless --apply)")
    review.add_argument("--apply", action="store_true", help="send the approvals and rejections to Prolific")
    review.add_argument("--too-fast-s", type=float, default=prolific_study.TOO_FAST_S,
                        help="reject a median time per task under this many seconds")

    bonus = action("bonus", _bonus, "pay a bonus once per participant and reason (default: every approved one)")
    bonus.add_argument("--amount", help="in the study's currency, e.g. 0.50")
    bonus.add_argument("--participant", action="append", help="a participant's Prolific id (repeat for more)")
    bonus.add_argument("--reason", default="bonus", help="a participant gets one bonus per reason")
    bonus.add_argument("--reconcile", action="store_true",
                       help="only finish unfinished bonuses, asking Prolific what it already paid")

    action("status", lambda a, s: prolific_study.status(cli_actor(), s, a.name),
           "the study, its submissions by status as last polled, places left, bonuses by state (no call)")


def _bonus(args: argparse.Namespace, settings: Settings) -> dict:
    if args.reconcile:
        return prolific_bonus.reconcile(cli_actor(), settings, args.name)
    if not args.amount:
        raise ValueError("give --amount (e.g. 0.50), or --reconcile")
    return prolific_bonus.pay_bonus(cli_actor(), settings, args.name, args.amount, args.participant, args.reason)
