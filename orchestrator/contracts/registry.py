"""A table of handlers the code that defines them fills, keyed by a declared name.

A handler registers itself where it lives (`@DRAFTS.register("soa")`, `TABLES.add(...)`),
the entry points import those modules (orchestrator.runtime.registrations), and a lookup
that misses names what is missing. Registering another handler under a taken name is
refused, as is one for a name nothing declares.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Generic, TypeVar

from orchestrator.contracts.errors import FleetError

T = TypeVar("T")


class RegistrationError(FleetError, LookupError):
    """A handler registered twice, for an undeclared name, or looked up and not found."""


class Registry(Generic[T]):
    def __init__(self, what: str, declared: Callable[[], set[str]]) -> None:
        #: What a handler is, in words ("the draft function").
        self.what = what
        self._declared = declared
        self._handlers: dict[str, T] = {}

    def add(self, name: str, handler: T) -> T:
        if name not in self._declared():
            raise RegistrationError(f"{self.what} registered for {name!r}, which nothing declares")
        found = self._handlers.get(name)
        if found is not None and _identity(found) != _identity(handler):
            raise RegistrationError(
                f"{self.what} for {name!r} is registered twice: {_where(found)} and "
                f"{_where(handler)}"
            )
        self._handlers[name] = handler
        return handler

    def register(self, name: str) -> Callable[[T], T]:
        """A decorator: `@REGISTRY.register("name")`."""
        return lambda handler: self.add(name, handler)

    def get(self, name: str) -> T | None:
        return self._handlers.get(name)

    def __getitem__(self, name: str) -> T:
        found = self._handlers.get(name)
        if found is None:
            raise RegistrationError(
                f"no {self.what} is registered for {name!r}: is the module that registers it "
                "imported by orchestrator.runtime.registrations?"
            )
        return found

    def __contains__(self, name: object) -> bool:
        return name in self._handlers

    def __iter__(self) -> Iterator[str]:
        return iter(self._handlers)

    def remove(self, name: str) -> None:
        """Forget a handler (a test that registered one)."""
        self._handlers.pop(name, None)


def _identity(handler: object) -> object:
    """The same function imported twice (a module reloaded) is the same registration."""
    qualname = getattr(handler, "__qualname__", None)
    if qualname is not None and callable(handler):
        return (getattr(handler, "__module__", None), qualname)
    return handler


def _where(handler: object) -> str:
    qualname = getattr(handler, "__qualname__", None)
    if qualname is not None and callable(handler):
        return f"{getattr(handler, '__module__', '?')}:{qualname}"
    return repr(handler)[:80]
