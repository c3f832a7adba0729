"""``config.coverage`` (docs/coverage.md): what coverage is measured on and how it gates."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any, ClassVar

from ..._spec import FeatureSettings
from ..._spec._settings import FeatureRecords, dataclass_fields

KEYS = ("enabled", "manifest", "derive_restrictions", "probe_restricted", "min", "weights", "state_lambda", "models")
DIMENSIONS = ("tool", "path", "state", "boundary", "model")


@dataclass(frozen=True)
class CoverageConfig(FeatureSettings):
    """What coverage is measured on (a manifest, extracted or hand-written) and how it gates (Eq. 26)."""

    NAME: ClassVar[str] = "coverage"
    CONFIG: ClassVar[tuple[str, ...]] = ("coverage",)

    enabled: bool = True
    manifest: str | None = None  # a hand-written manifest (path); None: extract from the agent
    derive_restrictions: bool = True  # closed-world restrictions for an extracted manifest
    probe_restricted: bool = False  # expose restricted tools as recording stubs during runs
    min: float | None = None  # Eq. 26: PASS with overall coverage below this becomes manual
    weights: dict[str, float] | None = None  # weighted geometric mean (Remark 4.2)
    state_lambda: float = 20.0  # λ of C_state (Eq. 17)
    models: tuple[str, ...] = ()  # M_target of C_model; empty: the models run

    @classmethod
    def parse(cls, reader: Any, nodes: Mapping[str, Any]) -> CoverageConfig:
        key, node = "config.coverage", nodes["coverage"]
        if reader.is_bool(node):
            return cls(enabled=reader.boolean(node, key))
        if reader.is_null(node):
            return cls()
        m = reader.mapping(node, key, f"true, false, or a mapping with {', '.join(KEYS)}")
        reader.check_keys(m, key, KEYS)
        return cls(**{k: _option(reader, k, vnode, f"{key}.{k}") for k, (_, vnode) in m.items()})

    def to_settings(self) -> dict[str, Any]:
        d = asdict(self)
        d["models"] = list(self.models)
        return {"coverage": d}

    @classmethod
    def from_settings(cls, raw: Mapping[str, Any]) -> CoverageConfig:
        cov = raw.get("coverage")
        if not isinstance(cov, dict):
            return cls()
        cov = {k: v for k, v in cov.items() if k in dataclass_fields(cls)}
        cov["models"] = tuple(cov.get("models") or ())
        return cls(**cov)

    def identity(self) -> dict[str, Any]:
        # The restricted probe exposes stub tools during trials: it changes what a trial can do.
        return {"coverage_probe": bool(self.enabled and self.probe_restricted)}


def _option(reader: Any, k: str, vnode: Any, sub: str) -> Any:
    """One option of ``config.coverage``, validated."""
    if k in ("enabled", "derive_restrictions", "probe_restricted"):
        return reader.boolean(vnode, sub)
    if k == "manifest":
        path = reader.opt_string(vnode, sub, "a path to a manifest file (YAML)")
        if path is not None and reader.root is not None:
            path = str((reader.root / os.path.expanduser(path)).resolve())
        return path
    if k == "min":
        if reader.is_null(vnode):
            return None
        return reader.number(vnode, sub, "a coverage between 0 and 1", lambda x: 0.0 <= x <= 1.0)
    if k == "state_lambda":
        return reader.number(vnode, sub, "a number of abstract states > 0", lambda x: x > 0)
    if k == "models":
        import yaml  # the loader's own dependency, already imported by it

        items = vnode.value if isinstance(vnode, yaml.SequenceNode) else None
        if items is None:
            raise reader.expected(vnode, sub, "a list of model names", reader.value(vnode))
        return tuple(reader.string(i, f"{sub}[{n}]", "a model name", nonempty=True) for n, i in enumerate(items))
    wm = reader.mapping(vnode, sub, f"a mapping from {', '.join(DIMENSIONS)} to weights >= 0")
    reader.check_keys(wm, sub, DIMENSIONS)
    weights = {d: reader.number(wv, f"{sub}.{d}", "a weight >= 0", lambda x: x >= 0) for d, (_, wv) in wm.items()}
    if not any(weights.values()):
        raise reader.err(vnode, sub, "at least one weight must be > 0.", expected="weights", got="all zero")
    return weights


# Its entries in the results file's JSON Schema (merged into the kernel's by _results/_validate.py).
RECORDS = FeatureRecords(schema={"results": {"coverage": {"type": ["object", "null"]}}, "settings": {"coverage": {"type": ["object", "null"]}}})
