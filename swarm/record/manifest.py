"""What a run is: its config and ``manifest.json``, written before the first model call
and read back to resume the run."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from swarm.contracts import OutputContract
from swarm.errors import ConfigError
from swarm.guards.policy import Policy, load_policy
from swarm.record.pinning import defining_files
from swarm.record.record import file_hash
from swarm.scenario.spec import Scenario, load_scenario
from swarm.team import Team
from swarm.transports.base import CompletionTransport, model_name

__all__ = ["RunConfig", "RunManifest", "manifest_document"]


@dataclass(frozen=True, slots=True)
class RunConfig:
    """What a run was started with, as ``config`` in ``manifest.json`` and
    ``summary.json``: enough to build its scenario again when it is resumed."""

    scenario_path: str | None
    name: str
    task: str
    team: str
    entry: str | None = None
    policy: str | None = None
    model: str | None = None
    sandbox: str | None = None
    output: Mapping[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        """The JSON object, keys in the order records have always had them (``sandbox``
        left out when unknown, as records from before it lack it)."""
        data: dict[str, Any] = {
            "scenario_path": self.scenario_path,
            "name": self.name,
            "task": self.task,
            "team": self.team,
            "entry": self.entry,
            "policy": self.policy,
            "model": self.model,
        }
        if self.sandbox is not None:
            data["sandbox"] = self.sandbox
        if self.output is not None:  # the entry's answer schema of this run (a crew task's)
            data["output"] = dict(self.output)
        return data

    @classmethod
    def from_dict(cls, data: Any, *, path: Path) -> RunConfig:
        """Read a recorded config. Raises ``ConfigError`` naming ``path`` when it is not
        an object or lacks what rebuilding the scenario needs."""
        if not isinstance(data, Mapping):
            raise ConfigError("the run record's config is not an object", path=path)
        scenario_path = _optional(data, "scenario_path")
        needed = () if scenario_path else ("name", "task", "team")
        for key in needed:
            if not isinstance(data.get(key), str):
                raise ConfigError(f"the run record lacks '{key}'", path=path)
        return cls(
            scenario_path=scenario_path,
            name=str(data.get("name") or ""),
            task=str(data.get("task") or ""),
            team=str(data.get("team") or ""),
            entry=_optional(data, "entry"),
            policy=_optional(data, "policy"),
            model=_optional(data, "model"),
            sandbox=_optional(data, "sandbox"),
            output=data["output"] if isinstance(data.get("output"), Mapping) else None,
        )

    def scenario(self) -> Scenario:
        """The run's scenario: its file loaded again when it had one, else rebuilt from
        this config. Raises ``ConfigError`` for a file that no longer loads."""
        output = OutputContract(self.output, None, "recorded") if self.output else None
        if self.scenario_path:
            loaded = load_scenario(self.scenario_path)
            return dataclasses.replace(loaded, output=output) if output else loaded
        return Scenario(
            name=self.name,
            task=self.task,
            team=Path(self.team),
            entry=self.entry,
            policy=self.policy,
            output=output,
        )


def _optional(data: Mapping[str, Any], key: str) -> str | None:
    value = data.get(key)
    return value if isinstance(value, str) else None


@dataclass(frozen=True, slots=True)
class RunManifest:
    """What resuming reads of ``manifest.json``: the run's id, when it started, its
    workspace, the entry agent's session and its config."""

    run_id: str
    workspace: Path
    root_session: str
    config: RunConfig
    started: str | None = None

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], *, path: Path) -> RunManifest:
        """Read a manifest (or, for a record from before manifests, a summary). Raises
        ``ConfigError`` naming ``path`` for what it lacks."""
        try:
            config = RunConfig.from_dict(data["config"], path=path)
            run_id, root_session = str(data["run_id"]), str(data["root_session"])
            workspace = Path(data["workspace"])
        except (KeyError, TypeError) as exc:
            raise ConfigError(f"the run record lacks {exc}", path=path) from None
        started = data.get("started")
        return cls(
            run_id, workspace, root_session, config, started if isinstance(started, str) else None
        )


def manifest_document(
    scenario: Scenario,
    team: Team,
    transport: CompletionTransport,
    model: str | CompletionTransport | None,
    workspace: Path,
    run_id: str,
    root_session: str,
    config: RunConfig,
    *,
    policies: Iterable[Policy] = (),
) -> dict[str, Any]:
    """What the run is, written as ``manifest.json`` before its first model call;
    ``defined_by`` pins the hashes of the files that define it (see
    ``swarm.record.pinning``), with ``policies`` the ones its roles use."""
    policy = scenario.policy or "default"
    base = scenario.path.parent if scenario.path else None
    try:
        policy_hash: str | None = "sha256:" + load_policy(policy, relative_to=base).hash
    except ConfigError:
        policy_hash = None
    spec = model if isinstance(model, str) else scenario.model
    return {
        "format": 1,
        "run_id": run_id,
        "started": datetime.now(UTC).isoformat(timespec="milliseconds"),
        "scenario": {
            "name": scenario.name,
            "path": config.scenario_path,
            "task": scenario.task,
            "hash": file_hash(scenario.path),
        },
        "team": {"dir": config.team, "entry": team.entry, "hash": file_hash(scenario.team)},
        "policy": {"ref": policy, "hash": policy_hash},
        "model": spec if isinstance(spec, str) else model_name(transport),
        "workspace": str(workspace),
        "root_session": root_session,
        "config": config.to_dict(),
        "defined_by": defining_files(scenario, policies),
    }
