"""The boundary for untrusted text: every string an agent or a trace file hands us passes through here.

Text from agents (outputs, tool arguments and results, errors, agent names) and from imported trace
files is untrusted in two ways: it may hold credentials the agent saw, and it may not be valid text.
So, once, as a trace is recorded (:func:`clean_trace`, called by the runner for every trial and by
the importers for every imported trace), before anything reaches a check, the store, the results
file or a report:

* **repair** — a lone surrogate (``"ok \\ud83d"``: valid in a Python ``str``, not encodable as UTF-8,
  so SQLite and every file writer raise on it) becomes U+FFFD, and the trace notes how many;
* **redact** — secrets become ``[redacted: KIND]`` (:class:`Redactor`): by value, every secret-looking
  environment variable's value; by pattern, the token formats of common providers.

Checks (evaluators and the plugins' checks) see the repaired, redacted, *full* text: what they grade
is what a reviewer can read, and no secret goes to a grading model. What is *stored or rendered* is
also capped (:func:`cap_trace`, :func:`bound`): one field at :data:`FIELD_LIMIT` characters, one
trace at :data:`TRACE_LIMIT`, the cut noted in the text — a cap must never change a verdict, so
checks see the uncapped text. The store and the results file redact again on write, and every
renderer on output, as defence for traces and results made elsewhere (redaction is idempotent).

Opt-out for local debugging: ``AGENTASSAY_REDACT=0``. It is refused under GitHub Actions
(``GITHUB_ACTIONS=true``), where artifacts are uploaded and comments are public.
"""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ._traces import Trace

ENV_OPT_OUT = "AGENTASSAY_REDACT"
FIELD_LIMIT = 64 * 1024  # characters of one stored/rendered text field
TRACE_LIMIT = 1024 * 1024  # characters of one stored trace's text fields together
MAX_DEPTH = 200  # levels of nested data kept; deeper is cut (noted), so walking it never exhausts the stack
MIN_FIELD = 256  # what a field keeps at least when a trace's fields are squeezed to fit TRACE_LIMIT

# A variable whose name has one of these words holds a secret (INPUT_GITHUB-TOKEN, OPENAI_API_KEY,
# DB_PASSWORD, AWS_SECRET_ACCESS_KEY, SENTRY_DSN …). Not PWD: that is the working directory.
SECRET_NAME = re.compile(
    r"KEY|TOKEN|SECRET|PASSWORD|PASSWD|PASSPHRASE|CREDENTIAL|AUTH|PRIVATE|COOKIE|DSN", re.IGNORECASE
)
MIN_SECRET = 8  # shorter values are too likely to be ordinary words that redaction would mangle
_NOT_SECRET = {"true", "false", "none", "null", "yes", "no", "enabled", "disabled"}

# Token formats, most specific first (an Anthropic key also starts with "sk-"). Kinds name the marker.
# Adapted and extended from Yelp's detect-secrets 1.5.0 plugins (Apache-2.0); see docs/suite.md for why
# we do not depend on it. A pattern with a group named "s" replaces only that group (the secret of an
# assignment or URL), keeping the name so the text still reads.
PATTERNS: tuple[tuple[str, str], ...] = (
    ("private-key", r"-----BEGIN[A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----[\s\S]*?(?:-----END[A-Z0-9 ]{0,40}"
                    r"PRIVATE KEY(?: BLOCK)?-----|\Z)"),
    ("anthropic-key", r"(?<![A-Za-z0-9])sk-ant-[A-Za-z0-9_-]{20,}"),
    ("openai-key", r"(?<![A-Za-z0-9])sk-(?:proj-|svcacct-|admin-)?(?=[A-Za-z_-]*[0-9])[A-Za-z0-9_-]{20,}"),
    ("stripe-key", r"(?<![A-Za-z0-9])(?:sk|rk)_(?:live|test)_[0-9A-Za-z]{10,}"),
    ("github-token", r"(?<![A-Za-z0-9])(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,})"),
    ("gitlab-token", r"(?<![A-Za-z0-9])glpat-[A-Za-z0-9_-]{20,}"),
    ("aws-access-key-id", r"(?<![A-Z0-9])(?:AKIA|ASIA|ABIA|ACCA|A3T[A-Z0-9])[A-Z0-9]{16}(?![A-Z0-9])"),
    ("aws-secret-key", r"(?i:aws_?secret(?:_?access)?_?key|secret_?access_?key)[\"']?\s*[:=]\s*[\"']?"
                       r"(?P<s>[A-Za-z0-9/+=]{40})(?![A-Za-z0-9/+=])"),
    ("google-api-key", r"(?<![A-Za-z0-9])AIza[0-9A-Za-z_-]{35}"),
    ("slack-token", r"(?<![A-Za-z0-9])(?:xox[abposr]-[0-9A-Za-z-]{10,}|xapp-[0-9]-[A-Za-z0-9-]{10,}|"
                    r"https://hooks\.slack\.com/services/[A-Za-z0-9_/]{20,})"),
    ("npm-token", r"(?<![A-Za-z0-9])npm_[A-Za-z0-9]{36}"),
    ("pypi-token", r"(?<![A-Za-z0-9])pypi-AgE[A-Za-z0-9_-]{50,}"),
    ("huggingface-token", r"(?<![A-Za-z0-9])hf_[A-Za-z0-9]{34,}"),
    ("sendgrid-key", r"(?<![A-Za-z0-9])SG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}"),
    ("jwt", r"(?<![A-Za-z0-9_-])eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*"),
    ("bearer-token", r"(?i:\bbearer\s+)(?P<s>[A-Za-z0-9._~+/-]{20,}=*)"),
    ("url-password", r"://[^/\s:@\"'<>]{1,256}:(?P<s>[^/\s@\"'<>]{3,256})@"),
)
_KINDS = [kind for kind, _ in PATTERNS]
# Literals one of which a match must contain (case-sensitive, then on the lowered text). A pattern runs
# only when one is in the text: ``in`` is a memchr scan, so 50 MB of ordinary output costs milliseconds,
# where the full alternation tried at every position costs seconds.
_ANCHORS: tuple[tuple[tuple[str, ...], tuple[str, ...]], ...] = (
    (("PRIVATE KEY",), ()),
    (("sk-ant-",), ()),
    (("sk-",), ()),
    (("k_live_", "k_test_"), ()),
    (("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"), ()),
    (("glpat-",), ()),
    (("AKIA", "ASIA", "ABIA", "ACCA", "A3T"), ()),
    ((), ("secret",)),
    (("AIza",), ()),
    (("xox", "xapp-", "hooks.slack.com"), ()),
    (("npm_",), ()),
    (("pypi-",), ()),
    (("hf_",), ()),
    (("SG.",), ()),
    (("eyJ",), ()),
    ((), ("bearer",)),
    (("://",), ()),
)
assert len(_ANCHORS) == len(PATTERNS)


@lru_cache(maxsize=256)
def _combined(which: tuple[int, ...]) -> re.Pattern[str]:
    """One alternation of the patterns ``which`` (leftmost match wins, so overlapping formats never
    both apply); group ``k<i>`` is pattern i, ``s<i>`` its secret part when it names one."""
    return re.compile("|".join(f"(?P<k{i}>{PATTERNS[i][1].replace('(?P<s>', f'(?P<s{i}>')})" for i in which))


# Short texts (most of a results file: names, reasons) take one regex search for any anchor instead of
# seventeen scans; long ones the scans, which are faster per character than an alternation.
_ANY_ANCHOR = re.compile(
    "|".join(re.escape(a) for exact, _ in _ANCHORS for a in exact)
    + "|(?i:" + "|".join(re.escape(a) for _, folded in _ANCHORS for a in folded) + ")"
)
_SHORT = 4096


def _patterns_for(text: str) -> re.Pattern[str] | None:
    if len(text) < _SHORT and _ANY_ANCHOR.search(text) is None:
        return None
    lowered: str | None = None
    which = []
    for i, (exact, folded) in enumerate(_ANCHORS):
        if any(a in text for a in exact):
            which.append(i)
        elif folded:
            lowered = text.lower() if lowered is None else lowered
            if any(a in lowered for a in folded):
                which.append(i)
    return _combined(tuple(which)) if which else None


def marker(kind: str) -> str:
    """What replaces a secret: says what was cut, never any of it."""
    return f"[redacted: {kind}]"


def redaction_enabled(environ: Mapping[str, str] | None = None) -> bool:
    """False only with ``AGENTASSAY_REDACT=0`` (or ``false``/``no``/``off``) outside GitHub Actions."""
    env = os.environ if environ is None else environ
    off = env.get(ENV_OPT_OUT, "").strip().lower() in ("0", "false", "no", "off")
    if off and env.get("GITHUB_ACTIONS") == "true":
        _warn_refused()
        return True
    return not off


@lru_cache(maxsize=1)
def _warn_refused() -> None:
    print(f"agentassay: {ENV_OPT_OUT}=0 is ignored under GitHub Actions: artifacts and comments are shared, "
          "so secrets stay redacted", file=sys.stderr)


def secret_env(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """Secret-looking variables: ``{value: name}``, the values worth redacting.

    A name with KEY, TOKEN, SECRET, PASSWORD, PASSWD, PASSPHRASE, CREDENTIAL, AUTH, PRIVATE, COOKIE or DSN;
    a value of at least :data:`MIN_SECRET` characters that is not a boolean word and not a path (``/…``,
    ``~…``: ``SSH_AUTH_SOCK`` or ``GOOGLE_APPLICATION_CREDENTIALS`` say where a secret is, not what).
    """
    env = os.environ if environ is None else environ
    found: dict[str, str] = {}
    for name, value in sorted(env.items()):
        v = value.strip()
        if (
            SECRET_NAME.search(name)
            and len(v) >= MIN_SECRET
            and v.lower() not in _NOT_SECRET
            and not (v[:1] in "/~" and not any(c.isspace() for c in v))
        ):
            found.setdefault(value, name)
    return found


class Redactor:
    """Replace secrets in text: known values first (each marked with its variable's name), then patterns.

    ``values`` maps a secret to what the marker calls it. A multi-line value (a PEM key in a variable)
    is also matched line by line, so a key printed with other line breaks is still caught.
    """

    def __init__(self, values: Mapping[str, str], *, patterns: bool = True) -> None:
        items = dict(values)
        for secret, label in list(items.items()):
            if "\n" in secret:
                for line in secret.splitlines():
                    if len(line.strip()) >= MIN_SECRET:
                        items.setdefault(line.strip(), label)
        ordered = sorted(items, key=lambda s: (-len(s), s))
        self.patterns = patterns
        self._labels = items
        self._values = re.compile("|".join(re.escape(s) for s in ordered)) if ordered else None

    @property
    def active(self) -> bool:
        return self.patterns or self._values is not None

    def __call__(self, text: str) -> str:
        return self.count(text)[0]

    def count(self, text: str) -> tuple[str, dict[str, int]]:
        """The redacted text and how many secrets of each kind it held."""
        found: dict[str, int] = {}
        if self._values is not None and text:
            labels = self._labels

            def by_value(m: re.Match[str]) -> str:
                kind = labels[m.group(0)]
                found[kind] = found.get(kind, 0) + 1
                return marker(kind)

            text = self._values.sub(by_value, text)
        pattern = _patterns_for(text) if self.patterns and text else None
        if pattern is not None:
            text = pattern.sub(lambda m: _by_pattern(m, found), text)
        return text, found


def _by_pattern(m: re.Match[str], found: dict[str, int]) -> str:
    i = int(str(m.lastgroup)[1:])  # the outermost group of an alternative closes last: k<i>
    kind = _KINDS[i]
    found[kind] = found.get(kind, 0) + 1
    inner = m.groupdict().get(f"s{i}")
    if inner is None:
        return marker(kind)
    start, end = m.span(f"s{i}")
    return m.string[m.start() : start] + marker(kind) + m.string[end : m.end()]


_IDENTITY = Redactor({}, patterns=False)


def redactor(extra: Iterable[str] = (), environ: Mapping[str, str] | None = None) -> Redactor:
    """The redactor for now: the environment's secret values and the patterns, plus ``extra`` values
    (the Action's own list; redacted even when redaction is switched off)."""
    env = os.environ if environ is None else environ
    enabled = redaction_enabled(env)
    values = {v: f"${k}" for v, k in secret_env(env).items()} if enabled else {}
    for secret in extra:
        if secret:
            values.setdefault(secret, "secret")
    if not enabled and not values:
        return _IDENTITY
    return _cached(tuple(sorted(values.items())), enabled)


@lru_cache(maxsize=8)
def _cached(values: tuple[tuple[str, str], ...], patterns: bool) -> Redactor:
    return Redactor(dict(values), patterns=patterns)


def redact(text: str) -> str:
    """``text`` with the environment's secrets and token-shaped strings replaced by markers."""
    return redactor()(text)


# -- repair ---------------------------------------------------------------------------------------
_SURROGATE = re.compile("[\ud800-\udfff]")


def repair(text: str) -> tuple[str, int]:
    """Valid text and how many characters were replaced: a lone surrogate becomes U+FFFD."""
    if text.isascii():
        return text, 0
    return _SURROGATE.subn("\ufffd", text)


# -- caps ---------------------------------------------------------------------------------------------
def _size(n: int) -> str:
    for unit, scale in (("MB", 1_000_000), ("kB", 1_000)):
        if n >= scale:
            return f"{n / scale:.1f} {unit}"
    return f"{n} characters"


def bound(text: str, limit: int = FIELD_LIMIT) -> str:
    """At most about ``limit`` characters, the cut noted: ``… [cut: 49.9 MB more]``."""
    if len(text) <= limit:
        return text
    note = f" … [cut: {_size(len(text) - limit)} more]"
    return text[:limit] + note


# -- walking a trace ---------------------------------------------------------------------------------
@dataclass
class _Tally:
    repaired: int = 0
    redacted: dict[str, int] | None = None
    cut: int = 0

    def add(self, found: Mapping[str, int]) -> None:
        if found:
            self.redacted = self.redacted or {}
            for k, n in found.items():
                self.redacted[k] = self.redacted.get(k, 0) + n


def _text(s: str, red: Redactor, tally: _Tally, limit: int | None) -> str:
    s, n = repair(s)
    tally.repaired += n
    if red.active:
        s, found = red.count(s)
        tally.add(found)
    if limit is not None and len(s) > limit:
        tally.cut += 1
        s = bound(s, limit)
    return s


def scrub(value: Any, red: Redactor | None = None, *, limit: int | None = None, tally: _Tally | None = None,
          to_text: bool = False) -> Any:
    """Every string in ``value`` (dict keys too, lists, tuples) repaired, redacted and (``limit``) capped.

    Other objects are kept as they are for checks to read, or with ``to_text`` turned into their ``str``
    first (what a JSON writer would store of them). Data nested deeper than :data:`MAX_DEPTH` is cut.
    """
    red = red or redactor()
    tally = tally or _Tally()
    clean: set[str] = set()  # short strings seen to need nothing (a results file repeats its keys 10^5 times)

    def walk(v: Any, depth: int) -> Any:
        if isinstance(v, str):
            if v in clean:
                return v
            out = _text(v, red, tally, limit)
            if out is v and len(v) < _SHORT and len(clean) < 65536:
                clean.add(v)
            return out
        if v is None or isinstance(v, bool | int | float):
            return v
        if depth >= MAX_DEPTH and isinstance(v, dict | list | tuple):
            tally.cut += 1
            return f"[cut: nested deeper than {MAX_DEPTH} levels]"
        if isinstance(v, dict):
            return {walk(k, depth) if isinstance(k, str) else k: walk(x, depth + 1) for k, x in v.items()}
        if isinstance(v, list | tuple):
            out = [walk(x, depth + 1) for x in v]
            return out if isinstance(v, list) else tuple(out)
        if not to_text:
            return v
        try:
            text = str(v)
        except Exception as exc:  # an agent's object whose __str__ raises: say so rather than fail the trial
            text = f"<{type(v).__name__}: str() raised {type(exc).__name__}>"
        return walk(text, depth)

    return walk(value, 0)


_JSON_ESCAPED = re.compile(r'["\\\x00-\x1f]')  # what json.dumps(ensure_ascii=False) writes as an escape


_EXACT_ANCHORS = tuple(a.encode() for exact, _ in _ANCHORS for a in exact)
_FOLDED_ANCHORS = tuple(a.encode() for _, folded in _ANCHORS for a in folded)


def _needs_nothing(text: str, red: Redactor, limit: int | None) -> bool:
    """Whether no string of the document whose JSON is ``text`` would change: no lone surrogate, no secret value,
    no anchor of a token pattern, no string over ``limit``. Conservative: any doubt says False. Scans the UTF-8
    bytes (one byte a character for the ASCII a results file is mostly made of)."""
    if not text.isascii() and _SURROGATE.search(text):
        return False
    if red._values is not None and (
        any(_JSON_ESCAPED.search(v) for v in red._labels) or red._values.search(text)
    ):
        return False
    data = text.encode("utf-8")
    if red.patterns:
        if any(a in data for a in _EXACT_ANCHORS):
            return False
        lowered = data.lower()
        if any(a in lowered for a in _FOLDED_ANCHORS):
            return False
    if limit is None or len(data) <= limit:
        return True
    import numpy as np  # lazy: only a document longer than one field's limit gets here

    # A string lies between two quotes not preceded by a backslash (dropping an escaped backslash's closing
    # quote only merges two strings: conservative). Bytes are at least characters, so a gap within the
    # limit in bytes is within it in characters.
    raw = np.frombuffer(data, dtype=np.uint8)
    quotes = np.flatnonzero(raw == 34)
    quotes = quotes[(quotes == 0) | (raw[quotes - 1] != 92)]
    return len(quotes) > 1 and int(np.diff(quotes).max()) <= limit


def scrub_document(data: Any, *, limit: int | None = None, to_text: bool = False, text: str | None = None) -> Any:
    """:func:`scrub` for a whole JSON document (a results file read or written): ``data`` itself when its JSON
    text shows that nothing would change — a few scans at C speed, where walking a 30,000-trial file string by
    string costs most of a second (``compare`` reads two and writes one) — else a scrubbed copy. ``text``: the
    file ``data`` was read from, used when its strings read as they are (no ``\\u`` or ``\\/`` escape could
    hide an anchor or a surrogate); otherwise the document is dumped again."""
    red = redactor()
    if text is None or "\\u" in text or "\\/" in text:
        try:
            text = json.dumps(data, ensure_ascii=False, check_circular=False, allow_nan=True)
        except (TypeError, ValueError, RecursionError):
            text = None
    if text is not None and _needs_nothing(text, red, limit):
        return data
    return scrub(data, red, limit=limit, to_text=to_text)


def _note(trace: Trace, tally: _Tally, key: str = "boundary") -> Trace:
    """Record in ``metadata.extra["boundary"]`` what was done to the trace's text (kept across passes)."""
    if not (tally.repaired or tally.redacted or tally.cut):
        return trace  # nothing changed: the trace stays as it was (imports pass through unchanged)
    done = dict(trace.metadata.extra.get(key) or {})
    if tally.repaired:
        done["repaired"] = int(done.get("repaired", 0)) + tally.repaired
    if tally.redacted:
        red = dict(done.get("redacted") or {})
        for k, n in tally.redacted.items():
            red[k] = int(red.get(k, 0)) + n
        done["redacted"] = red
    if tally.cut:
        done["cut"] = int(done.get("cut", 0)) + tally.cut
    return replace(trace, metadata=replace(trace.metadata, extra={**trace.metadata.extra, key: done}))


def clean_trace(trace: Trace, red: Redactor | None = None) -> Trace:
    """The trace with every string field repaired and redacted (uncapped), and a note of what changed.

    Every string of a trace: the output, each step's agent, tool, arguments, output, error and target,
    the trial's error, and the metadata (model, version, extra). Objects that are not JSON data (an
    SDK's pydantic output) are kept for checks; the store and the results file turn them into text and
    clean that when they write.
    """
    # a cycle: traces imports boundary at import time
    from ._traces import Step

    red = red or redactor()
    tally = _Tally()

    def s(v: Any) -> Any:
        return scrub(v, red, tally=tally)

    steps = tuple(
        Step(st.action, s(st.agent), s(st.tool), s(st.arguments), s(st.output), s(st.error), s(st.target),
             st.depth)
        for st in trace.steps
    )
    md = trace.metadata
    meta = replace(md, scenario=s(md.scenario), agent_version=s(md.agent_version), model=s(md.model),
                   adapter=s(md.adapter), extra=s(dict(md.extra)))
    out = replace(trace, steps=steps, output=s(trace.output), metadata=meta, error=s(trace.error))
    return _note(out, tally)


def stored_json(trace: Trace, red: Redactor | None = None) -> tuple[str, str | None]:
    """The trace as the store keeps it (its JSON, and its error), every string cleaned again and capped.

    Each field is capped at :data:`FIELD_LIMIT`; when the fields together still exceed
    :data:`TRACE_LIMIT` (thousands of steps), the per-field cap is halved until they fit or reach
    :data:`MIN_FIELD`. The number of cut fields is noted in ``metadata.extra["boundary"]["cut"]``.
    """
    # a cycle: traces imports boundary at import time
    from ._traces import Trace as _Trace

    data = trace.to_dict()
    tally = _Tally()
    cleaned = scrub(data, red or redactor(), tally=tally, to_text=True)  # once: repair and redact
    limit = FIELD_LIMIT
    while True:
        cuts = [0]
        capped = _capped(cleaned, limit, cuts)
        if limit <= MIN_FIELD or _chars(capped) <= TRACE_LIMIT:
            break
        limit = max(MIN_FIELD, limit // 2)
    tally.cut = cuts[0]
    if tally.repaired or tally.redacted or tally.cut:
        capped = _note(_Trace.from_dict(capped), tally).to_dict()
    return json.dumps(capped, ensure_ascii=False, separators=(",", ":")), capped.get("error")


def _capped(value: Any, limit: int, cuts: list[int]) -> Any:
    """Every string of already cleaned JSON data bounded at ``limit`` (see :func:`bound`)."""
    if isinstance(value, str):
        if len(value) > limit:
            cuts[0] += 1
            return bound(value, limit)
        return value
    if isinstance(value, dict):
        return {k: _capped(v, limit, cuts) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_capped(v, limit, cuts) for v in value]
    return value


def _chars(value: Any) -> int:
    if isinstance(value, str):
        return len(value)
    if isinstance(value, dict):
        return sum(len(k) + _chars(v) for k, v in value.items())
    if isinstance(value, list):
        return sum(_chars(v) for v in value)
    return 0


def scrub_text(text: str, red: Redactor | None = None, limit: int | None = FIELD_LIMIT) -> str:
    """One string through the whole boundary: repaired, redacted, capped."""
    return _text(text, red or redactor(), _Tally(), limit)

