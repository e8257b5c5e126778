"""Where a job from a form runs: this machine, or the Slurm cluster when the server's settings configure one.

Only the place and the job's size (nodes, GPUs per node) come from a form; the partition, account, time limit
and extra #SBATCH lines are the server's settings (`backend.jobs.slurm`), never a visitor's choice.
"""
from __future__ import annotations

import gradio as gr

from backend.core.settings import Settings


def slurm_label(settings: Settings) -> str:
    return f"Slurm cluster (partition {settings.slurm_partition})"


def picker(settings: Settings, elem_id: str) -> gr.Radio:
    """This machine or the Slurm cluster; shown only where a cluster is configured (else it stays 'local')."""
    return gr.Radio([("this machine", "local"), (slurm_label(settings), "slurm")], value="local",
                    label="Where to run", visible=settings.slurm_configured, elem_id=elem_id)


def options(target: str, nodes: float | None = 1, gpus_per_node: float | None = 1) -> dict:
    """The target's options from a form: the Slurm job's size, nothing for this machine."""
    if target != "slurm":
        return {}
    return {"nodes": int(nodes or 1), "gpus_per_node": int(gpus_per_node or 1)}
