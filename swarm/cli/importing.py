"""``swarm import crewai DIR -o roles/``: a CrewAI crew's agents written as swarm role files."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

import yaml

from swarm._visible import visible
from swarm.cli.exits import OK
from swarm.errors import ConfigError
from swarm.team.crewai import crew_files, load_crew
from swarm.team.spec import DEFAULT_MAX_ITERATIONS, AgentSpec

__all__ = ["cmd_import_crewai", "role_document"]


def role_document(spec: AgentSpec) -> dict[str, Any]:
    """The fields of a swarm role file for ``spec`` (defaults left out)."""
    data: dict[str, Any] = {"name": spec.name, "description": spec.description}
    if spec.model:
        data["model"] = spec.model
    if spec.tools:
        data["tools"] = list(spec.tools)
    if spec.delegates:
        data["delegates"] = list(spec.delegates)
    if spec.max_iterations != DEFAULT_MAX_ITERATIONS:
        data["max_iterations"] = spec.max_iterations
    data["system"] = spec.system
    return data


class _Literal(str):
    """A string YAML writes as a ``|`` block."""


def _block(dumper: yaml.SafeDumper, text: _Literal) -> Any:
    return dumper.represent_scalar("tag:yaml.org,2002:str", str(text), style="|")


class _Dumper(yaml.SafeDumper):
    pass


_Dumper.add_representer(_Literal, _block)


def cmd_import_crewai(args: argparse.Namespace) -> int:
    """Write one YAML role file per agent of the crew in ``args.source`` to
    ``args.output``; nothing is written when any file already exists there."""
    source: Path = args.source
    found = crew_files(source) if source.is_dir() else None
    if found is None:
        raise ConfigError("no CrewAI crew here (agents.yaml and tasks.yaml)", path=source)
    crew = load_crew(*found)
    output: Path = args.output
    targets = {name: output / f"{name}.yaml" for name in crew.specs}
    existing = [str(p) for p in targets.values() if p.exists()]
    if existing:
        raise ConfigError(f"would overwrite {', '.join(existing)}: choose another -o", path=output)
    output.mkdir(parents=True, exist_ok=True)
    for name, spec in crew.specs.items():
        data = role_document(spec)
        data["system"] = _Literal(data["system"].strip() + "\n")
        text = yaml.dump(data, Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=100)
        targets[name].write_text(text, encoding="utf-8")
    for warning in crew.warnings:
        sys.stderr.write(visible(f"warning: {warning}") + "\n")
    tasks = ", ".join(task.name for task in crew.tasks)
    print(f"wrote {len(targets)} role files to {output}")
    print(f"the crew's tasks ({tasks}) stay in {found[1]}: run them with swarm run --team {source}")
    return OK
