"""One settings object: environment over TOML file over defaults, the same for the app, the CLI and jobs."""
import re
from dataclasses import replace

import pytest

from backend.cli import main
from backend.core.settings import EXAMPLE_FILE, ROOT, SETTINGS, Settings, SettingsError, example_toml, settings_table


def test_defaults_put_everything_under_the_workspace(tmp_path):
    settings = Settings.load(env={"COMPLAB_WORKSPACE": str(tmp_path)})
    assert settings.db == tmp_path / "lab.db" and settings.runs_dir == tmp_path / "runs"
    assert settings.data_dir == tmp_path / "data" and settings.downloads_dir == tmp_path / "downloads"
    assert tmp_path in settings.allowed_roots and ROOT / "models" in settings.allowed_roots
    assert settings.server_name == "127.0.0.1" and settings.server_port == 7860 and settings.source == "defaults"


def test_toml_file_is_read_and_the_environment_wins(tmp_path):
    (tmp_path / "complab.toml").write_text('runs_dir = "experiments"\nadmins = ["alice", "lab-org"]\n'
                                           'allowed_roots = ["/srv/coco"]\nhf_flavor = "l4x1"\n')
    settings = Settings.load(env={"COMPLAB_WORKSPACE": str(tmp_path), "COMPLAB_HF_FLAVOR": "a100-large"})
    assert settings.runs_dir == tmp_path / "experiments" and settings.admins == ("alice", "lab-org")
    assert settings.hf_flavor == "a100-large"  # environment over file
    assert settings.source == str(tmp_path / "complab.toml")
    from pathlib import Path
    assert Path("/srv/coco") in settings.allowed_roots


@pytest.mark.parametrize("text, message", [
    ("runs_dir = ", "is not valid TOML"),
    ("run_dir = 'x'", "unknown keys \\['run_dir'\\]"),
])
def test_a_bad_settings_file_is_a_clear_error(tmp_path, text, message):
    path = tmp_path / "bad.toml"
    path.write_text(text)
    with pytest.raises(SettingsError, match=message):
        Settings.load(env={"COMPLAB_CONFIG": str(path)})
    with pytest.raises(SettingsError, match="does not exist"):
        Settings.load(env={"COMPLAB_CONFIG": str(tmp_path / "missing.toml")})


def test_secrets_are_masked(tmp_path):
    settings = Settings.load(env={"COMPLAB_WORKSPACE": str(tmp_path), "COMPLAB_ADMIN_PASSWORD": "hunter2",
                                  "HF_TOKEN": "hf_x"})
    shown = settings.public()
    assert shown["admin_password"] == "(set)" and shown["hf_token"] == "(set)" and "hunter2" not in str(shown)
    assert Settings.load(env={"COMPLAB_WORKSPACE": str(tmp_path)}).public()["hf_token"] == "(not set)"


def test_the_cli_reads_the_same_settings_as_the_app(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("COMPLAB_WORKSPACE", str(tmp_path))
    from backend.core.settings import get_settings
    get_settings.cache_clear()
    try:
        assert main(["jobs", "list"]) == 0
        assert (tmp_path / "lab.db").is_file()  # `jobs list` opened the workspace's store, as the app does
        assert main(["settings"]) == 0
        assert f"db\t{tmp_path / 'lab.db'}" in capsys.readouterr().out
    finally:
        get_settings.cache_clear()


def test_the_readme_lists_every_setting():
    readme = (ROOT / "README.md").read_text()
    assert settings_table() in readme
    assert all(f"`{s.env}`" in readme for s in SETTINGS)


def test_the_example_file_is_generated_and_every_line_of_it_loads(tmp_path, monkeypatch, capsys):
    """complab.example.toml is `settings --example`; as shipped it changes nothing, and with every key
    uncommented (secrets included) it is a valid settings file that gives the defaults."""
    assert main(["settings", "--example"]) == 0
    assert capsys.readouterr().out == EXAMPLE_FILE.read_text() == example_toml()
    text = EXAMPLE_FILE.read_text()
    assert all(f"\n# {s.name} = " in text for s in SETTINGS)
    assert "Secret: set the environment variable HF_TOKEN" in text
    monkeypatch.chdir(ROOT)  # the example's relative workspace is taken from the current folder
    defaults = Settings.load(env={})
    assert Settings.load(env={}, config_file=EXAMPLE_FILE) == defaults
    uncommented = tmp_path / "complab.toml"
    uncommented.write_text(re.sub(r"^# (\w+ = )", r"\1", text, flags=re.MULTILINE))
    loaded = Settings.load(env={}, config_file=uncommented)
    assert loaded.source == str(uncommented) and replace(loaded, source="defaults") == defaults


def test_on_a_space_the_backup_repo_defaults_to_the_spaces_own(tmp_path):
    def backup_repo(**env):
        return Settings.load(env={"COMPLAB_WORKSPACE": str(tmp_path), **env}).backup_repo
    assert backup_repo(SPACE_ID="lab/app") == "lab/app-backup"
    assert backup_repo(SPACE_ID="lab/app", COMPLAB_BACKUP_REPO="lab/elsewhere") == "lab/elsewhere"
    assert backup_repo(SPACE_ID="lab/app", COMPLAB_BACKUP_REPO="off") == ""
    assert backup_repo() == "" and backup_repo(COMPLAB_BACKUP_REPO="lab/mine") == "lab/mine"
