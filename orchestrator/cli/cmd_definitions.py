"""`lifecycle definitions`: the lifecycle definitions this deployment ships."""

from __future__ import annotations

import click

from orchestrator.cli.clickkit import json_option
from orchestrator.cli.output import emit_json, table


@click.command("definitions")
@json_option
def definitions_command(as_json: bool) -> None:
    """Shipped definitions: version, content hash, steps, and the migrations each
    declares; new runs pin the newest."""
    from orchestrator.lifecycle import definitions

    newest = definitions.current().version
    shipped = definitions.shipped()
    if as_json:
        emit_json(
            [
                {
                    "version": d.version,
                    "content_hash": d.content_hash,
                    "current": d.version == newest,
                    "description": d.description,
                    "migrates_from": [m.from_version for m in d.migrations],
                    **d.content(),
                }
                for d in shipped
            ]
        )
        return
    rows = [
        [
            d.label + (" (new runs)" if d.version == newest else ""),
            d.content_hash[:16],
            len(d.steps),
            ", ".join(f"v{m.from_version}" for m in d.migrations) or "-",
            d.description,
        ]
        for d in shipped
    ]
    click.echo(table(["definition", "hash", "steps", "migrates from", "description"], rows))
