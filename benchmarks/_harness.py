"""What every script in benchmarks/ shares: command line, run metadata, timing and report files.

Each benchmark writes ``<out>/<name>.json`` (every figure) and usually ``<out>/<name>.md`` (the
report the docs publish). Keeping that plumbing here keeps the scripts about what they measure,
and keeps the reports' shape from drifting apart script by script.

Scripts put the repository root on ``sys.path`` and import this module as ``benchmarks._harness``,
which works both when run as ``python benchmarks/x.py`` and when a test imports a benchmark.
"""

from __future__ import annotations

import argparse
import json
import platform
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]

# A report's markdown: the text itself, or a function from the file's current text (None when
# there is no file yet) to its new text, for reports that rewrite only their part of a doc.
Markdown = str | Callable[[str | None], str]


def parser(doc: str | None, *, quick_help: str = "small run for smoke checks") -> argparse.ArgumentParser:
    """``--quick`` and ``--out`` (default docs/), the module docstring as help; callers add the rest."""
    ap = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help=quick_help)
    ap.add_argument("--out", type=Path, default=ROOT / "docs", help="directory for the report")
    return ap


def run_info(quick: bool, **extra: Any) -> dict[str, Any]:
    """The leading keys of a result: was it a smoke run, and on what. ``extra`` follows in order."""
    return {"quick": quick, "platform": platform.platform(), "python": platform.python_version(), **extra}


def today() -> str:
    """The run's date, as reports that state one print it."""
    return time.strftime("%Y-%m-%d")


class Timer:
    """Wall-clock seconds since creation: every report says how long its run took."""

    def __init__(self) -> None:
        self.start = time.perf_counter()

    @property
    def seconds(self) -> float:
        return time.perf_counter() - self.start


def write_report(
    out: Path,
    name: str,
    result: Any,
    markdown: Markdown | None = None,
    *,
    indent: int = 2,
    trailing_newline: bool = True,
    seconds: float | None = None,
) -> None:
    """Write ``out/name.json`` and, when given, ``out/name.md``; print where they went.

    ``indent`` and ``trailing_newline`` exist because published reports differ in them, and a
    refactor should not rewrite every committed JSON file.
    """
    out.mkdir(parents=True, exist_ok=True)
    text = json.dumps(result, indent=indent) + ("\n" if trailing_newline else "")
    (out / f"{name}.json").write_text(text, encoding="utf-8")
    wrote = str(out / f"{name}.json")
    if markdown is not None:
        md = out / f"{name}.md"
        if callable(markdown):
            markdown = markdown(md.read_text(encoding="utf-8") if md.exists() else None)
        md.write_text(markdown, encoding="utf-8")
        wrote = f"{md} and {name}.json"
    print(f"wrote {wrote}" + ("" if seconds is None else f" in {seconds:.0f} s"), flush=True)
