"""What the process's environment says, read one way everywhere: whether downloads are allowed, and which rank of
how many this process is under torchrun (or Slurm's srun), and on which device it should run.

`hub_offline` follows huggingface_hub's own truth table for ``HF_HUB_OFFLINE`` (``constants._is_true``: "1", "ON",
"YES", "TRUE" in any case), so that the lab never downloads where the hub would refuse to, nor the reverse;
``COMPLAB_OFFLINE=1`` also turns the lab's own URL downloads off.
"""
from __future__ import annotations

import os
from collections.abc import Mapping

TRUE_VALUES = ("1", "on", "yes", "true")


def _is_true(value: str | None) -> bool:
    return (value or "").strip().lower() in TRUE_VALUES


def hub_offline(env: Mapping[str, str] | None = None) -> bool:
    """Whether nothing may be downloaded (``HF_HUB_OFFLINE`` or ``COMPLAB_OFFLINE`` set true)."""
    env = os.environ if env is None else env
    return _is_true(env.get("HF_HUB_OFFLINE")) or _is_true(env.get("COMPLAB_OFFLINE"))


def rank(env: Mapping[str, str] | None = None) -> int:
    """This process's global rank under torchrun (``RANK``), else 0."""
    return int((os.environ if env is None else env).get("RANK", 0))


def local_rank(env: Mapping[str, str] | None = None) -> int:
    """This process's rank on its machine (``LOCAL_RANK``: its GPU index), else 0."""
    return int((os.environ if env is None else env).get("LOCAL_RANK", 0))


def world_size(env: Mapping[str, str] | None = None) -> int:
    return int((os.environ if env is None else env).get("WORLD_SIZE", 1))


def distributed(env: Mapping[str, str] | None = None) -> bool:
    """Whether torchrun started this process (it sets ``RANK``)."""
    return "RANK" in (os.environ if env is None else env)


def pick_device(requested: str | None = None) -> str:
    """`requested` if it names a device; else (None, "" or "auto") this rank's GPU, Apple's MPS, or the CPU.

    A GPU is always named with its index, this rank's (``LOCAL_RANK``), a bare "cuda" included: under torchrun
    N ranks must not all load onto GPU 0.
    """
    if requested and requested not in ("auto", "cuda"):
        return requested
    import torch  # here: reading the environment must not import torch

    if requested == "cuda" or torch.cuda.is_available():
        return f"cuda:{_visible_gpu(local_rank())}"
    if getattr(torch.backends, "mps", None) and torch.backends.mps.is_available():
        return "mps"
    return "cpu"


def _visible_gpu(index: int) -> int:
    """`index` if this machine shows that many GPUs; else a message, not CUDA's "invalid device ordinal" from
    deep inside the first tensor move (torchrun started more processes per node than there are GPUs)."""
    import torch

    count = torch.cuda.device_count() if torch.cuda.is_available() else 0
    if count and index >= count:
        raise RuntimeError(f"this is torchrun's local rank {index}, but this machine shows {count} GPU(s): start "
                           f"at most {count} processes per node (--nproc_per_node {count}), or hide the GPUs "
                           "(CUDA_VISIBLE_DEVICES=) to run every rank on the CPU")
    return index


def join_process_group(device: str) -> tuple[int, int]:
    """(rank, world size) of this process: under torchrun it joins the default process group first, once;
    (0, 1) otherwise. NCCL only where this rank runs on a GPU: it cannot reduce CPU tensors, and a CPU run on a
    GPU machine is still a CPU run (gloo)."""
    if not distributed():
        return 0, 1
    import torch.distributed as dist

    if not dist.is_initialized():
        dist.init_process_group("nccl" if device.startswith("cuda") else "gloo")
    return dist.get_rank(), dist.get_world_size()
