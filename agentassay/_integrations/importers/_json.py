"""A streaming JSON reader: walk a document's outer structure, decode only the values asked for.

Why not ``json.load``: a trace export can be gigabytes, and the acceptance is memory bounded by the
largest trace, not the file. Why not an incremental parser package (ijson): the outer levels of
our formats are a handful of keys and arrays, and below them each span is small, so stepping
through the outer structure in Python and decoding each span with the C decoder
(``JSONDecoder.raw_decode``) is as fast, with no dependency. The same reader handles one document,
a JSON array, and JSON Lines (a sequence of top-level values), so a single-line document of any
size is streamed too.

Memory: the buffer holds what has not been consumed yet: at most one value being decoded plus a
chunk. Errors name the file, the line and the character offset.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any, TextIO

from ._model import TraceImportError

_NON_WS = re.compile(r"[^ \t\r\n]")
#: A single value larger than this is reported rather than buffered further.
MAX_VALUE_CHARS = 256 * 1024 * 1024


#: Deepest JSON embedded in a string attribute (message content, tool arguments) that is decoded;
#: deeper text stays text, as any other string that is not JSON does.
MAX_EMBEDDED_DEPTH = 64


def loads_embedded(text: str) -> Any:
    """``json.loads`` for JSON inside a string attribute: ValueError (the caller keeps the text) when it is not
    JSON, has a number of more than 4,300 digits, or nests deeper than ``MAX_EMBEDDED_DEPTH``."""
    try:
        value = json.loads(text)
    except RecursionError:
        raise ValueError("nested too deep") from None
    if not nested_within(value, MAX_EMBEDDED_DEPTH):
        raise ValueError("nested too deep")
    return value


def nested_within(value: Any, limit: int) -> bool:
    """Whether ``value`` nests at most ``limit`` containers deep (iterative: no recursion limit)."""
    stack = [(value, 0)]
    while stack:
        obj, depth = stack.pop()
        if type(obj) is dict:
            obj = list(obj.values())
        elif type(obj) is not list:
            continue
        if depth >= limit:
            return False
        stack.extend((v, depth + 1) for v in obj if type(v) is dict or type(v) is list)
    return True


class JsonScanner:
    """Step through JSON text read from ``fp`` in chunks.

    ``documents`` yields before each top-level value, ``members`` before each member's value,
    ``items`` before each array element; the caller consumes that value (``value``, ``skip``,
    or a nested ``members`` / ``items``) before the iterator resumes.
    """

    def __init__(self, fp: TextIO, name: str, chunk: int = 1 << 18) -> None:
        self._fp = fp
        self._name = name
        self._chunk = chunk
        self._buf = ""
        self._pos = 0
        self._base = 0  # characters dropped before _buf[0]
        self._lines = 0  # newlines dropped before _buf[0]
        self._eof = False
        self._decode = json.JSONDecoder().raw_decode

    # -- buffer -----------------------------------------------------------------------------------
    def _more(self, want: int = 0) -> bool:
        """Drop the consumed part of the buffer and read at least one more chunk; False at the end."""
        if self._eof:
            return False
        if self._pos:
            self._lines += self._buf.count("\n", 0, self._pos)
            self._base += self._pos
            self._buf = self._buf[self._pos :]
            self._pos = 0
        try:
            data = self._fp.read(max(self._chunk, want))
        except UnicodeDecodeError as exc:
            raise TraceImportError(
                f"{self._name}: not UTF-8 text near offset {self._base + len(self._buf)} ({exc.reason})"
            ) from None
        except OSError as exc:
            raise TraceImportError(f"{self._name}: cannot read ({exc.strerror or exc})") from None
        if not data:
            self._eof = True
            return False
        self._buf += data
        return True

    def where(self, at: int | None = None) -> str:
        """``line L, offset O`` of a buffer position (default: the current one)."""
        at = self._pos if at is None else at
        line = self._lines + self._buf.count("\n", 0, at) + 1
        return f"line {line}, offset {self._base + at}"

    def _unreadable(self, exc: Exception) -> TraceImportError:
        """What the C decoder refuses that is not a syntax error: nesting deeper than the stack allows, or an
        integer of more than 4,300 digits (Python's int_max_str_digits). Neither is telemetry."""
        if isinstance(exc, RecursionError):
            what = "JSON nested too deep to read (telemetry nests a few levels)"
        else:
            what = "a number with more than 4,300 digits (no trace field holds one)"
        return self.error(f"{what}; export the traces again, or drop the span that holds it")

    def error(self, message: str, at: int | None = None) -> TraceImportError:
        return TraceImportError(f"{self._name}, {self.where(at)}: {message}")

    @property
    def line(self) -> int:
        """The line the reader is on (1-based)."""
        return self._lines + self._buf.count("\n", 0, self._pos) + 1

    # -- tokens -----------------------------------------------------------------------------------
    def peek(self) -> str:
        """The next non-whitespace character, not consumed; ``""`` at the end of the text."""
        while True:
            m = _NON_WS.search(self._buf, self._pos)
            if m is not None:
                self._pos = m.start()
                return self._buf[self._pos]
            self._pos = len(self._buf)
            if not self._more():
                return ""

    def _expect(self, char: str) -> None:
        found = self.peek()
        if found != char:
            raise self.error(f"not valid JSON: expected {char!r}, found {found or 'the end of the file'!r}")
        self._pos += 1

    def line_value(self, limit: int) -> tuple[bool, Any]:
        """The next value decoded whole, if it is compact on one line of at most ``limit`` characters.

        JSON Lines' fast path: one C decode per line instead of stepping through it. Returns
        ``(False, None)`` with nothing consumed for a longer line or a value spread over lines
        (pretty-printed), which the caller then streams. A JSON string holds no raw newline, so
        a compact value ends at or before the end of its line.
        """
        self.peek()
        while True:
            newline = self._buf.find("\n", self._pos)
            if newline >= 0 or self._eof:
                end = newline if newline >= 0 else len(self._buf)
                break
            if len(self._buf) - self._pos >= limit:
                return False, None
            self._more(len(self._buf) - self._pos)
        if end - self._pos > limit:
            return False, None
        try:
            obj, used = self._decode(self._buf[self._pos : end])
        except json.JSONDecodeError:
            return False, None  # pretty-printed, or invalid: the streaming path reports where
        except (RecursionError, ValueError) as exc:
            raise self._unreadable(exc) from None
        self._pos += used
        return True, obj

    def looking_at(self, pattern: re.Pattern[str], size: int = 4096) -> bool:
        """Does the text at the current position match ``pattern`` (with ``size`` characters in view)?"""
        self.peek()
        while len(self._buf) - self._pos < size and self._more():
            pass
        return pattern.match(self._buf, self._pos) is not None

    def value(self) -> Any:
        """Decode the next complete value (any size) and return it."""
        if not self.peek():
            raise self.error("not valid JSON: expected a value, found the end of the file")
        want = 0
        while True:
            # Positions are only valid until the next _more(), which shifts the buffer: every
            # path that reads more decodes again before using one.
            try:
                obj, end = self._decode(self._buf, self._pos)
            except (RecursionError, ValueError) as exc:
                if not isinstance(exc, json.JSONDecodeError):
                    raise self._unreadable(exc) from None
                if self._eof:
                    raise self.error(f"not valid JSON: {exc.msg}", exc.pos) from None
                pending = len(self._buf) - self._pos
                if pending > MAX_VALUE_CHARS:
                    raise self.error(
                        f"not valid JSON, or one value over {MAX_VALUE_CHARS} characters ({exc.msg})"
                    ) from None
                self._more(want)
                want = 2 * pending  # grow geometrically: a large value is re-decoded O(log n) times
                continue
            if end == len(self._buf) and not self._eof:
                self._more()  # a number at the end of the buffer may go on in the next chunk
                continue
            self._pos = end
            return obj

    skip = value  # a skipped value is decoded and dropped: it is bounded like any other value

    def members(self) -> Iterator[str]:
        """Step through an object: yields each key; the caller consumes its value."""
        self._expect("{")
        if self.peek() == "}":
            self._pos += 1
            return
        while True:
            if self.peek() != '"':
                raise self.error("not valid JSON: expected a key (a string)")
            key = self.value()
            self._expect(":")
            yield key
            char = self.peek()
            self._pos += 1
            if char == ",":
                continue
            if char == "}":
                return
            self._pos -= 1
            raise self.error(f"not valid JSON: expected ',' or '}}', found {char or 'the end of the file'!r}")

    def items(self) -> Iterator[None]:
        """Step through an array: yields before each element; the caller consumes it."""
        self._expect("[")
        if self.peek() == "]":
            self._pos += 1
            return
        while True:
            yield
            char = self.peek()
            self._pos += 1
            if char == ",":
                continue
            if char == "]":
                return
            self._pos -= 1
            raise self.error(f"not valid JSON: expected ',' or ']', found {char or 'the end of the file'!r}")

    def documents(self) -> Iterator[str]:
        """Each top-level value (one document, or JSON Lines): yields its first character."""
        while True:
            char = self.peek()
            if not char:
                return
            yield char
