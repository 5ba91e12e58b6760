"""ContextStore basics every store shares: its session id."""

from __future__ import annotations

import uuid

from swarm.context.base import MemoryContextStore


def test_session_id_is_a_random_uuid_hex_and_stays_put() -> None:
    store = MemoryContextStore()
    session = store.session_id
    parsed = uuid.UUID(hex=session)
    assert parsed.hex == session
    assert parsed.version == 4
    assert parsed.variant == uuid.RFC_4122
    assert store.session_id == session


def test_each_store_has_its_own_session_id() -> None:
    ids = {MemoryContextStore().session_id for _ in range(200)}
    assert len(ids) == 200
