"""Writes docs/benchmarks.md and the generated part of docs/benchmarks-history.md.

docs/benchmarks.md is bench/page_text.md (the hand-written part: what each bench answers,
how to read it, its command) with the latest figures of bench/results/<bench>.json filled
in; docs/benchmarks-history.md keeps the notebook of earlier runs by hand and gets, between
its markers, one entry per recorded result (bench/results/history.jsonl).

    python -m bench.page            # write both pages
    python -m bench.page --check    # exit 1 when either page is not what this would write

In bench/page_text.md, a section `## Title` holding `<!-- bench: NAME -->` is NAME's: its
`**Question.**` paragraph and the first `python -m` line of its first bash block go into
the table,
`{{figures}}` becomes its latest figures. `{{table}}` is the table of every bench,
`{{include PATH}}` a generated file's text.
"""

from __future__ import annotations

import argparse
import re
import sys
from dataclasses import dataclass
from pathlib import Path

from bench.record import ROOT, Record, history, latest

TEXT = ROOT / "bench" / "page_text.md"
PAGE = ROOT / "docs" / "benchmarks.md"
HISTORY_PAGE = ROOT / "docs" / "benchmarks-history.md"
HISTORY_START = "<!-- bench:history:start -->"
HISTORY_END = "<!-- bench:history:end -->"
GENERATED = (
    "<!-- Written by `python -m bench.page` from bench/page_text.md and bench/results/: "
    "edit those, then run it. -->\n"
)
_MARKER = re.compile(r"^<!-- bench: ([a-z_]+) -->\n", re.MULTILINE)
_QUESTION = re.compile(r"^\*\*Question\.\*\* (.+?)(?:\n\n|\Z)", re.MULTILINE | re.DOTALL)
_COMMAND = re.compile(r"^```bash\n(?:(?!```).*\n)*?(python -m .*)\n", re.MULTILINE)
_INCLUDE = re.compile(r"^\{\{include ([^}]+)\}\}$", re.MULTILINE)


@dataclass(frozen=True)
class Section:
    bench: str
    title: str
    question: str
    command: str

    @property
    def anchor(self) -> str:
        """GitHub's: lower case, punctuation dropped, spaces to hyphens."""
        return re.sub(r"[^\w\- ]", "", self.title.lower()).replace(" ", "-")


def sections(text: str) -> list[Section]:
    found = []
    for part in re.split(r"^## ", text, flags=re.MULTILINE)[1:]:
        marker = _MARKER.search(part)
        if marker is None:
            continue
        question = _QUESTION.search(part)
        command = _COMMAND.search(part)
        if question is None or command is None:
            raise ValueError(f"the section of {marker.group(1)} needs a Question and a command")
        found.append(
            Section(
                bench=marker.group(1),
                title=part.split("\n", 1)[0].strip(),
                question=" ".join(question.group(1).split()),
                command=command.group(1).split("  #", 1)[0].strip(),
            )
        )
    return found


def _provenance(record: Record, dated: bool = True) -> str:
    """`2026-12-06, recorded; 2 cores ...`: a transcription names where from, no more."""
    how = re.split(r"[,:;]", record.source, maxsplit=1)[0].strip()
    return f"{record.date}, {how}; {record.machine}" if dated else f"{how}; {record.machine}"


def figures(record: Record | None) -> str:
    if record is None or not record.figures:
        return "No figures recorded yet: run the command above with `--record` to add them here."
    rows = "\n".join(f"| {f.name} | {f.shown()} |" for f in record.figures)
    return (
        f"Latest figures ({_provenance(record)}):\n\n"
        f"| figure | value |\n|---|---|\n{rows}\n\n"
        f"Produced by `{record.command}`."
    )


def table(found: list[Section], records: dict[str, Record]) -> str:
    lines = ["| bench | question it answers | command | latest headline | date |"]
    lines.append("|---|---|---|---|---|")
    for section in found:
        record = records.get(section.bench)
        headline = record.headline if record else None
        shown = f"{headline.name}: **{headline.shown()}**" if headline else "not recorded yet"
        date = record.date if record and headline else "—"
        if record and headline and "transcribed" in record.source:
            date += " (transcribed)"
        lines.append(
            f"| [{section.title}](#{section.anchor}) | {section.question} | "
            f"`{section.command}` | {shown} | {date} |"
        )
    return "\n".join(lines)


def render_page(text: str, records: dict[str, Record]) -> str:
    text = re.sub(r"\A<!--.*?-->\n", "", text, flags=re.DOTALL)  # the note to its editors
    found = sections(text)
    parts = re.split(r"^(?=## )", text, flags=re.MULTILINE)
    rendered = []
    for part in parts:
        marker = _MARKER.search(part)
        if marker is not None:
            part = part.replace("{{figures}}", figures(records.get(marker.group(1))))
        rendered.append(part)
    page = "".join(rendered).replace("{{table}}", table(found, records))
    page = _INCLUDE.sub(lambda m: (ROOT / m.group(1).strip()).read_text().rstrip("\n"), page)
    return GENERATED + page


def render_history(current: str, records: list[Record]) -> str:
    entries = "\n".join(_entry(r) for r in reversed(records)) or "No result recorded yet."
    block = f"{HISTORY_START}\n{entries}\n{HISTORY_END}"
    if HISTORY_START not in current or HISTORY_END not in current:
        raise ValueError(f"{HISTORY_PAGE.name} lost its markers {HISTORY_START} … {HISTORY_END}")
    head, rest = current.split(HISTORY_START, 1)
    return head + block + rest.split(HISTORY_END, 1)[1]


def _entry(record: Record) -> str:
    shown = "; ".join(f"{f.name} {f.shown()}" for f in record.figures) or "no figures"
    return f"- **{record.date}, `bench.{record.bench}`** ({_provenance(record, False)}): {shown}."


def expected() -> dict[Path, str]:
    return {
        PAGE: render_page(TEXT.read_text(), latest()),
        HISTORY_PAGE: render_history(HISTORY_PAGE.read_text(), history()),
    }


def write_pages() -> None:
    for path, text in expected().items():
        path.write_text(text)


def stale() -> list[Path]:
    """The pages that are not what `write_pages` would write."""
    return [path for path, text in expected().items() if path.read_text() != text]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare, write nothing")
    args = parser.parse_args(argv)
    if args.check:
        behind = stale()
        for path in behind:
            print(f"{path.relative_to(ROOT)} is not what `python -m bench.page` writes")
        return 1 if behind else 0
    write_pages()
    return 0


if __name__ == "__main__":
    sys.exit(main())
