"""Paths in MCP tool arguments: which arguments can name one, and whether each may.

An MCP server opens what it is given itself, outside swarm's file tools, so every argument
that could name a file is checked before the call is sent. An argument can name a path:

- **by the schema**: a string whose ``format`` is ``uri``, ``uri-reference``, ``iri``,
  ``iri-reference`` or path-like (``path``, ``file-path``, ...), or whose property name's
  last word is ``path``, ``file``, ``filename``, ``dir``, ``directory``, ``folder``,
  ``root``, ``cwd``, ``uri``, ``url``, ``source``, ``destination``, ... (``repo_path``,
  ``rootUri``, ``files``), at any depth: nested objects, arrays, ``$ref``, ``anyOf``. Every
  string below such a property is checked whatever its shape.
- **by its value**, wherever it is and whatever its name: every one-line string (a key of
  an object too) is taken as a path relative to the workspace, and checked, as given and
  percent-decoded; so an absolute path, a ``~`` path, a ``file:`` URI and a ``..`` that
  climbs out are caught under any name. One exception keeps text that only looks like a
  path usable: an absolute value under no path-like name, given to a tool its server marks
  read-only, whose first directory does not exist (``/* note */``, ``/api/users``) names
  nothing that tool could open, and is sent.

A path is checked twice: as written, with ``..`` taken on the text (what a server that
normalises paths opens), and with symlinks resolved on disk (what the kernel opens). Both
must lie inside the workspace, outside the hidden paths (run records), and, for a tool the
server does not mark read-only, outside the read-only protected paths. A ``file:`` URI is
percent-decoded and must name this host; it is checked as parsed and as its raw text. A
value naming another scheme (``https://...``) is not a local path and is judged by value
only.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

from swarm.errors import GuardError
from swarm.guards.base import PermissionGuard
from swarm.toolbox._paths import RUNS_DIR, STATE_DIR, Parts, glob_matcher
from swarm.tools import Tool

__all__ = [
    "OUTSIDE_RULE",
    "PATH_FORMATS",
    "PROTECTED_RULE",
    "McpPathGuard",
    "PathRefusal",
    "is_path_name",
    "path_fields",
]

OUTSIDE_RULE = "workspace"
"""The rule id of a denial for a path outside the workspace or in the run records (the
rule ``PathGuard`` denies such paths under)."""

PROTECTED_RULE = "protected-path"
"""The rule id of a denial for a read-only protected path given to a tool that may write."""

PATH_FORMATS = frozenset(
    {
        "uri",
        "uri-reference",
        "iri",
        "iri-reference",
        "path",
        "file",
        "file-path",
        "filepath",
        "dir",
        "directory",
        "directory-path",
    }
)
"""The JSON-schema ``format`` values that make a string argument a path."""

_PATH_WORDS = frozenset(
    {
        "path",
        "paths",
        "filepath",
        "filepaths",
        "pathname",
        "file",
        "files",
        "filename",
        "filenames",
        "dir",
        "dirs",
        "directory",
        "directories",
        "folder",
        "folders",
        "root",
        "roots",
        "cwd",
        "workdir",
        "uri",
        "uris",
        "url",
        "urls",
        "source",
        "destination",
        "src",
        "dst",
        "dest",
        "target",
    }
)
_WORDS = re.compile(r"[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])")
_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]+):")
_MAX_PATH = 4096  # PATH_MAX: a longer one-line string names nothing the kernel opens
_SHOWN = 160
_ANY = "*"
_DEPTH = 12

Location = tuple[str, ...]
"""Where a value sits in the arguments: property names, ``*`` for any item or key."""


def is_path_name(name: str) -> bool:
    """Whether an argument named ``name`` names a path by its last word (``repo_path``,
    ``rootUri``, ``files``), not by a substring (``xpath`` does not)."""
    words = _WORDS.findall(name)
    return bool(words) and words[-1].lower() in _PATH_WORDS


def path_fields(schema: Mapping[str, Any]) -> frozenset[Location]:
    """The locations in arguments following ``schema`` that name paths, by their schema's
    ``format`` or their property's name (``("options", "root")``, ``("files", "*")``).

    Follows ``properties``, ``items``, ``prefixItems``, ``additionalProperties``,
    ``anyOf``/``oneOf``/``allOf`` and local ``$ref``s, to a depth of 12.
    """
    found: set[Location] = set()
    _walk_schema(schema, schema, (), False, found, 0)
    return frozenset(found)


def _walk_schema(
    root: Mapping[str, Any],
    schema: Any,
    where: Location,
    named: bool,
    found: set[Location],
    depth: int,
) -> None:
    if not isinstance(schema, Mapping) or depth > _DEPTH:
        return
    ref = schema.get("$ref")
    if isinstance(ref, str):
        _walk_schema(root, _resolve_ref(root, ref), where, named, found, depth + 1)
    if named or schema.get("format") in PATH_FORMATS:
        if where:
            found.add(where)
        return  # everything below a path is checked as one
    for key in ("anyOf", "oneOf", "allOf"):
        for option in schema.get(key) or ():
            _walk_schema(root, option, where, named, found, depth + 1)
    properties = schema.get("properties")
    if isinstance(properties, Mapping):
        for name, below in properties.items():
            child = (*where, str(name))
            _walk_schema(root, below, child, is_path_name(str(name)), found, depth + 1)
    for key in ("items", "additionalProperties"):
        _walk_schema(root, schema.get(key), (*where, _ANY), False, found, depth + 1)
    for below in schema.get("prefixItems") or ():
        _walk_schema(root, below, (*where, _ANY), False, found, depth + 1)


def _resolve_ref(root: Mapping[str, Any], ref: str) -> Any:
    if not ref.startswith("#/"):
        return None
    node: Any = root
    for part in ref[2:].split("/"):
        part = part.replace("~1", "/").replace("~0", "~")
        if not isinstance(node, Mapping) or part not in node:
            return None
        node = node[part]
    return node


def _matches(where: Location, fields: frozenset[Location]) -> bool:
    return any(
        len(field) == len(where) and all(f in (_ANY, w) for f, w in zip(field, where, strict=True))
        for field in fields
    )


@dataclass(frozen=True, slots=True)
class PathRefusal:
    """Why an argument's value may not be sent: the ``reason`` the model reads and the
    ``rule`` id the denial is audited under."""

    reason: str
    rule: str


class McpPathGuard(PermissionGuard):
    """Denies an MCP call when an argument names a path it may not (see the module
    docstring for which arguments and which paths).

    ``workspace`` is the servers' working directory, which relative paths start from;
    ``hidden`` are absolute paths no tool reads or writes (run records; the workspace's
    ``.swarm/runs`` always is); ``readonly`` are the paths no tool that may write is
    given: absolute paths, paths relative to the workspace, or globs relative to it
    (``secrets/**``), each covering what lies below it.
    A tool may write unless its server marks it ``readOnlyHint``. Denials use the rule ids
    ``workspace`` (``OUTSIDE_RULE``) and ``protected-path`` (``PROTECTED_RULE``).

    Symlinks are resolved when the call is checked: a link made between the check and the
    server's open is not seen here (the server's sandbox is the layer under this one).
    """

    def __init__(
        self,
        workspace: str | os.PathLike[str],
        *,
        hidden: Iterable[str | os.PathLike[str]] = (),
        readonly: Iterable[str | os.PathLike[str]] = (),
    ) -> None:
        given = Path(os.path.abspath(workspace))
        self.root = Path(os.path.realpath(workspace))
        self._aliases = tuple(dict.fromkeys((self.root, given)))
        records = (self.root / RUNS_DIR, given / RUNS_DIR)  # as the file tools hide them
        self._hidden = tuple(
            Path(alias)
            for path in (*records, *hidden)
            for alias in dict.fromkeys(
                (os.path.abspath(path), os.path.realpath(path)) if os.path.isabs(path) else ()
            )
        )
        exact: list[Parts] = []
        globs = []
        for entry in readonly:
            text = os.fspath(entry)
            if any(char in text for char in "*?[{"):
                globs.append(glob_matcher(text))
                continue
            absolute = text if os.path.isabs(text) else os.path.join(self.root, text)
            for alias in {os.path.abspath(absolute), os.path.realpath(absolute)}:
                parts = self._inside(Path(alias))
                if parts is not None:
                    exact.append(parts)
        self._readonly = tuple(exact)
        self._readonly_globs = tuple(globs)

    async def check(self, tool: Tool[Any], **kwargs: Any) -> dict[str, Any]:
        info = tool.context
        fields: frozenset[Location] = getattr(info, "path_fields", frozenset())
        writes = getattr(info, "read_only", None) is not True
        for where, value, named in _strings(kwargs, (), False, fields):
            refusal = self.problem(value, named=named, writes=writes)
            if refusal is not None:
                shown = _shown(where)
                raise GuardError(
                    f"argument '{shown}': {refusal.reason}", guard=self.name, rule=refusal.rule
                )
        return kwargs

    def problem(self, value: str, *, named: bool, writes: bool) -> PathRefusal | None:
        """Why ``value`` may not be sent to an MCP server, or ``None`` when it may.

        ``named``: the argument names a path by its schema (so it is checked whatever its
        shape); ``writes``: the tool may write (read-only protected paths are refused).
        """
        candidates = _candidates(value, named)
        if isinstance(candidates, PathRefusal):
            return candidates
        for candidate, explicit in candidates:
            refusal = self._judge(value, candidate, writes, explicit)
            if refusal is not None:
                return refusal
        return None

    def _judge(self, value: str, text: str, writes: bool, explicit: bool) -> PathRefusal | None:
        if text.startswith("~"):
            text = os.path.expanduser(text)
            if text.startswith("~"):  # no such user: still not a workspace path
                return PathRefusal(f"{_quote(value)} names a home directory", OUTSIDE_RULE)
        if not (explicit or writes) and os.path.isabs(text) and not _top_exists(text):
            return None  # '/* note */', '/api/users': nothing a read-only tool can open
        joined = os.path.join(self.root, text)
        # Lexically first: a path outside is refused without touching its file system.
        for index in range(2):
            path = os.path.realpath(joined) if index else os.path.normpath(joined)
            parts = self._inside(Path(path))
            if parts is None:
                how = " through a symlink" if index else ""
                return PathRefusal(
                    f"{_quote(value)} leads outside the workspace {self.root}{how}; an MCP"
                    " tool is only given paths inside it (relative paths start at its root)",
                    OUTSIDE_RULE,
                )
            if any(Path(path) == h or Path(path).is_relative_to(h) for h in self._hidden):
                return PathRefusal(
                    f"{_quote(value)} names run records, which no tool reads or writes",
                    OUTSIDE_RULE,
                )
            if writes and parts[:1] == (STATE_DIR,):
                return PathRefusal(
                    f"{_quote(value)} is in {STATE_DIR}/, which holds swarm's own notes, tasks"
                    " and run records; tools do not change it",
                    OUTSIDE_RULE,
                )
            if writes and self._is_readonly(parts):
                return PathRefusal(
                    f"{_quote(value)} is a protected path, read-only to every tool, and this"
                    " MCP tool may write (its server does not mark it read-only)",
                    PROTECTED_RULE,
                )
        return None

    def _is_readonly(self, parts: Parts) -> bool:
        if any(parts[: len(entry)] == entry for entry in self._readonly):
            return True
        prefixes = ["/".join(parts[:end]) for end in range(1, len(parts) + 1)]
        return any(match(prefix) for match in self._readonly_globs for prefix in prefixes)

    def _inside(self, path: Path) -> Parts | None:
        for alias in self._aliases:
            if path == alias or path.is_relative_to(alias):
                return path.relative_to(alias).parts
        return None


def _strings(
    value: Any, where: Location, named: bool, fields: frozenset[Location]
) -> Iterator[tuple[Location, str, bool]]:
    """Every string in ``value`` (object keys too), with where it is and whether it sits
    at or below an argument that names a path."""
    named = named or (bool(where) and (is_path_name(where[-1]) or _matches(where, fields)))
    if isinstance(value, str):
        yield where, value, named
    elif isinstance(value, Mapping):
        for key, below in value.items():
            if isinstance(key, str):
                yield (*where, key), key, named
            yield from _strings(below, (*where, str(key)), named, fields)
    elif isinstance(value, list | tuple):
        for index, below in enumerate(value):
            yield from _strings(below, (*where, str(index)), named, fields)


def _candidates(value: str, named: bool) -> list[tuple[str, bool]] | PathRefusal:
    """The file-system paths a server might make of ``value`` (as given, stripped, cut at
    a NUL, percent-decoded; for a ``file:`` URI, as parsed and as raw text), each with
    whether it is surely meant as a path (a named argument, a ``file:`` URI)."""
    if named and "\x00" in value:
        return PathRefusal(f"{_quote(value)} is not a valid path (it holds a NUL)", OUTSIDE_RULE)
    cut = value.split("\x00")[0]  # what a server in C opens
    texts = dict.fromkeys((value, value.strip(), cut, cut.strip(), value.replace("\x00", "")))
    found: list[tuple[str, bool]] = []
    for text in texts:
        if text[:5].lower() == "file:":
            uri = _file_uri(text)
            if isinstance(uri, PathRefusal):
                return uri
            found.extend((path, True) for path in uri)
            continue
        if "\n" in text or "\r" in text or len(text) > _MAX_PATH:
            if named and not _SCHEME.match(text):
                found.append((text, True))
            continue  # text, not a path the kernel opens
        # Another scheme's URL is no local path: only where its text climbs to is checked.
        explicit = named and not _SCHEME.match(text)
        found.extend((option, explicit) for option in dict.fromkeys((text, unquote(text))))
    return list(dict.fromkeys((t, e) for t, e in found if "\x00" not in t))


def _top_exists(path: str) -> bool:
    """Whether the first directory of the absolute ``path`` exists (read from ``/``'s
    entries, so a hung mount there is never touched)."""
    top = os.path.normpath(path).lstrip(os.sep).split(os.sep)[0]
    try:
        return not top or top in os.listdir(os.sep)
    except OSError:
        return True


def _file_uri(text: str) -> list[str] | PathRefusal:
    parsed = urlsplit(text)
    if parsed.netloc and parsed.netloc.lower() not in ("localhost", "127.0.0.1"):
        return PathRefusal(
            f"{_quote(text)} names a file on another host ('{parsed.netloc}')", OUTSIDE_RULE
        )
    raw = text[5:]
    if raw.startswith("//"):
        raw = raw[2 + len(parsed.netloc) :]
    # What a server may open: the parsed path, or the raw text after the scheme (a naive
    # server keeps '?' and '#'), each decoded or not.
    options = (parsed.path, raw)
    return list(dict.fromkeys(p for option in options for p in (unquote(option), option) if p))


def _quote(value: str) -> str:
    text = value if len(value) <= _SHOWN else value[:_SHOWN] + "..."
    return repr(text)


def _shown(where: Location) -> str:
    return ".".join(where) or "arguments"
