"""The audit log: every tool call as a hash-chained, secret-free JSON line.

``AuditLog`` writes it (a ``CallObserver`` on the run scope), ``verify_log`` checks its
chain (and, with the run's key, its MACs and anchored head), ``audit_table`` shows
it; ``redact`` keeps secrets out of it.
"""

from typing import TYPE_CHECKING as _TYPE_CHECKING

from swarm._lazy import lazy_exports as _lazy_exports
from swarm.audit.anchor import (
    AuditHead as AuditHead,
    create_key as create_key,
    open_head as open_head,
    read_head as read_head,
    read_key as read_key,
    record_mac as record_mac,
    write_head as write_head,
)
from swarm.audit.redact import (
    REDACTED as REDACTED,
    environment_secrets as environment_secrets,
    redact as redact,
    redact_text as redact_text,
    secret_key as secret_key,
)

if _TYPE_CHECKING:
    from swarm.audit.log import (
        GENESIS as GENESIS,
        AuditLog as AuditLog,
        args_hash as args_hash,
        canonical_json as canonical_json,
        record_hash as record_hash,
    )
    from swarm.audit.show import (
        AuditRow as AuditRow,
        audit_rows as audit_rows,
        audit_table as audit_table,
        read_log as read_log,
    )
    from swarm.audit.verify import (
        AuditProblem as AuditProblem,
        AuditReport as AuditReport,
        NotALog as NotALog,
        verify_log as verify_log,
    )


_LAZY: dict[str, tuple[str, ...]] = {
    "swarm.audit.log": (
        "GENESIS",
        "AuditLog",
        "args_hash",
        "canonical_json",
        "record_hash",
    ),
    "swarm.audit.show": (
        "AuditRow",
        "audit_rows",
        "audit_table",
        "read_log",
    ),
    "swarm.audit.verify": (
        "AuditProblem",
        "AuditReport",
        "NotALog",
        "verify_log",
    ),
}

__getattr__, __dir__, __all__ = _lazy_exports(__name__, _LAZY)
