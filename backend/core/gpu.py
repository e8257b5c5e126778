"""GPU work in the web process, made to run on a ZeroGPU Space and unchanged everywhere else.

On ZeroGPU the web process has no GPU of its own: a function gets one only while
it runs under `spaces.GPU(duration=...)` (the `spaces` package, installed by the
Space builder). The package knows it is on ZeroGPU from ``SPACES_ZERO_GPU``
(spaces 0.51.3, ``spaces/config.py``: ``self.zero_gpu = boolean(os.getenv('SPACES_ZERO_GPU'))``,
true for "1", "t", "true" in any case); `on_zero_gpu` reads it the same way. Elsewhere
`gpu_task` returns the very function it was given and never imports `spaces`.

What ZeroGPU asks of a decorated function (spaces 0.51.3, ``zero/wrappers.py``): it
runs in a forked worker, so its arguments and result are pickled across a pipe
and whatever it changes in memory stays in the worker. Pass small values (texts,
pixel tensors, a model handle) and return results; keep caches in the caller.

Training, evaluation, sweeps and generation never run inside such a call: they are
jobs (`backend.jobs.submit`), and a local job's process is not the web process, so
`job_environment` drops the ZeroGPU variables from its environment (a ZeroGPU
Space gives such a process no GPU: it runs on the CPU).
"""
from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from typing import TypeVar

ZERO_GPU_ENV = "SPACES_ZERO_GPU"
# Variables a ZeroGPU Space sets for its web process only (spaces/config.py reads them at import).
ZERO_GPU_VARIABLES = (ZERO_GPU_ENV, "SPACES_ZERO_DEVICE_API_URL", "SPACES_GRADIO_AUTO_WRAP")
TRUE_VALUES = ("1", "t", "true")  # spaces.config.boolean

F = TypeVar("F", bound=Callable)


def on_zero_gpu(env: Mapping[str, str] | None = None) -> bool:
    """Whether this process is the web process of a ZeroGPU Space (as the `spaces` package decides it)."""
    value = (os.environ if env is None else env).get(ZERO_GPU_ENV)
    return value is not None and value.lower() in TRUE_VALUES


def gpu_task(duration: int) -> Callable[[F], F]:
    """Decorate a function that runs on the GPU in the web process.

    On ZeroGPU: `spaces.GPU(duration=duration)` (seconds the call may hold the GPU), applied when the
    function is defined, as ZeroGPU requires (it counts decorated functions at launch). Elsewhere: the
    function itself.
    """
    if duration <= 0:
        raise ValueError(f"a GPU task needs a positive duration in seconds, not {duration}")

    def decorate(function: F) -> F:
        if not on_zero_gpu():
            return function
        return _spaces().GPU(duration=duration)(function)
    return decorate


def _spaces():
    """The `spaces` package, with Gradio's auto-wrap off: otherwise, when SPACES_GRADIO_AUTO_WRAP is set, every
    event handler (a training launch included) would hold a GPU. Our own decorations name the GPU work."""
    import spaces

    spaces.disable_gradio_auto_wrap()
    return spaces


def job_environment(env: Mapping[str, str]) -> dict[str, str]:
    """`env` without the ZeroGPU variables: what a local job process gets, so it never imports `spaces` (whose
    torch emulation would make it try a GPU it does not have) and runs on the CPU instead."""
    return {name: value for name, value in env.items() if name not in ZERO_GPU_VARIABLES}


def local_job_note(env: Mapping[str, str] | None = None) -> str:
    """The sentence the launch forms show on ZeroGPU ('' elsewhere): a job launched here gets no GPU."""
    if not on_zero_gpu(env):
        return ""
    return ("**This Space runs on ZeroGPU**: only the page's own calls (the Probe) get a GPU. A job on this "
            "machine (local or torchrun) runs on the CPU: fine for the built-in world, slow for real models. For a "
            "GPU, run it on Hugging Face Jobs (the Train tab's target, or `python -m backend jobs launch KIND "
            "--target hf`; needs `HF_TOKEN`) or give the Space GPU hardware.")
