"""`lifecycle api` writes each log line once: the CLI's text handler is replaced by the
API's JSON one when the app loads, not kept beside it (every line came out twice, text
then JSON)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

#: `lifecycle api` as the console script runs it, but uvicorn only loads the app as it
#: would before serving (its own logging set up, then the app imported), then two lines
#: are logged: one of the product's, one of the server's.
SERVE_WITHOUT_LISTENING = """
import logging, sys
import uvicorn
from orchestrator.cli.main import main

def load_only(app, **options):
    uvicorn.Config(app, **options).load()
    logging.getLogger("orchestrator.probe").warning("probe line")
    logging.getLogger("uvicorn.error").warning("server line")

uvicorn.run = load_only
sys.exit(main(["api"]))
"""


def test_lifecycle_api_writes_each_record_once_as_json(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-c", SERVE_WITHOUT_LISTENING],
        cwd=ROOT,
        env={**os.environ, "LIFECYCLE_HOME": str(tmp_path), "LIFECYCLE_LOG_FORMAT": "json"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    for message, logger in (("probe line", "orchestrator.probe"), ("server line", "uvicorn.error")):
        lines = [line for line in done.stderr.splitlines() if message in line]
        assert len(lines) == 1, done.stderr
        entry = json.loads(lines[0])
        assert (entry["logger"], entry["level"], entry["message"]) == (logger, "warning", message)


def test_other_commands_log_text_for_people(tmp_path: Path) -> None:
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            "import logging, sys\n"
            "from orchestrator.cli.main import main\n"
            "code = main(['--version'])\n"
            "logging.getLogger('orchestrator.probe').warning('probe line')\n"
            "sys.exit(code)",
        ],
        cwd=ROOT,
        env={**os.environ, "LIFECYCLE_HOME": str(tmp_path)},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    [line] = [line for line in done.stderr.splitlines() if "probe line" in line]
    assert "WARNING orchestrator.probe: probe line" in line
