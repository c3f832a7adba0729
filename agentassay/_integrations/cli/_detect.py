"""Find the agent of a repository by reading its Python files, never importing them (``agentassay init``).

Importing a user's module runs its code (a client that needs a key, a script without a ``__main__`` guard), so
``init`` reads source only: a module-level ``x = Agent(...)`` of the OpenAI Agents SDK, an object built by one of
the frameworks the OpenTelemetry adapters know (``_otel.framework_of``: the module prefixes of ``_otel.PROFILES``,
the table ``detect`` reads), or a function whose name says it answers (``answer``, ``support_agent``, ``chat``)
and that takes the scenario input. Only ``agentassay init --agent`` imports, and only what it names, and only when its source
cannot tell.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..adapters._otel import apply_env_defaults, detect, framework_of
from ..adapters._resolve import AgentLoadError, import_entry, is_sdk_agent

SDK = "openai-agents"
CALLABLE = "callable"
UNKNOWN = "unknown"
# Folders that hold no agent of the project (environments, caches, builds, tests).
SKIP_DIRS = frozenset({
    "venv", "env", "node_modules", "site-packages", "__pycache__", "build", "dist", "tests", "test", "docs",
    "examples", "benchmarks",
})
SKIP_FILES = frozenset({"setup.py", "conftest.py", "noxfile.py", "manage.py"})
MAX_FILES = 5000
MAX_BYTES = 1_000_000
# A function is a candidate when one of its name's words says it answers a request, unless its first word
# says it builds or hands over one (a factory, a handoff tool).
ANSWER_WORDS = frozenset({"agent", "answer", "respond", "reply", "chat", "ask", "bot", "assistant"})
ANSWER_VERBS = frozenset({"answer", "respond", "reply", "chat", "ask"})  # answer_question, respond_to_user
NOT_ANSWERING = frozenset({
    "build", "make", "create", "get", "load", "new", "transfer", "handoff", "setup", "is", "has", "find", "parse",
    "format", "print", "check", "validate",
})
# A module-level object made by any call (`agent = build_graph(...)`) is a candidate when its name ends so.
OBJECT_WORDS = frozenset({"agent", "graph", "crew", "team", "workflow", "assistant", "bot"})
# Names of framework objects that are agents (not models, tools or settings).
AGENT_WORDS = ("agent", "crew", "team", "workflow", "swarm", "groupchat", "graph", "app")
KIND_TEXT = {
    SDK: "an OpenAI Agents SDK Agent",
    CALLABLE: "a Python callable",
    UNKNOWN: "an object made by a call; what it is shows when it runs",
}


@dataclass(frozen=True)
class Candidate:
    """An agent found in the source: where it is and what kind of object it is."""

    entry: str  # module:attr, importable from the scanned folder
    kind: str  # SDK, a framework name of PROFILES, CALLABLE or UNKNOWN
    file: str = ""  # relative to the scanned folder
    line: int = 0
    score: int = 0  # 3 an agent object, 2 a function named like one
    name: str | None = None  # the Agent's name="..." when written as a literal
    tools: tuple[str, ...] = field(default_factory=tuple)  # tool names written in its call (tools=[...])

    def describe(self) -> str:
        kind = KIND_TEXT.get(self.kind) or f"a {self.kind} agent"
        where = f", {self.file}:{self.line}" if self.file else ""
        return f"{self.entry} ({kind}{where})"


def _imports(tree: ast.Module) -> dict[str, str]:
    """Local name -> the dotted name it stands for, from the module's top-level imports."""
    names: dict[str, str] = {}
    for node in tree.body:
        if isinstance(node, ast.Import):
            for a in node.names:
                names[a.asname or a.name.split(".")[0]] = a.name if a.asname else a.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for a in node.names:
                names[a.asname or a.name] = f"{node.module}.{a.name}"
    return names


def _dotted(node: ast.expr, imports: dict[str, str]) -> str | None:
    """``agents.Agent`` for ``Agent(...)`` after ``from agents import Agent`` (``Agent[Ctx]`` too)."""
    if isinstance(node, ast.Subscript):
        node = node.value
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    root = imports.get(node.id)
    return ".".join([root, *reversed(parts)]) if root else None


def _kind_of_call(call: ast.Call, imports: dict[str, str], frameworks: set[str]) -> str | None:
    """What an assignment's call builds: the SDK's Agent, a framework's agent object, or nothing we know."""
    dotted = _dotted(call.func, imports)
    if dotted is not None:
        module, _, last = dotted.rpartition(".")
        if (module == "agents" or module.startswith("agents.")) and last == "Agent":
            return SDK
        framework = framework_of(dotted)
        if framework is not None and any(w in last.lower() for w in AGENT_WORDS):
            return framework
    # builder.compile(): a LangGraph graph, in a module that imports langgraph
    if isinstance(call.func, ast.Attribute) and call.func.attr == "compile" and "langgraph" in frameworks:
        return "langgraph"
    return None


def _literal(call: ast.Call, key: str) -> str | None:
    for kw in call.keywords:
        if kw.arg == key and isinstance(kw.value, ast.Constant) and isinstance(kw.value.value, str):
            return kw.value.value
    return None


def _tool_names(call: ast.Call) -> tuple[str, ...]:
    for kw in call.keywords:
        if kw.arg == "tools" and isinstance(kw.value, (ast.List, ast.Tuple)):
            return tuple(e.id for e in kw.value.elts if isinstance(e, ast.Name))
    return ()


def _takes_input(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """One required positional parameter (the scenario input); every other one has a default."""
    args = fn.args
    positional = [*args.posonlyargs, *args.args]
    required = len(positional) - len(args.defaults)
    kw_required = sum(1 for d in args.kw_defaults if d is None)
    return required == 1 and kw_required == 0 and positional[0].arg not in ("self", "cls")


def _answers(name: str) -> bool:
    words = name.lower().split("_")
    if name.startswith(("_", "test")) or words[0] in NOT_ANSWERING:
        return False
    return words[-1] in ANSWER_WORDS or words[0] in ANSWER_VERBS


def scan_module(tree: ast.Module, module: str, file: str = "") -> list[Candidate]:
    """The candidates of one parsed module, by module-level assignment or function definition."""
    imports = _imports(tree)
    frameworks = {f for f in (framework_of(v) for v in imports.values()) if f}
    found: list[Candidate] = []
    used: set[str] = set()  # names in another agent's call (handoffs, sub-agents, a builder): not entries
    for node in tree.body:
        if isinstance(node, (ast.Assign, ast.AnnAssign)) and isinstance(node.value, ast.Call):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if len(targets) != 1 or not isinstance(targets[0], ast.Name):
                continue
            kind = _kind_of_call(node.value, imports, frameworks)
            name = targets[0].id
            if kind is None and not name.startswith("_") and name.lower().rsplit("_", 1)[-1] in OBJECT_WORDS:
                kind = UNKNOWN
            if kind is None:
                continue
            used |= {n.id for n in ast.walk(node.value) if isinstance(n, ast.Name)}  # builder.compile() too
            found.append(Candidate(
                f"{module}:{targets[0].id}", kind, file, node.lineno, 3,
                _literal(node.value, "name"), _tool_names(node.value),
            ))
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and _answers(node.name) and _takes_input(node):
            found.append(Candidate(f"{module}:{node.name}", CALLABLE, file, node.lineno, 2))
    return [c for c in found if c.score < 3 or c.entry.partition(":")[2] not in used]


def module_name(relative: Path) -> str | None:
    """The dotted module of a file relative to the scanned folder (``src/`` layouts drop ``src``), or None."""
    parts = list(relative.with_suffix("").parts)
    if parts and parts[-1] == "__init__":
        parts.pop()
    if len(parts) > 1 and parts[0] == "src":
        parts.pop(0)
    if not parts or not all(p.isidentifier() for p in parts):
        return None
    return ".".join(parts)


def python_files(root: Path) -> Iterator[Path]:
    """The folder's Python files in a stable order, skipping hidden folders, environments, tests and docs."""
    count = 0
    stack = [root]
    while stack:
        folder = stack.pop()
        try:
            entries = sorted(folder.iterdir())
        except OSError:
            continue
        subdirs = []
        for path in entries:
            if path.name.startswith("."):
                continue
            if path.is_dir() and not path.is_symlink():
                if path.name not in SKIP_DIRS and not (path / "pyvenv.cfg").exists():
                    subdirs.append(path)
            elif path.suffix == ".py" and path.name not in SKIP_FILES and not path.name.startswith("test_"):
                count += 1
                if count > MAX_FILES:
                    return
                yield path
        stack.extend(reversed(subdirs))


def scan(root: Path) -> list[Candidate]:
    """Every candidate under ``root``, best first (agent objects before functions), in file order."""
    found: list[Candidate] = []
    for path in python_files(root):
        relative = path.relative_to(root)
        module = module_name(relative)
        if module is None:
            continue
        try:
            if path.stat().st_size > MAX_BYTES:
                continue
            tree = ast.parse(path.read_bytes(), filename=str(path))
        except (OSError, SyntaxError, ValueError):
            continue
        found += scan_module(tree, module, relative.as_posix())
    return sorted(found, key=lambda c: -c.score)


def module_file(root: Path, module: str) -> Path | None:
    """The source file of ``module`` under ``root`` (or ``root/src``), if it is there."""
    for base in (root, root / "src"):
        stem = base.joinpath(*module.split("."))
        for path in (stem.with_suffix(".py"), stem / "__init__.py"):
            if path.is_file():
                return path
    return None


def classify(root: Path, entry: str) -> Candidate:
    """What ``--agent ENTRY`` is: from its source when that shows it, else by importing it (it was asked for).

    An entry that cannot be imported is not an error here: ``init`` writes the suite and ``run`` says why.
    """
    module, _, attr = entry.partition(":")
    path = module_file(root, module)
    if path is not None:
        try:
            tree = ast.parse(path.read_bytes(), filename=str(path))
        except (OSError, SyntaxError, ValueError):
            tree = None
        if tree is not None:
            for c in scan_module(tree, module, path.relative_to(root).as_posix()):
                if c.entry == entry:
                    return c
            for node in tree.body:  # a function named otherwise, or an agent a factory makes
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == attr:
                    return Candidate(entry, CALLABLE, path.relative_to(root).as_posix(), node.lineno)
    return _imported(root, entry)


def _imported(root: Path, entry: str) -> Candidate:
    apply_env_defaults()  # as the runner does before an import: frameworks read some at import
    try:
        obj: Any = import_entry(entry, search=[root])
    except AgentLoadError:
        return Candidate(entry, UNKNOWN)
    if is_sdk_agent(obj):
        return Candidate(entry, SDK, name=getattr(obj, "name", None),
                         tools=tuple(getattr(t, "name", "") for t in getattr(obj, "tools", ()) or ()))
    framework = detect(obj)
    if framework is not None:
        return Candidate(entry, framework)
    if callable(obj):
        return Candidate(entry, CALLABLE)
    return Candidate(entry, UNKNOWN)


__all__ = ["CALLABLE", "SDK", "UNKNOWN", "Candidate", "classify", "module_name", "scan", "scan_module"]
