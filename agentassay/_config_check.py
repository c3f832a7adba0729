"""The pieces every hand-written config validator shares: the did-you-mean rule, how a found value is
quoted, the "unknown key" sentence and the YAML line of a nested key.

Config blocks (the suite, and every feature's and integration's own keys) are validated by hand because
their errors must name a line and suggest the intended key, which schema libraries do not do and which would
cost ~0.5 s of import for one model. Sharing these helpers keeps
one rule for suggestions instead of a copy per feature. Cheap to import (stdlib only; PyYAML when a
line is looked up): the pytest plugin and ``agentassay --help`` use it without loading YAML.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import yaml

CUTOFF = 0.6  # difflib's similarity ratio a suggestion needs (difflib's own default)
MARGIN = 0.05  # a runner-up this close makes the best guess a coin toss: suggest nothing
SHOW_WIDTH = 60


def closest(name: str, valid: Iterable[str], *, aliases: Mapping[str, str] | None = None) -> str | None:
    """THE did-you-mean rule: the valid name most like ``name``, or None when none is clearly meant.

    1. ``aliases`` (lower-case word -> valid name): words people reach for that no spelling metric maps
       to the intended name ('source' for 'from'); used only when the target is valid.
    2. The closest by spelling, case kept: difflib ratio >= 0.6 ('trails' -> 'trials').
    3. Else the same on lower-cased names, so 'TRIALS' or 'Max_Mutants' still find theirs.
    In 2 and 3 a runner-up within 0.05 of the best means no suggestion: names sharing a long affix
    (ids ending in '_agent') look alike, and a guess between two is worse than none.
    A misspelling thus gets the same suggestion wherever it is made.
    """
    pool = list(dict.fromkeys(valid))
    if not isinstance(name, str) or not pool:
        return None
    if aliases:
        alias = aliases.get(name.lower())
        if alias in pool:
            return alias
    best = _clear_best(name, pool)
    if best is not None:
        return best
    lowered = {v.lower(): v for v in pool}
    best = _clear_best(name.lower(), list(lowered))
    return lowered[best] if best is not None else None


def _clear_best(name: str, pool: list[str]) -> str | None:
    close = difflib.get_close_matches(name, pool, n=2, cutoff=CUTOFF)
    if len(close) == 2:
        first, second = (difflib.SequenceMatcher(None, name, c).ratio() for c in close)
        if first - second < MARGIN:
            return None
    return close[0] if close else None


def did_you_mean(best: str | None) -> str:
    """`` Did you mean 'x'?`` for a suggestion, else an empty string: the one way messages offer it."""
    return f" Did you mean '{best}'?" if best else ""


def unknown_message(noun: str, name: Any, valid: Iterable[str], plural: str | None = None) -> tuple[str, str | None]:
    """``unknown <noun> 'x'. Did you mean 'y'? Valid <nouns>: a, b.`` and the suggestion (None when none)."""
    valid = list(valid)
    best = closest(str(name), valid)
    message = f"unknown {noun} {name!r}.{did_you_mean(best)} Valid {plural or noun + 's'}: {', '.join(valid)}."
    return message, best


def show(value: Any, width: int = SHOW_WIDTH) -> str:
    """A found value as messages quote it: its repr, clipped to ``width`` characters with an ellipsis."""
    text = repr(value)
    return text if len(text) <= width else text[: width - 1] + "…"


def yaml_line(root: yaml.Node | None, key: str) -> int | None:
    """The 1-based line of a dotted key (``scenarios[0].my_plugin[1].key``) in a composed YAML tree.

    Stops at the deepest part that exists, so a key the file does not spell out still gets its parent's
    line; None when not even the first part is there.
    """
    import yaml

    node, line = root, None
    for token in re.findall(r"\[\d+\]|[^.\[\]]+", key):
        if isinstance(node, yaml.SequenceNode) and token.startswith("["):
            i = int(token[1:-1])
            if i >= len(node.value):
                return line
            node = node.value[i]
            line = node.start_mark.line + 1
        elif isinstance(node, yaml.MappingNode) and not token.startswith("["):
            for knode, vnode in node.value:
                if isinstance(knode, yaml.ScalarNode) and knode.value == token:
                    node, line = vnode, knode.start_mark.line + 1
                    break
            else:
                return line
        else:
            return line
    return line


class KeyLines:
    """Lines of keys inside a plugin's value, from the suite file composed again.

    The loader keeps only the line of a plugin key's value (``my_plugin:``); errors inside
    it should point at the item or key itself. Without a file (a suite parsed from text) or when the file
    no longer reads, every lookup is None and callers fall back to that one line.
    """

    def __init__(self, path: Path | None) -> None:
        import yaml

        self.root: yaml.Node | None = None
        if path is not None:
            try:
                self.root = yaml.compose(Path(path).read_text(encoding="utf-8-sig"), Loader=yaml.SafeLoader)
            except (OSError, UnicodeDecodeError, yaml.YAMLError):
                self.root = None

    def line(self, key: str) -> int | None:
        return yaml_line(self.root, key)
