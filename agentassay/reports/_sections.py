"""Report sections: what a plugin adds to the terminal table and the PR comment, rendered from a results file.

The renderers know no feature: they lay out the verdict table and the cost, then the sections the
plugins give (``agentassay_report_sections``). A section is data, not markup: plain strings in it
are untrusted and escaped by the renderer; text the plugin escaped itself (with ``report.escape``,
which also redacts secrets) is printed as it is. ``place`` says where it goes.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..plugins import Plugins
    from ..results import Results

FORMATS = ("terminal", "markdown", "html")
PLACES = ("body", "cost", "warnings")


@dataclass(frozen=True)
class Diagram:
    """A Mermaid diagram (Markdown only). It is the first thing dropped when a comment runs out of room,
    and folded under ``fold_title`` when it is long."""

    mermaid: str
    legend: str | None = None
    fold_title: str = "Diagram"
    dropped: str = "The diagram is not shown here, to keep this report within its size limit; see {pointer}."


@dataclass(frozen=True)
class Section:
    """What one plugin adds to one report.

    ``place``: ``"body"`` after the verdict table (a ``title`` heading, ``paragraphs``, a bullet list
    of ``items``, a ``diagram``), ``"cost"`` with the cost lines (``paragraphs`` only), or ``"warnings"``
    before the verdict table, one warning line per paragraph and item (the change alerts).
    ``extra_usd``: money spent outside the scenarios' trials, e.g. ``(("second model", 0.0016),)``, shown in
    the cost line as ``(+ $0.0016 second model)``. ``noun`` names the items in "… 3 more gaps".
    """

    key: str
    title: str | None = None
    paragraphs: tuple[str, ...] = ()
    items: tuple[str, ...] = ()
    diagram: Diagram | None = None
    place: str = "body"
    extra_usd: tuple[tuple[str, float], ...] = ()
    noun: str = "items"
    # HTML only: an inline <svg> the plugin drew itself, every text in it escaped (a graph).
    svg: str | None = None

    def __post_init__(self) -> None:
        if self.place not in PLACES:
            raise ValueError(f"section {self.key!r}: place must be one of {', '.join(PLACES)}; got {self.place!r}")


@dataclass(frozen=True)
class ReportContext:
    """What a report hook is told: the format (``"terminal"``, ``"markdown"`` or ``"html"``), the secrets to
    redact, and how to escape and print money.

    ``escape(text, width)`` makes untrusted text safe (redacted, clipped, escaped for the format);
    ``markup(text)`` declares text the plugin composed itself — its own markup around escaped parts —
    safe to print as it is. Plain strings in a section are escaped whole.
    """

    format: str
    secrets: tuple[str, ...] = ()
    escape: Callable[..., str] = field(default=lambda text, width=None: str(text))
    usd: Callable[[float], str] = field(default=lambda x: f"${x:.4f}")
    markup: Callable[[str], str] = field(default=str)


def collect_sections(
    results: Results, report: ReportContext, plugins: Plugins | None = None
) -> tuple[list[Section], list[str]]:
    """The plugins' sections for ``results`` and a warning per plugin that failed (never an exception:
    a report section must not cost the verdict its comment)."""
    from ..plugins import PluginError, default_plugins

    try:
        hooks = (plugins or default_plugins()).for_results(results)
    except PluginError as exc:
        return [], [f"report sections skipped: {exc}"]
    sections: list[Section] = []
    warnings: list[str] = []
    for got in hooks.call("agentassay_report_sections", results=results, report=report):
        for s in got:
            if isinstance(s, Section):
                sections.append(s)
            else:
                warnings.append(f"a report section that is not a Section was ignored: {type(s).__name__}")
    warnings += [f"report section of plugin '{f.plugin}' skipped: {f.error}" for f in hooks.failures]
    return sections, warnings


def warning_lines(sections: Sequence[Section]) -> list[str]:
    """The lines of every section placed with the warnings, in order (each still to be escaped or markup)."""
    return [line for s in sections if s.place == "warnings" for line in (*s.paragraphs, *s.items)]


def replace_section(sections: Sequence[Section], new: Section) -> list[Section]:
    """``new`` in place of the section with its key (appended when there is none)."""
    out = [new if s.key == new.key else s for s in sections]
    return out if any(s.key == new.key for s in sections) else [*out, new]


def extra_cost(sections: Sequence[Section], usd: Callable[[float], str]) -> str:
    """`` (+ $0.0016 second model)`` for the cost line, from every section's ``extra_usd``."""
    return "".join(f" (+ {usd(x)} {label})" for s in sections for label, x in s.extra_usd)
