"""The audit log: every tool call as a hash-chained, secret-free JSON line.

``AuditLog`` writes it (a ``CallObserver`` on the run scope), ``verify_log`` checks its
chain, ``audit_table`` shows it; ``redact`` keeps secrets out of it.
"""

from swarm.audit.log import GENESIS, AuditLog, args_hash, canonical_json, record_hash
from swarm.audit.redact import REDACTED, redact, redact_text, secret_key
from swarm.audit.show import AuditRow, audit_rows, audit_table, read_log
from swarm.audit.verify import AuditProblem, AuditReport, verify_log

__all__ = [
    "GENESIS",
    "REDACTED",
    "AuditLog",
    "AuditProblem",
    "AuditReport",
    "AuditRow",
    "args_hash",
    "audit_rows",
    "audit_table",
    "canonical_json",
    "read_log",
    "record_hash",
    "redact",
    "redact_text",
    "secret_key",
    "verify_log",
]
