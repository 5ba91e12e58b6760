"""Approvals: asking a person about a call at any depth of a run, now or hours later.

``RunApprover`` answers a run's ``ask`` decisions from its record, the person (when one
is there), or by ``on_ask`` (``deny``, or ``hold``: the request waits in the record for
``swarm approve``/``swarm deny``). ``ApprovalStore`` is that record
(``approvals.jsonl``); ``continue_held`` goes on from answered held calls when the run is
resumed; ``Activity`` says when a run with held calls can go no further.
"""

from swarm._lazy import lazy_exports as _lazy_exports
from swarm.approvals.activity import Activity as Activity, until_stuck as until_stuck
from swarm.approvals.approver import (
    OnAsk as OnAsk,
    RunApprover as RunApprover,
    decision_of as decision_of,
)
from swarm.approvals.resume import (
    HeldRun as HeldRun,
    check_answered as check_answered,
    continue_held as continue_held,
    open_requests as open_requests,
)
from swarm.approvals.store import (
    APPROVALS_FILE as APPROVALS_FILE,
    ApprovalStore as ApprovalStore,
    Pending as Pending,
    os_user as os_user,
)

__getattr__, __dir__, __all__ = _lazy_exports(__name__, {})
