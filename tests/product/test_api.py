"""The public face (issue 23, step 6): ``agentassay.__all__`` is exactly docs/api.md's list, every name
resolves, and importing the package loads nothing heavy."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import agentassay

ROOT = Path(__file__).resolve().parents[2]


def _documented() -> list[str]:
    text = (ROOT / "docs" / "api.md").read_text(encoding="utf-8")
    return re.findall(r"^\| `([A-Za-z_][A-Za-z0-9_]*)` \|", text, flags=re.M)


def test_all_is_exactly_the_documented_list() -> None:
    documented = _documented()
    assert len(documented) == len(set(documented)), "a name is documented twice"
    assert sorted(agentassay.__all__) == sorted([*documented, "__version__"])


def test_every_public_name_resolves() -> None:
    for name in agentassay.__all__:
        assert getattr(agentassay, name) is not None, name


def test_an_unknown_name_is_an_attribute_error() -> None:
    try:
        agentassay.no_such_name  # noqa: B018
    except AttributeError as exc:
        assert "no_such_name" in str(exc)
    else:
        raise AssertionError("expected AttributeError")


def test_importing_the_package_loads_nothing_heavy() -> None:
    code = "import sys, agentassay; print(sorted(m for m in ('scipy', 'numpy', 'yaml', 'click') if m in sys.modules))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    assert done.stdout.strip() == "[]"


def test_everything_else_is_private() -> None:
    """Issue 23, step 6: every module and subpackage besides the public face starts with an underscore."""
    public = sorted(
        p.name
        for p in (ROOT / "agentassay").iterdir()
        if not p.name.startswith("_") and p.name != "py.typed" and (p.suffix == ".py" or (p / "__init__.py").is_file())
    )
    assert public == [], f"public modules besides agentassay/__init__.py: {public} (prefix them with '_')"


# `from agentassay import a, b` (also over several lines) and `import agentassay.x` / `from agentassay.x import`.
_FROM_TOP = re.compile(r"(?:^\s*|`)from agentassay import (?:\(([^)]*)\)|([^`\n]*))", re.M)
_DOTTED = re.compile(r"^\s*(?:from|import) agentassay\.\w", re.M)


def test_docs_and_examples_import_only_public_names() -> None:
    """What users read (README, docs/, examples/) imports from `agentassay` itself, names in `__all__`."""
    files = [ROOT / "README.md", *(ROOT / "docs").rglob("*.md"), *(ROOT / "examples").rglob("*.py"),
             *(ROOT / "examples").rglob("*.md")]
    dotted, unknown = [], []
    for path in files:
        text = path.read_text(encoding="utf-8")
        dotted += [f"{path.relative_to(ROOT)}: {m.group(0).strip()}" for m in _DOTTED.finditer(text)]
        for m in _FROM_TOP.finditer(text):
            names = [n.strip().split(" as ")[0] for n in (m.group(1) or m.group(2)).split(",") if n.strip()]
            unknown += [f"{path.relative_to(ROOT)}: {n}" for n in names if n.isidentifier() and n not in agentassay.__all__]
    assert not dotted, "import from agentassay instead of a private module:\n" + "\n".join(dotted)
    assert not unknown, "not public names:\n" + "\n".join(unknown)
