"""One settings object for the app, the CLI and every job: where things live, who is admin, which tokens.

Values come from environment variables, else from an optional TOML file, else
the defaults below. The file is ``$COMPLAB_CONFIG`` if set, else
``<workspace>/complab.toml`` when it exists; its keys are the setting names in
`SETTINGS` (e.g. ``runs_dir = "/data/runs"``). The environment wins over the
file, so a Space's secrets override a committed file.

Every path the app or a job touches is derived here once: before this module,
``COMPLAB_WORKSPACE`` was honoured by the app only, and ``python -m backend jobs
list`` read another database than the app did.
"""
from __future__ import annotations

import json
import os
import textwrap
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, fields
from functools import lru_cache
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
SHIPPED_MODELS = ROOT / "models"
LOOPBACK = ("127.0.0.1", "localhost", "::1")


@dataclass(frozen=True)
class Setting:
    """One configurable value: its TOML key, its environment variable, its default and what it means."""

    name: str
    env: str
    default: str
    help: str
    secret: bool = False


# The single table of settings (the README's configuration table is generated from it).
# Defaults may refer to the workspace as {workspace}.
SETTINGS = (
    Setting("workspace", "COMPLAB_WORKSPACE", str(ROOT / "workspace"),
            "Folder for everything the app writes: the store, runs, downloads, data."),
    Setting("db", "COMPLAB_DB", "{workspace}/lab.db", "The SQLite store (jobs, metrics, results, campaigns)."),
    Setting("runs_dir", "COMPLAB_RUNS_DIR", "{workspace}/runs", "Where training runs and their checkpoints go."),
    Setting("models_dir", "COMPLAB_MODELS_DIR", "{workspace}/models",
            "Extra local checkpoints (besides the shipped `models/`)."),
    Setting("data_dir", "COMPLAB_DATA_DIR", "{workspace}/data", "Datasets, manifests and campaign images."),
    Setting("benchmarks_dir", "COMPLAB_BENCHMARKS_DIR", "{workspace}/benchmarks",
            "Benchmark data (SugarCrepe, ARO, BiVLC, ... and their images), one folder per benchmark; "
            "`python -m backend benchmarks` says what each needs."),
    Setting("downloads_dir", "COMPLAB_DOWNLOADS_DIR", "{workspace}/downloads", "Files the UI offers for download."),
    Setting("allowed_roots", "COMPLAB_ALLOWED_ROOTS", "",
            "Extra folders user-supplied paths may point into (separated by `:`); the workspace, its "
            "sub-folders above and `models/` are always allowed. Files in these folders can be fetched by anyone "
            "who knows their path (campaign images may live there)."),
    Setting("admin_user", "COMPLAB_ADMIN_USER", "", "Admin user name for the password login."),
    Setting("admin_password", "COMPLAB_ADMIN_PASSWORD", "", "Admin password for the password login.", secret=True),
    Setting("admins", "COMPLAB_ADMINS", "",
            "Hugging Face user or organisation names (comma-separated) who are admin after signing in "
            "with Hugging Face on a Space."),
    Setting("hf_token", "HF_TOKEN", "", "Hugging Face token: gated models, Jobs, dataset backups.", secret=True),
    Setting("hf_image", "COMPLAB_HF_IMAGE", "",
            "Docker image that Hugging Face Jobs run (default on a Space: that Space's own image, "
            "`hf.co/spaces/<SPACE_ID>`)."),
    Setting("hf_flavor", "COMPLAB_HF_FLAVOR", "a10g-small", "Default GPU flavor for Hugging Face Jobs."),
    Setting("slurm_partition", "COMPLAB_SLURM_PARTITION", "",
            "Slurm partition jobs are submitted to; setting it offers the `slurm` target (the app or "
            "`python -m backend` must run where `sbatch` works and the workspace is on the cluster's shared file "
            "system; docs/SLURM.md)."),
    Setting("slurm_account", "COMPLAB_SLURM_ACCOUNT", "", "Slurm account charged for the jobs (`--account`)."),
    Setting("slurm_time", "COMPLAB_SLURM_TIME", "24:00:00", "Time limit of each Slurm job (`--time`)."),
    Setting("slurm_gpus", "COMPLAB_SLURM_GPUS", "yes",
            "`yes`: each process of a Slurm job gets a GPU (`--gpus-per-node`); `no`: a CPU partition (each "
            "process gets a CPU core)."),
    Setting("slurm_sbatch", "COMPLAB_SLURM_SBATCH", "",
            "Extra `#SBATCH` options, separated by `;` (e.g. `--qos=high; --constraint=a100`)."),
    Setting("slurm_setup", "COMPLAB_SLURM_SETUP", "",
            "Shell lines the job script runs before the job, separated by `;` (e.g. `module load cuda/12.4`)."),
    Setting("slurm_ssh", "COMPLAB_SLURM_SSH", "",
            "Submit over ssh to this login node (`user@host`, key-based login) instead of running `sbatch` here; "
            "the workspace must be the same path on both machines (a shared file system)."),
    Setting("backup_repo", "COMPLAB_BACKUP_REPO", "",
            "Hugging Face dataset repo (`owner/name`, created private if missing) that annotation campaigns are "
            "mirrored to, for a Space whose disk is ephemeral; restored at start when the store has no campaign. "
            "On a Space it defaults to `<SPACE_ID>-backup` (`off`: no backup). Needs `HF_TOKEN` with write "
            "access."),
    Setting("prolific_token", "PROLIFIC_TOKEN", "",
            "Prolific API token (Prolific: Settings, API tokens): lets admins create, publish, pause, review and pay "
            "a campaign's study from the Campaigns tab and `campaign prolific`; never shown or sent to a browser.",
            secret=True),
    Setting("prolific_api", "COMPLAB_PROLIFIC_API", "https://api.prolific.com/api/v1",
            "Base address of Prolific's REST API (tests point it at a fake server on 127.0.0.1)."),
    Setting("prolific_poll_s", "COMPLAB_PROLIFIC_POLL_S", "60",
            "With a Prolific token, the app polls every running study this often (seconds; 0: never): returned, "
            "timed-out and rejected participants' tasks go to others and their answers stop counting, a full study "
            "is paused and started again when places come back (`campaign prolific sync` does one round by hand)."),
    Setting("server_name", "GRADIO_SERVER_NAME", "127.0.0.1",
            "Address the app binds to. Any address other than loopback needs admin credentials for admin "
            "features."),
    Setting("server_port", "GRADIO_SERVER_PORT", "7860", "Port the app listens on."),
    Setting("guest_models", "COMPLAB_GUEST_MODELS", "",
            "Model specs (comma-separated) that visitors who are not signed in may probe. Empty: the listed "
            "models whose weights are already on this machine. Anything else (a hub id, a download) is an admin's."),
    Setting("max_model_parameters", "COMPLAB_MAX_MODEL_PARAMETERS", "500000000",
            "The largest model (in parameters, counted from its config before it is built) the web app loads; "
            "ViT-L-14 has 428 million."),
    Setting("space_id", "SPACE_ID", "", "Set by Hugging Face on a Space (`owner/name`); not set by hand."),
)
_BY_NAME = {setting.name: setting for setting in SETTINGS}


class SettingsError(ValueError):
    """A settings file or value that cannot be used; the message names it."""


@dataclass(frozen=True)
class Settings:
    """Resolved settings. Build with `Settings.load()`; `get_settings()` is the process-wide one."""

    workspace: Path
    db: Path
    runs_dir: Path
    models_dir: Path
    data_dir: Path
    benchmarks_dir: Path
    downloads_dir: Path
    allowed_roots: tuple[Path, ...]
    admin_user: str
    admin_password: str
    admins: tuple[str, ...]
    hf_token: str
    hf_image: str
    hf_flavor: str
    slurm_partition: str
    slurm_account: str
    slurm_time: str
    slurm_gpus: bool
    slurm_sbatch: tuple[str, ...]
    slurm_setup: tuple[str, ...]
    slurm_ssh: str
    backup_repo: str
    server_name: str
    server_port: int
    space_id: str
    guest_models: tuple[str, ...] = ()
    max_model_parameters: int = 500_000_000
    prolific_token: str = ""
    prolific_api: str = "https://api.prolific.com/api/v1"
    prolific_poll_s: int = 60
    source: str = "defaults"  # which file, if any, the values came from (shown by `python -m backend settings`)

    @classmethod
    def load(cls, env: Mapping[str, str] | None = None, config_file: Path | str | None = None) -> Settings:
        """Environment over TOML file over defaults; relative paths are taken from the workspace."""
        env = os.environ if env is None else env
        workspace = Path(env.get("COMPLAB_WORKSPACE") or _BY_NAME["workspace"].default)
        path = Path(config_file or env.get("COMPLAB_CONFIG") or workspace / "complab.toml")
        from_file = _read_toml(path) if (config_file or env.get("COMPLAB_CONFIG") or path.is_file()) else {}
        raw = {s.name: env.get(s.env) or str(from_file.get(s.name, "")) or s.default for s in SETTINGS}
        workspace = Path(raw["workspace"]).expanduser().resolve()

        def folder(name: str) -> Path:
            value = Path(raw[name].replace("{workspace}", str(workspace))).expanduser()
            return (value if value.is_absolute() else workspace / value).resolve()

        dirs: dict[str, Any] = {name: folder(name) for name in ("db", "runs_dir", "models_dir", "data_dir",
                                                                "benchmarks_dir", "downloads_dir")}
        extra = [Path(p).expanduser().resolve() for p in raw["allowed_roots"].split(os.pathsep) if p.strip()]
        roots = tuple(dict.fromkeys([workspace, SHIPPED_MODELS, *(dirs[k] for k in dirs if k != "db"), *extra]))
        port, budget = _whole_number(raw, "server_port"), _whole_number(raw, "max_model_parameters")
        return cls(workspace=workspace, **dirs, allowed_roots=roots, admin_user=raw["admin_user"].strip(),
                   admin_password=raw["admin_password"],
                   admins=tuple(a.strip() for a in raw["admins"].split(",") if a.strip()),
                   hf_token=raw["hf_token"].strip(), hf_image=raw["hf_image"].strip(),
                   hf_flavor=raw["hf_flavor"].strip(), **_slurm(raw),
                   backup_repo=_backup_repo(raw["backup_repo"].strip(), raw["space_id"].strip()),
                   server_name=raw["server_name"].strip(), server_port=port,
                   space_id=raw["space_id"].strip(),
                   guest_models=tuple(m.strip() for m in raw["guest_models"].split(",") if m.strip()),
                   max_model_parameters=budget, prolific_token=raw["prolific_token"].strip(),
                   prolific_api=raw["prolific_api"].strip().rstrip("/"),
                   prolific_poll_s=_whole_number(raw, "prolific_poll_s"),
                   source=str(path) if from_file else "defaults")

    @property
    def on_space(self) -> bool:
        return bool(self.space_id)

    @property
    def loopback_only(self) -> bool:
        return self.server_name in LOOPBACK

    @property
    def slurm_configured(self) -> bool:
        """Whether the `slurm` target is offered: a partition is set."""
        return bool(self.slurm_partition)

    @property
    def default_hf_image(self) -> str:
        """The image Hugging Face Jobs run: the setting, else this Space's own image, else none."""
        return self.hf_image or (f"hf.co/spaces/{self.space_id}" if self.space_id else "")

    def public(self) -> dict[str, str]:
        """Every setting as text, secrets masked: what `python -m backend settings` prints."""
        values = {}
        for f in fields(self):
            value = getattr(self, f.name)
            if f.name in _BY_NAME and _BY_NAME[f.name].secret:
                value = "(set)" if value else "(not set)"
            elif isinstance(value, tuple):
                value = ", ".join(str(v) for v in value)
            values[f.name] = str(value)
        return values


def _slurm(raw: dict[str, str]) -> dict:
    """The Slurm settings: option lists split at ';', the GPU switch read as yes/no."""
    gpus = raw["slurm_gpus"].strip().lower()
    if gpus not in ("yes", "no", "true", "false", "1", "0"):
        raise SettingsError(f"slurm_gpus must be yes or no, not {raw['slurm_gpus']!r}")
    return {"slurm_partition": raw["slurm_partition"].strip(), "slurm_account": raw["slurm_account"].strip(),
            "slurm_time": raw["slurm_time"].strip(), "slurm_gpus": gpus in ("yes", "true", "1"),
            "slurm_sbatch": _split(raw["slurm_sbatch"]), "slurm_setup": _split(raw["slurm_setup"]),
            "slurm_ssh": raw["slurm_ssh"].strip()}


def _split(value: str) -> tuple[str, ...]:
    return tuple(part.strip() for part in value.replace("\n", ";").split(";") if part.strip())


def _whole_number(raw: dict[str, str], name: str) -> int:
    try:
        return int(raw[name].replace("_", ""))
    except ValueError:
        raise SettingsError(f"{name} must be a whole number, not {raw[name]!r}") from None


def _backup_repo(value: str, space_id: str) -> str:
    """The campaign backup repo: as set, none for "off", else `<SPACE_ID>-backup` on a Space (its disk does not
    survive a restart), else none."""
    if value.lower() == "off":
        return ""
    return value or (f"{space_id}-backup" if space_id else "")


def _read_toml(path: Path) -> dict:
    if not path.is_file():
        raise SettingsError(f"Settings file {path} does not exist (named by COMPLAB_CONFIG)")
    try:
        values = tomllib.loads(path.read_text())
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as error:
        raise SettingsError(f"Settings file {path} is not valid TOML: {error}") from None
    unknown = sorted(set(values) - set(_BY_NAME))
    if unknown:
        raise SettingsError(f"Settings file {path} has unknown keys {unknown}; known: {', '.join(_BY_NAME)}")
    if isinstance(values.get("allowed_roots"), list):
        values["allowed_roots"] = os.pathsep.join(values["allowed_roots"])
    for key in ("admins", "guest_models"):
        if isinstance(values.get(key), list):
            values[key] = ",".join(values[key])
    for key in ("slurm_sbatch", "slurm_setup"):
        if isinstance(values.get(key), list):
            values[key] = ";".join(values[key])
    return values


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    """The process's settings, read once. Tests build their own with `Settings.load(env=...)`."""
    return Settings.load()


def settings_table() -> str:
    """The Markdown table of every setting (what the README shows)."""
    rows = ["| setting (TOML key) | environment variable | default | meaning |", "|---|---|---|---|"]
    for s in SETTINGS:
        default = s.default.replace(str(ROOT), ".") or "(empty)"
        rows.append(f"| `{s.name}` | `{s.env}` | `{default}` | {s.help} |")
    return "\n".join(rows)


EXAMPLE_FILE = ROOT / "complab.example.toml"
# a list in the file, one separated string in the environment
LIST_KEYS = ("allowed_roots", "admins", "guest_models", "slurm_sbatch", "slurm_setup")
LIST_NOTE = " (separated there; a list of strings here)"
EXAMPLE_HEADER = """\
# Compositionality Lab: every setting, its default and what it means (the README's settings table, as TOML).
# Generated by `python -m backend settings --example` from backend/core/settings.py; a test keeps this file in step.
# Copy it to <workspace>/complab.toml, or name it with COMPLAB_CONFIG, and uncomment what you change.
# Environment variables win over this file. {workspace} stands for the workspace folder; other relative
# folders are taken from the workspace, a relative workspace from the current folder."""


def example_toml() -> str:
    """The example settings file: every key with its help and environment variable, its default commented out
    (so a copy changes nothing until a line is uncommented), secrets with a note to keep them out of files."""
    lines = [EXAMPLE_HEADER]
    for s in SETTINGS:
        lines += ["", *textwrap.wrap(s.help, width=110, initial_indent="# ", subsequent_indent="# ")]
        lines.append(f"# Secret: set the environment variable {s.env} (on a Space: a secret), never in a file."
                     if s.secret else f"# Environment variable: {s.env}" + LIST_NOTE * (s.name in LIST_KEYS))
        lines.append(f"# {s.name} = {_toml_value(s)}")
    return "\n".join(lines) + "\n"


def _toml_value(setting: Setting) -> str:
    """A setting's default as TOML: lists for the list-valued keys, a number for the port, else a string."""
    if setting.name in LIST_KEYS:
        return "[]"
    if setting.name in ("server_port", "max_model_parameters"):
        return setting.default
    return json.dumps(setting.default.replace(str(ROOT), "."))  # a JSON string is a TOML basic string
