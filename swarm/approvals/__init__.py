"""Approvals: asking a person about a call at any depth of a run, now or hours later.

``RunApprover`` answers a run's ``ask`` decisions from its record, the person (when one
is there), or by ``on_ask`` (``deny``, or ``hold``: the request waits in the record for
``swarm approve``/``swarm deny``). ``ApprovalStore`` is that record
(``approvals.jsonl``); ``continue_held`` goes on from answered held calls when the run is
resumed; ``Activity`` says when a run with held calls can go no further.
"""

from swarm.approvals.activity import Activity, until_stuck
from swarm.approvals.approver import OnAsk, RunApprover, decision_of
from swarm.approvals.resume import HeldRun, check_answered, continue_held, open_requests
from swarm.approvals.store import APPROVALS_FILE, ApprovalStore, Pending, os_user

__all__ = [
    "APPROVALS_FILE",
    "Activity",
    "ApprovalStore",
    "HeldRun",
    "OnAsk",
    "Pending",
    "RunApprover",
    "check_answered",
    "continue_held",
    "decision_of",
    "open_requests",
    "os_user",
    "until_stuck",
]
