"""``visible``: what a model wrote, shown to a person, can neither act on the terminal nor
hide, reorder or forge text; ordinary text is left as it is."""

from __future__ import annotations

import sys
import unicodedata

import pytest

from swarm._visible import visible

ALWAYS_ESCAPED = ("Cc", "Cf", "Cs", "Zl", "Zp")


@pytest.mark.parametrize(
    ("raw", "shown"),
    [
        ("\x1b]0;pwned\x07", "\\x1b]0;pwned\\x07"),  # retitles the terminal
        ("\x1b[2J", "\\x1b[2J"),  # clears it
        ("\x1b]52;c;cHduZWQ=\x07", "\\x1b]52;c;cHduZWQ=\\x07"),  # writes the clipboard
        ("\x9b2J", "\\x9b2J"),  # the one-byte CSI of C1
        ("ok\rforged", "ok\\rforged"),  # a carriage return overwrites the line
        ("a\x08b\x7f", "a\\x08b\\x7f"),
        ("invoice\u202etxt.exe", "invoice\\u202etxt.exe"),  # right-to-left override
        ("\u2066x\u2069\u200e\u200f\u061c", "\\u2066x\\u2069\\u200e\\u200f\\u061c"),
        ("pay\u200bpal\ufeff", "pay\\u200bpal\\ufeff"),  # zero-width space, BOM
        ("tag\U000e0041\U000e007f", "tag\\U000e0041\\U000e007f"),  # hidden tag text
        ("a\u2028b\u2029c", "a\\u2028b\\u2029c"),  # separators some viewers break at
        ("x\u3164y\u00ad", "x\\u3164y\\xad"),  # Hangul filler, soft hyphen
        ("name\udcff", "name\\udcff"),  # a file name's undecodable byte
    ],
)
def test_each_kind_of_hiding_character_is_shown_as_an_escape(raw: str, shown: str) -> None:
    assert visible(raw) == shown
    assert visible(raw, multiline=True) == shown


def test_a_one_line_field_never_keeps_a_newline_or_a_tab() -> None:
    forged = "notes.txt\nStop reason: end_turn.  Tool calls: 0 allowed, 0 denied.\tx"
    shown = visible(forged)
    assert "\n" not in shown and "\t" not in shown
    assert shown == "notes.txt\\nStop reason: end_turn.  Tool calls: 0 allowed, 0 denied.\\tx"


def test_a_block_keeps_its_lines_and_tabs_but_nothing_else() -> None:
    assert visible("def f():\n\treturn 1\n", multiline=True) == "def f():\n\treturn 1\n"
    assert visible("line\r\nnext\x1b[2J", multiline=True) == "line\\r\nnext\\x1b[2J"


def test_ordinary_text_comes_back_as_it_is() -> None:
    text = "Grüße, 日本語, עברית, café, e\u0301, [red]x[/red] 👍"
    assert visible(text) == text
    assert visible("❤\ufe0f", multiline=True) == "❤\ufe0f"  # an emoji's presentation
    assert visible("a\ufe0f") == "a\\ufe0f"  # but in a name it could hide a difference


def test_rich_markup_is_not_its_business() -> None:
    assert visible("[link=file:///etc]y[/link]") == "[link=file:///etc]y[/link]"


@pytest.mark.parametrize("multiline", [False, True])
def test_no_control_format_separator_or_surrogate_survives(multiline: bool) -> None:
    """Whatever this Python's Unicode tables call a control, a format character, a
    separator of lines or paragraphs, or a surrogate comes out escaped."""
    kept = {"\n", "\t"} if multiline else set()
    survivors = [
        hex(code)
        for code in range(sys.maxunicode + 1)
        if unicodedata.category(chr(code)) in ALWAYS_ESCAPED
        and chr(code) not in kept
        and visible(chr(code), multiline=multiline) == chr(code)
    ]
    assert survivors == []


def test_what_it_shows_is_printable_and_showing_it_again_changes_nothing() -> None:
    raw = "".join(chr(c) for c in (*range(0x00, 0xA0), 0x202E, 0x2066, 0xE0041, 0xD800))
    shown = visible(raw)
    assert all(char.isprintable() for char in shown)
    assert visible(shown) == shown
