"""The shell commands of the README, CONTRIBUTING.md and docs/ work as written, as far as
a parser can tell.

Every `bash` block is split into commands the way the shell would (continuations,
`;`, `&`, `|`, `$(...)`); each command of this project is parsed by the very CLI it names
(celery's click commands down to `lifecycle role grant`, the `lifecycle` parser,
uvicorn's), files it names exist, and every `$API/...` URL is a route of the app. The
real-fleet block is held to what running it needs: workers that log, each on its own
metrics port, one absolute home for every process.
"""

from __future__ import annotations

import importlib.util
import logging
import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path

import click
import pytest

from orchestrator.api import app
from orchestrator.engine.routing import QUEUES
from tests.ops.test_compose import celery_context

ROOT = Path(__file__).resolve().parents[2]
#: Every page a reader runs commands from.
PAGES = [ROOT / "README.md", ROOT / "CONTRIBUTING.md", *sorted((ROOT / "docs").glob("*.md"))]
README = "\n".join(page.read_text() for page in PAGES)
OPERATING = (ROOT / "docs" / "operating.md").read_text()
HTTP_API = (ROOT / "docs" / "http-api.md").read_text()
_BLOCKS = re.compile(r"^```bash\n(.*?)^```", re.DOTALL | re.MULTILINE)
_ASSIGNMENT = re.compile(r"^([A-Z_][A-Z0-9_]*)=(.*)$", re.DOTALL)
_SEPARATORS = {";", "&", "&&", "|", "||"}


@dataclass
class Command:
    argv: list[str]
    env: dict[str, str] = field(default_factory=dict)
    background: bool = False


def blocks() -> list[str]:
    return _BLOCKS.findall(README)


def fleet_block() -> str:
    section = OPERATING.split("## Running the real fleet", 1)[1]
    found = _BLOCKS.search(section)
    assert found, "the real-fleet section has a bash block"
    return found.group(1)


def commands(block: str) -> list[Command]:
    """The block's commands, in order, with their leading VAR=value assignments."""
    text = block.replace("\\\n", " ")
    found: list[Command] = []
    for line in text.splitlines():
        lexer = shlex.shlex(line, posix=True, punctuation_chars=";&|")
        lexer.whitespace_split = True
        tokens = list(lexer)
        current: list[str] = []
        for token in [*tokens, ";"]:
            if token in _SEPARATORS:
                if current:
                    found.append(_command(current, background=token == "&"))
                current = []
            else:
                current.append(token)
    return found


def _command(tokens: list[str], background: bool) -> Command:
    env: dict[str, str] = {}
    while tokens:
        assignment = _ASSIGNMENT.match(tokens[0])
        if assignment is None:
            break
        name, value = assignment.groups()
        if value.startswith("$("):  # NAME=$(command ...: the command is what runs
            tokens = [value[2:], *tokens[1:]]
            break
        env[name] = value
        tokens = tokens[1:]
    if tokens and tokens[-1].endswith(")") and not tokens[-1].startswith("$("):
        tokens = [*tokens[:-1], tokens[-1][:-1]]
    return Command(tokens, env, background)


def _down_to_the_command(context: click.Context, argv: list[str]) -> click.Context:
    """Through groups (`lifecycle role grant`) to the command that runs."""
    while isinstance(context.command, click.Group):
        protected: list[str] = list(getattr(context, "_protected_args", None) or [])
        name, *rest = [*protected, *context.args]
        command = context.command.get_command(context, name)
        assert command is not None, f"no command {name!r} in {argv}"
        context = command.make_context(name, rest, parent=context)
    return context


def resolved_celery(argv: list[str]) -> click.Context:
    """celery's own parse, down to the last command."""
    return _down_to_the_command(celery_context(argv), argv)


def _as_the_shell_would(argv: list[str]) -> list[str]:
    """A `$VAR` the reader set from an earlier command's output (a run id, a handoff id)
    stands for an id; a glob stands for the files it matches."""
    expanded: list[str] = []
    for arg in argv:
        if re.fullmatch(r"\$[A-Z_]+", arg):
            expanded.append("5f0c2d1e-8a7b-4c3d-9e2f-1a2b3c4d5e6f")
        elif "*" in arg:
            matched = sorted(str(p.relative_to(ROOT)) for p in ROOT.glob(arg))
            assert matched, f"{arg} matches no file"
            expanded += matched
        else:
            expanded.append(arg)
    return expanded


def _check_lifecycle(argv: list[str]) -> None:
    from orchestrator.cli.group import lifecycle

    argv = _as_the_shell_would(argv)
    _down_to_the_command(lifecycle.make_context("lifecycle", argv[1:]), argv)


def _routes() -> list[re.Pattern[str]]:
    return [
        re.compile("^" + re.sub(r"\{[^}]+\}", "[^/]+", path) + "$")
        for path in app.openapi()["paths"]
    ]


def _api_path(url: str) -> str:
    path = url.split("$API", 1)[1].split("?", 1)[0]
    path = re.sub(r"\$[A-Z_]+", "some-id", path)
    return "/api/v1" + path


def _level(value: object) -> int:
    """celery parses `-l INFO` to logging.INFO; without it the level is WARNING."""
    return value if isinstance(value, int) else logging.getLevelName(str(value).upper())


def check(command: Command) -> None:
    argv = command.argv
    if not argv:
        return  # only assignments (KEY=...)
    name = argv[0]
    if name == "celery":
        resolved_celery(argv)
    elif name == "lifecycle":
        _check_lifecycle(argv)
    elif name == "uvicorn":
        from uvicorn.importer import import_from_string
        from uvicorn.main import main

        import_from_string(main.make_context("uvicorn", argv[1:]).params["app"])
    elif name in ("python", "python3") and "-m" in argv:
        module = argv[argv.index("-m") + 1]
        assert importlib.util.find_spec(module) is not None, module
    elif name == "curl":
        routes = _routes()
        for value in argv[1:]:
            if value.startswith("file=@"):
                assert (ROOT / value.removeprefix("file=@")).is_file(), value
            if "$API" in value:
                assert any(r.match(_api_path(value)) for r in routes), value


@pytest.mark.parametrize("index", range(len(blocks())))
def test_every_command_of_the_readme_names_real_commands_options_and_files(index: int) -> None:
    block = blocks()[index]
    for command in commands(block):
        check(command)


def test_the_splitting_sees_the_commands_the_shell_would() -> None:
    parsed = commands(
        'A=$(curl -s -H "$H" $API/x | jq -r .id)\n'
        "X=1 celery -A orchestrator beat -l INFO &\n"
        'export F="a:$(openssl rand -hex 4)"; echo "$F"  # a comment\n'
    )
    assert [c.argv[0] for c in parsed] == ["curl", "jq", "celery", "export", "echo"]
    assert parsed[2].env == {"X": "1"} and parsed[2].background
    assert parsed[1].argv == ["jq", "-r", ".id"]


def test_the_real_fleet_block_runs_a_fleet_that_logs_and_shares_one_home() -> None:
    fleet = commands(fleet_block())
    env: dict[str, str] = {}
    for command in fleet:
        if command.argv[:1] == ["export"]:
            for assignment in command.argv[1:]:
                name, value = assignment.split("=", 1)
                env[name] = re.sub(r"\$([A-Z_]+)", lambda m: env.get(m.group(1), m.group(0)), value)
    assert Path(env["LIFECYCLE_HOME"]).is_absolute(), env["LIFECYCLE_HOME"]
    assert Path(env["LIFECYCLE_STORAGE_DIR"]).is_absolute()
    assert env["LIFECYCLE_DATABASE_URL"].startswith("postgresql://")
    assert env["LIFECYCLE_BROKER_URL"].startswith("redis://")

    workers = [
        c
        for c in fleet
        if c.argv[:1] == ["celery"] and resolved_celery(c.argv).info_name == "worker"
    ]
    served: list[str] = []
    ports, multiproc_dirs, names = set(), set(), set()
    for worker in workers:
        params = resolved_celery(worker.argv).params
        assert _level(params["loglevel"]) == logging.INFO, f"worker does not log: {worker}"
        assert worker.background, "a long-running process before others runs in background"
        served += params["queues"]
        names.add(params["hostname"])
        ports.add(worker.env["LIFECYCLE_METRICS_PORT"])
        if "prefork" in str(params["pool"]):  # celery resolves -P to the pool's class
            directory = worker.env["PROMETHEUS_MULTIPROC_DIR"]
            assert directory.startswith("$LIFECYCLE_HOME/"), directory
            multiproc_dirs.add(directory)
    assert sorted(served) == sorted(QUEUES), "every queue has exactly one worker"
    assert len(ports) == len(names) == len(workers), "each worker its own port and name"
    assert len(multiproc_dirs) == sum(1 for w in workers if "PROMETHEUS_MULTIPROC_DIR" in w.env), (
        "each prefork worker its own metrics directory"
    )

    beat = [c for c in fleet if c.argv[:4] == ["celery", "-A", "orchestrator", "beat"]]
    assert (
        len(beat) == 1 and _level(resolved_celery(beat[0].argv).params["loglevel"]) == logging.INFO
    )
    flower = [c for c in fleet if c.argv[:4] == ["celery", "-A", "orchestrator", "flower"]]
    [conf] = [
        a.split("=", 1)[1]
        for a in resolved_celery(flower[0].argv).params["tornado_argv"]
        if a.startswith("--conf=")
    ]
    assert (ROOT / conf).is_file(), conf
    assert any("FLOWER_BASIC_AUTH=" in " ".join(c.argv) for c in fleet)
    assert "<" not in fleet_block(), "no placeholder the shell would read as a redirection"
    assert [c.argv[:2] for c in fleet if c.argv[:1] == ["lifecycle"]] == [["lifecycle", "migrate"]]


def test_the_http_walkthrough_approves_with_a_second_reviewer_key() -> None:
    section = HTTP_API.split("## HTTP API", 1)[1].split("\n## ", 1)[0]
    every = [c for block in _BLOCKS.findall(section) for c in commands(block)]
    keys = [c.argv for c in every if c.argv[:3] == ["lifecycle", "apikey", "create"]]
    principals = {argv[argv.index("--principal") + 1]: argv for argv in keys}
    assert len(principals) == 3, "an owner's key, a reviewer's and a colleague's who amends"
    approving = [
        p
        for p, argv in principals.items()
        if "approve" in [argv[i + 1] for i, a in enumerate(argv) if a == "--scope"]
    ]
    grants = [
        resolved_celery(c.argv).params
        for c in every
        if c.argv[:1] == ["celery"] and c.argv[3:6] == ["lifecycle", "role", "grant"]
    ]
    [(reviewer, role)] = [(g["principal"], g["role_name"]) for g in grants]
    assert role == "assessor" and reviewer in approving and len(approving) == 2
    colleague_calls = [c.argv for c in every if c.argv[:1] == ["curl"] and "$C" in c.argv]
    assert any(v.endswith("/amendments") for a in colleague_calls for v in a)

    reviewer_calls = [c.argv for c in every if c.argv[:1] == ["curl"] and "$R" in c.argv]
    approvals = [a for a in reviewer_calls if any(v.endswith("/approvals") for v in a)]
    signals = [a for a in reviewer_calls if any("/signals" in v for v in a)]
    assert approvals and signals, "the reviewer records a decision, then signals it"
    assert any("approval_event_id" in " ".join(a) for a in signals)
    assert 'R="Authorization: Bearer $RKEY"' in section
