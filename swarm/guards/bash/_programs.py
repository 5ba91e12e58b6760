"""Programs on a command line: the invocation of a simple command and what it runs.

``Programs`` is the half of the walker that turns an evaluated argv into ``Invocation``s:
it unwraps wrappers (``_wrappers.py``), reads what a program does beyond its argv
(``_code.py``), normalises the files it writes against the directory ``cd`` moved to, and
says why it runs code that is not on the line. ``_walker.py`` reads the syntax tree.
"""

from __future__ import annotations

import posixpath
import re

from swarm.guards.bash._code import effects, has_effects
from swarm.guards.bash._invocation import (
    MAX_DEPTH,
    Invocation,
    Redirect,
    ShellSyntaxError,
    UnknownWord,
)
from swarm.guards.bash._words import Word
from swarm.guards.bash._wrappers import WRAPPERS

__all__ = ["SILENT_TARGETS", "Programs", "which"]

SILENT_TARGETS = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr", "/dev/stdin"})
_STDIN_PATHS = frozenset(("/dev/stdin", "/dev/fd/0", "/proc/self/fd/0", "-"))
_SHELLS = frozenset(("sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "yash", "posh", "rbash"))
_WHICH = frozenset(("which", "command", "type"))
# programs ``invoke`` looks at by name (beyond ``WRAPPERS`` and ``effects``)
_BY_NAME = frozenset((
    "alias", "source", ".", "tee", "cp", "mv", "install", "ln", "touch", "mkdir", "dd",
))  # fmt: skip


class Programs:
    """The walker's state along a line (variables, directory, files written) and the
    invocations found so far; ``child_script`` parses a script run by a program."""

    def __init__(self, depth: int, cwd: str | None = ".") -> None:
        if depth > MAX_DEPTH:
            raise ShellSyntaxError("commands are nested too deeply")
        self.depth = depth
        self.env: dict[str, Word] = {}
        self.cwd = cwd
        self.out: list[Invocation] = []
        self.written: set[str] = set()

    def child_script(self, text: str) -> list[Invocation]:
        """The invocations of ``text`` run as a script by a program on the line."""
        raise NotImplementedError

    def target(self, op: str, word: Word) -> Redirect:
        text = word.text
        lead = word.text if word.known else word.prefix
        if lead.startswith(("/dev/tcp/", "/dev/udp/")):
            return Redirect(op, text)  # bash opens a socket for any name starting so
        if not word.known:
            return Redirect(op, text, known=False)
        path = self.normalise(text)
        if path is None:
            return Redirect(op, text, known=False)
        return Redirect(op, path)

    def normalise(self, path: str) -> str | None:
        """``path`` made absolute against the directory ``cd`` moved to (relative to the
        starting directory when none), ``..`` and ``//`` resolved; None if unknown."""
        if not path.startswith("/"):
            if self.cwd is None:
                return None
            path = posixpath.join(self.cwd, path)
        path = posixpath.normpath(path)
        return "/" + path.lstrip("/") if path.startswith("//") else path

    def redirect_writes(self, redirects: list[Redirect]) -> tuple[list[str], bool]:
        """The files the redirections write, and whether one is only known at run time."""
        writes = []
        unknown = False
        for r in redirects:
            if not r.is_file or not r.writes or r.target.startswith(("/dev/tcp/", "/dev/udp/")):
                continue
            if not r.known:
                unknown = True
            elif r.target not in SILENT_TARGETS:
                writes.append(r.target)
        return writes, unknown

    def after(self, words: list[Word]) -> None:
        """What a builtin changes for the commands after it: ``cd``, ``read``."""
        name = words[0].text if words[0].known else ""
        if name in ("cd", "pushd", "popd"):
            args = [w for w in words[1:] if not (w.known and w.text in ("-L", "-P", "-e", "-@"))]
            if name == "cd" and len(args) == 1 and args[0].known and args[0].text not in ("-", ""):
                self.cwd = self.normalise(args[0].text)
            else:
                self.cwd = None
        elif name in ("read", "mapfile", "readarray", "getopts", "printf", "let"):
            for word in words[1:]:
                if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", word.text):
                    self.env[word.text] = Word(f"${word.text}", known=False)

    def redirects_only(self, redirects: list[Redirect]) -> None:
        """Redirections with no command of their own (``> F``, ``{ ...; } > F``)."""
        writes, unknown = self.redirect_writes(redirects)
        self.emit(Invocation((), tuple(redirects), writes=tuple(writes), unknown_writes=unknown))
        self.written.update(writes)

    def emit(self, invocation: Invocation) -> None:
        self.out.append(invocation)

    def invoke(
        self,
        words: list[Word],
        redirects: list[Redirect],
        feeds: list[Word],
        *,
        in_pipe: bool,
        code: str = "",
        more_args: bool = False,
    ) -> list[Invocation]:
        """The invocation of a simple command, and of whatever program it wraps."""
        argv = tuple([w.text for w in words])
        unknown: tuple[UnknownWord, ...] = ()
        if not all([w.known for w in words]):
            unknown = tuple(
                UnknownWord(i, w.prefix, w.choices) for i, w in enumerate(words) if not w.known
            )
        writes: list[str] = []
        unknown_writes = False
        if redirects:
            writes, unknown_writes = self.redirect_writes(redirects)
        program = words[0]
        if program.procsub:
            code = "process-substitution"
        if not program.known:
            inv = Invocation(
                argv,
                tuple(redirects),
                unknown,
                more_args,
                code or "",
                tuple(writes),
                unknown_writes,
            )
            return [inv]
        name = argv[0]
        if (
            not redirects
            and not program.procsub
            and "/" not in name
            and name not in _BY_NAME
            and name not in WRAPPERS
            and not has_effects(name)
        ):
            # a program run by name that runs nothing else and writes no file: what the
            # rest of this method gives for it, without its checks (most programs)
            return [Invocation(argv, (), unknown, more_args, code)]
        name = name.rsplit("/", 1)[-1]
        inner: list[Invocation] = []
        found = effects(argv)
        code = code or found.runs_code
        if found.program_at is not None:
            inner += self.invoke(words[found.program_at :], [], [], in_pipe=False)
        for index in found.scripts:
            text = words[index].code
            if text is None:
                code = "unknown-code"
            else:
                inner += self.child_script(text)
        if name == "alias" and any("=" in w.text or not w.known for w in words[1:]):
            code = "alias"
        if found.writes or name in ("tee", "cp", "mv", "install", "ln", "touch", "mkdir", "dd"):
            if any(not w.known for w in words[1:]):
                unknown_writes = True
            for index, text in found.writes:
                path = self.normalise(text) if index == 0 or words[index].known else None
                if path is None:
                    unknown_writes = True
                elif path not in SILENT_TARGETS:
                    writes.append(path)
        out: list[Invocation] = []
        if "/" in argv[0]:
            code = code or self.script_kind(program)
        if name in ("source", ".") and len(words) > 1:
            if words[1].known and words[1].text in _STDIN_PATHS:
                code = self.stdin_script(redirects, feeds, inner, in_pipe=in_pipe)
            else:
                code = self.script_kind(words[1])
        unwrap = WRAPPERS.get(name)
        start: int | None = None
        if unwrap is not None:
            step = unwrap(argv)
            if step.refuse is not None:
                raise ShellSyntaxError(step.refuse)
            start = step.start
            if step.script is not None:
                sources = [words[k] for k in step.sources]
                if all(w.code is not None for w in sources):
                    text = step.script
                    if any(not w.known for w in sources):
                        text = " ".join(w.code or "" for w in sources)
                    inner += self.child_script(text)
                else:
                    code = "unknown-code"
            elif step.stdin:
                code = code or self.stdin_script(redirects, feeds, inner, in_pipe=in_pipe)
            elif start is not None:
                inner_words = words[start:]
                if step.split is not None:
                    inner_words = [Word(p, code=p) for p in step.split.split()] + inner_words
                if inner_words:
                    inner += self.invoke(
                        inner_words, [], [], in_pipe=False, more_args=name == "xargs"
                    )
                if name == "xargs":
                    code = code or "xargs"
            elif name in _SHELLS:
                script = next((w for w in words[1:] if not w.text.startswith(("-", "+"))), None)
                if script is not None and script.known and script.text in _STDIN_PATHS:
                    code = code or self.stdin_script(redirects, feeds, inner, in_pipe=in_pipe)
                elif script is not None:
                    code = code or self.script_kind(script)
            for begin, end in step.extra:
                extra = [Word("{}", known=False) if w.text == "{}" else w for w in words[begin:end]]
                inner += self.invoke(extra, [], [], in_pipe=False)
        outer_argv = argv if start is None else argv[:start]
        outer_unknown = unknown if start is None else tuple(u for u in unknown if u.index < start)
        out.append(
            Invocation(
                outer_argv,
                tuple(redirects),
                outer_unknown,
                more_args,
                code,
                tuple(writes),
                unknown_writes,
            )
        )
        self.written.update(writes)
        return out + inner

    def script_kind(self, word: Word) -> str:
        """Why running the script ``word`` names runs code not on the line."""
        if word.procsub:
            return "process-substitution"
        if not word.known:
            return "unknown-code"
        path = self.normalise(word.text)
        return "written-script" if path is None or path in self.written else "script"

    def stdin_script(
        self,
        redirects: list[Redirect],
        feeds: list[Word],
        inner: list[Invocation],
        *,
        in_pipe: bool,
    ) -> str:
        """A shell reading its script from standard input: a heredoc or here-string is
        parsed; a file is a script; a pipe or nothing is code not on the line."""
        if feeds:
            if feeds[-1].code is None:
                return "unknown-code"
            inner += self.child_script(feeds[-1].code)
            return ""
        if not in_pipe:
            for redirect in redirects:
                if redirect.op.lstrip("0") == "<":
                    return "written-script" if redirect.target in self.written else "script"
        return "unknown-code"


def which(found: Invocation) -> str | None:
    """X for ``which X``, ``command -v X`` or ``type -P X`` (a program's path)."""
    argv = found.argv
    if found.program not in _WHICH or found.unknown or found.redirects:
        return None
    names = [a for a in argv[1:] if not a.startswith("-")]
    flags = set(argv[1:]) - set(names)
    wanted = {"which": set(), "command": {"-v"}, "type": {"-P"}}[found.program]
    if len(names) != 1 or (flags != wanted and not (found.program == "which" and flags <= {"-a"})):
        return None
    return names[0]
