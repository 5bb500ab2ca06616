"""Log lines that carry the trace context: JSON for services, text for people.

A JSON line: {"ts", "level", "logger", "message", trace_id, run_id, step, tenant, job_id,
any `extra=` fields, "exception"}. Services call `configure_logging()` once (the API at
start, workers and beat through Celery's setup_logging signal). The root logger has one
handler of this module's at a time: the `lifecycle` CLI installs its text one first, and
the API it serves (`lifecycle api`) replaces it, so each line is written once.
"""

from __future__ import annotations

import json
import logging
import sys
from datetime import UTC, datetime
from typing import Any, TextIO

from orchestrator.observability.context import current

#: Attributes every LogRecord has; anything else was passed with `extra=`.
_STANDARD = frozenset(vars(logging.LogRecord("", 0, "", 0, "", None, None))) | {
    "message",
    "asctime",
    "taskName",
    "color_message",
}  # the last: uvicorn's ANSI copy


def _extras(record: logging.LogRecord) -> dict[str, Any]:
    return {
        key: value
        for key, value in vars(record).items()
        if key not in _STANDARD and not key.startswith("_")
    }


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "ts": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
        }
        entry.update(current())
        entry.update(_extras(record))
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        return json.dumps(entry, default=str, ensure_ascii=False)


class TextFormatter(logging.Formatter):
    def __init__(self) -> None:
        super().__init__("%(asctime)s %(levelname)-7s %(name)s: %(message)s")

    def format(self, record: logging.LogRecord) -> str:
        line = super().format(record)
        fields = {**current(), **_extras(record)}
        if not fields:
            return line
        return line + "  " + " ".join(f"{key}={value}" for key, value in fields.items())


class _OurHandler(logging.StreamHandler):  # type: ignore[type-arg]
    """Marks the handler this module installed, so configuring twice replaces it."""


def configure_logging(
    level: str | int | None = None, fmt: str | None = None, stream: TextIO | None = None
) -> None:
    """One handler on the root logger, replacing the one installed before (by the CLI or a
    previous call); the level and format not given are the settings'."""
    if not level or not fmt:
        # Imported here: the CLI configures its lines before any command loads settings.
        from orchestrator.config.settings import get_settings

        settings = get_settings().observability
        level = level or settings.log_level
        fmt = fmt or settings.log_format
    handler = _OurHandler(stream or sys.stderr)
    handler.setFormatter(JsonFormatter() if fmt == "json" else TextFormatter())
    root = logging.getLogger()
    for existing in [h for h in root.handlers if isinstance(h, _OurHandler)]:
        root.removeHandler(existing)
    root.addHandler(handler)
    root.setLevel(_level(level))


def _level(level: str | int) -> int:
    if isinstance(level, int):
        return level
    value = logging.getLevelName(level.upper())
    return value if isinstance(value, int) else logging.INFO
