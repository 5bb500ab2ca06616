"""The CLI's tables (rich) and durations (humanize): aligned columns a script can read when
the output is not a terminal, bars and rules only when it is; durations to a precision
that suits their size; a spinner for a long call on a terminal only."""

from __future__ import annotations

import io
import json
import sys
import uuid
from pathlib import Path
from typing import Any

import click
import pytest
from click.testing import CliRunner

from orchestrator.catalog import service as catalog_service
from orchestrator.catalog.importer import ImportResult
from orchestrator.catalog.model import CatalogInfo
from orchestrator.cli import output
from orchestrator.cli.group import lifecycle
from orchestrator.cli.output import span, table, working

BOX_DRAWING = set("─│┌┐└┘├┤┬┴┼━")


def starts(line: str, cells: list[str]) -> list[int]:
    """Where each cell begins on a line, searching left to right."""
    found, at = [], 0
    for cell in cells:
        at = line.index(cell, at)
        found.append(at)
        at += len(cell)
    return found


def test_a_plain_table_aligns_its_columns_under_their_headers() -> None:
    text = table(
        ["run", "status", "step", "reason"],
        [
            ["5f0c", "failed", "ingest_documents", "job_lost"],
            ["a-much-longer-run-id", "running", None, "[bold]kept as text[/]"],
            ["b", None, "create_report", None],
        ],
        tty=False,
    )
    header, rule, *rows = text.splitlines()
    assert header.split() == ["run", "status", "step", "reason"]
    # The rule is dashes under each column and spaces between them: no box drawing.
    assert set(rule) == {"-", " "} and not BOX_DRAWING & set(text)
    columns = starts(header, ["run", "status", "step", "reason"])
    assert starts(rows[0], ["5f0c", "failed", "ingest_documents", "job_lost"]) == columns
    assert starts(rows[1], ["a-much-longer-run-id", "running"]) == columns[:2]
    # None is an empty cell: the next cell keeps its column; brackets are not markup.
    assert rows[1].index("[bold]kept as text[/]") == columns[3]
    assert starts(rows[2], ["b", "create_report"]) == [columns[0], columns[2]]
    # Columns are two spaces apart at the widest cell; no line ends in spaces.
    assert columns[1] == len("a-much-longer-run-id") + 2
    assert all(line == line.rstrip() for line in text.splitlines())


def test_a_plain_table_never_wraps_or_cuts_a_wide_cell() -> None:
    reason = "lost: no worker consumes queue 'ingestion' " + "x" * 300
    text = table(["job", "reason"], [["j1", reason], ["j2", "short"]], tty=False)
    lines = text.splitlines()
    assert len(lines) == 4
    assert lines[2].endswith(reason) and "…" not in text
    assert lines[3].split() == ["j2", "short"]


def test_an_empty_table_is_its_headers() -> None:
    assert table(["sweep", "every"], [], tty=False).splitlines()[0].split() == ["sweep", "every"]


def test_on_a_terminal_the_table_is_drawn_to_its_width(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "40")
    words = " ".join(f"word{i}" for i in range(30))
    text = table(["id", "detail"], [["r1", words]], tty=True)
    shown = click.unstyle(text).splitlines()
    assert shown[0].split() == ["id", "detail"] and set(shown[1]) == {"─"}
    assert text != click.unstyle(text), "the headers are styled"
    assert max(len(line) for line in shown) <= 40
    # The detail wraps onto lines of its own column; no word is lost or cut.
    assert len(shown) > 3 and " ".join(shown[2:]).split() == ["r1", *words.split()]


def test_on_a_terminal_an_id_is_never_cut(monkeypatch: pytest.MonkeyPatch) -> None:
    run = str(uuid.uuid4())
    words = " ".join(f"word{i}" for i in range(30))
    monkeypatch.setenv("COLUMNS", "60")
    shown = click.unstyle(table(["run", "detail"], [[run, words]], tty=True)).splitlines()
    assert shown[2].split()[0] == run and max(len(line) for line in shown) <= 60
    assert " ".join(shown[2:]).split() == [run, *words.split()]
    # Narrower than the id and a word need: drawn as wide as they need, not cut.
    monkeypatch.setenv("COLUMNS", "20")
    shown = click.unstyle(table(["run", "detail"], [[run, words]], tty=True)).splitlines()
    assert shown[2].split()[0] == run and " ".join(shown[2:]).split() == [run, *words.split()]


class Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_the_table_follows_whether_stdout_is_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "stdout", io.StringIO())
    assert table(["a"], [["1"]]).splitlines()[1] == "-"
    monkeypatch.setattr(sys, "stdout", Tty())
    assert "─" in table(["a"], [["1"]])


@pytest.mark.parametrize(
    ("seconds", "shown"),
    [
        (None, "-"),
        (0.0, "0 milliseconds"),
        (0.085, "85 milliseconds"),
        (4.2, "4.2 seconds"),
        (59.96, "1 minute"),  # rounding carries into the next unit
        (185, "3 minutes and 5 seconds"),
        (2 * 3600 + 10 * 60 + 12, "2 hours and 10 minutes"),
        (3 * 86400 + 4 * 3600 + 5 * 60, "3 days and 4 hours"),
        (-0.05, "-50 milliseconds"),  # a clock a little behind another
    ],
)
def test_durations_read_at_a_precision_that_suits_their_size(
    seconds: float | None, shown: str
) -> None:
    assert span(seconds) == shown


def test_a_spinner_only_when_stderr_is_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    piped = io.StringIO()
    monkeypatch.setattr(sys, "stderr", piped)
    with working("importing scf.xlsx"):
        pass
    assert piped.getvalue() == ""
    terminal = Tty()
    monkeypatch.setattr(sys, "stderr", terminal)
    with working("importing scf.xlsx", show=False):
        pass
    assert terminal.getvalue() == ""
    with working("importing scf.xlsx"):
        pass
    assert "importing scf.xlsx" in terminal.getvalue()
    assert "0:00:0" in terminal.getvalue(), "the time elapsed"


def _imported(_path: Path) -> ImportResult:
    info = CatalogInfo(
        id=uuid.uuid4(),
        kind="oscal_catalog",
        name="NIST SP 800-53 rev5",
        version="5.0.1",
        source_name="catalog.json",
        sha256="0" * 64,
        licence="public domain",
        attribution="NIST",
    )
    return ImportResult(info, created=True, controls=3, frameworks=1, requirements=3, links=2)


def test_catalog_import_spins_on_a_terminal_and_its_json_stays_json(
    embedded: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(catalog_service, "import_file", _imported)
    monkeypatch.setattr(output, "is_terminal", lambda _stream: True)
    runner = CliRunner()
    text = runner.invoke(lifecycle, ["catalog", "import", "catalog.json"])
    assert text.exit_code == 0, text.output
    assert "importing catalog.json" in text.stderr
    assert text.stdout.startswith("imported NIST SP 800-53 rev5 5.0.1")
    assert "3 controls, 1 frameworks, 3 requirements, 2 links in " in text.stdout
    as_json = runner.invoke(lifecycle, ["catalog", "import", "catalog.json", "--json"])
    assert as_json.exit_code == 0, as_json.output
    printed: dict[str, Any] = json.loads(as_json.stdout)
    assert printed["controls"] == 3 and as_json.stderr == ""
