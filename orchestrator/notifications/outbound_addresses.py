"""Which addresses a webhook or an export target may reach: public ones, and those in the
operator's allowed networks. Checked when a URL is registered and again on every
connection, after resolving the name (a name may point anywhere, and change)."""

from __future__ import annotations

import socket
from collections.abc import Sequence
from ipaddress import IPv4Address, IPv4Network, IPv6Address, IPv6Network, ip_address

from orchestrator.contracts.errors import FleetError

Address = IPv4Address | IPv6Address
Network = IPv4Network | IPv6Network

# Names that never leave the host, whatever DNS says.
_LOCAL_NAMES = ("localhost", "localhost.")
_LOCAL_SUFFIXES = (".localhost", ".localhost.")
_LOOPBACK = (ip_address("127.0.0.1"), ip_address("::1"))


class AddressRefused(FleetError):
    """The destination is not one the fleet may reach."""


def refused(address: Address, allowed: Sequence[Network]) -> bool:
    """True for loopback, link-local, private, multicast, reserved and unspecified
    addresses (an IPv4-mapped IPv6 address is judged as its IPv4 one), unless allowed."""
    if isinstance(address, IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    if any(address in network for network in allowed if network.version == address.version):
        return False
    return (
        not address.is_global
        or address.is_multicast
        or address.is_reserved
        or address.is_unspecified
        or address.is_loopback
        or address.is_link_local
        or address.is_private
    )


def numeric_address(host: str) -> Address | None:
    """The address a host written as a number names (127.1, 2130706433, 0x7f.0.0.1, ::1),
    read the way the resolver reads it but without asking DNS; None for a name."""
    try:
        found = socket.getaddrinfo(host, None, flags=socket.AI_NUMERICHOST)
    except (socket.gaierror, UnicodeError, ValueError):
        return None
    return ip_address(str(found[0][4][0]).split("%", 1)[0])


def check_host(host: str, allowed: Sequence[Network]) -> None:
    """At registration: an address (in any notation) or a local name is refused unless
    allowed; other names are checked each time they are resolved."""
    lowered = host.lower()
    if lowered in _LOCAL_NAMES or lowered.endswith(_LOCAL_SUFFIXES):
        if all(refused(address, allowed) for address in _LOOPBACK):
            raise AddressRefused(host)
        return
    address = numeric_address(host)
    if address is not None and refused(address, allowed):
        raise AddressRefused(host)


def resolve_checked(host: str, port: int, allowed: Sequence[Network]) -> list[Address]:
    """Every address the name resolves to, each checked: one refused address refuses the
    name (a name mixing public and internal addresses is not trusted either)."""
    found = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    addresses: list[Address] = []
    for *_, sockaddr in found:
        address = ip_address(str(sockaddr[0]).split("%", 1)[0])
        if refused(address, allowed):
            raise AddressRefused(host)
        if address not in addresses:
            addresses.append(address)
    return addresses
