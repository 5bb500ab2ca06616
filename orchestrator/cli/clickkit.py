"""Click pieces the lifecycle commands share: run id arguments, --json, --actor, and the
group that turns the fleet's errors into a message and a non-zero exit."""

from __future__ import annotations

import sys
import uuid
from collections.abc import Callable, Sequence
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


class LazyChoice(click.Choice):  # type: ignore[type-arg]
    """A choice whose values are read when click first asks (a value given, `--help`,
    completion), so declaring a command imports nothing of the fleet."""

    def __init__(self, values: Callable[[], Sequence[str]]) -> None:
        self._values = values
        super().__init__([])

    @property  # type: ignore[override]
    def choices(self) -> tuple[str, ...]:
        # Read each time: a sweep declared after the command was built is a choice too.
        return tuple(self._values())

    @choices.setter
    def choices(self, _: object) -> None:
        pass


def artifact_kinds() -> list[str]:
    """The artifact kinds, from their declarations (the same names as `ArtifactKind`,
    which tests/architecture holds them to) without loading the pydantic contracts."""
    from orchestrator.contracts.artifact_registry import declared

    return [artifact.kind for artifact in declared()]


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
        try:
            return super().invoke(ctx)
        except Exception as error:
            message = fleet_error_message(error)
            if message is None:
                raise
            raise click.ClickException(message) from error


def fleet_error_message(error: Exception) -> str | None:
    """The message for one of the fleet's own errors, else None. The error classes are
    looked up, not imported: a command that never loaded them (`--help`, every `celery`
    command loading this plugin) cannot have raised them."""
    errors = sys.modules.get("orchestrator.contracts.errors")
    if errors is not None and isinstance(error, errors.LifecycleError):
        return f"{error.code}: {error.message}"
    sqlalchemy_exc = sys.modules.get("sqlalchemy.exc")
    if sqlalchemy_exc is not None and isinstance(error, sqlalchemy_exc.OperationalError):
        return f"database unavailable: {error.orig}"
    return None


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
