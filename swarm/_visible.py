"""Text a model chose, made safe to show a person: nothing in it can act on the terminal,
hide, reorder or forge what is shown around it.

``visible`` is the one function every place that shows a run's text to a person goes
through: the live view and plain lines, the end summary, ``swarm audit show``, ``swarm
runs``/``sessions``, batch and test output, and the HTML report. JSON files keep the text
as it is (``json.dumps`` escapes what JSON needs); this is about what a person reads.

Each character below is replaced by a visible escape, ``\\n``, ``\\t``, ``\\r``, ``\\xNN``
(up to U+00FF), ``\\uNNNN`` or ``\\UNNNNNNNN``:

- C0 controls (U+0000-U+001F), DEL (U+007F) and C1 controls (U+0080-U+009F): ``ESC``
  sequences that move the cursor, clear the screen, retitle the terminal or write to the
  clipboard (OSC 52), the bell, backspace and carriage return that overwrite what was
  shown. In ``multiline`` text (a final answer, a diff, a tool's output shown as a block)
  the newline and the tab are kept; never anywhere else (a path, a name, a reason, one
  line of a table), so a name cannot start a line of its own.
- Line and paragraph separators (U+2028, U+2029), which some viewers break lines at.
- Every format character (Unicode category Cf) and every default-ignorable code point
  (the characters Unicode says render as nothing): the bidirectional embeddings,
  overrides, isolates and marks (U+202A-U+202E, U+2066-U+2069, U+200E, U+200F, U+061C)
  that show text in another order than it is, zero-width spaces and joiners
  (U+200B-U+200D, U+2060, U+FEFF), the soft hyphen, invisible operators, Hangul fillers,
  the tag characters (U+E0000-U+E007F, which can carry a hidden message) and the
  variation selectors, except U+FE0E/U+FE0F (text or emoji presentation) in
  ``multiline`` text, where emoji use them.
- Lone surrogates (U+D800-U+DFFF, e.g. a file name's undecodable bytes): shown, not
  left to fail when printed.

What it does not do: escape the backslash itself, so a name that holds the four
characters ``\\x1b`` reads the same as one that holds the escape character (the JSON
records tell them apart); find look-alike letters from other scripts (Cyrillic ``\\u0430``
for Latin ``a``) or other spaces (U+00A0); cut long text (its callers do); or quote rich
markup (``[red]``), which callers avoid by handing rich a ``Text``, never a markup
string.
"""

from __future__ import annotations

import re

__all__ = ["visible"]

_ALWAYS = (
    "\x00-\x08\x0b-\x1f\x7f-\x9f"  # C0 but tab and newline, DEL, C1
    "\u00ad\u034f\u061c\u0600-\u0605\u06dd\u070f\u0890\u0891\u08e2"
    "\u115f\u1160\u17b4\u17b5\u180b-\u180f"
    "\u200b-\u200f\u2028-\u202e\u2060-\u206f\u3164"
    "\ud800-\udfff"  # lone surrogates
    "\ufe00-\ufe0d\ufeff\uffa0\ufff0-\ufffb"
    "\U000110bd\U000110cd\U00013430-\U0001343f\U0001bca0-\U0001bca3"
    "\U0001d173-\U0001d17a\U000e0000-\U000e0fff"
)
_ONE_LINE = re.compile(f"[{_ALWAYS}\t\n\ufe0e\ufe0f]")
_MULTILINE = re.compile(f"[{_ALWAYS}]")
_NAMED = {"\n": "\\n", "\t": "\\t", "\r": "\\r"}


def _escape(found: re.Match[str]) -> str:
    char = found.group()
    named = _NAMED.get(char)
    if named is not None:
        return named
    code = ord(char)
    if code <= 0xFF:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"


def visible(text: str, *, multiline: bool = False) -> str:
    """``text`` with every character that could act on a terminal, hide text or reorder
    it written as a visible escape (``\\x1b``, ``\\n``, ``\\u202e``): see the module's
    docstring for the exact set. ``multiline`` keeps newlines and tabs (and the emoji
    presentation selectors), for text shown as a block of its own; a name, a path or any
    field shown on one line must not set it. Never raises; a string without such
    characters comes back as it is."""
    if text.isascii() and text.isprintable():  # most names and lines: nothing to look for
        return text
    pattern = _MULTILINE if multiline else _ONE_LINE
    return pattern.sub(_escape, text)
