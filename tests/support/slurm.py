"""A one-node Slurm cluster for the Slurm tests: started by scripts/slurm_cluster.sh where Slurm is installed and
none answers yet; the tests skip, with the reason, only where Slurm is not installed (and fail even there under
COMPLAB_REQUIRE_SLURM=1, which CI's .ci/run sets)."""
from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from backend.core.settings import ROOT

CLUSTER_CONF = Path(os.environ.get("COMPLAB_SLURM_DIR", "/tmp/complab-slurm")) / "slurm.conf"
# the settings a test app or job uses: the script's partition, CPU processes, a short time limit
SLURM_ENV = {"COMPLAB_SLURM_PARTITION": "debug", "COMPLAB_SLURM_GPUS": "no", "COMPLAB_SLURM_TIME": "0:30:00"}


def _answers() -> bool:
    try:
        answer = subprocess.run(["sinfo", "-h", "-o", "%T"], capture_output=True, text=True, timeout=20)
    except subprocess.TimeoutExpired:
        return False
    return answer.returncode == 0 and bool(answer.stdout.strip())


def ensure_cluster() -> None:
    """Skip where Slurm is not installed; else make sure a cluster answers (starting one), or fail saying why."""
    search = os.pathsep.join([os.environ.get("PATH", ""), "/usr/sbin", "/sbin"])  # daemons: not on a user's PATH
    missing = [name for name in ("sbatch", "slurmctld", "slurmd", "munged") if shutil.which(name, path=search) is None]
    if missing:
        reason = (f"Slurm is not installed here (no {', '.join(missing)}): scripts/slurm_cluster.sh install, or "
                  "apt-get install slurm-wlm munge")
        if os.environ.get("COMPLAB_REQUIRE_SLURM") == "1":
            pytest.fail(f"COMPLAB_REQUIRE_SLURM=1 but {reason}")
        pytest.skip(reason)
    os.environ.setdefault("SLURM_CONF", str(CLUSTER_CONF))
    if not _answers():
        started = subprocess.run([str(ROOT / "scripts" / "slurm_cluster.sh"), "start"], capture_output=True,
                                 text=True, timeout=300)
        if started.returncode != 0 or not _answers():
            pytest.fail(f"no Slurm cluster answers and scripts/slurm_cluster.sh start failed:\n"
                        f"{started.stdout[-2000:]}{started.stderr[-2000:]}")
