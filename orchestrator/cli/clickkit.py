"""Click pieces the lifecycle commands share: run id arguments, --json, --actor, and the
group that turns the fleet's errors into a message and a non-zero exit."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from importlib import import_module
from typing import Any, TypeVar

import click

F = TypeVar("F", bound=Callable[..., Any])


class RunIdType(click.ParamType):
    name = "RUN_ID"

    def convert(
        self, value: Any, param: click.Parameter | None, ctx: click.Context | None
    ) -> uuid.UUID:
        if isinstance(value, uuid.UUID):
            return value
        try:
            return uuid.UUID(str(value))
        except ValueError:
            self.fail(f"{value!r} is not a run id (a UUID)", param, ctx)


RUN_ID = RunIdType()


class LifecycleGroup(click.Group):
    """Loads a command's module only when that command runs (every `celery` command,
    workers included, loads this plugin), and turns the fleet's own errors into a
    message and exit status 1."""

    def __init__(self, *args: Any, lazy: dict[str, str] | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.lazy = dict(lazy or {})
        """Command name -> "module:attribute"."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *self.lazy})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name in self.lazy:
            module, attribute = self.lazy[cmd_name].split(":")
            command = getattr(import_module(module), attribute)
            assert isinstance(command, click.Command)
            return command
        return super().get_command(ctx, cmd_name)

    def invoke(self, ctx: click.Context) -> Any:
        # Imported here: every `celery` command loads this plugin, so it stays light.
        from sqlalchemy.exc import OperationalError

        from orchestrator.contracts.errors import LifecycleError

        try:
            return super().invoke(ctx)
        except LifecycleError as error:
            raise click.ClickException(f"{error.code}: {error.message}") from error
        except OperationalError as error:
            raise click.ClickException(f"database unavailable: {error.orig}") from error


def json_option(function: F) -> F:
    return click.option(
        "--json", "as_json", is_flag=True, help="Print one JSON document (for scripts)."
    )(function)


def actor_option(function: F) -> F:
    return click.option(
        "--actor",
        default=None,
        metavar="ID",
        help="Who acts, for the audit trail (default operator:<login>).",
    )(function)
