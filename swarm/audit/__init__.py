"""The audit log: every tool call as a hash-chained, secret-free JSON line.

``AuditLog`` writes it (a ``CallObserver`` on the run scope), ``verify_log`` checks its
chain (and, with the run's key, its MACs and anchored head), ``audit_table`` shows
it; ``redact`` keeps secrets out of it.
"""

from typing import TYPE_CHECKING

from swarm._lazy import lazy_exports
from swarm.audit.anchor import (
    AuditHead,
    create_key,
    open_head,
    read_head,
    read_key,
    record_mac,
    write_head,
)
from swarm.audit.redact import REDACTED, environment_secrets, redact, redact_text, secret_key

if TYPE_CHECKING:
    from swarm.audit.log import (
        GENESIS,
        AuditLog,
        args_hash,
        canonical_json,
        record_hash,
    )
    from swarm.audit.show import (
        AuditRow,
        audit_rows,
        audit_table,
        read_log,
    )
    from swarm.audit.verify import (
        AuditProblem,
        AuditReport,
        NotALog,
        verify_log,
    )

__all__ = [
    "GENESIS",
    "REDACTED",
    "AuditHead",
    "AuditLog",
    "AuditProblem",
    "AuditReport",
    "AuditRow",
    "NotALog",
    "args_hash",
    "audit_rows",
    "audit_table",
    "canonical_json",
    "create_key",
    "environment_secrets",
    "open_head",
    "read_head",
    "read_key",
    "read_log",
    "record_hash",
    "record_mac",
    "redact",
    "redact_text",
    "secret_key",
    "verify_log",
    "write_head",
]

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

__getattr__, __dir__ = lazy_exports(__name__, _LAZY, __all__)
