"""Printing for people (tables and durations, from rich and humanize) and for scripts
(`--json`).

rich and humanize are imported inside the functions that use them: every command's
module loads this one, and `--help` loads neither."""

from __future__ import annotations

import io
import json
import shutil
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime, timedelta
from typing import IO, TYPE_CHECKING, Any, TypeVar

import click

if TYPE_CHECKING:
    from rich.box import Box

#: Columns of a table that goes to a file or a pipe are never wrapped nor cut: its width
#: is what its widest row needs, up to this.
PLAIN_WIDTH = 1_000_000

_Item = TypeVar("_Item")


def emit_json(value: Any) -> None:
    # Imported here: every command's module loads this one, `--help` included.
    from orchestrator.contracts.plain import jsonable

    click.echo(json.dumps(jsonable(value), indent=2, ensure_ascii=False))


def listing(
    items: Sequence[_Item],
    as_json: bool,
    headers: Sequence[str],
    row: Callable[[_Item], Sequence[Any]],
    empty: str,
    *,
    as_items: bool = False,
) -> None:
    """A list for scripts (`--json`: the list, or `{"items": [...]}` with `as_items`) or for
    people: a table of each item's `row`, or `empty` when there is none."""
    if as_json:
        emit_json({"items": items} if as_items else items)
    elif items:
        click.echo(table(headers, [row(item) for item in items]))
    else:
        click.echo(empty)


def when(value: datetime | None) -> str:
    return value.strftime("%Y-%m-%d %H:%M:%S.%f")[:-3] if value is not None else "-"


def span(seconds: float | None) -> str:
    """A duration for people, to a precision that suits its size: 85 milliseconds,
    4.2 seconds, 3 minutes and 5 seconds, 2 hours and 10 minutes, 3 days and 4 hours."""
    if seconds is None:
        return "-"
    if seconds < 0:
        return "-" + span(-seconds)
    import humanize

    if seconds < 1:
        unit, digits = "milliseconds", "%0.0f"
    elif seconds < 60:
        unit, digits = "seconds", "%0.1f"
    elif seconds < 3600:
        unit, digits = "seconds", "%0.0f"
    elif seconds < 48 * 3600:
        unit, digits = "minutes", "%0.0f"
    else:
        unit, digits = "hours", "%0.0f"
    return str(humanize.precisedelta(timedelta(seconds=seconds), minimum_unit=unit, format=digits))


def between(start: datetime | None, end: datetime | None) -> float | None:
    if start is None or end is None:
        return None
    delta: timedelta = end - start
    return delta.total_seconds()


def is_terminal(stream: IO[Any] | None) -> bool:
    """Whether a person is looking: a terminal, not a file, a pipe or a test's capture."""
    try:
        return stream is not None and stream.isatty()
    except (AttributeError, ValueError):  # no isatty, or a closed stream
        return False


def _plain_box() -> Box:
    """An ASCII rule under the header and nothing else: what a script reads."""
    from rich.box import Box

    return Box("    \n    \n -  \n    \n    \n    \n    \n    \n", ascii=True)


def table(headers: Sequence[str], rows: Sequence[Sequence[Any]], *, tty: bool | None = None) -> str:
    """Aligned columns under their headers; None is an empty cell.

    On a terminal (`tty`, by default whether stdout is one): bold headers over a line, and
    the columns whose cells have spaces wrapped at them to fit the terminal; a column of
    single words (ids, numbers, states) is never wrapped, and no cell is cut. Otherwise
    plain text for scripts: the headers, a rule of `-`, one line per row, columns two
    spaces apart, nothing wrapped or cut, no trailing spaces."""
    from rich.box import SIMPLE_HEAD
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    if tty is None:
        tty = is_terminal(sys.stdout)
    cells = [["" if cell is None else str(cell) for cell in row] for row in rows]
    grid = Table(
        box=SIMPLE_HEAD if tty else _plain_box(),
        show_edge=False,
        pad_edge=False,
        padding=(0, 1, 0, 0),
        header_style="bold" if tty else "",
    )
    for i, header in enumerate(headers):
        words = tty and any(" " in row[i] for row in cells if i < len(row))
        grid.add_column(Text(str(header)), no_wrap=not words, overflow="fold")
    for row in cells:  # Text: a cell's brackets are text, never rich's markup
        grid.add_row(*(Text(cell) for cell in row))
    out = io.StringIO()
    console = Console(file=out, width=PLAIN_WIDTH, force_terminal=tty, highlight=False, emoji=False)
    if tty:
        # A table too wide for the terminal at its narrowest is drawn as wide as it needs
        # (the terminal wraps its lines) rather than cut.
        console.width = max(shutil.get_terminal_size().columns, console.measure(grid).minimum)
    console.print(grid)
    return "\n".join(line.rstrip() for line in out.getvalue().splitlines())


@contextmanager
def working(what: str, *, show: bool = True) -> Iterator[None]:
    """A spinner with the time elapsed on stderr while one long call works, when stderr
    is a terminal (and `show`); nothing otherwise. It is gone once the call returns."""
    if not show or not is_terminal(sys.stderr):
        yield
        return
    from rich.console import Console
    from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    with Progress(
        SpinnerColumn(),
        TextColumn("{task.description}", markup=False),
        TimeElapsedColumn(),
        console=Console(stderr=True, force_terminal=True),
        transient=True,
        redirect_stdout=False,  # what the command prints stays on stdout
    ) as spinner:
        spinner.add_task(what, total=None)
        yield


def short(text: str | None, limit: int = 80) -> str:
    if not text:
        return ""
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
