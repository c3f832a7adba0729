"""No function of the package is over 100 lines (issue 23): a long function hides the steps a reader needs
named. Counted as ``end_lineno - lineno + 1`` (decorators and docstring included)."""

from __future__ import annotations

import ast
from pathlib import Path

import agentassay

PACKAGE = Path(agentassay.__file__).parent
LIMIT = 100


def test_no_function_is_over_100_lines() -> None:
    long = []
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                n = node.end_lineno - node.lineno + 1  # type: ignore[operator]
                if n > LIMIT:
                    long.append(f"{path.relative_to(PACKAGE)}:{node.lineno} {node.name}: {n} lines")
    assert long == [], "split these into named helpers:\n" + "\n".join(long)
