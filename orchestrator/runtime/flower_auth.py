"""Flower's credentials: basic auth from FLOWER_BASIC_AUTH, refusing placeholders.

Flower shows task arguments and can revoke tasks and shut workers down, so it never
starts open: without `user:password` pairs, or with a password that is short or a
known placeholder (the example env file's included), it refuses to start.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from orchestrator.config.placeholders import is_placeholder
from orchestrator.contracts.errors import FleetError

ENV_VAR = "FLOWER_BASIC_AUTH"
MIN_PASSWORD_LENGTH = 12


class FlowerAuthError(FleetError, ValueError):
    """The credentials would leave Flower open or guessable."""


def basic_auth_from_env(environ: Mapping[str, str] | None = None) -> list[str]:
    """The `user:password` pairs of FLOWER_BASIC_AUTH (comma-separated), checked."""
    raw = (os.environ if environ is None else environ).get(ENV_VAR, "").strip()
    if not raw:
        raise FlowerAuthError(f"{ENV_VAR} is not set: Flower needs user:password credentials")
    pairs = [pair.strip() for pair in raw.split(",") if pair.strip()]
    for pair in pairs:
        check_pair(pair)
    return pairs


def check_pair(pair: str) -> None:
    user, colon, password = pair.partition(":")
    if not colon or not user.strip():
        raise FlowerAuthError(f"{ENV_VAR} entries read user:password")
    if len(password) < MIN_PASSWORD_LENGTH:
        raise FlowerAuthError(
            f"the Flower password of {user!r} is shorter than {MIN_PASSWORD_LENGTH} characters"
        )
    if is_placeholder(password):
        raise FlowerAuthError(
            f"the Flower password of {user!r} is a placeholder: set a real secret"
        )
