"""`python -m backend settings`: every setting as this process sees it (secrets masked), the README's table, or
the example TOML file."""
from __future__ import annotations

from backend.core.settings import Settings, example_toml, settings_table


def add_parsers(subparsers) -> None:
    """`python -m backend settings`: every setting as this process sees it (secrets masked), the README table,
    or the example TOML file."""
    parser = subparsers.add_parser("settings", help="show the settings the app, CLI and jobs use",
                                   description="Environment variables over the TOML file over defaults.")
    shown = parser.add_mutually_exclusive_group()
    shown.add_argument("--table", action="store_true", help="print the Markdown table of every setting")
    shown.add_argument("--example", action="store_true",
                       help="print the example TOML file (complab.example.toml): every key, default and meaning")

    def show(args) -> int:
        if args.table or args.example:
            print(settings_table() if args.table else example_toml(), end="\n" if args.table else "")
            return 0
        for name, value in Settings.load().public().items():
            print(f"{name}\t{value}")
        return 0
    parser.set_defaults(handler=show)
