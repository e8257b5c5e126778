"""The Slurm target without a cluster: its settings, the options a launch may carry, the script it writes, and the
ssh wrapping. Runs everywhere (the real cluster's tests are tests/test_jobs_slurm.py and tests/test_slurm_forms.py)."""
from pathlib import Path

import pytest

from backend.core.settings import Settings, SettingsError
from backend.jobs import slurm
from backend.jobs.records import JobError
from backend.jobs.targets import get_target

TARGET = get_target("slurm")


def settings(tmp_path: Path, **env: str) -> Settings:
    return Settings.load(env={"COMPLAB_WORKSPACE": str(tmp_path), **env})


def job(kind: str, options: dict, **args) -> dict:
    return {"id": 7, "kind": kind, "args": args, "target_options": options}


def test_the_target_is_offered_only_once_a_partition_is_set(tmp_path):
    assert not settings(tmp_path).slurm_configured
    with pytest.raises(JobError, match="not configured on this server: set slurm_partition"):
        TARGET.options({"nodes": 1}, settings(tmp_path), "train")
    assert settings(tmp_path, COMPLAB_SLURM_PARTITION="gpu").slurm_configured


def test_a_launch_carries_only_its_size_never_the_clusters_settings(tmp_path):
    configured = settings(tmp_path, COMPLAB_SLURM_PARTITION="gpu")
    assert TARGET.options({"nodes": "2", "gpus_per_node": 4}, configured, "train") == {"nodes": 2,
                                                                                       "gpus_per_node": 4}
    for smuggled in ({"partition": "free"}, {"account": "someone-else"}, {"sbatch": "--wrap=rm"}):
        with pytest.raises(JobError, match="come from the server's settings"):
            TARGET.options({"nodes": 1, **smuggled}, configured, "train")
    for bad, message in (({"nodes": 0}, "between 1 and 256"), ({"gpus_per_node": "two"}, "whole number"),
                         ({"gpus_per_node": 17}, "between 1 and 16")):
        with pytest.raises(JobError, match=message):
            TARGET.options(bad, configured, "train")
    with pytest.raises(JobError, match="A evaluate job runs as one process"):
        TARGET.options({"nodes": 2}, configured, "evaluate")
    # a resumed job's old Slurm id is dropped, not refused
    assert TARGET.options({"nodes": 1, slurm.SLURM_ID: 12}, configured, "train") == {"nodes": 1, "gpus_per_node": 1}


def test_the_script_holds_the_settings_and_one_torchrun_per_node(tmp_path):
    configured = settings(tmp_path, COMPLAB_SLURM_PARTITION="gpu", COMPLAB_SLURM_ACCOUNT="lab",
                          COMPLAB_SLURM_TIME="2:00:00", COMPLAB_SLURM_SBATCH="--qos=high; --constraint=a100",
                          COMPLAB_SLURM_SETUP="module load cuda/12.4")
    script = slurm.batch_script(job("train", {"nodes": 2, "gpus_per_node": 4}, workers=3), configured,
                                Path("/ws/job.json"), Path("/ws/job.log"))
    lines = script.splitlines()
    for line in ("#SBATCH --partition=gpu", "#SBATCH --account=lab", "#SBATCH --time=2:00:00",
                 "#SBATCH --qos=high", "#SBATCH --constraint=a100", "#SBATCH --nodes=2", "#SBATCH --gpus-per-node=4",
                 "#SBATCH --cpus-per-task=16", "#SBATCH --requeue", "#SBATCH --output=/ws/job.log",
                 "module load cuda/12.4"):
        assert line in lines, line
    [launch] = [line for line in lines if line.startswith("srun")]
    assert "torch.distributed.run --nnodes=\"$SLURM_JOB_NUM_NODES\" --nproc_per_node=4" in launch
    assert "--rdzv_backend=c10d" in launch and launch.endswith("-m backend jobs run 7 --spec /ws/job.json")


def test_a_cpu_partition_asks_for_no_gpu_and_a_one_process_kind_runs_once(tmp_path):
    cpu = settings(tmp_path, COMPLAB_SLURM_PARTITION="cpu", COMPLAB_SLURM_GPUS="no")
    script = slurm.batch_script(job("evaluate", {"nodes": 1, "gpus_per_node": 1}), cpu, Path("/s"), Path("/l"))
    assert "--gpus-per-node" not in script and "--account" not in script and "#SBATCH --time=24:00:00" in script
    assert "torch.distributed.run" not in script and "\nsrun " in script


def test_settings_refuse_a_bad_gpu_switch_and_read_lists_from_a_file(tmp_path):
    with pytest.raises(SettingsError, match="slurm_gpus must be yes or no"):
        settings(tmp_path, COMPLAB_SLURM_GPUS="maybe")
    (tmp_path / "complab.toml").write_text('slurm_partition = "gpu"\nslurm_sbatch = ["--qos=high", "--mem=64G"]\n'
                                           'slurm_setup = ["module load cuda", "source env.sh"]\n')
    loaded = settings(tmp_path)
    assert loaded.slurm_sbatch == ("--qos=high", "--mem=64G")
    assert loaded.slurm_setup == ("module load cuda", "source env.sh")


def test_commands_go_over_ssh_to_the_login_node_when_set(tmp_path):
    assert slurm.command(settings(tmp_path), "squeue", "-j", "5") == ["squeue", "-j", "5"]
    remote = settings(tmp_path, COMPLAB_SLURM_SSH="me@login")
    assert slurm.command(remote, "scancel", "5") == ["ssh", "-o", "BatchMode=yes", "me@login", "scancel 5"]
