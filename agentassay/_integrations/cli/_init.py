"""``agentassay init``: a first suite, the offline behaviour table and the two CI workflows, for the agent found.

The agent is found by reading the repository's source (``_detect``; nothing is imported) or named with
``--agent``. The files are written from the templates in ``templates/``; the two workflows are byte-for-byte
the ready-to-copy ones in examples/workflows/ (a test keeps them equal) with the suite's folder and the install
command filled in. Nothing is overwritten without ``--force``.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from string import Template

import click

from ..._errors import ExitCode
from ._detect import CALLABLE, KIND_TEXT, SDK, UNKNOWN, Candidate, classify, scan

SUITE = "agentassay.yml"
BEHAVIOUR = "agentassay.offline.yml"
WORKFLOWS = {"agentassay-baseline.yml": "record-baseline.yml", "agentassay-check.yml": "pr-check.yml"}
ENTRY = re.compile(r"^[A-Za-z_][\w.]*:[A-Za-z_][\w.]*$")


def template(name: str) -> str:
    """The text of one of the package's templates (``templates/NAME``)."""
    return resources.files(__package__).joinpath("templates", name).read_text(encoding="utf-8")


def git_root(folder: Path) -> Path | None:
    """The work tree containing ``folder`` (a ``.git`` folder or file), or None."""
    for parent in (folder, *folder.parents):
        if (parent / ".git").exists():
            return parent
    return None


def install_command(folder: Path) -> str | None:
    """How the Action's container installs the agent's own dependencies, from the files the folder has."""
    if (folder / "requirements.txt").is_file():
        return "pip install -r requirements.txt"
    if (folder / "pyproject.toml").is_file() or (folder / "setup.py").is_file():
        return "pip install ."
    return None


def workflow(name: str, *, suite: str, workdir: str, install: str | None) -> str:
    """An example workflow with this repository's suite, folder and install command."""
    text = template(name)
    text = re.sub(r"(?m)^(\s*)suite: agentassay\.yml\b", lambda m: f"{m[1]}suite: {suite}", text)
    if workdir != ".":
        text = re.sub(
            r"(?m)^(\s*)suite: (.*)$", lambda m: f"{m[1]}suite: {m[2]}\n{m[1]}working-directory: {workdir}", text
        )
    if install is None:
        text = re.sub(r"(?m)^(\s*)(install: .*)$", lambda m: f"{m[1]}# {m[2]}", text)
    else:
        text = re.sub(r"(?m)^(\s*)install: pip install -r requirements\.txt", lambda m: f"{m[1]}install: {install}", text)
    return text


def _model_block(kind: str) -> str:
    if kind == CALLABLE:
        return (
            "# model: is ignored for a plain callable: it calls its own model. A callable that runs a framework\n"
            "# inside (agent.framework) can be served the offline simulator instead:\n"
            f"#   model: {{provider: offline, behaviour: {BEHAVIOUR}}}\n"
        )
    own = "" if kind == SDK else "; without `model:` the agent keeps the model it was built with"
    return (
        "# Which model drives the agent. `offline` is the seeded simulator: no network, no key, no cost; its\n"
        f"# answers come from {BEHAVIOUR}{own}. A real model (its key stays in an environment variable):\n"
        "#   provider: openai\n"
        "#   name: gpt-4.1-mini\n"
        "#   api_key_env: OPENAI_API_KEY     # the variable's NAME (the default for openai), never the key\n"
        "model:\n"
        "  provider: offline\n"
        f"  behaviour: {BEHAVIOUR}\n"
    )


def suite_text(agent: Candidate, name: str) -> str:
    """The commented first suite for ``agent``."""
    lines = [(f"must_reach: {agent.name}", "the agent (or a handoff to it) answered")] if agent.name else []
    lines += [(f"must_call: {tool}", "the tool was called") for tool in agent.tools[:3]]
    hints = "".join(f"{('      # - ' + check).ljust(39)}# {why}\n" for check, why in lines)
    kind = KIND_TEXT.get(agent.kind) or f"a {agent.kind} agent (traced through OpenTelemetry)"
    return Template(template(SUITE)).substitute(
        name=_yaml_string(name),
        kind_text=kind,
        found_at=f", {agent.file}:{agent.line}" if agent.file else "",
        entry=agent.entry,
        model_block=_model_block(agent.kind),
        hints=hints,
    )


def _yaml_string(text: str) -> str:
    return text if re.fullmatch(r"[A-Za-z][\w.-]*", text) else '"' + text.replace('"', "'") + '"'


def behaviour_text(agent: Candidate) -> str:
    return Template(template(BEHAVIOUR)).substitute(
        agent_name=agent.name or "Support Agent", tool_name=agent.tools[0] if agent.tools else "lookup_order"
    )


@dataclass(frozen=True)
class Plan:
    """The files ``init`` writes (absolute path -> text) and what the summary shows."""

    files: dict[Path, str]
    suite: Path


def plan(folder: Path, agent: Candidate) -> Plan:
    root = git_root(folder) or folder
    workdir = folder.relative_to(root).as_posix() if folder != root else "."
    files = {folder / SUITE: suite_text(agent, folder.name or "agent")}
    if agent.kind != CALLABLE:
        files[folder / BEHAVIOUR] = behaviour_text(agent)
    install = install_command(folder)
    for target, source in WORKFLOWS.items():
        files[root / ".github" / "workflows" / target] = workflow(source, suite=SUITE, workdir=workdir, install=install)
    return Plan(files, folder / SUITE)


def choose(folder: Path, entry: str | None) -> Candidate | str:
    """The agent to test, or the message saying why ``--agent`` is needed."""
    if entry is not None:
        if not ENTRY.match(entry):
            return (
                f"--agent {entry!r}: expected 'package.module:attribute' (a dotted module path, a colon, the "
                "attribute), e.g. --agent myapp.agents:triage_agent"
            )
        return classify(folder, entry)
    found = scan(folder)
    best = [c for c in found if c.score == found[0].score] if found else []
    if len(best) == 1:
        return best[0]
    example = "--agent myapp.agents:support_agent"
    if not best:
        return (
            f"no agent found in the Python files under {folder} (read, not imported; tests, docs, examples and "
            "virtual environments skipped). Name it: agentassay init "
            f"{example} — an OpenAI Agents SDK Agent, an agent of a supported framework (docs/frameworks.md) or "
            "a function taking the scenario input"
        )
    listed = "\n".join(f"  {c.describe()}" for c in best[:10])
    more = f"\n  … and {len(best) - 10} more" if len(best) > 10 else ""
    return f"{len(best)} possible agents found; name the one to test with --agent, e.g. --agent {best[0].entry}:\n{listed}{more}"


def _shown(path: Path) -> str:
    try:
        return str(path.relative_to(Path.cwd()))
    except ValueError:
        return str(path)


def next_steps(p: Plan) -> list[str]:
    """The three commands to run next: record a baseline, check a change, put it in CI."""
    suite = shlex.quote(_shown(p.suite))
    written = " ".join(shlex.quote(_shown(f)) for f in p.files)
    return [
        "Next:",
        f"  1. agentassay run {suite} --full -o baseline.json",
        "     # record a baseline: --full runs every scenario to its trial cap, the evidence every check reuses",
        f"  2. agentassay check {suite} --baseline baseline.json",
        "     # after you change the agent: did it get worse? (exit 0 deploy, 1 block, 2 inconclusive)",
        f"  3. git add {written} && git commit -m 'Add AgentAssay' && git push",
        "     # in CI: a push to the default branch records the baseline artifact, and every pull request is",
        "     # checked against it with one comment; a hosted model's key goes in a repository secret",
        "     # (gh secret set OPENAI_API_KEY; docs/action.md, \"Providers and secrets\")",
    ]


@click.command()
@click.argument("path", required=False, default=".", type=click.Path(file_okay=False, path_type=Path))
@click.option("--agent", "entry", metavar="MODULE:ATTR", help="The agent to test (default: found in PATH's source).")
@click.option("--force", is_flag=True, help="Overwrite files that exist.")
def init(path: Path, entry: str | None, force: bool) -> int:
    """Write a first suite for the agent in PATH, the CI workflows, and print the next commands.

    The agent is found by reading PATH's Python files (nothing is imported) or named with --agent. Writes
    agentassay.yml (with agentassay.offline.yml, the offline simulator's table, for an agent object) and
    .github/workflows/agentassay-baseline.yml and agentassay-check.yml. Exit 0, or 3 when no single agent is
    found or a file exists (use --force).
    """
    folder = path.resolve()
    if not folder.is_dir():
        click.echo(f"error: {path} is not a folder", err=True)
        return ExitCode.USAGE
    agent = choose(folder, entry)
    if isinstance(agent, str):
        click.echo(f"error: {agent}", err=True)
        return ExitCode.USAGE
    p = plan(folder, agent)
    existing = [f for f in p.files if f.exists()]
    if existing and not force:
        names = ", ".join(_shown(f) for f in existing)
        click.echo(f"error: {names} already exist{'s' if len(existing) == 1 else ''}; nothing was written. "
                   "Pass --force to overwrite.", err=True)
        return ExitCode.USAGE
    note = ""
    if entry is not None and agent.kind == UNKNOWN and not agent.file:
        note = " (could not import it to see what it is; `agentassay run` will say why)"
    click.echo(f"agent: {agent.describe()}{note}")
    for file, text in p.files.items():
        try:
            file.parent.mkdir(parents=True, exist_ok=True)
            file.write_text(text, encoding="utf-8")
        except OSError as exc:
            click.echo(f"error: cannot write {_shown(file)}: {exc.strerror or exc}", err=True)
            return ExitCode.USAGE
        click.echo(f"wrote {_shown(file)}")
    click.echo("")
    for line in next_steps(p):
        click.echo(line)
    return ExitCode.OK
