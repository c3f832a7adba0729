"""Text from suites and agents made safe to print on a terminal: every invisible or control character shown
as an escape (``\\x1b``, ``\\u202e``), never sent raw.

A scenario name, an agent's output or a failure reason is untrusted text. Raw, an ESC sequence recolours,
retitles or clears the reader's terminal (or a CI log viewer), a carriage return overwrites the line it is
on, a bidirectional override shows text in another order than it is, and a lone surrogate cannot even be
encoded. Escaped, each reads as what it is. Kept tiny and import-free: progress lines use it on every run.
"""

from __future__ import annotations

import re

# C0 controls, DEL and C1 controls, bidi marks, embeddings, overrides and isolates, line/paragraph
# separators, the BOM / zero-width no-break space, and lone surrogates.
_OTHER = "\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\ufeff\ud800-\udfff"
_ALL = re.compile(f"[\x00-\x1f{_OTHER}]")
_BUT_LINES = re.compile(f"[\x00-\x08\x0b-\x1f{_OTHER}]")  # newline and tab kept
_NAMED = {9: "\\t", 10: "\\n", 13: "\\r"}


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return _NAMED.get(code) or (f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}")


def visible(text: object, *, lines: bool = False) -> str:
    """``text`` with each control, bidi or invisible formatting character escaped; ``lines``: keep
    newlines and tabs (a message of several lines), otherwise they are escaped too (a name, a cell)."""
    return (_BUT_LINES if lines else _ALL).sub(_escape, str(text))


__all__ = ["visible"]
