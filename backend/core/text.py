"""Text people type, made one thing before anything compares, stores or scores it: names and captions.

Why one place: the same caption or name can arrive as different code points. A
full-width "ｄｏｇ", a ligature "ﬁsh" or a non-breaking space look like "dog", "fish"
and " " but compare, tokenise and sort differently; a caption of zero-width spaces
only looked non-empty to ``str.strip()`` and passed the empty-caption check; a
name with a right-to-left override or a NUL byte shows as something else than what
is stored. So every name and caption goes through `clean` (or `problem`):

1. NFKC (Unicode compatibility composition): full-width and other compatibility
   forms become their plain letters, ligatures their letters, and the
   non-breaking space a space. Letters of other scripts are kept.
2. Stripped of surrounding white space, then checked for emptiness.
3. Control characters (Unicode category Cc: NUL, escape, a line break inside a
   one-line field), format characters (Cf: zero-width spaces and joiners, the
   byte-order mark, bidirectional overrides) and lone surrogates (Cs, which
   cannot even be stored as UTF-8) are refused with the character named, not
   silently dropped: what a person typed is either kept or explained.
4. Checked against a length limit, counted after NFKC.

Used by the Probe's captions, campaign files and the annotators' names; a later
form (a participant-only route) should call `clean` too.
"""
from __future__ import annotations

import unicodedata

REFUSED_CATEGORIES = {"Cc": "control", "Cf": "invisible formatting", "Cs": "lone surrogate"}


class TextError(ValueError):
    """A name or caption that cannot be used; the message says which character or limit, and where."""


def normalise(text: str | None) -> str:
    """NFKC, then stripped of surrounding white space; no check (see `clean`)."""
    return unicodedata.normalize("NFKC", str(text or "")).strip()


def refused_character(text: str) -> tuple[int, str] | None:
    """The first refused character of `text` as (position from 1, description), else None."""
    for position, char in enumerate(text, start=1):
        kind = REFUSED_CATEGORIES.get(unicodedata.category(char))
        if kind:
            name = unicodedata.name(char, "")  # control characters have none (NUL is U+0000 and nothing else)
            article = "an" if kind[0] in "aeiou" else "a"
            return position, f"{article} {kind} character (U+{ord(char):04X}{' ' + name if name else ''})"
    return None


def problem(text: str | None, max_chars: int | None = None) -> str | None:
    """Why `text` (after `normalise`) cannot be used, as the end of a sentence ("is empty", "contains an
    invisible formatting character (U+200B ZERO WIDTH SPACE) at position 1; ...", "has 1,200 characters; the
    limit is 1,000"), else None."""
    cleaned = normalise(text)
    if not cleaned:
        return "is empty"
    found = refused_character(cleaned)
    if found:
        position, what = found
        return f"contains {what} at position {position:,}; retype it without that character"
    if max_chars is not None and len(cleaned) > max_chars:
        return f"has {len(cleaned):,} characters; the limit is {max_chars:,}"
    return None


def clean(text: str | None, what: str, max_chars: int | None = None) -> str:
    """`text` normalised (`normalise`); a `TextError` naming `what` ("the caption is empty", "the name contains
    a control character (U+0000 NULL) at position 3; ...") when `problem` finds one."""
    reason = problem(text, max_chars)
    if reason:
        raise TextError(f"{what} {reason}")
    return normalise(text)


def terminal_safe(text: str) -> str:
    """`text` as a terminal may print it: control, invisible formatting and lone surrogate characters (an
    escape sequence that recolours or clears the screen, a right-to-left override) written as escapes
    (``\\x1b``, ``\\u202e``); line breaks and tabs kept. For what the command line prints of stored text, which
    may predate `clean` or come from a file."""
    return "".join(char if char in "\n\t" or unicodedata.category(char) not in REFUSED_CATEGORIES
                   else repr(char)[1:-1] for char in text)
