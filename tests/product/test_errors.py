"""One error root and one exit-code enum (issue 23, step 4): every exception class the package defines derives
from ``AgentAssayError`` and carries its exit code; exit codes are written only in ``ExitCode``."""

from __future__ import annotations

import ast
import importlib
import inspect
import pkgutil
from pathlib import Path

import pytest

import agentassay
from agentassay._errors import AgentAssayError, ExitCode

PACKAGE = Path(agentassay.__file__).parent
# BaseException on purpose: SIGTERM outside a run must not be caught by ``except Exception`` in user code
# or ours; it ends the command like Ctrl-C (cli/__init__.py).
NOT_ERRORS = {"agentassay._integrations.cli._Terminated"}
# Modules that need an optional framework to import (tests skip them when it is absent).
OPTIONAL = {"agentassay._integrations.adapters._openai_agents"}


def _modules() -> list[str]:
    names = ["agentassay"]
    for info in pkgutil.walk_packages([str(PACKAGE)], prefix="agentassay."):
        if info.name != "agentassay.__main__":  # it runs the CLI
            names.append(info.name)
    return names


def _exception_classes() -> list[type[BaseException]]:
    found: list[type[BaseException]] = []
    for name in _modules():
        try:
            module = importlib.import_module(name)
        except ImportError:
            if name in OPTIONAL:
                continue
            raise
        for _, obj in inspect.getmembers(module, inspect.isclass):
            if issubclass(obj, BaseException) and obj.__module__ == name:
                found.append(obj)
    return found


def test_every_exception_class_derives_from_the_root() -> None:
    classes = _exception_classes()
    assert len(classes) >= 25  # the walk found the package's errors (30 when this was written)
    stray = sorted(
        f"{c.__module__}.{c.__qualname__}"
        for c in classes
        if not issubclass(c, AgentAssayError) and f"{c.__module__}.{c.__qualname__}" not in NOT_ERRORS
    )
    assert stray == [], f"derive these from agentassay._errors.AgentAssayError: {stray}"


def test_each_error_says_its_exit_code() -> None:
    from agentassay._integrations.adapters import AgentLoadError
    from agentassay._results import ResultsError
    from agentassay._spec import SpecError

    assert SpecError("x").exit_code is ExitCode.USAGE and ResultsError("x").exit_code is ExitCode.USAGE
    assert AgentLoadError("x").exit_code is ExitCode.AGENT
    for c in _exception_classes():
        if issubclass(c, AgentAssayError):
            assert isinstance(c.exit_code, ExitCode), c


def test_the_enum_is_the_documented_table() -> None:
    assert {m.name: int(m) for m in ExitCode} == {
        "DEPLOY": 0, "BLOCK": 1, "MANUAL": 2, "USAGE": 3, "AGENT": 4, "SIGINT": 130, "SIGTERM": 143,
    }
    assert ExitCode.OK is ExitCode.DEPLOY
    assert ExitCode.for_signal("SIGTERM") == 143 and ExitCode.for_signal("SIGINT") == 130
    cli_doc = (PACKAGE.parent / "docs" / "cli.md").read_text(encoding="utf-8")
    for member in ExitCode:
        assert f"| {int(member)} " in cli_doc or f"/ {int(member)} |" in cli_doc, member


def _code_literals(tree: ast.AST) -> list[tuple[int, str]]:
    """``return 3``, ``sys.exit(4)``, ``SystemExit(130)``, ``os._exit(1)``, ``EXIT_X = 3``: an exit code
    written as a number."""
    out: list[tuple[int, str]] = []

    def literal(node: ast.AST | None) -> bool:
        return isinstance(node, ast.Constant) and type(node.value) is int

    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            f = node.func
            name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
            if name in ("exit", "_exit", "SystemExit") and node.args and literal(node.args[0]):
                out.append((node.lineno, ast.unparse(node)))
        elif isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name) and target.id.startswith("EXIT") and literal(node.value):
                    out.append((node.lineno, ast.unparse(node)))
    return out


def _command_returns(tree: ast.AST) -> list[tuple[int, str]]:
    """``return <int>`` inside a click command or a CLI/Action function that returns an exit code."""
    out = []
    for fn in ast.walk(tree):
        if isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef) and ast.unparse(fn.returns or ast.Constant(None)) == "int":
            for node in ast.walk(fn):
                if isinstance(node, ast.Return) and isinstance(node.value, ast.Constant) and type(node.value.value) is int:
                    out.append((node.lineno, f"{fn.name}: {ast.unparse(node)}"))
    return out


@pytest.mark.parametrize("folder", ["cli", "github", "runner"])
def test_exit_codes_are_written_only_in_the_enum(folder: str) -> None:
    found = []
    for path in sorted((PACKAGE / folder).rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        found += [f"{path.relative_to(PACKAGE)}:{n}: {s}" for n, s in _code_literals(tree) + _command_returns(tree)]
    assert found == [], "write these as agentassay._errors.ExitCode members:\n" + "\n".join(found)


def test_no_exit_code_literal_anywhere_in_the_package() -> None:
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        found += [f"{path.relative_to(PACKAGE)}:{n}: {s}" for n, s in _code_literals(ast.parse(path.read_text()))]
    assert found == [], "\n".join(found)
