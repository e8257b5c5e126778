"""Text that people typed (captions, annotator names, job messages) inside Markdown: shown as typed, never read
as markup.

The page renders Markdown, and Markdown lets HTML through (Gradio sanitises it,
which removes a script but still shows `<img src=x onerror=...>` as an image,
not as the text someone typed), turns ``[x](javascript:...)`` into a link and
``| a |`` into table cells. Every place that puts such text into Markdown goes
through `literal`.
"""
from __future__ import annotations

import html
import re

# CommonMark lets any ASCII punctuation be backslash-escaped; these can start markup inside a line ('[' a link
# or image, '|' a table cell, '$' Gradio's LaTeX, '#' close a heading). '<', '>' and '&' become entities first.
_MARKUP = re.compile(r"([\\`*_\[\]|$~#])")


def literal(text: object) -> str:
    """`text` as Markdown that renders exactly as typed, on one line (line breaks become spaces)."""
    flat = " ".join(str(text).splitlines())
    return _MARKUP.sub(r"\\\1", html.escape(flat, quote=False))
