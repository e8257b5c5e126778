"""How an exception becomes one line a person reads (a job's error, a refusal, a failed download's reason)."""
from __future__ import annotations

MAX_REASON_CHARS = 300


def first_line(error: BaseException | str, limit: int = MAX_REASON_CHARS) -> str:
    """The first non-blank line of an error's message, at most `limit` characters; the exception's type name
    when it has no message (``str(error).splitlines()[0]`` raised IndexError on those)."""
    lines = _lines(error)
    return lines[0][:limit] if lines else _name(error)


def last_line(error: BaseException | str, limit: int = MAX_REASON_CHARS) -> str:
    """The last non-blank line (where torch.load puts its reason), as `first_line` does."""
    lines = _lines(error)
    return lines[-1][:limit] if lines else _name(error)


def _lines(error: BaseException | str) -> list[str]:
    return [line.strip() for line in str(error).splitlines() if line.strip()]


def _name(error: BaseException | str) -> str:
    return type(error).__name__ if isinstance(error, BaseException) else ""
