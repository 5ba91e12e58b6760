"""Shell words as the walker evaluates them: parts joined, split and brace-expanded.

A ``Part`` is a piece of a word as written (a literal, a quoted string, an expansion); a
``Word`` is the evaluated whole. What is only known at run time stays as written and is
marked unknown, with the literal text the word surely starts with (``prefix``) so a rule
can tell ``src/*.py`` (never an option) from ``*`` (could be ``-rf``).
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass

__all__ = ["Part", "Word", "brace_expand", "decode_ansi_c", "unescape"]

_GLOB = re.compile(r"[*?]|\[[^\]]+\]")
_MAX_BRACE_WORDS = 256
_ANSI_ESCAPES = {
    "a": "\a", "b": "\b", "e": "\x1b", "E": "\x1b", "f": "\f", "n": "\n", "r": "\r",
    "t": "\t", "v": "\v", "\\": "\\", "'": "'", '"': '"', "?": "?",
}  # fmt: skip
_CODE_POINT = re.compile(
    r"x([0-9a-fA-F]{1,2})|u([0-9a-fA-F]{1,4})|U([0-9a-fA-F]{1,8})|([0-7]{1,3})"
)


@dataclass(slots=True)
class Part:
    """A piece of a word: its text (as written when unknown), whether it is ``known``,
    ``quoted`` (no globbing, splitting or brace expansion), the text to use when the word
    is run as shell code (``code``; None when it holds output of commands), possible
    values (``choices``), ``lead`` (what an unknown value surely starts with), ``split``
    (an unquoted expansion: split on blanks), and ``procsub`` (``<( )``)."""

    text: str
    known: bool = True
    code: str | None = ""
    quoted: bool = False
    choices: tuple[str, ...] | None = None
    lead: str = ""
    split: bool = False
    procsub: bool = False

    def __post_init__(self) -> None:
        if self.known and self.code == "":
            self.code = self.text


@dataclass(slots=True)
class Word:
    """An evaluated word (see the module docstring)."""

    text: str
    known: bool = True
    prefix: str = ""
    code: str | None = None
    choices: tuple[str, ...] | None = None
    procsub: bool = False

    def __post_init__(self) -> None:
        if self.known:
            self.prefix = self.text
            if self.code is None:
                self.code = self.text

    def as_part(self, *, quoted: bool) -> Part:
        """This word (a variable's value) as a part of another word."""
        return Part(
            self.text,
            known=self.known,
            code=self.code,
            quoted=quoted,
            choices=self.choices,
            lead=self.prefix,
            split=not quoted,
        )

    def plus(self, other: Word) -> Word:
        """``a+=b``: this word with ``other`` appended."""
        return Word.join([self.as_part(quoted=True), other.as_part(quoted=True)])

    @staticmethod
    def join(parts: list[Part]) -> Word:
        """The parts as one word, with no splitting, globbing or brace expansion."""
        text = "".join(p.text for p in parts)
        codes = [p.code for p in parts]
        code = None if any(c is None for c in codes) else "".join(c or "" for c in codes)
        if all(p.known for p in parts):
            return Word(text, code=code)
        prefix = []
        for p in parts:
            if not p.known:
                prefix.append(p.lead)
                break
            prefix.append(p.text)
        choices = parts[0].choices if len(parts) == 1 else None
        procsub = any(p.procsub for p in parts)
        return Word(text, False, "".join(prefix), code, choices, procsub)

    @staticmethod
    def build(parts: list[Part]) -> list[Word]:
        """The words ``parts`` become after splitting, brace expansion and globbing."""
        if len(parts) == 1 and parts[0].split:
            part = parts[0]
            if part.known:
                return [_globbed([Part(piece)]) for piece in part.text.split()]
            if part.choices is not None and not any(" " in c for c in part.choices):
                return [Word.join([part])]
            return [Word(part.text, False, "", part.code, None, part.procsub)]
        if any(p.split and (not p.known or " " in p.text) for p in parts):
            word = Word.join(parts)
            return [Word(word.text, False, word.prefix, word.code, None, word.procsub)]
        if all(p.known for p in parts) and any(not p.quoted and "{" in p.text for p in parts):
            if not any(p.quoted and any(c in p.text for c in "{},") for p in parts):
                return [_globbed([Part(w)]) for w in brace_expand("".join(p.text for p in parts))]
            word = Word.join(parts)
            return [Word(word.text, False, "", word.code)]
        return [_globbed(parts)]


def _globbed(parts: list[Part]) -> Word:
    """The word, unknown from its first unquoted glob character on."""
    word = Word.join(parts)
    prefix: list[str] = []
    for p in parts:
        if not p.known:
            return word
        match = None if p.quoted else _GLOB.search(p.text)
        if match is not None:
            prefix.append(p.text[: match.start()])
            return Word(word.text, False, "".join(prefix), word.code)
        prefix.append(p.text)
    return word


def unescape(raw: str) -> list[Part]:
    """An unquoted word as parts: backslash-escaped characters become quoted parts, a
    line continuation disappears, a leading ``~`` is the home directory (unknown)."""
    out: list[Part] = []
    if raw.startswith("~"):
        end = raw.find("/")
        end = len(raw) if end < 0 else end
        out.append(Part(raw[:end], known=False, code=raw[:end], lead="/"))
        raw = raw[end:]
    if "\\" not in raw:
        if raw or not out:
            out.append(Part(raw))
        return out
    buf: list[str] = []
    i = 0
    while i < len(raw):
        c = raw[i]
        if c == "\\":
            if buf:
                out.append(Part("".join(buf)))
                buf = []
            if i + 1 < len(raw) and raw[i + 1] != "\n":
                out.append(Part(raw[i + 1], quoted=True))
            i += 2
            continue
        buf.append(c)
        i += 1
    if buf:
        out.append(Part("".join(buf)))
    return out


def decode_ansi_c(body: str) -> str:
    """The value of a ``$'...'`` string's body."""
    out: list[str] = []
    i = 0
    while i < len(body):
        c = body[i]
        if c != "\\" or i + 1 >= len(body):
            out.append(c)
            i += 1
            continue
        nxt = body[i + 1]
        if nxt in _ANSI_ESCAPES:
            out.append(_ANSI_ESCAPES[nxt])
            i += 2
            continue
        if nxt == "c" and i + 2 < len(body):
            out.append(chr(ord(body[i + 2]) & 0x1F))
            i += 3
            continue
        match = _CODE_POINT.match(body, i + 1)
        if match is None:
            out.append("\\" + nxt)
            i += 2
            continue
        hex2, hex4, hex8, octal = match.groups()
        value = int(octal, 8) if octal else int(hex2 or hex4 or hex8, 16)
        out.append(chr(value % 0x110000))
        i = match.end()
    return "".join(out)


def brace_expand(text: str) -> list[str]:
    """Bash brace expansion of ``text`` (``a{b,c}`` is ``ab ac``, ``{1..3}`` is
    ``1 2 3``); at most a few hundred words."""
    words = _expand(text)
    return words[:_MAX_BRACE_WORDS]


def _expand(text: str) -> list[str]:
    start = text.find("{")
    while start >= 0:
        depth, commas, i = 0, [], start
        while i < len(text):
            c = text[i]
            if c == "{":
                depth += 1
            elif c == "}":
                depth -= 1
                if depth == 0:
                    break
            elif c == "," and depth == 1:
                commas.append(i)
            i += 1
        if i >= len(text):
            return [text]
        head, body, tail = text[:start], text[start + 1 : i], text[i + 1 :]
        options: list[str] | None
        if commas:
            bounds = [start, *commas, i]
            options = [text[a + 1 : b] for a, b in itertools.pairwise(bounds)]
        else:
            options = _sequence(body)
        if options is None:
            start = text.find("{", start + 1)
            continue
        tails = _expand(tail)
        out: list[str] = []
        for option in options:
            for expanded in _expand(option):
                out += [head + expanded + t for t in tails]
                if len(out) > _MAX_BRACE_WORDS:
                    return out
        return out
    return [text]


def _sequence(body: str) -> list[str] | None:
    match = re.fullmatch(r"(-?\d+|[A-Za-z])\.\.(-?\d+|[A-Za-z])(?:\.\.(-?\d+))?", body)
    if match is None:
        return None
    a, b, step_text = match.groups()
    step = abs(int(step_text)) if step_text else 1
    step = step or 1
    if a.lstrip("-").isdigit() and b.lstrip("-").isdigit():
        lo, hi = int(a), int(b)
        values = range(lo, hi + 1, step) if lo <= hi else range(lo, hi - 1, -step)
        return [str(v) for v in list(values)[: _MAX_BRACE_WORDS + 1]]
    if a.isalpha() and b.isalpha():
        lo, hi = ord(a), ord(b)
        values = range(lo, hi + 1, step) if lo <= hi else range(lo, hi - 1, -step)
        return [chr(v) for v in values]
    return None
