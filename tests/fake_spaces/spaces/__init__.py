"""A stand-in for Hugging Face's `spaces` package (tests only): put its parent folder on PYTHONPATH.

It keeps the real package's interface where the app and Gradio touch it (`GPU`,
`gradio_auto_wrap`, `disable_gradio_auto_wrap`; spaces 0.51.3) and records what
happens, one JSON line per event in the file named by ``FAKE_SPACES_LOG``:
``import``, ``decorate`` (with the duration) and ``call`` (with the size of the
pickled arguments, as ZeroGPU pickles them into its worker). Like the real one,
auto-wrap is on until disabled: Gradio then wraps every event handler in `GPU`,
which this fake refuses without a duration, so an app that forgot to disable it
fails at start.
"""
import functools
import json
import os
import pickle

_auto_wrap = True


def _record(event: str, **fields) -> None:
    with open(os.environ["FAKE_SPACES_LOG"], "a") as log:
        log.write(json.dumps({"event": event, "pid": os.getpid(), **fields}) + "\n")


def GPU(task=None, *, duration=None, size=None):
    """`spaces.GPU` / `spaces.GPU(duration=...)`: records decorations and calls, then runs the task here."""
    if task is None:
        return functools.partial(GPU, duration=duration, size=size)
    if not isinstance(duration, (int, float)) or duration <= 0:
        raise TypeError(f"fake spaces.GPU: {task.__qualname__} decorated without a positive duration ({duration!r})")
    name = f"{task.__module__}.{task.__qualname__}"
    _record("decorate", function=name, duration=duration)

    @functools.wraps(task)
    def on_gpu(*args, **kwargs):
        arg_bytes = len(pickle.dumps((args, kwargs)))  # raises, as ZeroGPU would, on what cannot cross
        result = task(*args, **kwargs)
        _record("call", function=name, duration=duration, arg_bytes=arg_bytes,
                result_bytes=len(pickle.dumps(result)))
        return result
    return on_gpu


def gradio_auto_wrap(task):
    return GPU(task) if _auto_wrap and callable(task) else task


def disable_gradio_auto_wrap():
    global _auto_wrap
    _auto_wrap = False


def enable_gradio_auto_wrap():
    global _auto_wrap
    _auto_wrap = True


_record("import")
