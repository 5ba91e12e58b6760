"""The scanner under ``swarm.guards.shellparse``: a shell command line as words and operators.

Quote-aware, so ``'$(rm x)'`` stays literal while ``"$(rm x)"`` becomes a word holding the
tokens of its substitution; it decodes ``$'...'``, reads heredoc bodies, and marks words
whose value is only known at run time (``expanded``) or that are unquoted patterns.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

__all__ = ["MAX_DEPTH", "Lexer", "Op", "ShellSyntaxError", "Token", "Word"]

MAX_DEPTH = 16
_OPERATORS = (  # longest first, so the scanner takes the longest match
    "&>>", "<<<", "<<-", ";;", ";&", "&&", "||", "|&", ">>", "<<", "<>", "<&", ">&", ">|",
    "&>", ";", "&", "|", "(", ")", "<", ">",
)  # fmt: skip
_OPERATOR = re.compile("|".join(re.escape(o) for o in _OPERATORS))
_PLAIN = re.compile(r"[^ \t\n;&|()<>\\'\"$`]+")  # a run of characters with no special meaning
# The common tokens in one match: a word with no quotes, expansions or redirections ending
# at a blank or a separator, or a separator that cannot start a longer operator.
_FAST = re.compile(
    r"[ \t]*(?:(?P<op>&&|\|\||\|&|;(?![;&])|\|(?![|&])|&(?![&>]))"
    r"|(?P<word>[^ \t\n;&|()<>\\'\"$`#][^ \t\n;&|()<>\\'\"$`]*)(?=[ \t\n;&|()]|\Z))"
)
_WORD_END = frozenset(" \t\n;&|()<>")
_BLANKS = re.compile(r"[ \t]+")
_GLOB = re.compile(r"[*?\[]")
_BRACE = re.compile(r"\{[^{}]*(,|\.\.)[^{}]*\}")
_SPECIAL_PARAMETER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|[0-9@*#?$!-]")
_ANSI_ESCAPES = {
    "a": "\a", "b": "\b", "e": "\x1b", "E": "\x1b", "f": "\f", "n": "\n", "r": "\r",
    "t": "\t", "v": "\v", "\\": "\\", "'": "'", '"': '"', "?": "?",
}  # fmt: skip
_CODE_POINTS = {
    "x": (re.compile(r"[0-9a-fA-F]{1,2}"), 16),
    "u": (re.compile(r"[0-9a-fA-F]{1,4}"), 16),
    "U": (re.compile(r"[0-9a-fA-F]{1,8}"), 16),
    **dict.fromkeys("01234567", (re.compile(r"[0-7]{1,3}"), 8)),
}


class ShellSyntaxError(ValueError):
    """The command line cannot be judged (bad syntax or a construct the parser refuses)."""


@dataclass(slots=True)
class Word:
    """A word after quote removal, expansions kept as written: ``expanded`` when part of
    it is only known at run time, ``pattern`` when it holds unquoted glob or brace
    characters, ``subs`` the tokens of the command substitutions in it."""

    text: str = ""
    expanded: bool = False
    pattern: bool = False
    quoted: bool = False
    literal_prefix: str = ""  # the leading unquoted, unexpanded text (for assignments)
    subs: list[list[Token]] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class Op:
    text: str


Token = Word | Op


class Lexer:
    """Turns a command line into words and operators (see the module docstring)."""

    def __init__(self, text: str, depth: int, pos: int = 0) -> None:
        self.text = text
        self.depth = depth
        self.pos = pos
        self.heredocs: list[tuple[Word, str, bool, bool]] = []

    def fail(self, message: str) -> ShellSyntaxError:
        return ShellSyntaxError(f"{message} (at character {self.pos})")

    def tokens(self, *, stop_at_paren: bool) -> list[Token]:
        """Tokens up to the end, or (``stop_at_paren``) past the ``)`` closing ``$(``."""
        text, out, parens = self.text, list[Token](), 0
        while self.pos < len(text):
            fast = _FAST.match(text, self.pos)
            if fast is not None:  # a plain word or a simple separator
                self.pos = fast.end()
                run = fast.group("word")
                if run is None:
                    out.append(Op(fast.group("op")))
                else:
                    pattern = _GLOB.search(run) is not None or (
                        "{" in run and _BRACE.search(run) is not None
                    )
                    out.append(Word(text=run, pattern=pattern, literal_prefix=run))
                continue
            c = text[self.pos]
            if c in " \t":
                self.pos = _BLANKS.match(text, self.pos).end()  # type: ignore[union-attr]
            elif c == "\\" and text.startswith("\\\n", self.pos):
                self.pos += 2
            elif c == "\n":
                self.pos += 1
                out.append(Op("\n"))
                self.read_heredocs()
            elif c == "#":  # only ever at the start of a token: a comment
                end = text.find("\n", self.pos)
                self.pos = len(text) if end < 0 else end
            elif c in "<>" and text.startswith("(", self.pos + 1):
                self.pos += 2
                word = Word(text="<(...)", expanded=True)
                word.subs.append(self.substitution())
                out.append(word)
            elif c in ";&|()<>":
                op = _OPERATOR.match(text, self.pos).group()  # type: ignore[union-attr]
                self.pos += len(op)
                if op == ")" and stop_at_paren and parens == 0:
                    if self.heredocs:
                        raise self.fail("a heredoc inside $( ) must end before the ')'")
                    return out
                parens += {"(": 1, ")": -1}.get(op, 0)
                out.append(Op(op))
                if op in ("<<", "<<-"):
                    out.append(self.heredoc(strip_tabs=op == "<<-"))
            else:
                word = self.word()
                at_redirect = self.pos < len(text) and text[self.pos] in "<>"
                if at_redirect and word.text.isdigit() and not word.quoted:
                    op = _OPERATOR.match(text, self.pos).group()  # type: ignore[union-attr]
                    self.pos += len(op)
                    out.append(Op(word.text + op))
                    if op in ("<<", "<<-"):
                        out.append(self.heredoc(strip_tabs=op == "<<-"))
                else:
                    out.append(word)
        if stop_at_paren:
            raise self.fail("'$(' is never closed")
        if self.heredocs:
            raise self.fail(f"heredoc ends without its delimiter '{self.heredocs[0][1]}'")
        return out

    def word(self) -> Word:
        text = self.text
        plain = _PLAIN.match(text, self.pos)
        if plain is not None and (plain.end() == len(text) or text[plain.end()] in _WORD_END):
            run = plain.group()  # the common case: the whole word is one plain run
            self.pos = plain.end()
            pattern = _GLOB.search(run) is not None or ("{" in run and bool(_BRACE.search(run)))
            return Word(text=run, pattern=pattern, literal_prefix=run)
        word, parts, shape = Word(), list[str](), list[str]()
        prefix_open = True
        while self.pos < len(text):
            c = text[self.pos]
            if c in " \t\n;&|()<>":
                break
            start = len(parts)
            if c == "\\":
                if self.pos + 1 >= len(text):
                    raise self.fail("the command ends with a backslash")
                if text[self.pos + 1] != "\n":
                    parts.append(text[self.pos + 1])
                    word.quoted = True
                self.pos += 2
            elif c == "'":
                end = text.find("'", self.pos + 1)
                if end < 0:
                    raise self.fail("unterminated single quote")
                parts.append(text[self.pos + 1 : end])
                word.quoted = True
                self.pos = end + 1
            elif c == '"':
                self.pos += 1
                parts.append(self.quoted(word, terminator='"'))
                word.quoted = True
            elif c == "$" and text.startswith("$'", self.pos):
                parts.append(self.ansi_c())
                word.quoted = True
            elif c == "$" and text.startswith('$"', self.pos):
                self.pos += 2
                parts.append(self.quoted(word, terminator='"'))
                word.quoted = True
            elif c in "$`":
                parts.append(self.expansion(word))
            else:
                run = _PLAIN.match(text, self.pos).group()  # type: ignore[union-attr]
                parts.append(run)
                shape.append(run)
                self.pos += len(run)
                word.pattern = word.pattern or _GLOB.search(run) is not None
                if prefix_open:
                    word.literal_prefix += run
                continue
            prefix_open = False
            shape.append("\x00" * (len(parts) - start))
        word.text = "".join(parts)
        if not word.pattern and "{" in word.text and _BRACE.search("".join(shape)):
            word.pattern = True
        return word

    def quoted(self, word: Word, *, terminator: str | None) -> str:
        """Double-quoted text (or a heredoc body when ``terminator`` is None)."""
        text, parts = self.text, list[str]()
        while self.pos < len(text):
            c = text[self.pos]
            if terminator is not None and c == terminator:
                self.pos += 1
                return "".join(parts)
            if c == "\\" and self.pos + 1 < len(text):
                nxt = text[self.pos + 1]
                if nxt in '$`"\\\n':
                    if nxt != "\n":
                        parts.append(nxt)
                else:
                    parts.append(c + nxt)
                self.pos += 2
            elif c in "$`":
                parts.append(self.expansion(word))
            else:
                parts.append(c)
                self.pos += 1
        if terminator is not None:
            raise self.fail("unterminated double quote")
        return "".join(parts)

    def expansion(self, word: Word) -> str:
        """``$name``, ``${..}``, ``$(..)``, ``$((..))`` or a backtick substitution, kept as
        written; the tokens of substitutions go to ``word.subs``."""
        text, start = self.text, self.pos
        if text[start] == "`":
            word.expanded = True
            word.subs.append(self.backticks())
            return text[start : self.pos]
        if text.startswith("$((", start):
            end = self.balanced(start + 1, "(", ")")
            body = text[start + 3 : end - 2]
            if "$(" in body or "`" in body:
                raise self.fail("command substitution inside arithmetic expansion")
            self.pos = end
            word.expanded = True
            return text[start:end]
        if text.startswith("$(", start):
            self.pos += 2
            word.expanded = True
            word.subs.append(self.substitution())
            return text[start : self.pos]
        if text.startswith("${", start):
            self.pos += 2
            word.expanded = True
            self.parameter(word)
            return text[start : self.pos]
        found = _SPECIAL_PARAMETER.match(text, start + 1)
        if found is None:
            self.pos += 1
            return "$"
        word.expanded = True
        self.pos = found.end()
        return text[start : self.pos]

    def substitution(self) -> list[Token]:
        """The tokens of ``$( ... )`` (or ``<( ... )``), the scanner just past its ``(``."""
        if self.depth >= MAX_DEPTH:
            raise self.fail("commands are nested too deeply")
        inner = Lexer(self.text, self.depth + 1, self.pos)
        tokens = inner.tokens(stop_at_paren=True)
        self.pos = inner.pos
        return tokens

    def backticks(self) -> list[Token]:
        text, parts = self.text, list[str]()
        self.pos += 1
        while self.pos < len(text):
            c = text[self.pos]
            if c == "`":
                self.pos += 1
                if self.depth >= MAX_DEPTH:
                    raise self.fail("commands are nested too deeply")
                return Lexer("".join(parts), self.depth + 1).tokens(stop_at_paren=False)
            if c == "\\" and self.pos + 1 < len(text) and text[self.pos + 1] in "`$\\":
                parts.append(text[self.pos + 1])
                self.pos += 2
            else:
                parts.append(c)
                self.pos += 1
        raise self.fail("unterminated backtick substitution")

    def parameter(self, word: Word) -> None:
        """Skip the body of ``${ ... }``, collecting substitutions inside it."""
        text, depth = self.text, 0
        while self.pos < len(text):
            c = text[self.pos]
            if c == "}" and depth == 0:
                self.pos += 1
                return
            if c == "\\":
                self.pos += 2
            elif c == "'":
                end = text.find("'", self.pos + 1)
                if end < 0:
                    raise self.fail("unterminated single quote")
                self.pos = end + 1
            elif c == '"':
                self.pos += 1
                self.quoted(word, terminator='"')
            elif c in "$`":
                if text.startswith("${", self.pos):
                    depth += 1
                    self.pos += 2
                else:
                    self.expansion(word)
            else:
                depth -= c == "}"
                self.pos += 1
        raise self.fail("'${' is never closed")

    def balanced(self, start: int, opening: str, closing: str) -> int:
        depth, pos = 0, start
        while pos < len(self.text):
            depth += {opening: 1, closing: -1}.get(self.text[pos], 0)
            pos += 1
            if depth == 0:
                return pos
        raise self.fail(f"'{opening}' is never closed")

    def ansi_c(self) -> str:
        """Decode ``$'...'`` (so ``$'\\x72m'`` is ``rm``)."""
        text, parts = self.text, list[str]()
        self.pos += 2
        while self.pos < len(text):
            c = text[self.pos]
            if c == "'":
                self.pos += 1
                return "".join(parts)
            if c != "\\" or self.pos + 1 >= len(text):
                parts.append(c)
                self.pos += 1
                continue
            nxt = text[self.pos + 1]
            self.pos += 2
            if nxt in _ANSI_ESCAPES:
                parts.append(_ANSI_ESCAPES[nxt])
            elif nxt in _CODE_POINTS:
                pattern, base = _CODE_POINTS[nxt]
                start = self.pos - 1 if base == 8 else self.pos
                digits = pattern.match(text, start)
                if digits is None:
                    parts.append("\\" + nxt)
                    continue
                parts.append(chr(int(digits.group(), base) % 0x110000))
                self.pos = digits.end()
            elif nxt == "c" and self.pos < len(text):
                parts.append(chr(ord(text[self.pos]) & 0x1F))
                self.pos += 1
            else:
                parts.append("\\" + nxt)
        raise self.fail("unterminated $'...' string")

    def heredoc(self, *, strip_tabs: bool) -> Word:
        """The word standing for a heredoc's body, read at the next newline."""
        while self.pos < len(self.text) and self.text[self.pos] in " \t":
            self.pos += 1
        delimiter = self.word()
        if not delimiter.text or delimiter.expanded:
            raise self.fail("a heredoc needs a literal delimiter")
        body = Word()
        self.heredocs.append((body, delimiter.text, delimiter.quoted, strip_tabs))
        return body

    def read_heredocs(self) -> None:
        text = self.text
        for body, delimiter, literal, strip_tabs in self.heredocs:
            lines: list[str] = []
            while True:
                if self.pos >= len(text):
                    raise self.fail(f"heredoc ends without its delimiter '{delimiter}'")
                end = text.find("\n", self.pos)
                end = len(text) if end < 0 else end
                line = text[self.pos : end]
                self.pos = end + 1
                if strip_tabs:
                    line = line.lstrip("\t")
                if line == delimiter:
                    break
                lines.append(line)
            content = "\n".join(lines) + ("\n" if lines else "")
            if literal:
                body.text = content
            else:
                scanner = Lexer(content, self.depth + 1)
                body.text = scanner.quoted(body, terminator=None)
        self.heredocs.clear()
