"""The run record: what a run leaves on disk, written and read in one place.

- ``record``: ``RunRecord`` (where a run's files live, its journal of events, calls and
  segments) and ``default_runs_dir``.
- ``manifest``: what a run is (its config, ``manifest.json``), written before the first
  model call so any crash can be resumed; ``pinning``: the hashes of what defines it.
- ``outcome``: what a segment did, from its events and calls; ``summary``: ``summary.json``,
  written when a segment ends; ``changes``: what a run did to its workspace.
- ``recorder``: the writing of it: ``start_record`` makes a run's record, and one
  ``RunRecorder`` per segment writes its journal, audit log, events, summary and changes.
- ``recover``: picking a run up after a crash.

Above it, ``swarm.scenario`` runs scenarios and keeps their records through this package;
the scenario file format (``swarm.scenario.spec``) is what a manifest holds, so the record
reads it. Below it: ``swarm.team``, ``swarm.audit``, ``swarm.undo``.
"""

from typing import TYPE_CHECKING as _TYPE_CHECKING

from swarm._lazy import lazy_exports as _lazy_exports

if _TYPE_CHECKING:
    from swarm.record.outcome import CallTally as CallTally, RunOutcome as RunOutcome
    from swarm.record.record import RunRecord as RunRecord, default_runs_dir as default_runs_dir

_LAZY: dict[str, tuple[str, ...]] = {
    "swarm.record.outcome": ("CallTally", "RunOutcome"),
    "swarm.record.record": ("RunRecord", "default_runs_dir"),
}

__getattr__, __dir__, __all__ = _lazy_exports(__name__, _LAZY)
