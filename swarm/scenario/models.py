"""The roles' own models in a scenario run: aliases, the resolver, and the record of them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from swarm.errors import ConfigError
from swarm.models.resolver import ModelResolver, missing_key
from swarm.scenario.spec import Scenario
from swarm.team import Team
from swarm.transports.base import CompletionTransport
from swarm.transports.recording import RecordingTransport

__all__ = ["role_models", "role_models_record"]


def role_models(
    scenario: Scenario,
    team: Team,
    transport: CompletionTransport,
    *,
    run_spec: str | None = None,
    record: Path | None = None,
    owns_transport: bool = False,
) -> ModelResolver:
    """The resolver of the roles' own models for a run on ``transport``: the scenario's
    ``models`` aliases over the team's, each model's transport recorded to ``record``
    too. A scripted or replayed run answers for every role (role models are checked and
    written in the manifest, never called). Raises ``ConfigError`` naming the role file
    and line of each model no provider understands, or (in a run that calls providers)
    whose key is not set, before anything runs. ``owns_transport``: the run built
    ``transport`` from a spec, and ``aclose()`` closes it too."""
    wrap = None
    if record is not None:
        cassette = record
        run_recording = transport if isinstance(transport, RecordingTransport) else None

        def wrap(inner: CompletionTransport) -> CompletionTransport:
            return RecordingTransport(inner, cassette, also=run_recording)

    resolver = ModelResolver(
        transport,
        aliases={**team.models, **scenario.models},
        run_spec=run_spec,
        wrap=wrap,
        owns_transport=owns_transport,
    )
    problems = []
    for spec in team.specs.values():
        if not spec.model:
            continue
        try:
            # The key first: building a provider's transport without it fails less clearly.
            resolved = resolver.spec_of(spec.model)
            variable = missing_key(resolved) if resolved and not resolver.offline else None
            if variable is not None and resolved != run_spec:
                message = f"the model {spec.model} ({resolved}) needs {variable}, which is not set"
                problems.append(spec.error(message, "model"))
                continue
            resolver(spec.model)
        except ConfigError as exc:
            problems.append(spec.error(exc.message, "model"))
    if problems:
        raise ConfigError.collect(problems)
    return resolver


def role_models_record(team: Team, resolver: ModelResolver) -> dict[str, Any]:
    """What the manifest says of the roles' models: each one as written and the spec it
    resolved to (``None``: the run's model), and whether they are called at all (not in
    a scripted or replayed run)."""
    roles = {
        name: {"model": spec.model, "spec": resolver.spec_of(spec.model)}
        for name, spec in team.specs.items()
        if spec.model
    }
    return {"called": not resolver.offline, "roles": roles}
