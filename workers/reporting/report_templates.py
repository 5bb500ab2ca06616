"""The jinja2 environment the report's HTML is rendered in: its own template folder,
autoescaped, strict about names a template misspells."""

from __future__ import annotations

import html
from pathlib import Path
from typing import Any

from jinja2 import Environment, FileSystemLoader, StrictUndefined
from markupsafe import Markup

FOLDER = Path(__file__).parent / "templates"


def shown(value: Any) -> Markup:
    """Every value a template prints: None as nothing, text escaped as html.escape does
    (quotes as `&quot;`, as the report always wrote them); markup a template built passes."""
    if isinstance(value, Markup):
        return value
    return Markup(html.escape("" if value is None else str(value), quote=True))


TEMPLATES = Environment(
    loader=FileSystemLoader(FOLDER),
    autoescape=True,
    trim_blocks=True,
    lstrip_blocks=True,
    keep_trailing_newline=True,
    undefined=StrictUndefined,
    finalize=shown,
)
