"""Network allow-lists: where a sandboxed command may connect through swarm's proxy.

A policy's ``sandbox: {network: {allow: [...]}}`` lists, one entry each:

- a host name, optionally with a port: ``pypi.org``, ``git.example.com:443``;
- a wildcard over the labels below a domain: ``*.pythonhosted.org`` matches
  ``files.pythonhosted.org`` and ``a.b.pythonhosted.org``, never ``pythonhosted.org``
  itself nor ``evilpythonhosted.org``; only a leading ``*.`` is a wildcard;
- an address or CIDR, optionally with a port: ``10.0.0.0/8``, ``192.0.2.7:8080``,
  ``[2001:db8::]/32`` (IPv6 in brackets when a port follows).

A connection to a name is allowed when a host entry matches the name (and port), and the
address the proxy resolved it to, and connects to, is an ordinary one: loopback,
link-local (``169.254.169.254`` and the other cloud metadata addresses among them),
unspecified, multicast and reserved addresses are refused unless an address entry covers
them. A connection to an address given literally (``http://10.1.2.3/``) needs an address
entry. An entry without a port allows every port.

Allow-lists narrow down the delegation tree: ``Egress`` holds the list of the agent's own
policy and those of the policies above it, and a connection must be allowed by each
(their intersection), so a child can never widen its parent's list.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterable
from dataclasses import dataclass

__all__ = ["AllowEntry", "AllowList", "Egress", "Verdict", "parse_allow_entry"]

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network

_LABEL = re.compile(r"(?!-)[a-z0-9-]{1,63}(?<!-)")
METADATA = frozenset(
    ipaddress.ip_address(a)
    for a in ("169.254.169.254", "169.254.170.2", "100.100.100.200", "fd00:ec2::254")
)
"""Cloud metadata addresses, refused like loopback unless an address entry names them."""


def _host_name(text: str) -> str | None:
    """``text`` as a normalised host name (lower case, no trailing dot), or ``None``
    when it is not one. A name whose last label starts with a digit is no name: resolvers
    read ``2130706433`` or ``127.1`` as addresses."""
    name = text.lower().removesuffix(".")
    labels = name.split(".")
    if not name or len(name) > 253 or not all(_LABEL.fullmatch(label) for label in labels):
        return None
    if not labels[-1][0].isalpha():
        return None
    return name


def normalise_address(address: IPAddress) -> IPAddress:
    """An IPv4 address written as IPv6 (``::ffff:127.0.0.1``) as the IPv4 address it is."""
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped
    return address


def special_address(address: IPAddress) -> bool:
    """Whether ``address`` is one the proxy never reaches unless an address entry covers
    it: loopback, link-local, metadata, unspecified, multicast or reserved."""
    address = normalise_address(address)
    return (
        address in METADATA
        or address.is_loopback
        or address.is_link_local
        or address.is_unspecified
        or address.is_multicast
        or address.is_reserved
        or (isinstance(address, ipaddress.IPv6Address) and address.sixtofour is not None)
        or (isinstance(address, ipaddress.IPv6Address) and address.teredo is not None)
    )


def literal_address(host: str) -> IPAddress | None:
    """``host`` as an IP address when it is written as one (``[::1]`` too), else ``None``."""
    text = host[1:-1] if host.startswith("[") and host.endswith("]") else host
    try:
        return normalise_address(ipaddress.ip_address(text.split("%", 1)[0]))
    except ValueError:
        return None


@dataclass(frozen=True, slots=True)
class AllowEntry:
    """One entry of an allow-list: a host name (``wildcard``: any name below it), or an
    address range (``network``), and a ``port`` (``None``: any)."""

    text: str
    host: str | None = None
    wildcard: bool = False
    network: IPNetwork | None = None
    port: int | None = None

    def allows_name(self, name: str, port: int) -> bool:
        """Whether this entry names host ``name`` (normalised) on ``port``."""
        if self.host is None or (self.port is not None and self.port != port):
            return False
        if self.wildcard:
            return name.endswith("." + self.host)
        return name == self.host

    def allows_address(self, address: IPAddress, port: int) -> bool:
        """Whether this entry's range holds ``address`` on ``port``."""
        if self.network is None or (self.port is not None and self.port != port):
            return False
        return normalise_address(address) in self.network


def _port(text: str, entry: str) -> int:
    if not text.isdigit() or not 0 < int(text) < 65536:
        raise ValueError(f"{entry!r}: the port must be a number from 1 to 65535")
    return int(text)


def parse_allow_entry(text: object) -> AllowEntry:
    """One allow-list entry from its text. Raises ``ValueError`` saying what is wrong
    (a bare ``*``, a wildcard inside a name, a URL, a bad port or range)."""
    if not isinstance(text, str) or not text.strip():
        raise ValueError("an entry is a host name, '*.domain', or an address/CIDR")
    entry = text.strip()
    if "://" in entry:
        raise ValueError(f"{entry!r}: give a host name (and port), not a URL")
    host, port = entry, None
    if entry.startswith("["):
        inside, close, rest = entry[1:].partition("]")
        if not close:
            raise ValueError(f"{entry!r}: an IPv6 address in brackets needs its ']'")
        prefix, colon, given = rest.partition(":")
        if prefix and not re.fullmatch(r"/\d{1,3}", prefix):
            raise ValueError(f"{entry!r}: after ']' only '/BITS' and ':PORT' may follow")
        host = inside + prefix
        port = _port(given, entry) if colon else None
    elif entry.count(":") == 1:
        host, _, given = entry.partition(":")
        port = _port(given, entry)
    try:
        network = ipaddress.ip_network(host, strict=False)
    except ValueError:
        network = None
    if network is not None:
        return AllowEntry(entry, network=network, port=port)
    if "/" in host:
        raise ValueError(f"{entry!r} is not an address range (write 10.0.0.0/8)")
    if host == "*":
        raise ValueError(f"{entry!r} allows every host: say 'network: host' if you mean that")
    wildcard = host.startswith("*.")
    name = _host_name(host[2:] if wildcard else host)
    if name is None or "*" in host[2 if wildcard else 0 :]:
        raise ValueError(
            f"{entry!r} is not a host name ('*.' is allowed only at the start, as in "
            "'*.pythonhosted.org'; the last label must start with a letter)"
        )
    if wildcard and "." not in name:
        raise ValueError(f"{entry!r} would match a whole top-level domain: name a domain")
    return AllowEntry(entry, host=name, wildcard=wildcard, port=port)


@dataclass(frozen=True, slots=True)
class Verdict:
    """What the proxy decided for one connection: ``allowed``, and ``reason`` (why not,
    or which entry allowed it)."""

    allowed: bool
    reason: str


@dataclass(frozen=True, slots=True)
class AllowList:
    """The entries of one policy's ``network: {allow: [...]}`` (``source``: the policy)."""

    entries: tuple[AllowEntry, ...]
    source: str = ""

    @classmethod
    def parse(cls, texts: Iterable[object], *, source: str = "") -> AllowList:
        """The list from its entries' texts. Raises ``ValueError`` naming the first bad
        entry and its index."""
        entries = []
        for index, text in enumerate(texts):
            try:
                entries.append(parse_allow_entry(text))
            except ValueError as exc:
                raise ValueError(f"allow[{index}]: {exc}") from None
        return cls(tuple(entries), source)

    def texts(self) -> list[str]:
        """The entries as written."""
        return [e.text for e in self.entries]

    def check_name(self, host: str, port: int) -> Verdict:
        """Whether a host entry (or, for an address written literally, an address
        entry) allows ``host`` on ``port``, before anything is resolved."""
        literal = literal_address(host)
        if literal is not None:
            return self.check(host, port, literal)
        name = _host_name(host)
        if name is None:
            return Verdict(False, f"{host!r} is not a host name")
        by_name = next((e for e in self.entries if e.allows_name(name, port)), None)
        if by_name is None:
            where = f" (policy '{self.source}')" if self.source else ""
            return Verdict(False, f"{name}:{port} is not on the allow-list{where}")
        return Verdict(True, f"allowed by {by_name.text!r}")

    def check(self, host: str, port: int, address: IPAddress) -> Verdict:
        """Whether a connection asked for ``host`` (a name or a literal address) on
        ``port``, to be made to ``address`` (what the proxy resolved and will connect
        to), is allowed by this list."""
        literal = literal_address(host)
        by_address = next((e for e in self.entries if e.allows_address(address, port)), None)
        where = f" (policy '{self.source}')" if self.source else ""
        if literal is not None:
            if by_address is None:
                return Verdict(False, f"address {literal} is not on the allow-list{where}")
            return Verdict(True, f"allowed by {by_address.text!r}{where}")
        name = _host_name(host)
        if name is None:
            return Verdict(False, f"{host!r} is not a host name")
        by_name = next((e for e in self.entries if e.allows_name(name, port)), None)
        if by_name is None:
            return Verdict(False, f"{name}:{port} is not on the allow-list{where}")
        if special_address(address) and by_address is None:
            return Verdict(
                False,
                f"{name} resolves to {address}, a loopback, link-local or metadata address "
                f"no address entry allows{where}",
            )
        return Verdict(True, f"allowed by {by_name.text!r}{where}")


@dataclass(frozen=True, slots=True)
class Egress:
    """The allow-lists a command's connections must all pass: its own policy's and those
    of the policies above it in the delegation tree (their intersection)."""

    lists: tuple[AllowList, ...]

    def narrowed(self, ceiling: Egress | AllowList) -> Egress:
        """This egress under a parent's ``ceiling``: allowed only where both allow."""
        more = ceiling.lists if isinstance(ceiling, Egress) else (ceiling,)
        return Egress((*self.lists, *(m for m in more if m not in self.lists)))

    def check_name(self, host: str, port: int) -> Verdict:
        """``AllowList.check_name`` by every list: the first refusal, else allowed."""
        return _combine([allow.check_name(host, port) for allow in self.lists])

    def check(self, host: str, port: int, address: IPAddress) -> Verdict:
        """The first list's refusal, or the allowance of the agent's own list."""
        return _combine([allow.check(host, port, address) for allow in self.lists])

    def texts(self) -> list[list[str]]:
        """Each list's entries as written."""
        return [allow.texts() for allow in self.lists]


def _combine(verdicts: list[Verdict]) -> Verdict:
    refused = next((v for v in verdicts if not v.allowed), None)
    if refused is not None:
        return refused
    return verdicts[0] if verdicts else Verdict(False, "no allow-list")
