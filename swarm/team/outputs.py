"""A role's ``output:``: the schema its final answer must meet, as a role file says it.

The value is one of three things: a JSON Schema written inline (a mapping), the path of
a JSON or YAML file holding one (relative to the role file), or ``module:Model``, a
pydantic model imported with the current directory and the role file's directory on
the import path (as ``tools:`` references are). Every problem is a ``ConfigError``
naming the file, the line and the place in the schema, so ``swarm validate`` shows it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

from swarm.config import Document
from swarm.contracts import OutputContract, schema_problems
from swarm.errors import ConfigError
from swarm.team.references import import_beside, is_reference

__all__ = ["role_output"]

_SCHEMA_FILES = (".json", ".yaml", ".yml")


def role_output(value: Any, document: Document, source: Path | None) -> OutputContract | None:
    """The contract a role file's ``output`` value declares (``None`` when it has none).

    Raises ``ConfigError`` for an invalid schema, a schema file that cannot be read, or a
    ``module:Model`` that cannot be imported or is not a pydantic model."""
    if value is None:
        return None
    line = document.line_of(("output",))
    if isinstance(value, dict):
        return _inline(value, document)
    if not isinstance(value, str) or not value.strip():
        raise ConfigError(
            "expected a JSON Schema mapping, a schema file or 'module:Model'",
            path=document.path,
            line=line,
            field="output",
        )
    base = source.parent if source is not None else Path.cwd()
    if is_reference(value) and not value.endswith(_SCHEMA_FILES):
        return _model(value, base, document)
    return _schema_file(value, base, document)


def _inline(schema: dict[str, Any], document: Document) -> OutputContract:
    problems = [
        ConfigError(
            message,
            path=document.path,
            line=document.line_of(("output", *where)),
            field="output" + "".join(f".{part}" for part in where),
        )
        for where, message in schema_problems(schema)
    ]
    if problems:
        raise ConfigError.collect(problems)
    return OutputContract(schema, None, "inline")


def _schema_file(value: str, base: Path, document: Document) -> OutputContract:
    line = document.line_of(("output",))
    path = (base / value).resolve()

    def error(message: str) -> ConfigError:
        return ConfigError(message, path=document.path, line=line, field="output")

    if path.suffix not in _SCHEMA_FILES:
        raise error(f"'{value}' is neither a schema file (.json, .yaml) nor 'module:Model'")
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise error(f"schema file '{value}' not found (looked at {path})") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise error(f"cannot read schema file '{value}': {exc}") from None
    try:
        schema = json.loads(text) if path.suffix == ".json" else yaml.safe_load(text)
    except (ValueError, yaml.YAMLError) as exc:
        raise error(f"schema file '{value}' is not valid {path.suffix[1:]}: {exc}") from None
    if not isinstance(schema, dict):
        raise error(f"schema file '{value}' does not hold a mapping")
    problems = schema_problems(schema)
    if problems:
        raise ConfigError.collect([error(f"in '{value}': {message}") for _, message in problems])
    return OutputContract(schema, None, value)


def _model(value: str, base: Path, document: Document) -> OutputContract:
    import pydantic

    line = document.line_of(("output",))

    def error(message: str) -> ConfigError:
        return ConfigError(message, path=document.path, line=line, field="output")

    module_name, _, attr = value.partition(":")
    try:
        found: Any = import_beside(module_name, [base])
    except ValueError as exc:
        raise error(str(exc)) from None
    for part in attr.split("."):
        try:
            found = getattr(found, part)
        except AttributeError:
            raise error(f"module '{module_name}' has no attribute '{attr}'") from None
    if not (isinstance(found, type) and issubclass(found, pydantic.BaseModel)):
        raise error(f"'{value}' is a {type(found).__name__}, not a pydantic model class")
    try:
        return OutputContract.of(found, source=value)
    except (ValueError, pydantic.PydanticUserError) as exc:
        raise error(f"the schema of '{value}' cannot be built: {exc}") from None
