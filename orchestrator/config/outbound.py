"""Where the fleet may send requests on a tenant's behalf (prefix LIFECYCLE_OUTBOUND_)."""

from __future__ import annotations

from ipaddress import IPv4Network, IPv6Network

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict


class OutboundSettings(BaseSettings):
    """Webhook and export-target addresses: only public ones, unless allowed here."""

    model_config = SettingsConfigDict(
        env_prefix="LIFECYCLE_OUTBOUND_", env_file=".env", extra="ignore"
    )

    allowed_networks: list[IPv4Network | IPv6Network] = Field(
        default_factory=list,
        description="Networks webhook subscriptions and export targets may reach although "
        "they are loopback, link-local, private, multicast, reserved or unspecified, as a "
        'JSON list of CIDRs (e.g. \'["10.20.0.0/16", "127.0.0.1/32"]\'); also allows '
        "the name localhost when it names a loopback network. Empty: public addresses only.",
    )
