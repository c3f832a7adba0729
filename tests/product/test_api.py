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
