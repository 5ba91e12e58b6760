"""Guard policies: ordered rules in files, decided by ``PolicyGuard`` on every call.

::

    name: team                  # default: the file's stem
    extend: builtin:default     # a name, a path, or builtin:NAME (a shipped policy)
    default: deny               # what happens when no rule matches (deny unless set)
    rules:
      - id: no-delegating-to-ops
        deny: ops               # tool-name globs; delegation tools are named after roles
        roles: [reviewer]       # optional: only for these roles
      - ask: write_*
        args: {path: {path: "src/**"}}
      - allow: "*"
    guards:                     # guards by factory name (see swarm.guards.registry)
      - use: path
    sandbox: required           # or {mode: required, network: none, env: [NAME, ...]}
                                # network: none, host, or {allow: [pypi.org, ...]}
    protect: [deploy/**, Makefile]  # more paths no tool may change (see swarm.guards.protect)
    protect_swarm: true         # swarm's own code, when the workspace holds it (default)
    undo: {max_bytes: 2147483648, over_budget: deny}  # pre-images a run may keep

Precedence: any matching ``deny`` wins, then ``ask``, then ``allow``; the order of rules
only says which one is reported. A policy that extends another gets its rules, guards and
default first. A name is looked up in the extending file's directory, then
``search_dirs``, then the policies shipped in ``swarm/guards/policies/`` (the repository's
``guards/`` directory points there).

``sandbox`` says how the processes tools start are confined (``swarm.sandbox``): ``mode``
``required`` (no working sandbox: such tools are denied, rule ``sandbox-required``),
``auto`` or ``off``; ``network`` ``none``, ``host`` or ``{allow: [...]}`` (hosts and
address ranges reachable through swarm's egress proxy, ``swarm.sandbox.egress``; a
sub-agent's list is intersected with those of the roles above it); ``env`` the variables of swarm's
environment commands get. A policy that extends another overrides it field by field.

``protect`` lists path globs, relative to the workspace, that no tool may change (rule
``protected-path``), beside what every run protects (its team, policies, scenario, MCP
declarations, ``.git/config``, hooks and info); a policy gets those of the ones it extends,
and a sub-agent those of every role above it. ``protect_swarm: false`` lets tools change
swarm's own code when the workspace holds it (an editable checkout).

``undo`` bounds the pre-images a run keeps so its calls can be undone (``swarm.undo``):
``max_bytes`` in all (default 2 GiB); a call whose pre-images do not fit is denied
before it runs (rule ``undo-budget``), or, with ``over_budget: run``, runs with its
changes listed but not undoable. The run's policy (the scenario's) decides; a policy
that extends another overrides it whole.

Its neighbours in ``swarm/guards/``: ``rules`` (one rule and its conditions), ``registry``
(guards by factory name), ``base`` (``PermissionGuard``), ``shell``, ``prefixes``,
``paths``, ``limits``, ``ceiling``, ``approval``, ``audit``, ``protect``, ``_sandboxing``
(the ``sandbox:`` key); the bash command analyser a shell rule reads is ``guards/bash/``.
A guard runs in the chain of ``swarm.tools.run_guards``, called by ``swarm.loop.calls``.
"""

from __future__ import annotations

import difflib
import hashlib
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from fnmatch import translate
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TypeVar

import pydantic

from swarm.config import Document, parse_document, salvage_document, validate_document
from swarm.errors import ConfigError, GuardError
from swarm.guards._sandboxing import SandboxFile, confine, merge_sandbox
from swarm.guards.approval import ask
from swarm.guards.base import PermissionGuard
from swarm.guards.ceiling import CeilingGuard
from swarm.guards.limits import role_of
from swarm.guards.protect import ProtectedPaths, ProtectGlob, ProtectGuard
from swarm.guards.registry import GuardContext, guard_factory
from swarm.guards.rules import (
    UNPARSEABLE,
    Action,
    Condition,
    ConditionSpec,
    Decision,
    Rule,
    RuleOrigin,
    Unjudgeable,
)
from swarm.sandbox import SandboxSettings
from swarm.sandbox.select import ToolSandbox
from swarm.scope import CallRecord, current_call

if TYPE_CHECKING:
    from swarm.tools import Tool
    from swarm.undo.capture import UndoSettings

__all__ = [
    "POLICY_DIR",
    "Policy",
    "PolicyGuard",
    "PolicyGuardSpec",
    "apply_policy",
    "check_policy",
    "checked_policy",
    "load_policy",
    "shipped_policies",
]

POLICY_DIR = Path(__file__).with_name("policies")
"""Where the shipped policies (``default``, ``network-packages``, ``readonly``,
``strict``) live."""

Globs = str | list[str]
_SCALARS = frozenset((str, int, float, bool, type(None)))


class _Model(pydantic.BaseModel):
    model_config = pydantic.ConfigDict(extra="forbid", frozen=True, populate_by_name=True)


class _RuleFile(_Model):
    id: str | None = pydantic.Field(None, min_length=1)
    deny: Globs | None = None
    ask: Globs | None = None
    allow: Globs | None = None
    roles: Globs | None = None
    args: dict[str, ConditionSpec] = {}
    reason: str | None = None

    @pydantic.field_validator("id")
    @classmethod
    def _not_reserved(cls, value: str | None) -> str | None:
        if value is not None and value.startswith("rules["):
            raise ValueError("ids like 'rules[3]' name rules without an id; choose another")
        return value

    @pydantic.model_validator(mode="after")
    def _one_action(self) -> _RuleFile:
        given = [a for a in ("deny", "ask", "allow") if getattr(self, a) is not None]
        if len(given) != 1:
            raise ValueError("a rule needs exactly one of deny, ask or allow (a tool glob)")
        if not getattr(self, given[0]):
            raise ValueError(f"'{given[0]}' needs at least one tool name or glob")
        return self


class _GuardFile(_Model):
    use: str
    tools: Globs = "*"
    options: dict[str, Any] = pydantic.Field(default={}, alias="with")


def _default_max_bytes() -> int:
    # swarm.undo (the pre-image store) loads when a policy says ``undo:``, not before
    from swarm.undo.capture import DEFAULT_MAX_BYTES

    return DEFAULT_MAX_BYTES


class _UndoFile(_Model):
    max_bytes: int = pydantic.Field(default_factory=_default_max_bytes, ge=0)
    over_budget: Literal["deny", "run"] = "deny"


class _PolicyFile(_Model):
    name: str | None = pydantic.Field(None, min_length=1)
    description: str = ""
    extend: str | None = pydantic.Field(None, min_length=1)
    default: Action | None = None
    rules: list[_RuleFile] = []
    guards: list[_GuardFile] = []
    sandbox: SandboxFile | None = None
    protect: list[ProtectGlob] = []
    protect_swarm: bool | None = None
    undo: _UndoFile | None = None
    on_ask: Literal["deny", "hold"] | None = None
    ask_timeout: float | None = pydantic.Field(None, gt=0)

    @pydantic.field_validator("sandbox", mode="before")
    @classmethod
    def _mode_alone(cls, value: Any) -> Any:
        """``sandbox: required`` is short for ``sandbox: {mode: required}``."""
        return {"mode": value} if isinstance(value, str | bool) else value


def _globs(value: Globs | None) -> tuple[str, ...]:
    return () if value is None else (value,) if isinstance(value, str) else tuple(value)


@dataclass(frozen=True, slots=True)
class PolicyGuardSpec:
    """A guard a policy adds to the tools matching ``tools``: factory ``use`` with
    validated ``options``; ``source`` and ``line`` say where it was written."""

    use: str
    options: pydantic.BaseModel
    tools: tuple[str, ...] = ("*",)
    source: str | None = None
    line: int | None = None
    _tools: re.Pattern[str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_tools", re.compile("|".join(map(translate, self.tools))))

    def covers(self, tool: str) -> bool:
        """Whether the guard applies to ``tool``."""
        return bool(self._tools.match(tool))


@dataclass(frozen=True, slots=True)
class Policy:
    """A loaded policy: rules (inherited ones first), the default action, the guards it
    adds, and where it came from (``path``; ``hash`` is the SHA-256 of the file).
    ``sandbox`` is what it says about sandboxing (``None``: nothing; the toolbox's own
    settings apply). ``protect`` are the path globs no tool may change (its own and those
    of the policies it extends); ``protect_swarm`` whether swarm's own code is protected
    when the workspace holds it; ``undo`` the budget of the pre-images a run keeps
    (``None``: the defaults of ``UndoSettings``); ``files`` every file it was loaded from
    (``extend`` chain first). ``on_ask`` says what an ``ask`` does when nobody can be asked
    now (``deny``, or ``hold`` the call in the run record for a later answer) and
    ``ask_timeout`` how many seconds a held request waits before it counts as denied
    (``None``: no limit)."""

    name: str
    rules: tuple[Rule, ...] = ()
    default: Action = "deny"
    guards: tuple[PolicyGuardSpec, ...] = ()
    description: str = ""
    path: Path | None = None
    hash: str = ""
    sandbox: SandboxSettings | None = None
    protect: tuple[str, ...] = ()
    protect_swarm: bool = True
    files: tuple[Path, ...] = ()
    undo: UndoSettings | None = None
    on_ask: Literal["deny", "hold"] = "deny"
    ask_timeout: float | None = None
    _by_tool: dict[str, tuple[Rule, ...]] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )
    _by_call: dict[tuple[str, tuple[str, ...]], tuple[Rule, ...]] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )
    _decided: dict[tuple[Any, ...], Decision | Unjudgeable] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any], *, name: str = "policy") -> Policy:
        """A policy from data shaped like a policy file (``extend`` is not allowed: use
        files). Raises ``ConfigError``."""
        text = json.dumps(data, sort_keys=True, default=str)
        document = Document(Path(f"<{name}>"), dict(data))
        spec = validate_document(_PolicyFile, document)
        if spec.extend is not None:
            raise ConfigError("extend needs a policy file", field="extend")
        digest = hashlib.sha256(text.encode()).hexdigest()
        return _build(spec, document, spec.name or name, digest, None, path=None)

    def rules_for(self, tool: str) -> tuple[Rule, ...]:
        """The rules about ``tool``, in order."""
        rules = self._by_tool.get(tool)
        if rules is None:
            rules = self._by_tool[tool] = tuple(r for r in self.rules if r.covers(tool))
        return rules

    def _applicable(self, tool: str, names: tuple[str, ...]) -> tuple[Rule, ...]:
        """The rules about ``tool`` that look only at arguments among ``names``."""
        key = (tool, names)
        rules = self._by_call.get(key)
        if rules is None:
            present = set(names)
            rules = tuple(r for r in self.rules_for(tool) if r.needs <= present)
            if len(self._by_call) > 4096:
                self._by_call.clear()
            self._by_call[key] = rules
        return rules

    def decide(
        self, tool: str, arguments: Mapping[str, Any], *, role: str | None = None
    ) -> Decision:
        """Decide on a call of ``tool`` with validated ``arguments`` by ``role``.

        Raises ``Unjudgeable`` when a rule cannot tell (a shell command that does not
        parse); callers deny. Decisions on calls whose arguments are all scalars are
        remembered (rules are pure functions of the call; a model repeats calls).
        """
        if not all(type(v) in _SCALARS for v in arguments.values()):
            return self._decide(tool, arguments, role)
        key = (tool, role, *((k, type(v), v) for k, v in arguments.items()))
        found = self._decided.get(key)
        if found is None:
            try:
                found = self._decide(tool, arguments, role)
            except Unjudgeable as exc:
                found = exc
            if len(self._decided) >= 1024:
                self._decided.clear()
            self._decided[key] = found
        if isinstance(found, Unjudgeable):
            raise Unjudgeable(str(found), found.rule)
        return found

    def _decide(self, tool: str, arguments: Mapping[str, Any], role: str | None) -> Decision:
        asked: Rule | None = None
        allowed: Rule | None = None
        parsed: dict[str, Any] = {}
        for rule in self._applicable(tool, tuple(arguments)):
            if rule.action == "allow" and (allowed is not None or asked is not None):
                continue
            if rule.action == "ask" and asked is not None:
                continue
            if not rule.matches(arguments, role, parsed):
                continue
            if rule.action == "deny":
                return Decision("deny", rule, rule.describe(tool, arguments))
            if rule.action == "ask":
                asked = rule
            else:
                allowed = rule
        chosen = asked or allowed
        if chosen is not None:
            return Decision(chosen.action, chosen, chosen.describe(tool, arguments))
        reason = {
            "deny": f"no rule of policy '{self.name}' allows calls of '{tool}'",
            "ask": f"policy '{self.name}' asks before calls of '{tool}'",
            "allow": f"policy '{self.name}' allows calls of '{tool}'",
        }[self.default]
        return Decision(self.default, None, reason)


def _build(
    spec: _PolicyFile,
    document: Document,
    name: str,
    digest: str,
    base: Policy | None,
    *,
    path: Path | None,
) -> Policy:
    inherited = base or Policy(name)
    # ids the file gives must be unique; an unnamed rule is "rules[i]" of its own file
    taken = {r.id for r in inherited.rules if not r.id.startswith("rules[")}
    rules: list[Rule] = []
    problems: list[ConfigError] = []
    for i, rule in enumerate(spec.rules):
        action: Action = (
            "deny" if rule.deny is not None else "ask" if rule.ask is not None else "allow"
        )
        rule_id = rule.id or f"rules[{i}]"
        if rule.id is not None and rule_id in taken:
            problems.append(
                ConfigError(
                    f"rule id '{rule_id}' is used twice (ids name rules in the audit log)",
                    path=document.path,
                    line=document.line_of(("rules", i, "id")),
                    field=f"rules.{i}.id",
                )
            )
        taken.add(rule_id)
        rules.append(
            Rule(
                rule_id,
                action,
                _globs(getattr(rule, action)),
                roles=_globs(rule.roles),
                conditions=tuple(Condition.from_spec(k, v) for k, v in rule.args.items()),
                reason=rule.reason,
                policy=name,
                policy_hash=digest,
                origin=RuleOrigin(document.path, i, _lines_under(document, ("rules", i))),
            )
        )
    guards: list[PolicyGuardSpec] = []
    for i, guard in enumerate(spec.guards):
        try:
            guards.append(_guard_spec(guard, i, document))
        except ConfigError as exc:
            problems += exc.problems
    if problems:
        raise ConfigError.collect(problems)
    return Policy(
        name=name,
        rules=(*inherited.rules, *rules),
        default=spec.default or inherited.default,
        guards=(*inherited.guards, *guards),
        description=spec.description or inherited.description,
        path=path,
        hash=digest,
        sandbox=merge_sandbox(spec.sandbox, inherited.sandbox, source=name),
        protect=tuple(dict.fromkeys((*inherited.protect, *spec.protect))),
        protect_swarm=inherited.protect_swarm if spec.protect_swarm is None else spec.protect_swarm,
        files=(*inherited.files, path) if path is not None else inherited.files,
        undo=_undo_settings(spec.undo) if spec.undo is not None else inherited.undo,
        on_ask=spec.on_ask or inherited.on_ask,
        ask_timeout=spec.ask_timeout if spec.ask_timeout is not None else inherited.ask_timeout,
    )


def _undo_settings(spec: _UndoFile) -> UndoSettings:
    from swarm.undo.capture import UndoSettings

    return UndoSettings(spec.max_bytes, spec.over_budget)


def _lines_under(document: Document, prefix: tuple[str | int, ...]) -> dict[Any, int]:
    """The lines of the keys under ``prefix``, keyed from there."""
    n = len(prefix)
    return {k[n:]: v for k, v in document.lines.items() if k[:n] == prefix}


def _guard_spec(spec: _GuardFile, i: int, document: Document) -> PolicyGuardSpec:
    where = ("guards", i)
    try:
        factory = guard_factory(spec.use)
    except KeyError as exc:
        raise ConfigError(
            str(exc.args[0]),
            path=document.path,
            line=document.line_of((*where, "use")),
            field=f"guards.{i}.use",
        ) from None
    prefix = (*where, "with")
    lines = {k[len(prefix) :]: v for k, v in document.lines.items() if k[: len(prefix)] == prefix}
    sub = Document(document.path, spec.options, lines)
    try:
        options = validate_document(factory.options, sub)
    except ConfigError as exc:
        problems = [
            ConfigError(
                p.message,
                path=p.path,
                line=p.line or document.line_of(prefix),
                field=f"guards.{i}.with" + (f".{p.field}" if p.field else ""),
            )
            for p in exc.problems
        ]
        raise ConfigError.collect(problems) from None
    line = document.line_of(where)
    return PolicyGuardSpec(spec.use, options, _globs(spec.tools), str(document.path), line)


def shipped_policies() -> list[str]:
    """The names of the policies shipped with swarm."""
    return sorted(p.stem for p in POLICY_DIR.glob("*.yaml"))


def _resolve(ref: str | Path, dirs: Sequence[Path], relative_to: Path | None) -> Path:
    """The file ``ref`` names: ``builtin:NAME``, a path (relative ones from
    ``relative_to``), or a name looked up in ``dirs`` and then the shipped policies."""
    text = str(ref)
    if text.startswith("builtin:"):
        candidate = POLICY_DIR / f"{text.removeprefix('builtin:')}.yaml"
        if candidate.is_file():
            return candidate
        known = ", ".join(shipped_policies())
        raise ConfigError(f"no shipped policy '{text}' (shipped: {known})")
    if isinstance(ref, Path) or "/" in text or "\\" in text or Path(text).suffix:
        path = Path(text)
        if not path.is_absolute():
            path = (relative_to or Path.cwd()) / path
        if not path.is_file():
            raise ConfigError("policy file not found", path=path)
        return path
    where = [*dirs, POLICY_DIR]
    for directory in where:
        for suffix in (".yaml", ".yml"):
            candidate = Path(directory) / f"{text}{suffix}"
            if candidate.is_file():
                return candidate
    names = sorted({p.stem for d in where for p in Path(d).glob("*.y*ml")})
    close = difflib.get_close_matches(text, names, n=1)
    hint = f"did you mean '{close[0]}'? " if close else ""
    looked = ", ".join(str(d) for d in where)
    raise ConfigError(f"unknown policy '{text}' ({hint}looked in: {looked})")


def load_policy(
    ref: str | Path,
    *,
    search_dirs: Iterable[str | Path] = (),
    relative_to: str | Path | None = None,
) -> Policy:
    """Load a policy by name (``default``), ``builtin:NAME`` or path, following ``extend``.

    A name is looked up in ``search_dirs`` (in order), then among the shipped policies; a
    relative path is taken from ``relative_to`` (default: the working directory). Raises
    ``ConfigError`` with file, line and field for every problem: unknown keys, bad
    values, unknown guards or policies, an ``extend`` cycle.
    """
    dirs = [Path(d) for d in search_dirs]
    base = Path(relative_to) if relative_to is not None else None
    return _load(_resolve(ref, dirs, base), dirs, ())


def check_policy(
    ref: str | Path,
    *,
    search_dirs: Iterable[str | Path] = (),
    relative_to: str | Path | None = None,
) -> list[ConfigError]:
    """Every problem of the policy ``ref`` names and of the ones it extends (``[]`` when
    it loads), found in one pass: a file with a bad key is still checked for the rest.

    Raises ``ConfigError`` (with no line: the caller knows where ``ref`` was written) when
    ``ref`` itself names no policy.
    """
    return checked_policy(ref, search_dirs=search_dirs, relative_to=relative_to)[1]


def checked_policy(
    ref: str | Path,
    *,
    search_dirs: Iterable[str | Path] = (),
    relative_to: str | Path | None = None,
) -> tuple[Policy | None, list[ConfigError]]:
    """The policy ``ref`` names and its problems (``check_policy``), from one reading of
    its files: the policy is ``None`` unless it has none (then it is what ``load_policy``
    returns). Raises ``ConfigError`` as ``check_policy`` does."""
    dirs = [Path(d) for d in search_dirs]
    base = Path(relative_to) if relative_to is not None else None
    path = _resolve(ref, dirs, base)
    problems: list[ConfigError] = []
    policy: Policy | None = None
    try:
        policy = _load(path, dirs, (), problems)
    except ConfigError as exc:
        problems += exc.problems
    if problems:
        return None, sorted(problems, key=lambda p: (p.path or "", p.line or 0))
    return policy, []


def _load(
    path: Path,
    dirs: list[Path],
    chain: tuple[Path, ...],
    problems: list[ConfigError] | None = None,
) -> Policy:
    """Load ``path``; with ``problems``, validation problems are added there and the
    keys without them still loaded (raising only when nothing can be)."""
    real = path.resolve()
    try:
        raw = path.read_bytes()
        text = raw.decode("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read file: {exc}", path=path) from None
    key = (str(path), raw)
    if problems is None:
        parsed = _PARSED.get(key)
        if parsed is None:
            parsed = _remember(_PARSED, key, _parsed(text, path))
        document, spec = parsed
    else:
        document = parse_document(text, path)
        salvaged, found = salvage_document(_PolicyFile, document)
        problems += found
        if salvaged is None:
            raise ConfigError.collect(found)
        spec = salvaged
    base = None
    if spec.extend is not None:

        def problem(message: str) -> ConfigError:
            line = document.line_of(("extend",))
            return ConfigError(message, path=path, line=line, field="extend")

        try:
            parent = _resolve(spec.extend, [path.parent, *dirs], path.parent)
            if parent.resolve() in (*chain, real):
                names = " -> ".join(p.stem for p in (*chain, real, parent.resolve()))
                raise ConfigError(f"policies extend each other in a cycle: {names}")
        except ConfigError as exc:
            refused = problem(exc.message + (f" ({exc.path})" if exc.path else ""))
            if problems is None:
                raise refused from None
            problems.append(refused)  # check the rest of this file as if it extended nothing
        else:
            try:
                base = _load(parent, dirs, (*chain, real), problems)
            except ConfigError as exc:
                if problems is None:
                    raise
                problems += exc.problems
    if problems is None:
        built = _BUILT.get(key)
        if built is not None and built[0] is base:
            return built[1]
    digest = hashlib.sha256(raw).hexdigest()
    policy = _build(spec, document, spec.name or path.stem, digest, base, path=path)
    if problems is None:
        _remember(_BUILT, key, (base, policy))
    return policy


# A run loads its policies several times (its own, each role's, the manifest's), and a
# batch runs many: what a file says is parsed and built once per content. A file is read
# again each time, so an edit between runs is seen; the policy built on it is taken only
# with the same base (the policy it extends, itself loaded afresh). Policies are frozen,
# and their remembered decisions are pure functions of a call.
_PARSED: dict[tuple[str, bytes], tuple[Document, _PolicyFile]] = {}
_BUILT: dict[tuple[str, bytes], tuple[Policy | None, Policy]] = {}
_REMEMBERED = 64
_V = TypeVar("_V")


def _parsed(text: str, path: Path) -> tuple[Document, _PolicyFile]:
    document = parse_document(text, path)
    return document, validate_document(_PolicyFile, document)


def _remember(cache: dict[tuple[str, bytes], _V], key: tuple[str, bytes], value: _V) -> _V:
    if len(cache) >= _REMEMBERED:
        cache.clear()
    cache[key] = value
    return value


class PolicyGuard(PermissionGuard):
    """Decides each call by a policy, first in a tool's guard chain.

    It notes the deciding policy, rule and file hash on the current call (so the audit
    log says why a call was allowed or denied), denies ``deny`` decisions and commands it
    cannot judge, and asks the run's approver about ``ask`` decisions (denying when
    there is none). For a tool that starts processes (its context a ``ToolSandbox``, to
    which ``apply_policy`` bound the policy's sandbox settings) it notes the sandbox
    found for the settings in force, and denies the call (rule ``sandbox-required``)
    when they require a sandbox that does not work here, or when the policy's settings
    are not the ones bound to the tool. ``role`` is the role the policy applies to
    (default: the role in the calling agent's path).
    """

    def __init__(self, policy: Policy, *, role: str | None = None) -> None:
        self.policy = policy
        self.role = role

    @property
    def name(self) -> str:
        """``policy:NAME``: how denials and audit records name this guard."""
        return f"policy:{self.policy.name}"

    async def check(self, tool: Tool[Any], **kwargs: Any) -> dict[str, Any]:
        call = current_call()
        role = self.role or (role_of(call.path) if call is not None else None)
        policy = self.policy
        try:
            decision = policy.decide(tool.name, kwargs, role=role)
        except Unjudgeable as exc:
            self._note(call, None, rule_id=UNPARSEABLE)
            raise GuardError(
                f"{exc}; a command that cannot be judged is not run",
                guard=self.name,
                rule=UNPARSEABLE,
            ) from None
        rule = decision.rule
        self._note(call, rule)
        rule_id = rule.id if rule is not None else "default"
        if decision.action == "deny":
            raise GuardError(decision.reason, guard=self.name, rule=rule_id)
        context = tool.context
        if isinstance(context, ToolSandbox):
            confine(context, call, policy.sandbox, tool=tool.name, guard=self.name)
        if decision.action == "allow":
            return kwargs
        return await ask(
            tool, kwargs, guard=self, reason=decision.reason, rule=rule_id, policy=policy.name
        )

    def _note(self, call: CallRecord | None, rule: Rule | None, *, rule_id: str = "") -> None:
        """Say on the call which policy file and rule decided (for the audit log)."""
        if call is None:
            return
        call.guard = self.name
        call.rule = rule.id if rule is not None else rule_id or "default"
        call.policy = rule.policy if rule is not None else self.policy.name
        call.policy_hash = rule.policy_hash if rule is not None else self.policy.hash


def apply_policy(
    tools: Iterable[Tool[Any]],
    policy: Policy,
    *,
    role: str | None = None,
    workspace: str | Path | None = None,
    ceiling: Mapping[str, Policy] | None = None,
    protected: ProtectedPaths | None = None,
) -> list[Tool[Any]]:
    """Copies of ``tools`` guarded by ``policy`` for ``role``.

    A tool that starts processes (its context a ``ToolSandbox``) gets the policy's
    ``sandbox:`` settings bound to its copy, when the policy has some: its handler runs
    under them (narrowed, for each call, by the network allow-lists of the roles above
    the caller), and the ``PolicyGuard`` checks them.

    Each tool's chain becomes: the ``CeilingGuard`` when ``ceiling`` maps the team's
    roles to their policies (so the ``deny`` rules of every role above the caller apply
    too), the ``PolicyGuard``, then the policy's guards that cover the tool (built once
    and shared by all tools, so a rate limit counts across them), then the tool's own
    guards. ``workspace`` roots the ``path`` guard. With ``protected`` (the run's
    protected paths), a ``ProtectGuard`` comes first: it denies writes to them and to the
    ``protect`` globs of ``policy`` and of every role above the caller. Raises
    ``ConfigError`` (naming the policy file and line) when a guard cannot be built.
    """
    context = GuardContext(Path(workspace) if workspace is not None else None, role)
    built: list[tuple[PolicyGuardSpec, PermissionGuard]] = []
    for spec in policy.guards:
        try:
            built.append((spec, guard_factory(spec.use).build(spec.options, context)))
        except ValueError as exc:
            raise ConfigError(str(exc), path=spec.source, line=spec.line, field="guards") from None
    first: tuple[PermissionGuard, ...] = (PolicyGuard(policy, role=role),)
    if ceiling:
        first = (CeilingGuard(ceiling, own=policy), *first)
    if protected is not None:
        policies = {**(ceiling or {}), **({role: policy} if role is not None else {})}
        first = (ProtectGuard(protected, policies, role=role), *first)
    return [
        tool.copy(
            guards=(*first, *[g for spec, g in built if spec.covers(tool.name)], *tool.guards),
            context=_bound(tool.context, policy.sandbox),
        )
        for tool in tools
    ]


def _bound(context: Any, settings: SandboxSettings | None) -> Any:
    """A tool's ``context`` with a policy's sandbox ``settings`` bound, when it is a
    ``ToolSandbox`` and the policy has some; else ``context`` as it is."""
    if settings is None or not isinstance(context, ToolSandbox):
        return context
    return context.bound(settings)
