"""What would this shell command line run? A conservative parser for guards.

``parse_command("cd src && r''m -rf $(echo /)")`` returns one ``Invocation`` per program the
line would start: ``cd src``, ``rm -rf $(echo /)`` and ``echo /``. It follows operators
(``;`` ``&&`` ``||`` ``|`` ``&``, newlines), subshells, ``{ }`` groups, ``if``/``while``/``for``,
command substitution (``$( )``, backticks, also inside double quotes, heredocs and
``${ }``), process substitution, redirections, quoting (``'..'``, ``".."``, ``$'..'``,
backslashes), and wrappers that run another program (``env``, ``sudo``, ``timeout``,
``nice``, ``nohup``, ``xargs``, ``find -exec``, ``bash -c``, ``eval``, ...): a wrapper and
the program it runs are both invocations.

It raises ``ShellSyntaxError`` for anything it cannot judge rather than guess: unbalanced
quotes, a program name that comes from an expansion (``$cmd``, ``$(which rm)``) or a
pattern (``/bin/r?``, ``{rm,-rf}``), a string given to ``sh -c``/``eval`` that contains an
expansion, a shell reading its script from a pipe, ``case``, function definitions, and
runners whose options it does not model (``strace``, ``parallel``, ...).

shlex is not enough on its own: it removes quotes before one can tell ``'$(rm x)'``
(literal) from ``"$(rm x)"`` (runs ``rm``), and it knows nothing of ``$( )``, backticks,
``$'..'`` or heredocs. So the lexer (``_lexer.py``) is a small quote-aware scanner; shlex
still splits ``env -S`` strings and quotes argv for display.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Sequence
from dataclasses import dataclass, field

from swarm.guards._lexer import MAX_DEPTH, Lexer, Op, ShellSyntaxError, Token, Word
from swarm.guards._wrappers import WRAPPERS

__all__ = ["Invocation", "Redirect", "ShellSyntaxError", "expand_argv", "parse_command"]

_EXPANDED = "\x00expanded"  # a heredoc or here-string whose text is only known at run time
_REDIRECTS = frozenset({"<", ">", ">>", "<>", "<&", ">&", ">|", "&>", "&>>", "<<", "<<-", "<<<"})
_SEPARATORS = frozenset({";", "&", "&&", "||", "|", "|&", "\n"})
_SKIPPED_WORDS = frozenset({"if", "then", "elif", "else", "fi", "do", "done", "while", "until"})
_SKIPPED_WORDS |= {"!", "{", "}"}
_REFUSED_WORDS = frozenset({"case", "esac", "function", "select", "coproc"})
_SILENT_TARGETS = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr", "/dev/stdin"})
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\+?=")


@dataclass(frozen=True, slots=True)
class Redirect:
    """A redirection: ``op`` as written (``>``, ``2>>``, ``<<``) and its target (for a
    heredoc or here-string, the text fed to the program)."""

    op: str
    target: str

    @property
    def is_file(self) -> bool:
        """True when the target names a file (not a heredoc or here-string)."""
        return not self.op.lstrip("0123456789").startswith("<<")

    @property
    def writes(self) -> bool:
        """True when the program's output goes to the target file."""
        op = self.op.lstrip("0123456789")
        return op.startswith(">") or op.startswith("&>") or op == "<>"


@dataclass(frozen=True, slots=True)
class Invocation:
    """One program the command line would run: its argv (quotes removed, expansions left as
    written) and the redirections of its simple command."""

    argv: tuple[str, ...]
    redirects: tuple[Redirect, ...] = ()
    program: str = field(init=False, repr=False, compare=False)
    """The program's name without its directory (``/bin/rm`` is ``rm``)."""
    arg_set: frozenset[str] = field(init=False, repr=False, compare=False)
    """The arguments as a set (for matching)."""

    def __post_init__(self) -> None:
        program = self.argv[0].rsplit("/", 1)[-1] if self.argv else ""
        object.__setattr__(self, "program", program)
        object.__setattr__(self, "arg_set", frozenset(self.argv[1:]))

    @property
    def args(self) -> tuple[str, ...]:
        """The arguments after the program."""
        return self.argv[1:]

    def __str__(self) -> str:
        return shlex.join(self.argv)


def parse_command(command: str) -> tuple[Invocation, ...]:
    """Every program ``command`` would run, in the order they start (a substitution before
    the command using it, a wrapper before what it runs). Raises ``ShellSyntaxError``."""
    return tuple(_parse_text(command, 0))


def expand_argv(argv: Sequence[str]) -> tuple[Invocation, ...]:
    """The programs an argv (already split, no shell involved) would run, wrappers
    unwrapped. Raises ``ShellSyntaxError``."""
    if not argv:
        return ()
    words = [Word(text=a, quoted=True) for a in argv]
    return tuple(_command(words, [], 0, in_pipe=False))


def _parse_text(text: str, depth: int) -> list[Invocation]:
    if depth > MAX_DEPTH:
        raise ShellSyntaxError("commands are nested too deeply")
    if "\x00" in text:
        raise ShellSyntaxError("the command contains a NUL character")
    tokens = Lexer(text, depth).tokens(stop_at_paren=False)
    return _Parser(tokens, depth).parse()


class _Parser:
    """Turns tokens into invocations: simple commands, then wrappers unwrapped."""

    def __init__(self, tokens: list[Token], depth: int) -> None:
        self.tokens = tokens
        self.depth = depth
        self.out: list[Invocation] = []

    def substitutions(self, word: Word) -> list[Invocation]:
        """The commands run by the substitutions in ``word``."""
        return [i for tokens in word.subs for i in _Parser(tokens, self.depth + 1).parse()]

    def parse(self) -> list[Invocation]:
        words: list[Word] = []
        redirects: list[tuple[str, Word]] = []
        in_pipe = False
        i = 0
        tokens = self.tokens
        while i < len(tokens):
            token = tokens[i]
            i += 1
            if isinstance(token, Op):
                op = token.text
                if op in _SEPARATORS:
                    self.finish(words, redirects, in_pipe)
                    words, redirects = [], []
                    in_pipe = op in ("|", "|&")
                elif op == "(":
                    if words:
                        raise ShellSyntaxError("function definitions are not supported")
                    # a subshell: its commands are judged like any others
                elif op == ")":
                    self.finish(words, redirects, in_pipe)
                    words, redirects = [], []
                elif op.lstrip("0123456789") in _REDIRECTS:
                    if i >= len(tokens) or not isinstance(tokens[i], Word):
                        raise ShellSyntaxError(f"redirection '{op}' has no target")
                    target = tokens[i]
                    assert isinstance(target, Word)
                    redirects.append((op, target))
                    i += 1
                else:
                    raise ShellSyntaxError(f"'{op}' is not supported")
                continue
            if not words:
                if not token.quoted and token.text in _SKIPPED_WORDS:
                    continue
                if not token.quoted and token.text in _REFUSED_WORDS:
                    raise ShellSyntaxError(f"'{token.text}' is not supported")
                if not token.quoted and token.text == "for":
                    i = self.for_loop(i)
                    continue
                if _ASSIGNMENT.match(token.literal_prefix):
                    self.out += self.substitutions(token)
                    continue
                if not token.quoted and token.text == "[[":
                    i = self.conditional(i)
                    continue
            words.append(token)
        self.finish(words, redirects, in_pipe)
        return self.out

    def for_loop(self, i: int) -> int:
        """Skip ``for NAME [in WORDS]`` (collecting substitutions in the words)."""
        tokens = self.tokens
        if i >= len(tokens) or not isinstance(tokens[i], Word):
            raise ShellSyntaxError("'for' needs a variable name")
        i += 1
        while i < len(tokens) and isinstance(tokens[i], Word):
            word = tokens[i]
            assert isinstance(word, Word)
            if word.subs:
                self.out += self.substitutions(word)
            i += 1
        return i

    def conditional(self, i: int) -> int:
        """Skip ``[[ ... ]]`` (its ``&&``, ``<`` are not operators there)."""
        tokens = self.tokens
        while i < len(tokens):
            token = tokens[i]
            i += 1
            if isinstance(token, Word):
                self.out += self.substitutions(token)
                if token.text == "]]" and not token.quoted:
                    return i
        raise ShellSyntaxError("'[[' is never closed")

    def finish(self, words: list[Word], redirects: list[tuple[str, Word]], in_pipe: bool) -> None:
        kept: list[Redirect] = []
        for op, target in redirects:
            self.out += self.substitutions(target)
            bare = op.lstrip("0123456789")
            if bare in ("<&", ">&") and (target.text.isdigit() or target.text == "-"):
                continue  # a file descriptor duplicated or closed
            if target.text in _SILENT_TARGETS or target.text.startswith("/dev/fd/"):
                continue
            if bare in ("<<", "<<-", "<<<") and target.expanded:
                kept.append(Redirect(op, _EXPANDED))
                continue
            kept.append(Redirect(op, target.text))
        for word in words:
            if word.subs:
                self.out += self.substitutions(word)
        if not words:
            if kept:
                self.out.append(Invocation((), tuple(kept)))
            return
        program = words[0]
        if program.expanded:
            raise ShellSyntaxError(f"the program name '{program.text}' comes from an expansion")
        if program.pattern:
            raise ShellSyntaxError(f"the program name '{program.text}' is a pattern")
        self.out += _command(words, kept, self.depth, in_pipe=in_pipe)


def _command(
    words: list[Word], redirects: list[Redirect], depth: int, *, in_pipe: bool
) -> list[Invocation]:
    """The invocation of a simple command, and of whatever program it wraps."""
    if depth > MAX_DEPTH:
        raise ShellSyntaxError("commands are nested too deeply")
    argv = tuple(w.text for w in words)
    name = argv[0].rsplit("/", 1)[-1]
    unwrap = WRAPPERS.get(name)
    if unwrap is None:
        return [Invocation(argv, tuple(redirects))]
    step = unwrap(argv)
    if step.refuse is not None:
        raise ShellSyntaxError(step.refuse)
    out = [Invocation(argv if step.start is None else argv[: step.start], tuple(redirects))]
    if any(words[k].expanded for k in step.sources):
        raise ShellSyntaxError(f"the command string given to '{name}' contains an expansion")
    if step.script is not None:
        out += _parse_text(step.script, depth + 1)
    elif step.stdin:
        out += _stdin_script(name, redirects, depth, in_pipe=in_pipe)
    elif step.start is not None:
        inner = words[step.start :]
        if step.split is not None:
            try:
                pieces = shlex.split(step.split)
            except ValueError as exc:
                raise ShellSyntaxError(f"'{name} -S' string: {exc}") from None
            inner = [Word(text=p, quoted=True) for p in pieces] + inner
        out += _wrapped(name, inner, depth)
    for begin, end in step.extra:
        out += _wrapped(name, words[begin:end], depth)
    return out


def _wrapped(name: str, words: list[Word], depth: int) -> list[Invocation]:
    if not words:
        return []
    if words[0].expanded or words[0].pattern:
        raise ShellSyntaxError(f"'{name}' runs a program named by an expansion or a pattern")
    return _command(words, [], depth + 1, in_pipe=False)


def _stdin_script(
    name: str, redirects: list[Redirect], depth: int, *, in_pipe: bool
) -> list[Invocation]:
    """The commands of a script a shell reads from standard input: a heredoc or
    here-string is parsed, a file is not the command line's business, a pipe is refused."""
    feeds = [r for r in redirects if not r.is_file]
    if feeds and feeds[-1].target != _EXPANDED:
        return _parse_text(feeds[-1].target, depth + 1)
    if not feeds and any(r.op.lstrip("0") == "<" for r in redirects):
        return []
    where = "a pipe" if in_pipe else "standard input"
    raise ShellSyntaxError(f"'{name}' reads its commands from {where}")
