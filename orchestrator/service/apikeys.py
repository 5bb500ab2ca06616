"""API keys: created and revoked by an operator, stored hashed, bound to one tenant.

A key reads `lk_<key id>.<secret>`. Only the SHA-256 of the whole key is stored, so a
leaked database does not leak usable keys; the key id names the key in listings and
revocation. Keys carry scopes and, optionally, the organizations they may see.
"""

from __future__ import annotations

import hashlib
import secrets
import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from enum import StrEnum

from pydantic import BaseModel, ConfigDict, field_validator
from sqlalchemy import select

from orchestrator.contracts.clock import utcnow
from orchestrator.contracts.errors import InvalidInput, NotFound
from orchestrator.contracts.identity import Actor
from orchestrator.db.apikey_models import ApiKey
from orchestrator.db.busy import retry_busy
from orchestrator.db.session import read_transaction, transaction

KEY_PREFIX = "lk_"


class Scope(StrEnum):
    """What a key may do. `admin` may do everything."""

    READ = "read"
    """Every GET."""
    SIGNAL = "signal"
    """Start runs, upload documents, send input signals (framework_selected, ...)."""
    APPROVE = "approve"
    """Record approval events and send approval signals."""
    OPERATE = "operate"
    """Cancel, block, resume, retry and reprocess runs."""
    ADMIN = "admin"


@dataclass(frozen=True)
class Principal:
    """An authenticated caller: whose key, which tenant, what it may do and see."""

    key_id: str
    tenant_id: str
    principal: str
    scopes: frozenset[Scope]
    organizations: frozenset[str] | None

    def allows(self, scope: Scope) -> bool:
        return Scope.ADMIN in self.scopes or scope in self.scopes

    def sees(self, organization_id: str) -> bool:
        return self.organizations is None or organization_id in self.organizations

    @property
    def actor(self) -> Actor:
        return Actor(
            tenant_id=self.tenant_id, actor_id=self.principal, organizations=self.organizations
        )


class ApiKeyView(BaseModel):
    model_config = ConfigDict(frozen=True)

    key_id: str
    tenant_id: str
    principal: str
    scopes: list[Scope]
    organizations: list[str] | None
    name: str
    created_at: datetime
    revoked_at: datetime | None

    @field_validator("created_at", "revoked_at", mode="after")
    @classmethod
    def _utc(cls, value: datetime | None) -> datetime | None:
        # SQLite hands back naive datetimes; every time stored is UTC.
        return value.replace(tzinfo=UTC) if value and value.tzinfo is None else value

    @classmethod
    def of(cls, row: ApiKey) -> ApiKeyView:
        return cls(
            key_id=row.key_id,
            tenant_id=row.tenant_id,
            principal=row.principal,
            scopes=[Scope(s) for s in row.scopes],
            organizations=row.organizations,
            name=row.name,
            created_at=row.created_at,
            revoked_at=row.revoked_at,
        )


def hash_key(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


def create_key(
    tenant_id: str,
    principal: str,
    scopes: Iterable[str],
    *,
    organizations: Iterable[str] | None = None,
    name: str = "",
) -> tuple[ApiKeyView, str]:
    """A new key; returns its record and the key itself, which is never shown again."""
    tenant_id, principal = tenant_id.strip(), principal.strip()
    if not tenant_id or len(tenant_id) > 128:
        raise InvalidInput("a key needs a tenant id of 1 to 128 characters")
    if not principal or len(principal) > 256:
        raise InvalidInput("a key needs a principal of 1 to 256 characters")
    chosen = _scopes(scopes)
    orgs = sorted({o.strip() for o in organizations if o.strip()}) if organizations else None
    key_id = secrets.token_hex(6)
    key = f"{KEY_PREFIX}{key_id}.{secrets.token_urlsafe(32)}"
    with transaction() as session:
        row = ApiKey(
            id=uuid.uuid4(),
            key_id=key_id,
            secret_hash=hash_key(key),
            tenant_id=tenant_id,
            principal=principal,
            organizations=orgs,
            scopes=sorted(s.value for s in chosen),
            name=name.strip()[:200],
            created_at=utcnow(),
        )
        session.add(row)
        session.flush()
        return ApiKeyView.of(row), key


def _scopes(scopes: Iterable[str]) -> set[Scope]:
    chosen: set[Scope] = set()
    for scope in scopes:
        try:
            chosen.add(Scope(scope))
        except ValueError as error:
            known = ", ".join(s.value for s in Scope)
            raise InvalidInput(f"unknown scope {scope!r}; known: {known}") from error
    if not chosen:
        raise InvalidInput("a key needs at least one scope")
    return chosen


def revoke_key(key_id: str) -> ApiKeyView:
    """Revoke a key at once; revoking twice keeps the first revocation time."""
    with transaction() as session:
        row = session.scalar(select(ApiKey).where(ApiKey.key_id == key_id))
        if row is None:
            raise NotFound(f"API key {key_id} not found")
        if row.revoked_at is None:
            row.revoked_at = utcnow()
        return ApiKeyView.of(row)


@retry_busy
def list_keys(tenant_id: str | None = None) -> list[ApiKeyView]:
    with read_transaction() as session:
        query = select(ApiKey).order_by(ApiKey.created_at, ApiKey.key_id)
        if tenant_id is not None:
            query = query.where(ApiKey.tenant_id == tenant_id)
        return [ApiKeyView.of(row) for row in session.scalars(query)]


@retry_busy
def authenticate(key: str) -> Principal | None:
    """The principal of a valid, unrevoked key; None for anything else."""
    if not key.startswith(KEY_PREFIX) or len(key) > 200:
        return None
    with read_transaction() as session:
        row = session.scalar(select(ApiKey).where(ApiKey.secret_hash == hash_key(key)))
        return _principal(row)


@retry_busy
def principal_of_key(key_id: str) -> Principal | None:
    """The principal of an unrevoked key, by its id (a console session holds no secret)."""
    with read_transaction() as session:
        return _principal(session.scalar(select(ApiKey).where(ApiKey.key_id == key_id)))


def _principal(row: ApiKey | None) -> Principal | None:
    if row is None or row.revoked_at is not None:
        return None
    return Principal(
        key_id=row.key_id,
        tenant_id=row.tenant_id,
        principal=row.principal,
        scopes=frozenset(Scope(s) for s in row.scopes),
        organizations=frozenset(row.organizations) if row.organizations is not None else None,
    )
