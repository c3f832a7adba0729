"""``metamorphic:`` of a scenario and ``config.metamorphic``, read into :class:`Relation` objects.

The loader keeps these keys raw (they belong to the built-in plugin ``metamorphic``); this module
validates every part and builds each relation's follow-up input, so a relation that cannot work —
an unknown family, no or two transformations, a python entry that does not import, more typos than
words — is a :class:`SpecError` naming the file, the line, the key and the fix before any trial.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..._config_check import KeyLines, closest, did_you_mean
from ..._evaluators import Where, resolve
from ..._limits import compile_pattern, regex_error
from ..._spec import Check, Extension, Scenario, SpecError, Suite
from ._checks import CHECKS, PLAIN, VALUED, RelationCheck
from ._transforms import CASES, NOISE, PARAPHRASES, PERMUTE, TRANSFORMS, Transform, TransformError

FAMILIES = ("permutation", "perturbation", "composition", "oracle")  # the paper's four (Sec. 6.1)
RELATION_KEYS = ("name", "family", "transform", "check")
CONFIG_KEYS = ("trials",)
DEFAULT_TRIALS = 30  # follow-up trials per relation at most (and never more than the source trials)
DEFAULT_CHECK = "same_verdict"
EXAMPLE = "`transform: {noise: 1}`"


@dataclass(frozen=True)
class Relation:
    """One metamorphic relation of one scenario: x' = φ(x) and the check R on each pair."""

    scenario: str
    name: str
    family: str
    transform: Transform
    check: RelationCheck
    followup: str  # x' = φ(x), fixed when the suite is read
    key: str
    line: int | None = None

    def signature(self) -> dict[str, Any]:
        """What must agree with the baseline's relation of the same name for the two to be compared."""
        return {"family": self.family, "transform": self.transform.to_dict(), "check": self.check.to_json()}


class _Reader:
    """Reads one ``metamorphic:`` value; every error is located at the innermost key it is about."""

    def __init__(
        self, ext: Extension, scenario: Scenario, suite: Suite, lines: KeyLines, search: Sequence[str]
    ) -> None:
        self.ext, self.scenario, self.suite, self.lines, self.search = (
            ext,
            scenario,
            suite,
            lines,
            tuple(search),
        )

    def error(
        self, key: str, message: str, *, suggestion: str | None = None, expected: str | None = None
    ) -> SpecError:
        return SpecError(
            message,
            file=self.ext.file,
            line=self.lines.line(key) or self.ext.line,
            key=key,
            suggestion=suggestion,
            expected=expected,
        )

    def unknown(self, key: str, name: Any, valid: Sequence[str], noun: str) -> SpecError:
        near = closest(str(name), valid)
        hint = did_you_mean(near)
        return self.error(key, f"unknown {noun} {name!r}; valid: {', '.join(valid)}.{hint}", suggestion=near)

    def integer(self, key: str, value: Any, low: int, high: int | None, what: str) -> int:
        if (
            isinstance(value, bool)
            or not isinstance(value, int)
            or value < low
            or (high is not None and value > high)
        ):
            bound = f"an integer from {low} to {high}" if high is not None else f"an integer >= {low}"
            raise self.error(key, f"expected {bound} ({what}), got {value!r}.", expected=bound)
        return value

    def resolve(self, key: str, entry: Any) -> Any:

        if not isinstance(entry, str):
            raise self.error(key, f"expected 'module:function', got {entry!r}.", expected="'module:function'")
        where = Where(self.ext.file, self.scenario, self.search)
        return resolve(
            Check("python", entry, {}, line=self.lines.line(key) or self.ext.line, key=key), where
        )

    # -- the parts ---------------------------------------------------------------------------------
    def relations(self) -> tuple[Relation, ...]:
        value = self.ext.value
        if value is None:
            return ()
        if not isinstance(value, list):
            raise self.error(
                self.ext.key,
                "expected a list of relations, e.g. `- {family: perturbation, transform: {noise: 1}, check: same_verdict}`.",
                expected="a list",
            )
        out: list[Relation] = []
        seen: dict[str, str] = {}
        for i, item in enumerate(value):
            r = self.relation(f"{self.ext.key}[{i}]", item)
            if r.name in seen:
                raise self.error(
                    f"{r.key}.name" if isinstance(item, dict) and "name" in item else r.key,
                    f"two relations of scenario {self.scenario.name!r} are named {r.name!r} (the other is "
                    f"{seen[r.name]}); give one a `name:` of its own.",
                )
            seen[r.name] = r.key
            out.append(r)
        return tuple(out)

    def relation(self, key: str, item: Any) -> Relation:
        if not isinstance(item, dict):
            raise self.error(
                key,
                f"expected a mapping with `family`, `transform` and `check`, got {item!r}.",
                expected="a mapping",
            )
        for k in item:
            if k not in RELATION_KEYS:
                raise self.unknown(f"{key}.{k}", k, RELATION_KEYS, "key of a relation")
        if "family" not in item:
            raise self.error(
                key,
                f"a relation needs `family:`, one of {', '.join(FAMILIES)} (the paper's four families, Sec. 6.1).",
                expected="family",
            )
        family = item["family"]
        if family not in FAMILIES:
            raise self.unknown(f"{key}.family", family, FAMILIES, "family")
        transform = self.transform(f"{key}.transform", item.get("transform"))
        check = self.check(f"{key}.check", item.get("check", DEFAULT_CHECK))
        name = item.get("name", f"{family}:{transform.kind}")
        if not isinstance(name, str) or not name.strip():
            raise self.error(
                f"{key}.name", f"expected a non-empty string, got {name!r}.", expected="a string"
            )
        name = name.strip()
        try:
            followup = transform.apply(self.scenario.input, seed=self.suite.settings.seed, relation=name)
        except TransformError as exc:
            raise self.error(
                f"{key}.transform.{transform.kind}", f"cannot transform this scenario's input: {exc}."
            ) from None
        return Relation(
            self.scenario.name,
            name,
            str(family),
            transform,
            check,
            followup,
            key,
            self.lines.line(key) or self.ext.line,
        )

    def transform(self, key: str, value: Any) -> Transform:
        kinds = ", ".join(TRANSFORMS)
        if value is None or value == {}:
            raise self.error(
                key,
                f"a relation needs exactly one transformation: add {EXAMPLE} (or one of {kinds}).",
                expected="one transformation",
            )
        if not isinstance(value, dict):
            near = closest(value, TRANSFORMS) if isinstance(value, str) else None
            hint = f" Write `transform: {{{near}: …}}`." if near else ""
            raise self.error(
                key,
                f"expected a mapping with one transformation, e.g. {EXAMPLE}, got {value!r}.{hint}",
                expected="a mapping",
            )
        if len(value) > 1:
            raise self.error(
                key,
                f"a relation needs exactly one transformation, and this one has {len(value)} ({', '.join(map(str, value))}): "
                "keep one, or split them into relations of their own.",
                expected="one transformation",
            )
        ((kind, v),) = value.items()
        at = f"{key}.{kind}"
        if kind not in TRANSFORMS:
            raise self.unknown(at, kind, TRANSFORMS, "transformation")
        if kind == "paraphrase":
            return Transform(
                kind,
                self.integer(at, v, 1, len(PARAPHRASES), "template slots filled: framing, greeting, closing"),
            )
        if kind == "typos":
            return Transform(kind, self.integer(at, v, 1, None, "letter swaps"))
        if kind == "noise":
            return Transform(kind, self.integer(at, v, 1, len(NOISE), "irrelevant sentences appended"))
        if kind in ("case", "permute"):
            valid = CASES if kind == "case" else PERMUTE
            if v not in valid:
                raise self.unknown(at, v, valid, f"{kind} value")
            return Transform(kind, v)
        if kind == "constraint":
            if not isinstance(v, str) or not v.strip():
                raise self.error(
                    at,
                    f'expected the constraint to append (a non-empty string), e.g. "Answer in at most 40 words.", got {v!r}.',
                    expected="a non-empty string",
                )
            return Transform(kind, v.strip())
        return Transform(kind, v, function=self.resolve(at, v))

    def check(self, key: str, value: Any) -> RelationCheck:
        names = ", ".join(f"{{{c}: …}}" if c in VALUED else c for c in CHECKS)
        if isinstance(value, str):
            if value in PLAIN:
                return RelationCheck(value)
            if value in VALUED:
                example = {"regex": "PATTERN", "max_words": "40", "python": "module:function"}[value]
                raise self.error(key, f"`{value}` needs a value: write `check: {{{value}: {example}}}`.")
            raise self.unknown(key, value, CHECKS, "check")
        if not isinstance(value, dict) or len(value) != 1:
            raise self.error(
                key,
                f"expected one check: {names}; got {value!r}.",
                expected="a check name or a one-key mapping",
            )
        ((kind, v),) = value.items()
        at = f"{key}.{kind}"
        if kind in PLAIN:
            raise self.error(at, f"`{kind}` takes no value: write `check: {kind}`.")
        if kind not in VALUED:
            raise self.unknown(at, kind, CHECKS, "check")
        if kind == "regex":
            if not isinstance(v, str):
                raise self.error(at, f"expected a regular expression, got {v!r}.", expected="a string")
            try:
                return RelationCheck(kind, v, pattern=compile_pattern(v))
            except regex_error() as exc:
                raise self.error(at, f"invalid regular expression {v!r}: {exc}.") from None
        if kind == "max_words":
            return RelationCheck(kind, self.integer(at, v, 1, None, "words in the follow-up output"))
        return RelationCheck(kind, v, function=self.resolve(at, v))


def config_trials(suite: Suite) -> int | None:
    """``config.metamorphic.trials``; None when not set (the default, ``min(source trials, 30)``)."""
    ext = suite.extensions.get("config.metamorphic")
    if ext is None or ext.value is None:
        return None
    lines = KeyLines(suite.path)

    def error(key: str, message: str, suggestion: str | None = None) -> SpecError:
        return SpecError(
            message, file=ext.file, line=lines.line(key) or ext.line, key=key, suggestion=suggestion
        )

    if not isinstance(ext.value, dict):
        raise error(ext.key, f"expected a mapping like `{{trials: 30}}`, got {ext.value!r}.")
    for k in ext.value:
        if k not in CONFIG_KEYS:
            near = closest(str(k), CONFIG_KEYS)
            hint = did_you_mean(near)
            raise error(f"{ext.key}.{k}", f"unknown key {k!r}; valid: {', '.join(CONFIG_KEYS)}.{hint}", near)
    trials = ext.value.get("trials")
    if trials is None:
        return None
    if isinstance(trials, bool) or not isinstance(trials, int) or trials < 1:
        raise error(
            f"{ext.key}.trials", f"expected an integer >= 1 (follow-up trials per relation), got {trials!r}."
        )
    return trials


def suite_relations(
    suite: Suite, *, search: Sequence[str | os.PathLike[str]] = ()
) -> dict[str, tuple[Relation, ...]]:
    """Every scenario's relations, by scenario name (scenarios without ``metamorphic:`` left out)."""
    lines = KeyLines(suite.path)
    folders = [os.fspath(s) for s in search]
    out: dict[str, tuple[Relation, ...]] = {}
    for sc in suite.scenarios:
        ext = sc.extensions.get("metamorphic")
        if ext is None:
            continue
        relations = _Reader(ext, sc, suite, lines, folders).relations()
        if relations:
            out[sc.name] = relations
    return out
