"""A section of a docs page written from code (settings, declarations) between two
markers, so the page cannot drift: a test compares the page with what would be written,
and `python -m <module> --write` writes it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

DOCS = Path(__file__).resolve().parents[2] / "docs"


@dataclass(frozen=True)
class DocSection:
    page: Path
    name: str
    """The markers are <!-- name:begin --> and <!-- name:end -->."""
    render: Callable[[], str]
    """The section's text between the markers."""

    @property
    def begin(self) -> str:
        return f"<!-- {self.name}:begin -->"

    @property
    def end(self) -> str:
        return f"<!-- {self.name}:end -->"

    def written(self, text: str) -> str:
        """`text` (the page) with the section between the markers written anew."""
        before, _, rest = text.partition(self.begin)
        _, _, after = rest.partition(self.end)
        return f"{before}{self.begin}\n\n{self.render()}\n\n{self.end}{after}"

    def main(self, argv: list[str]) -> int:
        if "--write" in argv:
            self.page.write_text(self.written(self.page.read_text()))
        else:
            print(self.render())
        return 0
