"""The ``judge:`` key of a suite (docs/judge.md): parsed, merged and validated before any trial.

The suite-level ``judge:`` is every scenario's default; a scenario's ``judge:`` overrides it key by
key (``judge: false`` turns it off there). Everything that can be wrong is found here — an unknown
key, provider or scale, a threshold outside the scale, a scripted judge that does not import — so a
bad judge is exit 3 naming the key, not a failure repeated in every trial.
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import os
import re
import sys
from collections.abc import Callable, Iterable, Mapping
from dataclasses import asdict, dataclass
from typing import Any

from ..._config_check import show, unknown_message
from ..._spec import ModelConfig, SpecError, Suite
from ..._spec._model import PROVIDERS, Extension

SCALES = ("pass_fail", "1-5")
JUDGE_KEYS = ("rubric", "model", "scale", "threshold", "repeats")
MODEL_KEYS = ("provider", "name", "behaviour", "base_url", "api_key_env", "temperature")
DEFAULT_THRESHOLD = 4.0
OFFLINE_LABEL = "offline-judge"
_ENV_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")

NO_BEHAVIOUR = (
    "the offline simulator cannot grade text: give `behaviour: module:function`, a scripted judge "
    "(function(*, input, output, rubric, seed) -> grade)"
)


@dataclass(frozen=True)
class JudgeConfig:
    """One judge: what it grades against, which model grades, on which scale, how many times.

    ``threshold`` only matters on the ``1-5`` scale (a trial passes when the mean grade >= it).
    Hashable, so scenarios that share a configuration share one judge (and its cache entries).
    """

    rubric: str
    model: ModelConfig
    scale: str = "pass_fail"
    threshold: float = DEFAULT_THRESHOLD
    repeats: int = 1

    @property
    def label(self) -> str:
        """The judge model's name as prices and reports know it."""
        if self.model.provider == "offline":
            return self.model.name or OFFLINE_LABEL
        return str(self.model.name)

    def identity(self) -> dict[str, Any]:
        """What makes two judges give the same answers (the cache key's model part); never the API key."""
        m = self.model
        return {
            "provider": m.provider,
            "name": m.name,
            "behaviour": m.behaviour,
            "base_url": m.base_url,
            "temperature": m.temperature,
        }

    def passes(self, grade: bool | float) -> bool:
        """The binary pass grade of one repeat: the grade itself, or grade >= threshold on 1-5."""
        return bool(grade) if self.scale == "pass_fail" else float(grade) >= self.threshold

    def rule(self) -> str:
        """The pass rule in words, for the results file and the report."""
        if self.scale == "pass_fail":
            if self.repeats == 1:
                return "the judge's grade is pass"
            return f"more than half of the {self.repeats} repeats grade pass"
        if self.repeats == 1:
            return f"the grade (1-5) is >= {self.threshold:g}"
        return f"the mean grade (1-5) of {self.repeats} repeats is >= {self.threshold:g}"

    def to_dict(self) -> dict[str, Any]:
        model = {k: v for k, v in asdict(self.model).items() if v is not None}
        return {
            "rubric": self.rubric,
            "model": model,
            "label": self.label,
            "scale": self.scale,
            "threshold": self.threshold if self.scale == "1-5" else None,
            "repeats": self.repeats,
            "rule": self.rule(),
        }


def _err(
    ext: Extension,
    sub: str | None,
    message: str,
    *,
    expected: str | None = None,
    got: str | None = None,
    suggestion: str | None = None,
) -> SpecError:
    key = f"{ext.key}.{sub}" if sub else ext.key
    return SpecError(
        message, file=ext.file, line=ext.line, key=key, expected=expected, got=got, suggestion=suggestion
    )


def _check_keys(ext: Extension, sub: str | None, value: Mapping[str, Any], valid: tuple[str, ...]) -> None:
    for k in value:
        if k not in valid:
            message, best = unknown_message("key", k, valid)
            raise _err(ext, f"{sub}.{k}" if sub else str(k), message, suggestion=best)


def _model(ext: Extension, raw: Any) -> ModelConfig:
    if isinstance(raw, str):
        raw = {"provider": raw}
    if not isinstance(raw, Mapping):
        raise _err(
            ext,
            "model",
            "expected a mapping like the suite's `model:`, e.g. "
            "`model: {provider: openai, name: gpt-4.1-mini}`.",
            expected="a mapping",
            got=show(raw),
        )
    _check_keys(ext, "model", raw, MODEL_KEYS)
    provider = raw.get("provider", "offline")
    if provider not in PROVIDERS:
        raise _err(
            ext,
            "model.provider",
            unknown_message("provider", provider, PROVIDERS)[0],
            expected="one of " + ", ".join(PROVIDERS),
            got=show(provider),
        )
    kw: dict[str, Any] = {"provider": provider}
    for k in ("name", "behaviour", "base_url", "api_key_env"):
        v = raw.get(k)
        if v is not None and not isinstance(v, str):
            raise _err(ext, f"model.{k}", "expected a string.", expected="a string", got=show(v))
        kw[k] = v
    if kw["base_url"] is not None and not re.match(r"^https?://", kw["base_url"]):
        raise _err(
            ext,
            "model.base_url",
            "expected an http(s) URL, e.g. http://localhost:8000/v1.",
            expected="an http(s) URL",
            got=show(kw["base_url"]),
        )
    env = kw["api_key_env"]
    if env is not None and not _ENV_RE.match(env):  # never echo it: it may be the key itself
        raise _err(
            ext,
            "model.api_key_env",
            "expected the name of an environment variable (e.g. OPENAI_API_KEY); "
            "put the key itself in the environment, never in the suite file.",
            expected="a variable name",
        )
    t = raw.get("temperature")
    if t is not None and (isinstance(t, bool) or not isinstance(t, int | float) or t < 0):
        raise _err(
            ext, "model.temperature", "expected a number >= 0.", expected="a number >= 0", got=show(t)
        )
    kw["temperature"] = None if t is None else float(t)
    return ModelConfig(**kw)


def _number(ext: Extension, key: str, v: Any, expected: str, ok: Callable[[float], bool]) -> float:
    if isinstance(v, bool) or not isinstance(v, int | float) or not ok(float(v)):
        raise _err(ext, key, f"expected {expected}.", expected=expected, got=show(v))
    return float(v)


def parse_judge(ext: Extension, base: Mapping[str, Any] | None = None) -> JudgeConfig | None:
    """One ``judge:`` value (merged over ``base``, the suite's) as a config; None when it is ``false``.

    Checks the shape and the values; the scripted judge's import is :func:`check_reachable`'s job.
    """
    raw = ext.value
    if raw is False or raw is None:
        return None
    if raw is True:
        if base is None:
            raise _err(
                ext,
                None,
                "`judge: true` uses the suite's judge, but the suite has no top-level `judge:`; "
                "write the judge here (rubric, model) or add one at the top level.",
            )
        raw = {}
    if not isinstance(raw, Mapping):
        raise _err(
            ext,
            None,
            "expected a mapping (rubric, model, scale, threshold, repeats) or false.",
            expected="a mapping or false",
            got=show(raw),
        )
    _check_keys(ext, None, raw, JUDGE_KEYS)
    merged = {**(base or {}), **raw}
    rubric = merged.get("rubric")
    if not isinstance(rubric, str) or not rubric.strip():
        raise _err(
            ext,
            "rubric",
            "required: what a passing reply must do, in words the judge can apply, e.g. "
            '`rubric: "The reply tells the customer their new seat number."`.',
            expected="a non-empty string",
            got=show(rubric) if rubric is not None else "nothing",
        )
    if "model" not in merged or merged["model"] is None:
        raise _err(
            ext,
            "model",
            "required: the model that grades, in the form of the suite's `model:` — e.g. "
            "`model: {provider: openai, name: gpt-4.1-mini}`, or `{provider: offline, behaviour: "
            "module:function}` for a scripted judge.",
            expected="a model",
            got="nothing",
        )
    model = _model(ext, merged["model"])
    if model.provider == "offline" and not model.behaviour:
        raise _err(ext, "model.behaviour", NO_BEHAVIOUR + ".", expected="module:function", got="nothing")
    if model.provider != "offline" and not model.name:
        raise _err(
            ext,
            "model.name",
            f"required for provider '{model.provider}': the model that grades, e.g. `name: gpt-4.1-mini`.",
            expected="a model name",
            got="nothing",
        )
    if model.provider == "openai-compatible":
        for k, example in (("base_url", "http://localhost:8000/v1"), ("api_key_env", "MY_API_KEY")):
            if getattr(model, k) is None:
                raise _err(
                    ext,
                    f"model.{k}",
                    f"required for provider 'openai-compatible'. Add `{k}:`, e.g. `{k}: {example}`.",
                    expected=k,
                    got="nothing",
                )
    scale = merged.get("scale", "pass_fail")
    if scale not in SCALES:
        raise _err(
            ext,
            "scale",
            unknown_message("scale", scale, SCALES)[0],
            expected="pass_fail or 1-5",
            got=show(scale),
        )
    threshold = DEFAULT_THRESHOLD
    if scale == "1-5" and merged.get("threshold") is not None:
        threshold = _number(
            ext,
            "threshold",
            merged["threshold"],
            "a grade between 1 and 5 (a mean grade >= it passes)",
            lambda x: 1 <= x <= 5,
        )
    repeats = merged.get("repeats", 1)
    if isinstance(repeats, bool) or not isinstance(repeats, int) or repeats < 1:
        raise _err(
            ext,
            "repeats",
            "expected a whole number >= 1: how many times each trace is graded.",
            expected="an integer >= 1",
            got=show(repeats),
        )
    return JudgeConfig(rubric=rubric.strip(), model=model, scale=scale, threshold=threshold, repeats=repeats)


def load_scripted(behaviour: str, search: Iterable[str | os.PathLike[str]] = ()) -> Callable[..., Any]:
    """Import a scripted judge ``module:function`` (``search`` folders first on sys.path); ValueError says why not."""
    module_name, _, attr = behaviour.partition(":")
    if not module_name or not attr:
        raise ValueError(f"expected 'module:function', got {behaviour!r}")
    for folder in reversed([os.path.abspath(os.fspath(f)) for f in search]):
        if folder not in sys.path:
            sys.path.insert(0, folder)
    try:
        obj: Any = importlib.import_module(module_name)
    except Exception as e:
        raise ValueError(
            f"cannot import module {module_name!r} for {behaviour!r}: {type(e).__name__}: {e}"
        ) from None
    for part in attr.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            raise ValueError(f"module {module_name!r} has no attribute {attr!r}") from None
    if not callable(obj):
        raise ValueError(f"{behaviour!r} is not callable (it is a {type(obj).__name__})")
    if inspect.iscoroutinefunction(obj):
        raise ValueError(f"{behaviour!r} is async; a scripted judge is a plain (synchronous) function")
    return obj


def check_reachable(
    ext: Extension, config: JudgeConfig, search: Iterable[str | os.PathLike[str]] = ()
) -> None:
    """What can be known before a call: the scripted judge imports, the client library is installed, and (the
    provider preflight, exit 4) the API key is set and ``base_url`` answers."""
    m = config.model
    if m.provider == "offline":
        try:
            load_scripted(str(m.behaviour), search)
        except ValueError as e:
            raise _err(
                ext,
                "model.behaviour",
                f"{e}; the scripted judge is `module:function`, importable from the suite's folder.",
                expected="module:function",
            ) from None
    elif m.provider == "litellm" and importlib.util.find_spec("litellm") is None:
        raise _err(ext, "model.provider", "provider 'litellm' needs LiteLLM: pip install litellm.")
    if m.provider != "offline":
        # Issue 22, defect 11: the judge's key and server are checked with the agent's, before the first trial,
        # by the same preflight (exit 4: the judge could not be run), never found by every trial's grading.
        from ..._integrations.adapters._preflight import preflight

        file = f"{ext.file}:{ext.line}" if ext.file and ext.line else ext.file
        preflight(m, file=file, key=f"{ext.key}.model")


def judge_configs(suite: Suite, search: Iterable[str | os.PathLike[str]] = ()) -> dict[str, JudgeConfig]:
    """Each scenario's judge (scenarios without one are absent), validated, for ``run`` and ``analyze``.

    Raises SpecError naming the key. ``search``: folders the scripted judge imports from (default:
    the suite's folder and the working directory).
    """
    folders = list(search) or [os.getcwd(), suite.root]
    top = suite.extensions.get("judge")
    default = parse_judge(top) if top is not None else None
    base: dict[str, Any] | None = None
    if top is not None and isinstance(top.value, Mapping):
        base = dict(top.value)
    if default is not None and top is not None:
        check_reachable(top, default, folders)
    out: dict[str, JudgeConfig] = {}
    for s in suite.scenarios:
        ext = s.extensions.get("judge")
        if ext is None:
            if default is not None:
                out[s.name] = default
            continue
        cfg = parse_judge(ext, base if default is not None else None)
        if cfg is None:
            continue
        if cfg != default:
            check_reachable(ext, cfg, folders)
        out[s.name] = cfg
    return out
