"""Secrets that are placeholders, not secrets: the example env file's and the usual ones.
A fleet started with one would run with a password anyone can read in the repository."""

from __future__ import annotations

#: Words of placeholder secrets (the example env file's among them).
PLACEHOLDER_WORDS = (
    "change-me",
    "changeme",
    "change_me",
    "replace-me",
    "placeholder",
    "your-password",
)


def is_placeholder(secret: str) -> bool:
    lowered = secret.lower()
    return any(word in lowered for word in PLACEHOLDER_WORDS)
