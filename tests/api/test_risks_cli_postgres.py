"""`lifecycle risks ...` on PostgreSQL: the same register the API serves, recorded under the
operator's name; acceptance by the risk's owner refused with the problem's code."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from openpyxl import load_workbook

from orchestrator.cli.group import lifecycle
from tests.api.conftest import Api

pytestmark = pytest.mark.integration

ADD = [
    "--title",
    "Ransomware encrypts the file server",
    "--asset",
    "File server",
    "--threat",
    "Ransomware",
    "--vulnerability",
    "Backups online and writable",
    "--likelihood",
    "4",
    "--impact",
    "5",
    "--owner",
    "user:ops@acme.example",
    "--treatment",
    "modify",
    "--control",
    "BCD-11",
    "--requirement",
    "ISO/IEC 27001:2022=A.8.13",
]


def _run(*args: str) -> tuple[int, str]:
    outcome = CliRunner().invoke(lifecycle, list(args))
    return outcome.exit_code, outcome.output


def test_risks_from_the_command_line(pg_api: Api, tmp_path: Path) -> None:
    headers = pg_api.key("read", "signal", tenant="risk-cli")
    assessment = pg_api.create_assessment(headers)["id"]

    code, out = _run("risks", "add", assessment, *ADD, "--actor", "user:analyst", "--json")
    assert code == 0, out
    made = json.loads(out)
    assert (made["score"], made["level"], made["actor_id"]) == (20, "high", "user:analyst")
    risk = made["risk_id"]

    code, out = _run("risks", "list", assessment)
    assert code == 0, out
    assert "likelihood x impact" in out and risk in out and "20 high" in out

    code, out = _run(
        "risks", "accept", risk, "--assessment", assessment, "--note", "ok",
        "--actor", "user:ops@acme.example",
    )  # fmt: skip
    assert code == 1 and "separation_of_duties" in out, out

    code, out = _run(
        "risks", "accept", risk, "--assessment", assessment, "--note", "within appetite",
        "--actor", "user:ciso", "--expect-version", "1",
    )  # fmt: skip
    assert code == 0, out
    assert "accepted   by user:ciso" in out

    code, out = _run("risks", "revise", risk, "--assessment", assessment, *ADD[:-4])
    assert code == 0 and f"risk {risk} v3 (updated)" in out, out
    code, out = _run("risks", "history", risk, "--json")
    assert [(v["version"], v["change"]) for v in json.loads(out)] == [
        (1, "created"),
        (2, "accepted"),
        (3, "updated"),
    ]
    assert json.loads(out)[2]["controls"] == [] and json.loads(out)[2]["accepted_by"] is None

    code, out = _run("risks", "add", assessment, *ADD[:-2], "--requirement", "no-equals")
    assert code == 2 and "FRAMEWORK=ID" in out, out
    code, out = _run("risks", "add", assessment, *ADD[:-4], "--control", "XYZ-00")
    assert code == 1 and "unknown_catalogue_id" in out and "XYZ-00" in out, out
    code, out = _run("risks", "add", assessment, *ADD, "--residual-likelihood", "2")
    assert code == 1 and "residual likelihood and impact" in out, out

    target = tmp_path / "register.xlsx"
    code, out = _run("risks", "export", assessment, "--format", "xlsx", "-o", str(target))
    assert code == 0 and "wrote 1 risk(s)" in out, out
    rows = list(load_workbook(target, read_only=True)["Risk register"].iter_rows(values_only=True))
    assert rows[3][0] == risk and rows[3][1] == "3"
