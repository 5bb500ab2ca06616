"""Shipping and retiring lifecycle definitions in this process for one test."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import contextmanager

from orchestrator.lifecycle import definitions
from orchestrator.lifecycle.definitions import LifecycleDefinition


@contextmanager
def deployed(*added: LifecycleDefinition, retired: Iterable[int] = ()) -> Iterator[None]:
    """As if this deployment shipped `added` and no longer shipped `retired`; the
    shipped set is restored afterwards."""
    before = definitions.shipped()
    for definition in added:
        definitions.ship(definition)
    for version in retired:
        definitions.retire(version)
    try:
        yield
    finally:
        for definition in before:
            definitions.ship(definition)
        for definition in definitions.shipped():
            if definition not in before:
                definitions.retire(definition.version)
