"""The key and the anchored head of a keyed audit log.

A run's audit log is keyed: each record carries ``mac``, the HMAC-SHA256 of its canonical
JSON (without ``mac``) under a random per-run key kept in a ``0600`` file beside the
record. Someone who can write the log but not read the key cannot make a record that
verifies. The *head* (how many records the log holds, and the hash and MAC of the last)
is written to a small file beside the log (``head.json``, rewritten in place after each
record) and into ``summary.json`` at the end, so records cut from the end are seen too.
The head carries its own MAC, so it cannot be rewritten to match a shortened log without
the key.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import secrets
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = [
    "AuditHead",
    "canonical_json",
    "create_key",
    "open_head",
    "read_head",
    "read_key",
    "record_mac",
    "write_head",
]

KEY_BYTES = 32


def canonical_json(value: Any) -> str:
    """The canonical JSON text of ``value``: sorted keys, no spaces, UTF-8 kept."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


def record_mac(record: dict[str, Any], key: bytes) -> str:
    """The MAC a record must carry: HMAC-SHA256 of its canonical JSON without ``mac``."""
    body = {k: v for k, v in record.items() if k != "mac"}
    return hmac.new(key, canonical_json(body).encode(), hashlib.sha256).hexdigest()


def create_key(path: Path) -> bytes:
    """Create a new random key in ``path`` (mode ``0600``; refuses to overwrite one)."""
    key = secrets.token_bytes(KEY_BYTES)
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)
    fd = os.open(path, flags, 0o600)
    try:
        os.write(fd, key.hex().encode() + b"\n")
        os.fsync(fd)
    finally:
        os.close(fd)
    return key


def read_key(path: Path) -> bytes:
    """The key in ``path``. Raises ``OSError`` when it cannot be read, ``ValueError`` when
    it is not a key."""
    text = path.read_text(encoding="ascii").strip()
    key = bytes.fromhex(text)
    if len(key) != KEY_BYTES:
        raise ValueError(f"{path} does not hold a {KEY_BYTES}-byte key")
    return key


@dataclass(frozen=True, slots=True)
class AuditHead:
    """Where a log ends: ``records`` (how many), and the ``hash`` and ``mac`` of the last
    record (empty strings for an empty log). ``seal`` is the head's own MAC."""

    records: int
    hash: str
    mac: str
    seal: str = ""

    def body(self) -> dict[str, Any]:
        """The fields the seal covers."""
        return {"records": self.records, "hash": self.hash, "mac": self.mac}

    def sealed(self, key: bytes) -> AuditHead:
        """This head with its seal computed under ``key``."""
        seal = hmac.new(key, canonical_json(self.body()).encode(), hashlib.sha256).hexdigest()
        return AuditHead(self.records, self.hash, self.mac, seal)

    def seal_ok(self, key: bytes) -> bool:
        """Whether the seal was made with ``key``."""
        return hmac.compare_digest(self.sealed(key).seal, self.seal)

    def to_dict(self) -> dict[str, Any]:
        """The JSON form, as written to ``head.json`` and ``summary.json``."""
        return {**self.body(), "seal": self.seal}

    @classmethod
    def from_dict(cls, data: Any) -> AuditHead:
        """Read the JSON form; raises ``ValueError`` when it is not one."""
        if not isinstance(data, dict):
            raise ValueError("an audit head is a JSON object")
        try:
            records = data["records"]
            if not isinstance(records, int) or isinstance(records, bool) or records < 0:
                raise ValueError("'records' is not a count")
            return cls(records, str(data["hash"]), str(data["mac"]), str(data.get("seal", "")))
        except KeyError as exc:
            raise ValueError(f"an audit head lacks {exc}") from None


HEAD_SIZE = 512
"""The bytes a head file holds: its JSON, padded with spaces, rewritten in place."""


def write_head(fd: int, head: AuditHead) -> None:
    """Rewrite the head file open on ``fd`` in place, with one ``pwrite`` of one fixed-size
    block: a process killed at any instant leaves the old head or the new one (a power
    loss may tear it; its seal then says so). Costs microseconds, unlike a temporary file
    renamed over it, so it runs after every record."""
    data = json.dumps(head.to_dict()).encode().ljust(HEAD_SIZE)
    os.pwrite(fd, data, 0)


def open_head(path: Path) -> int:
    """A descriptor for ``write_head`` on ``path`` (created ``0600``)."""
    return os.open(path, os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), 0o600)


def read_head(path: Path) -> AuditHead:
    """The head in ``path``. Raises ``OSError`` or ``ValueError``."""
    return AuditHead.from_dict(json.loads(path.read_text(encoding="utf-8")))
