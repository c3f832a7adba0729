"""Read, check and write the workflow manifest S (the paper's Listing 1, extended compatibly).

The YAML format::

    system: {id: customer_service, entry_agent: triage_agent}
    agents:
      - id: triage_agent
        name: Triage Agent        # runtime name; default: the id
        kind: coordinator         # agent (default) | coordinator
        description: ...
    tools:
      - id: faq_lookup_tool
        kind: hosted              # function (default) | hosted | mcp | other
        description: ...
        schema: {...}             # JSON schema of the parameters, when known
    permissions:
      allow: [[faq_agent, faq_lookup_tool]]
      restrict: [[triage_agent, faq_lookup_tool]]   # or the string "derive" (closed world)
    delegations:
      - {from: triage_agent, to: faq_agent, trigger: delegate, via: handoff, tool: transfer_to_faq_agent}
    notes: [...]

Coverage obligations are only meaningful on a well-formed S (paper Sec. III-A), so every check
reports *all* offenders of a kind at once, with the field and the fix: a user editing a manifest by
hand should fix it in one pass, not one error per run.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, NoReturn

import yaml

from ..._config_check import closest, show
from ..._errors import AgentAssayError
from ._model import AgentNode, Delegation, Edge, Manifest, ToolNode

__all__ = [
    "CLOSED_WORLD_NOTE",
    "ManifestError",
    "check_manifest",
    "derive_restrictions",
    "dump_manifest",
    "load_manifest",
    "manifest_to_data",
    "parse_manifest",
]

DEFAULT_SOURCE = "<manifest>"
DOCS = "docs/coverage.md#writing-a-manifest"
CLOSED_WORLD_NOTE = (
    "restrictions derived under the closed-world convention: (a, t) is restricted when tool t is "
    "allowed to another agent and not to a (Python coordinators excepted: they never call tools)"
)

AGENT_KINDS = ("agent", "coordinator")
TOOL_KINDS = ("function", "hosted", "mcp", "other")
VIAS = ("handoff", "as_tool", "call", "declared")

_TOP_KEYS = ("system", "agents", "tools", "permissions", "delegations", "notes")
_SYSTEM_KEYS = ("id", "entry_agent")
_AGENT_KEYS = ("id", "name", "kind", "description")
_TOOL_KEYS = ("id", "name", "kind", "description", "schema")
_PERMISSION_KEYS = ("allow", "restrict")
_DELEGATION_KEYS = ("from", "to", "trigger", "via", "tool")
# Words people reach for that difflib would not map to our keys.
_ALIASES = {
    "source": "from",
    "target": "to",
    "src": "from",
    "dst": "to",
    "entry": "entry_agent",
    "allowed": "allow",
    "restricted": "restrict",
    "deny": "restrict",
    "handoffs": "delegations",
    "type": "kind",
    "parameters": "schema",
}


class ManifestError(AgentAssayError, ValueError):
    """A manifest that is not well-formed: which field, every offending item, and how to fix it.

    The CLI maps it to exit code 3, like a bad suite file.
    """

    def __init__(
        self,
        source: str,
        field: str,
        problems: Sequence[str],
        fix: str,
        *,
        headline: str | None = None,
        joiner: str = "; ",
    ) -> None:
        self.source = source
        self.field = field
        self.problems = list(problems)
        self.fix = fix
        self.headline = headline
        self.joiner = joiner
        super().__init__(self._render())

    def _render(self) -> str:
        listed = self.joiner.join(self.problems)
        body = f"{self.headline}: {listed}" if self.headline and listed else (self.headline or listed)
        where = f"{self.source}: {self.field}: " if self.field else f"{self.source}: "
        end = "" if body.endswith((".", "?", "!")) else "."
        fix = f" Fix: {self.fix}" if self.fix else ""
        if fix and not fix.endswith((".", "?", "!")):
            fix += "."
        return f"{where}{body}{end}{fix}"

    def __str__(self) -> str:
        return self._render()

    def __reduce__(self) -> tuple[Any, ...]:
        return (
            _rebuild_error,
            (self.source, self.field, self.problems, self.fix, self.headline, self.joiner),
        )


def _rebuild_error(
    source: str, field: str, problems: list[str], fix: str, headline: str | None, joiner: str
) -> ManifestError:
    return ManifestError(source, field, problems, fix, headline=headline, joiner=joiner)


# -- small helpers --------------------------------------------------------------------------------
def _did_you_mean(word: object, candidates: Iterable[str]) -> str:
    """`` (did you mean 'x'?)`` for the closest candidate, or an empty string."""
    best = closest(word, candidates, aliases=_ALIASES) if isinstance(word, str) else None
    return f" (did you mean '{best}'?)" if best else ""


def _type_name(value: object) -> str:
    if value is None:
        return "nothing (null)"
    names = {dict: "a mapping", list: "a list", str: "a string", bool: "a boolean", int: "a number"}
    for t, n in names.items():
        if type(value) is t:
            return n
    if isinstance(value, Mapping):
        return "a mapping"
    if isinstance(value, float):
        return "a number"
    return f"a {type(value).__name__}"


def _pair(edge: Edge) -> str:
    return f"({edge[0]}, {edge[1]})"


def _plural(n: int, one: str, many: str | None = None) -> str:
    return f"{n} {one if n == 1 else (many or one + 's')}"


def _article(noun: str) -> str:
    return "an" if noun[:1].lower() in ("a", "e", "i", "o", "u") else "a"


def _to_plain(value: Any) -> Any:
    """Deep copy of a YAML/JSON value into plain dicts and lists (a schema must not alias input)."""
    if isinstance(value, Mapping):
        return {str(k): _to_plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_to_plain(v) for v in value]
    return value


@dataclass
class _Problems:
    """Accumulates shape problems (wrong types, unknown or missing keys) across the whole file."""

    items: list[tuple[str, str]]

    def add(self, field: str, text: str) -> None:
        self.items.append((field, text))


# -- parsing --------------------------------------------------------------------------------------
def _check_keys(
    value: Mapping[Any, Any], allowed: Sequence[str], where: str, problems: _Problems, *, field: str = ""
) -> None:
    for key in value:
        if key not in allowed:
            hint = _did_you_mean(key, allowed) or f" (known keys: {', '.join(allowed)})"
            prefix = f"{where}: " if where else ""
            problems.add(field or where or "(top level)", f"{prefix}unknown key {show(key)}{hint}")


def _string(
    value: Any, where: str, problems: _Problems, *, required: bool = True, field: str | None = None
) -> str | None:
    field = field or where
    if value is None:
        if required:
            problems.add(field, f"{where}: missing; expected a string")
        return None
    if not isinstance(value, str):
        # YAML reads bare no/yes/on/off as booleans and 1e3 as a number: quoting fixes it.
        hint = " (quote it to keep it a string)" if isinstance(value, bool | int | float) else ""
        problems.add(field, f"{where}: expected a string, got {_type_name(value)} {show(value)}{hint}")
        return None
    if required and not value.strip():
        problems.add(field, f"{where}: expected a non-empty string")
        return None
    return value


def _choice(
    value: Any, choices: Sequence[str], default: str, where: str, field: str, problems: _Problems
) -> str:
    if value is None:
        return default
    if not isinstance(value, str) or value not in choices:
        hint = _did_you_mean(value, choices)
        problems.add(field, f"{where}: expected one of {', '.join(choices)}, got {show(value)}{hint}")
        return default
    return value


def _list(value: Any, where: str, problems: _Problems, what: str) -> list[Any]:
    if value is None:
        return []
    if not isinstance(value, list):
        problems.add(where, f"{where}: expected a list of {what}, got {_type_name(value)}")
        return []
    return value


def _parse_node_entries(
    raw: Any, section: str, keys: Sequence[str], problems: _Problems
) -> Iterator[tuple[str, str, dict[str, Any]]]:
    """``agents`` / ``tools`` entries as (where, id, mapping); a bare string is short for ``{id: ...}``.

    A generator, so the caller's problems with an entry are reported in file order.
    """
    for i, item in enumerate(_list(raw, section, problems, "mappings with an 'id'")):
        where = f"{section}[{i}]"
        if isinstance(item, str) and item.strip():
            yield where, item, {"id": item}
            continue
        if not isinstance(item, Mapping):
            problems.add(
                section, f"{where}: expected a mapping with an 'id', got {_type_name(item)} {show(item)}"
            )
            continue
        _check_keys(item, keys, where, problems, field=section)
        node_id = _string(item.get("id"), f"{where}.id", problems, field=section)
        if node_id is not None:
            yield where, node_id, dict(item)


def _parse_pairs(raw: Any, field: str, problems: _Problems) -> list[Edge]:
    pairs: list[Edge] = []
    for i, item in enumerate(_list(raw, field, problems, "[agent, tool] pairs")):
        where = f"{field}[{i}]"
        if (
            not isinstance(item, list | tuple)
            or len(item) != 2
            or not all(isinstance(x, str) and x.strip() for x in item)
        ):
            problems.add(field, f"{where}: expected an [agent, tool] pair of two ids, got {show(item)}")
            continue
        pairs.append((item[0], item[1]))
    return pairs


def _parse_system(raw: Any, problems: _Problems) -> tuple[str | None, str | None]:
    """The ``system`` section as (id, entry_agent); split out to keep parse_manifest short."""
    if not isinstance(raw, Mapping):
        got = "missing" if raw is None else f"got {_type_name(raw)}"
        problems.add("system", f"system: expected a mapping with 'id' and 'entry_agent', {got}")
        return None, None
    _check_keys(raw, _SYSTEM_KEYS, "system", problems)
    system_id = _string(raw.get("id"), "system.id", problems)
    entry = _string(raw.get("entry_agent"), "system.entry_agent", problems)
    return system_id, entry


def _parse_agents(raw: Any, problems: _Problems) -> list[AgentNode]:
    """The ``agents`` section; split out to keep parse_manifest short."""
    agents: list[AgentNode] = []
    if raw is None:
        problems.add("agents", "agents: missing; expected a list with at least the entry agent")
    for where, node_id, item in _parse_node_entries(raw, "agents", _AGENT_KEYS, problems):
        name = _string(item.get("name"), f"{where}.name", problems, required=False, field="agents")
        kind = _choice(item.get("kind"), AGENT_KINDS, "agent", f"{where}.kind", "agents", problems)
        description = _string(
            item.get("description"), f"{where}.description", problems, required=False, field="agents"
        )
        agents.append(AgentNode(node_id, name or node_id, kind, description or ""))  # type: ignore[arg-type]
    return agents


def _parse_tools(raw: Any, problems: _Problems) -> list[ToolNode]:
    """The ``tools`` section; split out to keep parse_manifest short."""
    tools: list[ToolNode] = []
    for where, node_id, item in _parse_node_entries(raw, "tools", _TOOL_KEYS, problems):
        name = _string(item.get("name"), f"{where}.name", problems, required=False, field="tools")
        kind = _choice(item.get("kind"), TOOL_KINDS, "function", f"{where}.kind", "tools", problems)
        description = _string(
            item.get("description"), f"{where}.description", problems, required=False, field="tools"
        )
        schema = item.get("schema")
        if schema is not None and not isinstance(schema, Mapping):
            problems.add(
                "tools", f"{where}.schema: expected a mapping (a JSON schema), got {_type_name(schema)}"
            )
            schema = None
        plain = _to_plain(schema) if schema is not None else None
        node = ToolNode(node_id, name or node_id, kind, description or "", plain)  # type: ignore[arg-type]
        tools.append(node)
    return tools


def _parse_permissions(
    permissions: Any, problems: _Problems, derive: bool
) -> tuple[list[Edge], list[Edge], bool]:
    """The ``permissions`` section as (allow, restrict, derive); ``restrict: derive`` sets derive."""
    allow: list[Edge] = []
    restrict: list[Edge] = []
    if permissions is not None and not isinstance(permissions, Mapping):
        problems.add(
            "permissions",
            f"permissions: expected a mapping with 'allow' and 'restrict', got {_type_name(permissions)}",
        )
    elif permissions is not None:
        _check_keys(permissions, _PERMISSION_KEYS, "permissions", problems)
        allow = _parse_pairs(permissions.get("allow"), "permissions.allow", problems)
        raw_restrict = permissions.get("restrict")
        if isinstance(raw_restrict, str):
            if raw_restrict.strip().lower() == "derive":
                derive = True
            else:
                problems.add(
                    "permissions.restrict",
                    f"permissions.restrict: expected a list of [agent, tool] pairs or the string 'derive', "
                    f"got {show(raw_restrict)}",
                )
        else:
            restrict = _parse_pairs(raw_restrict, "permissions.restrict", problems)
    return allow, restrict, derive


def _parse_delegations(raw: Any, problems: _Problems) -> list[Delegation]:
    """The ``delegations`` section; split out to keep parse_manifest short."""
    delegations: list[Delegation] = []
    for i, item in enumerate(_list(raw, "delegations", problems, "mappings with 'from' and 'to'")):
        where = f"delegations[{i}]"
        if not isinstance(item, Mapping):
            problems.add(
                "delegations", f"{where}: expected a mapping like {{from: a, to: b}}, got {show(item)}"
            )
            continue
        _check_keys(item, _DELEGATION_KEYS, where, problems, field="delegations")
        src = _string(item.get("from"), f"{where}.from", problems, field="delegations")
        dst = _string(item.get("to"), f"{where}.to", problems, field="delegations")
        trigger = _string(
            item.get("trigger"), f"{where}.trigger", problems, required=False, field="delegations"
        )
        via = _choice(item.get("via"), VIAS, "declared", f"{where}.via", "delegations", problems)
        tool = _string(item.get("tool"), f"{where}.tool", problems, required=False, field="delegations")
        if src is not None and dst is not None:
            edge = Delegation(src, dst, via, trigger or "delegate", tool)  # type: ignore[arg-type]
            delegations.append(edge)
    return delegations


def _parse_notes(raw: Any, problems: _Problems) -> list[str]:
    """The ``notes`` section; a bare string is one note."""
    if isinstance(raw, str):
        return [raw]
    notes: list[str] = []
    for i, note in enumerate(_list(raw, "notes", problems, "strings")):
        if isinstance(note, str):
            notes.append(note)
        else:
            problems.add("notes", f"notes[{i}]: expected a string, got {_type_name(note)}")
    return notes


def _raise_problems(source: str, problems: _Problems) -> None:
    """Raise one ManifestError listing every shape problem, so a user fixes the file in one pass."""
    if problems.items:
        fields = list(dict.fromkeys(f for f, _ in problems.items))
        raise ManifestError(
            source,
            ", ".join(fields),
            [text for _, text in problems.items],
            f"use the keys and types of the manifest format ({DOCS})",
            headline=f"{_plural(len(problems.items), 'problem')} with keys or types",
        )


def parse_manifest(
    data: Mapping[str, Any], *, source: str = DEFAULT_SOURCE, derive_restrictions: bool = False
) -> Manifest:
    """Build and check a ``Manifest`` from its YAML/JSON form (see the module docstring).

    ``derive_restrictions`` (or ``restrict: derive``) adds the closed-world restrictions.
    Raises ``ManifestError`` listing every offender of the first kind of problem found.
    """
    if not isinstance(data, Mapping):
        raise ManifestError(
            source,
            "",
            [
                "expected a mapping with system, agents, tools, permissions and delegations, "
                f"got {_type_name(data)}"
            ],
            f"start the file with 'system:' and 'agents:' (see {DOCS})",
        )
    problems = _Problems([])
    _check_keys(data, _TOP_KEYS, "", problems)
    # Sections are parsed in file order so the problems are listed in that order.
    system_id, entry = _parse_system(data.get("system"), problems)
    agents = _parse_agents(data.get("agents"), problems)
    tools = _parse_tools(data.get("tools"), problems)
    allow, restrict, derive = _parse_permissions(data.get("permissions"), problems, derive_restrictions)
    delegations = _parse_delegations(data.get("delegations"), problems)
    notes = _parse_notes(data.get("notes"), problems)
    _raise_problems(source, problems)

    manifest = Manifest(
        system=system_id or "",
        entry_agent=entry or "",
        agents=tuple(agents),
        tools=tuple(tools),
        allow=tuple(allow),
        restrict=tuple(restrict),
        delegations=tuple(delegations),
        notes=tuple(notes),
        source=None if source == DEFAULT_SOURCE else source,
    )
    check_manifest(manifest, source=source)
    return _derive(manifest) if derive else manifest


# -- well-formedness ------------------------------------------------------------------------------
def _fail(
    source: str, field: str, problems: list[str], fix: str, headline: str | None, joiner: str = "; "
) -> NoReturn:
    raise ManifestError(source, field, problems, fix, headline=headline, joiner=joiner)


def _check_duplicate_ids(src: str, agent_ids: list[str], tool_ids: list[str]) -> None:
    """Fail on repeated ids: agents and tools share one id space, so an edge end is never ambiguous."""
    dup: list[str] = []
    dup_fields: list[str] = []
    for label, ids in (("agents", agent_ids), ("tools", tool_ids)):
        for node_id, n in Counter(ids).items():
            if n > 1:
                where = ", ".join(f"{label}[{i}]" for i, x in enumerate(ids) if x == node_id)
                dup.append(f"'{node_id}' is declared {n} times ({where})")
                dup_fields.append(label)
    for node_id in dict.fromkeys(agent_ids):
        if node_id in set(tool_ids):
            dup.append(f"'{node_id}' is both an agent id and a tool id")
            dup_fields.extend(("agents", "tools"))
    if dup:
        _fail(
            src,
            ", ".join(dict.fromkeys(dup_fields)),
            dup,
            "give every agent and tool its own id (keep the shared runtime name in 'name')",
            f"{_plural(len(dup), 'duplicate id')}",
        )


def _check_entry(src: str, manifest: Manifest, agent_ids: list[str], tool_ids: list[str]) -> None:
    """Fail unless there are agents and the entry agent is one of them."""
    if not manifest.agents:
        _fail(
            src,
            "agents",
            ["no agents are declared"],
            "declare at least the entry agent under 'agents:'",
            None,
        )
    if manifest.entry_agent not in set(agent_ids):
        where = (
            "is a tool, not an agent" if manifest.entry_agent in set(tool_ids) else "is not a declared agent"
        )
        hint = _did_you_mean(manifest.entry_agent, agent_ids)
        _fail(
            src,
            "system.entry_agent",
            [f"'{manifest.entry_agent}' {where}{hint}"],
            "set system.entry_agent to the id of the agent a run starts at, declared under 'agents:'",
            "the entry agent is not declared",
        )


def _check_endpoints(src: str, manifest: Manifest, agent_ids: list[str], tool_ids: list[str]) -> None:
    """Fail unless every edge end is a declared node of the right kind (agent or tool)."""
    agents, tools = set(agent_ids), set(tool_ids)
    bad: list[str] = []
    bad_fields: list[str] = []

    def endpoint(where: str, end: str, value: str, want: str) -> None:
        pool, other, other_kind = (agents, tools, "tool") if want == "agent" else (tools, agents, "agent")
        if value in pool:
            return
        if value in other:
            is_other = f"is {_article(other_kind)} {other_kind}, not {_article(want)} {want}"
            bad.append(f"{where}: {end} '{value}' {is_other}")
        else:
            hint = _did_you_mean(value, agent_ids if want == "agent" else tool_ids)
            bad.append(f"{where}: {end} '{value}' is not a declared {want}{hint}")
        bad_fields.append(where.split("[")[0])

    for field, edges in (("permissions.allow", manifest.allow), ("permissions.restrict", manifest.restrict)):
        for i, (a, t) in enumerate(edges):
            endpoint(f"{field}[{i}] {_pair((a, t))}", "agent", a, "agent")
            endpoint(f"{field}[{i}] {_pair((a, t))}", "tool", t, "tool")
    for i, d in enumerate(manifest.delegations):
        endpoint(f"delegations[{i}] {d.source} → {d.target}", "from", d.source, "agent")
        endpoint(f"delegations[{i}] {d.source} → {d.target}", "to", d.target, "agent")
    if bad:
        _fail(
            src,
            ", ".join(dict.fromkeys(bad_fields)),
            bad,
            "declare each missing agent under 'agents:' and each missing tool under 'tools:', or correct the "
            "id; permission pairs are [agent, tool] and delegations go from an agent to an agent",
            f"{_plural(len(bad), 'edge endpoint')} {'does' if len(bad) == 1 else 'do'} not name "
            "a declared node of the right kind",
        )


def _check_repeated_edges(src: str, manifest: Manifest) -> None:
    """Fail on permission pairs or delegations listed more than once."""
    repeated: list[str] = []
    repeated_fields: list[str] = []
    for field, edges in (("permissions.allow", manifest.allow), ("permissions.restrict", manifest.restrict)):
        for edge, n in Counter(edges).items():
            if n > 1:
                repeated.append(f"{field}: {_pair(edge)} is listed {n} times")
                repeated_fields.append(field)
    for d, n in Counter(manifest.delegations).items():
        if n > 1:
            repeated.append(f"delegations: {d.source} → {d.target} (via {d.via}) is listed {n} times")
            repeated_fields.append("delegations")
    if repeated:
        _fail(
            src,
            ", ".join(dict.fromkeys(repeated_fields)),
            repeated,
            "list each edge once",
            f"{_plural(len(repeated), 'edge')} {'is' if len(repeated) == 1 else 'are'} listed more than once",
        )


def _check_conflicts(src: str, manifest: Manifest) -> None:
    """Fail on agent–tool pairs that are both allowed and restricted."""
    restricted = set(manifest.restrict)
    conflicts = [e for e in dict.fromkeys(manifest.allow) if e in restricted]
    if conflicts:
        _fail(
            src,
            "permissions",
            [_pair(e) for e in conflicts],
            "remove each pair from either permissions.allow or permissions.restrict",
            f"{_plural(len(conflicts), 'agent–tool pair')} {'is' if len(conflicts) == 1 else 'are'} "
            "both allowed and restricted",
            joiner=", ",
        )


def check_manifest(manifest: Manifest, *, source: str | None = None) -> Manifest:
    """Raise ``ManifestError`` unless ``manifest`` is well-formed (paper Sec. III-A); return it.

    Checks, in order, each reporting every offender: duplicate ids (agents and tools share one id
    space, so an edge end is never ambiguous), the entry agent, edge endpoints (declared, and of
    the right kind), duplicate edges, and pairs both allowed and restricted.
    """
    src = source or manifest.source or DEFAULT_SOURCE
    agent_ids = [a.id for a in manifest.agents]
    tool_ids = [t.id for t in manifest.tools]
    _check_duplicate_ids(src, agent_ids, tool_ids)
    _check_entry(src, manifest, agent_ids, tool_ids)
    _check_endpoints(src, manifest, agent_ids, tool_ids)
    _check_repeated_edges(src, manifest)
    _check_conflicts(src, manifest)
    return manifest


# -- closed-world restrictions --------------------------------------------------------------------
def derive_restrictions(manifest: Manifest) -> Manifest:
    """Add (a, t) for every agent a and every tool t allowed to some other agent but not to a.

    The paper's extracted manifests (Listing 1) restrict a specialist's tool for every other agent;
    this makes that closed-world reading explicit. Python coordinators (``kind: coordinator``) are
    left out: they run agents but never call a tool themselves, so a restricted-call attempt by
    one (what C3 needs as a witness) cannot happen and the obligation could never be covered.
    Existing restrictions are kept; the result is in manifest order (agents, then tools) and
    records a note saying how it was obtained.
    """
    return _derive(manifest)


def _derive(manifest: Manifest) -> Manifest:
    allowed_to: dict[str, set[str]] = {}
    for a, t in manifest.allow:
        allowed_to.setdefault(t, set()).add(a)
    wanted = set(manifest.restrict)
    for agent in manifest.agents:
        if agent.kind == "coordinator":
            continue
        for tool in manifest.tools:
            owners = allowed_to.get(tool.id, set())
            if owners and agent.id not in owners:
                wanted.add((agent.id, tool.id))
    agent_rank = {a.id: i for i, a in enumerate(manifest.agents)}
    tool_rank = {t.id: i for i, t in enumerate(manifest.tools)}
    ordered = sorted(
        wanted, key=lambda e: (agent_rank.get(e[0], len(agent_rank)), tool_rank.get(e[1], len(tool_rank)), e)
    )
    notes = manifest.notes if CLOSED_WORLD_NOTE in manifest.notes else (*manifest.notes, CLOSED_WORLD_NOTE)
    return replace(manifest, restrict=tuple(ordered), notes=notes)


# -- files and dumping ----------------------------------------------------------------------------
def load_manifest(path: str | Path, *, derive_restrictions: bool = False) -> Manifest:
    """Read a manifest YAML file; an unreadable file or bad YAML is a ``ManifestError`` naming it."""
    source = str(path)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        _fail(
            source,
            "",
            ["the file does not exist"],
            "check the path, or write one (see " + DOCS + ")",
            "cannot read the manifest",
        )
    except IsADirectoryError:
        _fail(
            source,
            "",
            ["it is a folder, not a file"],
            "point at the manifest .yml file",
            "cannot read the manifest",
        )
    except UnicodeDecodeError as exc:
        _fail(
            source,
            "",
            [f"it is not UTF-8 text ({exc.reason})"],
            "save the manifest as UTF-8",
            "cannot read the manifest",
        )
    except OSError as exc:
        _fail(
            source,
            "",
            [exc.strerror or str(exc)],
            "check the path and its permissions",
            "cannot read the manifest",
        )
    try:
        from ..._spec._loader import BoundedSafeLoader  # refuses nesting that would exhaust the stack

        data = yaml.load(text, Loader=BoundedSafeLoader)  # a SafeLoader subclass
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        _fail(source, "", [f"{where}{problem}"], "fix the YAML syntax at that position", "invalid YAML")
    if data is None:
        _fail(
            source,
            "",
            ["the file is empty"],
            f"declare at least 'system:' and 'agents:' (see {DOCS})",
            "empty manifest",
        )
    return parse_manifest(data, source=source, derive_restrictions=derive_restrictions)


def manifest_to_data(manifest: Manifest) -> dict[str, Any]:
    """The YAML/JSON form of ``manifest``, plain dicts and lists without default values.

    ``parse_manifest`` inverts it (up to ``source``).
    """
    return _to_data(manifest, flow=False)


def _to_data(manifest: Manifest, *, flow: bool) -> dict[str, Any]:
    pair = _FlowList if flow else list
    inline = _FlowDict if flow else dict
    data: dict[str, Any] = {"system": {"id": manifest.system, "entry_agent": manifest.entry_agent}}
    agents = []
    for a in manifest.agents:
        item: dict[str, Any] = {"id": a.id}
        if a.name != a.id:
            item["name"] = a.name
        if a.kind != "agent":
            item["kind"] = a.kind
        if a.description:
            item["description"] = a.description
        agents.append(item)
    data["agents"] = agents
    if manifest.tools:
        tools = []
        for t in manifest.tools:
            entry: dict[str, Any] = {"id": t.id}
            if t.name != t.id:
                entry["name"] = t.name
            if t.kind != "function":
                entry["kind"] = t.kind
            if t.description:
                entry["description"] = t.description
            if t.schema is not None:
                entry["schema"] = _to_plain(t.schema)
            tools.append(entry)
        data["tools"] = tools
    if manifest.allow or manifest.restrict:
        data["permissions"] = {
            "allow": [pair(e) for e in manifest.allow],
            "restrict": [pair(e) for e in manifest.restrict],
        }
    if manifest.delegations:
        delegations = []
        for d in manifest.delegations:
            item = {"from": d.source, "to": d.target, "trigger": d.trigger}
            if d.via != "declared":
                item["via"] = d.via
            if d.tool is not None:
                item["tool"] = d.tool
            delegations.append(inline(item))
        data["delegations"] = delegations
    if manifest.notes:
        data["notes"] = list(manifest.notes)
    return data


def dump_manifest(manifest: Manifest) -> str:
    """YAML in the shape of the paper's Listing 1: pairs and delegations on one line each."""
    return yaml.dump(
        _to_data(manifest, flow=True),
        Dumper=_Dumper,
        sort_keys=False,
        allow_unicode=True,
        width=110,
        default_flow_style=False,
    )


class _FlowList(list):  # type: ignore[type-arg]
    """A list dumped inline, ``[a, b]``."""


class _FlowDict(dict):  # type: ignore[type-arg]
    """A mapping dumped inline, ``{from: a, to: b}``."""


class _Dumper(yaml.SafeDumper):
    """Indents block sequences under their key, as in Listing 1."""

    def increase_indent(self, flow: bool = False, indentless: bool = False) -> None:
        return super().increase_indent(flow, False)


def _represent_flow_list(dumper: yaml.SafeDumper, value: list[Any]) -> yaml.Node:
    return dumper.represent_sequence("tag:yaml.org,2002:seq", value, flow_style=True)


def _represent_flow_dict(dumper: yaml.SafeDumper, value: dict[str, Any]) -> yaml.Node:
    return dumper.represent_mapping("tag:yaml.org,2002:map", value.items(), flow_style=True)


_Dumper.add_representer(_FlowList, _represent_flow_list)
_Dumper.add_representer(_FlowDict, _represent_flow_dict)
