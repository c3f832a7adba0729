"""What every script in benchmarks/ shares: command line, run metadata, timing and report files.

Each benchmark writes its data, every figure, to ``benchmarks/results/<name>.json`` and usually a
report the docs publish, ``docs/<name>.md`` (or its part of a shared page), rendered from that
JSON as read back: the docs come from the data, and ``--render`` rewrites a page from the
committed data without measuring anything. Keeping that plumbing here keeps the scripts about
what they measure, and keeps the reports' shape from drifting apart script by script.

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
RESULTS = ROOT / "benchmarks" / "results"
DOCS = ROOT / "docs"

# A report's markdown: the text itself, or a function from the file's current text (None when
# there is no file yet) to its new text (None: leave the file alone), for reports that rewrite
# only their part of a doc.
Markdown = str | Callable[[str | None], str | None]
# What turns a result, as read back from its JSON, into its markdown.
Render = Callable[[Any], Markdown]


def parser(
    doc: str | None, *, quick_help: str = "small run for smoke checks", render: bool = True
) -> argparse.ArgumentParser:
    """``--quick``, ``--out`` (data), ``--docs`` (pages) and, for scripts that publish a page,
    ``--render``; the module docstring as help; callers add the rest."""
    ap = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help=quick_help)
    ap.add_argument("--out", type=Path, default=RESULTS, help="directory for the data, <name>.json "
                    "(default benchmarks/results)")
    ap.add_argument("--docs", type=Path, default=DOCS, help="directory for the published page (default docs)")
    if render:
        ap.add_argument("--render", action="store_true",
                        help="rewrite the docs page from <out>/<name>.json, measuring nothing")
    return ap


def load_result(args: argparse.Namespace, name: str) -> Any:
    """The committed data of a benchmark, for ``--render``."""
    return json.loads((args.out / f"{name}.json").read_text(encoding="utf-8"))


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
    args: argparse.Namespace,
    name: str,
    result: Any,
    render: Render | None = None,
    *,
    page: str | None = None,
    indent: int = 2,
    trailing_newline: bool = True,
    seconds: float | None = None,
) -> None:
    """Write ``<args.out>/name.json``, then, when ``render`` is given, ``<args.docs>/<page or name>.md``
    rendered from that JSON as read back; print where they went. With ``args.render`` the JSON is
    the committed one and is not rewritten.

    ``indent`` and ``trailing_newline`` exist because published reports differ in them, and a
    refactor should not rewrite every committed JSON file.
    """
    data = args.out / f"{name}.json"
    wrote = []
    if not getattr(args, "render", False):
        args.out.mkdir(parents=True, exist_ok=True)
        text = json.dumps(result, indent=indent) + ("\n" if trailing_newline else "")
        data.write_text(text, encoding="utf-8")
        wrote.append(str(data))
    if render is not None:
        md = args.docs / f"{page or name}.md"
        markdown = render(json.loads(data.read_text(encoding="utf-8")))
        if callable(markdown):
            markdown = markdown(md.read_text(encoding="utf-8") if md.exists() else None)
        if markdown is not None:
            args.docs.mkdir(parents=True, exist_ok=True)
            md.write_text(markdown, encoding="utf-8")
            wrote.append(f"{md} from {data}")
    print(f"wrote {' and '.join(wrote) or 'nothing'}" + ("" if seconds is None else f" in {seconds:.0f} s"),
          flush=True)
