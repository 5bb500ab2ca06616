"""Console sign-in with an OIDC identity provider (prefix LIFECYCLE_OIDC_); off while the
issuer is unset."""

from __future__ import annotations

from urllib.parse import urlsplit

from pydantic import Field, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict


class OidcSettings(BaseSettings):
    """Console sign-in with an OIDC identity provider (off while the issuer is unset)."""

    model_config = SettingsConfigDict(env_prefix="LIFECYCLE_OIDC_", env_file=".env", extra="ignore")

    issuer: str | None = Field(
        None,
        description="The provider's issuer URL (its discovery document is "
        "`<issuer>/.well-known/openid-configuration`). Unset: the console signs in by API "
        "key only.",
    )
    client_id: str | None = Field(None, description="The console's client id at the provider.")
    client_secret: str | None = Field(
        None, description="The console's client secret at the provider (a confidential client)."
    )
    tenant: str | None = Field(
        None,
        description="The tenant people who sign in with the provider act for (one provider, "
        "one tenant).",
    )
    groups_claim: str = Field(
        "groups",
        description="The ID token's claim listing the person's groups, mapped to roles by an "
        "admin (`lifecycle oidc-group map`).",
    )
    provider_name: str | None = Field(
        None, description='Shown as "Sign in with <name>"; default: the issuer\'s host.'
    )
    scopes: str = Field("openid email profile", description="The scopes asked for at the provider.")

    @model_validator(mode="after")
    def _complete(self) -> OidcSettings:
        if self.issuer and not (self.client_id and self.tenant):
            raise ValueError(
                "LIFECYCLE_OIDC_ISSUER is set: LIFECYCLE_OIDC_CLIENT_ID and "
                "LIFECYCLE_OIDC_TENANT must be set too"
            )
        return self

    @property
    def enabled(self) -> bool:
        return bool(self.issuer)

    @property
    def issuer_host(self) -> str:
        return urlsplit(self.issuer or "").netloc

    @property
    def shown_name(self) -> str:
        return self.provider_name or self.issuer_host
