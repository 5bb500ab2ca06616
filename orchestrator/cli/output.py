"""Printing for people (aligned text) and for scripts (`--json`)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any

import click


def emit_json(value: Any) -> None:
    # Imported here: every command's module loads this one, `--help` included.
    from orchestrator.contracts.plain import jsonable

    click.echo(json.dumps(jsonable(value), indent=2, ensure_ascii=False))


def when(value: datetime | None) -> str:
    return value.strftime("%Y-%m-%d %H:%M:%S.%f")[:-3] if value is not None else "-"


def span(seconds: float | None) -> str:
    """A duration for people: 85 ms, 4.2 s, 3m 05s, 2h 10m, 3d 4h."""
    if seconds is None:
        return "-"
    if seconds < 1:
        return f"{seconds * 1000:.0f} ms"
    if seconds < 60:
        return f"{seconds:.1f} s"
    minutes, secs = divmod(int(seconds), 60)
    if minutes < 60:
        return f"{minutes}m {secs:02d}s"
    hours, minutes = divmod(minutes, 60)
    if hours < 48:
        return f"{hours}h {minutes:02d}m"
    days, hours = divmod(hours, 24)
    return f"{days}d {hours}h"


def between(start: datetime | None, end: datetime | None) -> float | None:
    if start is None or end is None:
        return None
    delta: timedelta = end - start
    return delta.total_seconds()


def table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """Columns padded to their widest cell; the last column is left ragged."""
    cells = [[str(h) for h in headers], *[["" if c is None else str(c) for c in r] for r in rows]]
    widths = [max(len(row[i]) for row in cells) for i in range(len(headers))]
    lines = [
        "  ".join(
            cell.ljust(widths[i]) if i < len(widths) - 1 else cell for i, cell in enumerate(row)
        ).rstrip()
        for row in cells
    ]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def short(text: str | None, limit: int = 80) -> str:
    if not text:
        return ""
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
