"""What a recording measured, conservatively: the identity ``run --pool`` compares before pooling trials.

Every results file carries it as ``agent.identity`` (docs/runner.md, "Pooling baselines"). Two
recordings pool only when every field is equal; anything that could change what a trial does
changes a field, so equal identities mean the same agent, model, suite and software. Fields:

* ``suite_sha256``: the suite file's SHA-256 (inputs, checks, config as written);
* ``model``: the suite's model configuration, the model the adapter resolved (provider, name,
  temperature, base URL, offline behaviour source) and a SHA-256 of the offline behaviour table;
* ``settings``: the settings that shape one trial and can be overridden outside the suite file
  (timeout, retries, errors, concurrency, prices, and what a feature's part of config says shapes a trial);
* ``agent``: the entry string, the adapter, a SHA-256 of the adapter's description of the agent
  (instructions, tools, handoffs, framework version) and ``source``: a SHA-256 over the files of the
  top-level package (or, for a top-level module, the folder) of every module the trials run — the
  entry module, the modules of checks that name code (``python`` and kinds features add, _spec/_kinds.py)
  and a ``module:attr`` offline behaviour;
* ``versions``: agentassay, Python and the agent framework (``versions()``).

``full`` (not compared) says whether the run was a full recording (``run --full``): only those pool.
A digest that cannot be computed (the suite file's, the source's, the agent description's) is None and
never matches, not even another None: such a file never pools; nor does a file without an identity.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from collections.abc import Iterable, Mapping
from dataclasses import asdict
from pathlib import Path
from typing import Any

from .._spec._kinds import names_code
from .._spec._settings import settings_parts

SCHEME = 1
FIELDS = ("suite_sha256", "model", "settings", "agent", "versions")
LABELS = {
    "suite_sha256": "the suite file differs",
    "model": "the model differs",
    "settings": "the trial settings differ",
    "agent": "the agent differs",
    "versions": "the software versions differ",
}
MAX_FILES = 10_000  # more files under an agent's package: no source digest (the identity never matches)
MAX_BYTES = 256 * 1024 * 1024
LISTED_FILES = 2_000  # per-file digests kept in the results file (for saying which file changed)
_SKIP_DIRS = frozenset({"__pycache__", "node_modules", "site-packages", "dist-packages"})
_SKIP_SUFFIXES = (".pyc", ".pyo")
# Settings that shape what one trial does and that a command line or the Action can change without
# changing the suite file (whose digest covers the rest).
_TRIAL_SETTINGS = ("timeout", "retries", "errors", "concurrency", "prices")


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _canonical(value: Any) -> bytes:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), default=str, ensure_ascii=False).encode()


def _module_root(module_name: str) -> tuple[Path | None, bool, str | None]:
    """The folder holding ``module_name``'s top-level package (or the folder of a top-level module),
    whether it is a package, or why there is none."""
    module = sys.modules.get(module_name)
    file = getattr(module, "__file__", None) if module is not None else None
    if not file:
        return None, False, f"module '{module_name}' has no source file"
    path = Path(file).resolve()
    if not path.is_file():
        return None, False, f"the source file of module '{module_name}' ({path}) is gone"
    parts = module_name.split(".")
    up = len(parts) - 1 if path.name == "__init__.py" else len(parts) - 2
    if up < 0:  # a top-level module: the folder that holds it
        return path.parent, False, None
    root = path.parent
    for _ in range(up):
        root = root.parent
    return root, True, None


def _walk(root: Path, package: bool) -> tuple[list[tuple[str, Path]], str | None]:
    """``(relative path, path)`` of the files the digest covers, sorted; or why they cannot be digested.

    Every ``*.py`` file; in a package folder (one with ``__init__.py``, or the package root) also every
    other file (prompts, templates, behaviour tables). Hidden files and folders, ``__pycache__``,
    compiled ``.pyc`` and virtual environments are skipped.
    """
    found: list[tuple[str, Path]] = []
    total = 0
    for folder, dirs, files in os.walk(root):
        here = Path(folder)
        dirs[:] = sorted(
            d for d in dirs
            if not d.startswith(".") and d not in _SKIP_DIRS and not (here / d / "pyvenv.cfg").exists()
        )
        data_too = (package and here == root) or "__init__.py" in files
        for name in sorted(files):
            if name.startswith(".") or name.endswith(_SKIP_SUFFIXES):
                continue
            if not (name.endswith(".py") or data_too):
                continue
            path = here / name
            if not path.is_file():
                continue
            found.append((path.relative_to(root).as_posix(), path))
            if len(found) > MAX_FILES:
                return [], f"{root} holds more than {MAX_FILES:,} files"
            total += path.stat().st_size
            if total > MAX_BYTES:
                return [], f"{root} holds more than {MAX_BYTES // 2**20} MB"
    return sorted(found), None


def source_digest(modules: Iterable[str]) -> dict[str, Any]:
    """SHA-256 over the files of the top-level packages holding ``modules`` (each file: its path
    relative to the package's parent folder and the SHA-256 of its bytes, sorted by path)."""
    roots: dict[Path, bool] = {}
    for name in sorted(set(modules)):
        root, package, problem = _module_root(name)
        if root is None:
            return {"sha256": None, "problem": problem}
        roots[root] = roots.get(root, False) or package
    h = hashlib.sha256()
    listed: dict[str, str] = {}
    labels = []
    for root in sorted(roots):
        files, problem = _walk(root, roots[root])
        if problem is not None:
            return {"sha256": None, "problem": problem}
        label = root.name if roots[root] else "."
        labels.append(_shown(root))
        for rel, path in files:
            try:
                digest = _sha(path.read_bytes())
            except OSError as exc:
                return {"sha256": None, "problem": f"{path}: {exc.strerror or exc}"}
            key = f"{label}/{rel}" if roots[root] else rel
            h.update(f"{key}\0{digest}\n".encode())
            listed[key] = digest[:16]
    out: dict[str, Any] = {"sha256": h.hexdigest(), "roots": labels, "count": len(listed)}
    if len(listed) <= LISTED_FILES:
        out["files"] = listed
    return out


def _shown(path: Path) -> str:
    try:
        return str(path.relative_to(Path.cwd().resolve())) or "."
    except ValueError:
        return str(path)


def code_modules(entry: str, suite: Any) -> list[str]:
    """The modules whose code decides a trial: the entry's, those of checks whose kind names code
    (``python``, a feature's grading function), a ``module:attr`` offline behaviour's."""
    out = [entry.partition(":")[0]]
    for scenario in suite.scenarios:
        for check in scenario.checks:
            if names_code(check.kind) and isinstance(check.value, str) and ":" in check.value:
                out.append(check.value.partition(":")[0])
    behaviour = suite.model.behaviour
    if behaviour and ":" in behaviour and Path(behaviour).suffix.lower() not in (".yml", ".yaml", ".json"):
        out.append(behaviour.partition(":")[0])
    return [m for m in out if m]


def identity(
    *,
    suite: Any,
    suite_sha256: str | None,
    settings: Any,
    entry: str,
    adapter: Any,
    loaded: bool,
    versions: Mapping[str, str],
    full: bool,
) -> dict[str, Any]:
    """The identity of a run (``agent.identity`` of its results file)."""
    try:
        config = adapter.config()
        config_sha: str | None = _sha(_canonical(config))
    except Exception:  # an agent that cannot describe itself: never pools
        config, config_sha = {}, None
    resolved = config.get("model") if isinstance(config.get("model"), dict) else None
    behaviour = getattr(getattr(adapter, "_behaviour", None), "spec", None)
    model = {
        "config": asdict(suite.model),
        "resolved": resolved,
        "behaviour_sha256": None if behaviour is None else _sha(_canonical(behaviour)),
    }
    if loaded:
        source = source_digest(code_modules(entry, suite))
    else:
        source = {"sha256": None, "problem": "the adapter was passed in, not loaded from the entry"}
    trial_settings = {k: getattr(settings, k) for k in _TRIAL_SETTINGS}
    for part in settings_parts():  # what each feature's part says shapes a trial
        trial_settings.update(settings.of(part).identity())
    return {
        "scheme": SCHEME,
        "suite_sha256": suite_sha256,
        "model": model,
        "settings": trial_settings,
        "agent": {"entry": entry, "adapter": getattr(adapter, "name", None), "config_sha256": config_sha, "source": source},
        "versions": dict(versions),
        "full": bool(full),
    }


def _short(value: Any) -> str:
    if isinstance(value, str) and len(value) == 64:
        return value[:12] + "…"
    text = json.dumps(value, sort_keys=True, default=str) if not isinstance(value, str) else value
    return text if len(text) <= 80 else text[:77] + "…"


def _dict_diff(a: Mapping[str, Any], b: Mapping[str, Any], prefix: str = "") -> list[str]:
    out = []
    for key in sorted(set(a) | set(b)):
        x, y = a.get(key), b.get(key)
        if isinstance(x, Mapping) and isinstance(y, Mapping):
            out += _dict_diff(x, y, f"{prefix}{key}.")
        elif x != y:
            out.append(f"{prefix}{key} {_short(x)} then, {_short(y)} now")
    return out


def _source_diff(a: Mapping[str, Any], b: Mapping[str, Any]) -> str:
    if b.get("sha256") is None:
        return f"the agent's source cannot be digested now ({b.get('problem')})"
    if a.get("sha256") is None:
        return f"the agent's source was not digested then ({a.get('problem')})"
    fa, fb = a.get("files"), b.get("files")
    if not isinstance(fa, Mapping) or not isinstance(fb, Mapping):
        return f"the agent's source differs (sha256 {_short(a['sha256'])} then, {_short(b['sha256'])} now)"
    changed = sorted(k for k in set(fa) & set(fb) if fa[k] != fb[k])
    added, removed = sorted(set(fb) - set(fa)), sorted(set(fa) - set(fb))
    parts = [
        f"{what} {', '.join(names[:5])}{' …' if len(names) > 5 else ''}"
        for what, names in (("changed", changed), ("added", added), ("removed", removed))
        if names
    ]
    return "the agent's source differs: " + (
        "; ".join(parts) or f"sha256 {_short(a['sha256'])} then, {_short(b['sha256'])} now"
    )


def differences(previous: Mapping[str, Any] | None, current: Mapping[str, Any]) -> list[tuple[str, str]]:
    """``(field, what differs)`` for every identity field that is not equal or not known on both sides."""
    if not isinstance(previous, Mapping) or not previous or "scheme" not in previous:
        return [("identity", "it has no identity (recorded by an agentassay that did not write one)")]
    if previous.get("scheme") != current.get("scheme"):
        return [("identity", f"identity scheme {previous.get('scheme')} then, {current.get('scheme')} now")]
    out: list[tuple[str, str]] = []
    for name in FIELDS:
        a, b = previous.get(name), current.get(name)
        if name == "suite_sha256":
            if a is None or b is None or a != b:
                out.append((name, f"{LABELS[name]} (sha256 {_short(a)} then, {_short(b)} now)"))
        elif name == "agent":
            out += [(name, what) for what in _agent_diff(dict(a or {}), dict(b or {}))]
        elif a != b:
            if isinstance(a, Mapping) and isinstance(b, Mapping):
                out.append((name, f"{LABELS[name]}: " + "; ".join(_dict_diff(a, b))))
            else:
                out.append((name, f"{LABELS[name]} ({_short(a)} then, {_short(b)} now)"))
    return out


def _agent_diff(a: dict[str, Any], b: dict[str, Any]) -> list[str]:
    out = []
    sa, sb = a.pop("source", None) or {}, b.pop("source", None) or {}
    if sa.get("sha256") is None or sb.get("sha256") is None or sa.get("sha256") != sb.get("sha256"):
        out.append(_source_diff(sa, sb))
    if a.get("config_sha256") is None or b.get("config_sha256") is None:
        out.append("the adapter could not describe the agent")
    elif a["config_sha256"] != b["config_sha256"]:
        out.append("the agent's description (instructions, tools, handoffs, framework) differs")
    a.pop("config_sha256", None)
    b.pop("config_sha256", None)
    if a != b:
        out.append("the agent differs: " + "; ".join(_dict_diff(a, b)))
    return out
