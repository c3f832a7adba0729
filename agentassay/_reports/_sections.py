"""Report sections: what a plugin adds to the terminal table and the PR comment, rendered from a results file.

The renderers know no feature: they lay out the verdict table and the cost, then the sections the
plugins give (``agentassay_report_sections``). A section is data, not markup: plain strings in it
are untrusted and escaped by the renderer; text the plugin escaped itself (with ``report.escape``,
which also redacts secrets) is printed as it is. ``place`` says where it goes. What a plugin says about one
scenario (its cell in the verdict table, a line of its details, a chart) comes as a :class:`ScenarioPart`
from the same hook.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from .._plugins import PluginError, default_plugins

if TYPE_CHECKING:
    from .._plugins import Plugins
    from .._results import Results

FORMATS = ("terminal", "markdown", "html", "junit")
PLACES = ("body", "cost", "warnings", "settings")


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
    before the verdict table, one warning line per paragraph and item (the change alerts), or ``"settings"``:
    each paragraph a plain ``"name on"`` phrase in the run's settings line (Markdown and HTML).
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
    # Markdown: the whole section collapsed in a <details> (its title and first paragraph the summary line),
    # for what a reviewer may want but should not have to scroll past.
    fold: bool = False

    def __post_init__(self) -> None:
        if self.place not in PLACES:
            raise ValueError(f"section {self.key!r}: place must be one of {', '.join(PLACES)}; got {self.place!r}")


@dataclass(frozen=True)
class ScenarioPart:
    """What a plugin says about the scenario named ``scenario``, in every report that shows scenarios.

    ``cell``: the verdict table's Behaviour cell (Markdown and HTML; plain text is escaped, ``alert``
    highlights it); ``fact``: ``(label, text)``, a line of the scenario's details (the terminal lists a passing scenario that has one); ``figure``:
    ``(svg, caption)``, the plugin's own chart after the sequential test's (HTML; the SVG is checked as a
    section's is); ``path_note``: a sentence added to the caption of the sequential test's chart (HTML);
    ``properties``: JUnit figures ``(key, value)``; ``lines``: JUnit ``(key, text)`` lines of the
    testcase's output and failure summary. Every text but a marked-up ``cell`` is escaped by the renderer.
    """

    scenario: str
    cell: str | None = None
    alert: bool = False
    fact: tuple[str, str] | None = None
    figure: tuple[str, str] | None = None
    path_note: str | None = None
    properties: tuple[tuple[str, str], ...] = ()
    lines: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class ReportContext:
    """What a report hook is told: the format (``"terminal"``, ``"markdown"``, ``"html"`` or ``"junit"``), the
    secrets to redact, and how to escape and print money.

    ``escape(text, width)`` makes untrusted text safe (redacted, clipped, escaped for the format);
    ``markup(text)`` declares text the plugin composed itself — its own markup around escaped parts —
    safe to print as it is. Plain strings in a section are escaped whole. ``clean(text, width)``: redacted,
    invisible characters dropped, clipped, but not escaped (for text the plugin escapes itself, as in an SVG).
    """

    format: str
    secrets: tuple[str, ...] = ()
    escape: Callable[..., str] = field(default=lambda text, width=None: str(text))
    usd: Callable[[float], str] = field(default=lambda x: f"${x:.4f}")
    markup: Callable[[str], str] = field(default=str)
    clean: Callable[..., str] = field(default=lambda text, width=None: str(text))


@dataclass(frozen=True)
class Collected:
    """What the plugins gave one report: sections, scenario parts (by scenario, in call order), and a
    warning per plugin that failed."""

    sections: list[Section] = field(default_factory=list)
    parts: dict[str, list[ScenarioPart]] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)


def collect(results: Results, report: ReportContext, plugins: Plugins | None = None) -> Collected:
    """The plugins' sections and scenario parts for ``results`` (never an exception: a report section
    must not cost the verdict its comment)."""

    out = Collected()
    try:
        hooks = (plugins or default_plugins()).for_results(results)
    except PluginError as exc:
        out.warnings.append(f"report sections skipped: {exc}")
        return out
    for got in hooks.call("agentassay_report_sections", results=results, report=report):
        for s in got:
            if isinstance(s, Section):
                out.sections.append(s)
            elif isinstance(s, ScenarioPart):
                out.parts.setdefault(s.scenario, []).append(s)
            else:
                out.warnings.append(f"a report section that is not a Section was ignored: {type(s).__name__}")
    out.warnings.extend([f"report section of plugin '{f.plugin}' skipped: {f.error}" for f in hooks.failures])
    return out


def collect_sections(
    results: Results, report: ReportContext, plugins: Plugins | None = None
) -> tuple[list[Section], list[str]]:
    """The plugins' sections for ``results`` and a warning per plugin that failed (scenario parts left out)."""
    got = collect(results, report, plugins)
    return got.sections, got.warnings


def settings_words(sections: Sequence[Section]) -> str:
    """``", name on"`` for the run's settings line, from every section placed with the settings."""
    return "".join(f", {p}" for s in sections if s.place == "settings" for p in s.paragraphs)


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
