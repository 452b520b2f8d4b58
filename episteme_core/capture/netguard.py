"""Which addresses a capture may connect to: global unicast only, unless the user allows more.

Checked on the address actually connected (after DNS, on every hop); see ``http.GuardedBackend``.
"""

from __future__ import annotations

import ipaddress

import attrs

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

_PRIVATE = [
    ipaddress.ip_network(n)
    for n in ("10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "100.64.0.0/10", "fc00::/7")
]
_LINK_LOCAL = [ipaddress.ip_network(n) for n in ("169.254.0.0/16", "fe80::/10")]
_NAT64 = ipaddress.ip_network("64:ff9b::/96")


@attrs.frozen
class NetPolicy:
    """What the user allowed: loopback (``--allow-localhost``), private and link-local networks."""

    allow_localhost: bool = False
    allow_private_networks: bool = False


def category(ip: IPAddress) -> str:
    """``global``, ``loopback``, ``private``, ``link-local`` or ``special`` (every other reserved use)."""
    embedded = _embedded_ipv4(ip)
    if embedded is not None:
        return category(embedded)
    if ip.is_loopback:
        return "loopback"
    if any(ip in net for net in _PRIVATE):
        return "private"
    if any(ip in net for net in _LINK_LOCAL):
        return "link-local"
    if ip.is_global and not ip.is_multicast:
        return "global"
    return "special"


def _embedded_ipv4(ip: IPAddress) -> ipaddress.IPv4Address | None:
    """The IPv4 address hidden in a mapped, 6to4, Teredo or NAT64 IPv6 address."""
    if not isinstance(ip, ipaddress.IPv6Address):
        return None
    if ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    if ip.sixtofour is not None:
        return ip.sixtofour
    if ip.teredo is not None:
        return ip.teredo[1]
    if ip in _NAT64:
        return ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    return None


def refusal(address: str, policy: NetPolicy) -> str | None:
    """Why ``address`` may not be connected under ``policy``, or ``None`` when it may."""
    try:
        ip = ipaddress.ip_address(address.split("%", 1)[0])
    except ValueError:
        return f"{address} is not an IP address"
    kind = category(ip)
    if kind == "global":
        return None
    if kind == "loopback" and policy.allow_localhost:
        return None
    if kind in ("private", "link-local") and policy.allow_private_networks:
        return None
    flag = {
        "loopback": " (pass --allow-localhost to allow it)",
        "private": " (pass --allow-private-networks to allow it)",
        "link-local": " (pass --allow-private-networks to allow it)",
    }.get(kind, "")
    return f"{ip} is a {kind} address{flag}"
