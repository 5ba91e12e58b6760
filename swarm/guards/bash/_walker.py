"""The tree-sitter-bash syntax tree of a command line, walked into ``Invocation``s.

The walk evaluates words the way bash would when it can: quotes removed, ``$'..'``
decoded, brace expansion, variables assigned earlier on the same line, ``$(which X)``; a
word it cannot know is kept as written and marked unknown (with the literal text it
surely starts with). It follows ``cd`` so relative write targets are joined to the right
directory, and unwraps programs that run other programs (``_wrappers.py``).
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass, field

import tree_sitter_bash
from tree_sitter import Language, Node, Parser

from swarm.guards.bash._code import DANGEROUS_ENV, git_env_runs_code
from swarm.guards.bash._invocation import Invocation, Redirect, ShellSyntaxError, UnknownWord
from swarm.guards.bash._programs import SILENT_TARGETS, Programs, which
from swarm.guards.bash._words import Part, Word, decode_ansi_c, unescape

__all__ = ["parse", "invoke_argv"]

_LANGUAGE = Language(tree_sitter_bash.language())
_LOCAL = threading.local()
_HEREDOC_FOLLOWERS = frozenset(("pipeline", "list", "command", "redirected_statement"))
_BLOCKS = frozenset((
    "program", "list", "compound_statement", "subshell", "do_group", "if_statement",
    "elif_clause", "else_clause", "while_statement", "negated_command", "function_definition",
))  # fmt: skip
_EXPRESSIONS = frozenset((
    "binary_expression", "unary_expression", "postfix_expression", "parenthesized_expression",
    "ternary_expression", "word", "number", "string", "raw_string", "simple_expansion",
    "expansion", "variable_name", "arithmetic_expansion", "concatenation", "subscript",
    "test_operator", "regex", "extglob_pattern", "command_substitution", "process_substitution",
    "ansi_c_string", "translated_string", "brace_expression",
))  # fmt: skip
_SPECIAL = re.compile(r"[\\*?\[{~]")  # a word with none of these is its own value


def _parser() -> Parser:
    parser: Parser | None = getattr(_LOCAL, "parser", None)
    if parser is None:
        parser = _LOCAL.parser = Parser(_LANGUAGE)
    return parser


def parse(text: str, depth: int = 0) -> list[Invocation]:
    """Every program ``text`` would run. Raises ``ShellSyntaxError``."""
    return _Walker(depth).script(text)


def invoke_argv(argv: list[str]) -> list[Invocation]:
    """The invocations of an argv run without a shell (wrappers unwrapped)."""
    return _Walker(0).invoke([Word(a, code=a) for a in argv], [], [], in_pipe=False)


def _terminated(source: bytes) -> bytes:
    """``source`` ending with a newline, when adding one changes nothing bash would do.

    tree-sitter-bash takes ten times longer on a pipeline of three or more commands
    that ends the input (``a | b | c``: ~65 µs, ``a | b | c`` and a newline: ~5 µs); a
    model's commands mostly end so. A final newline only ends the last line, except
    after a backslash, where it would continue the line (``echo a\\`` prints ``a\\``;
    with a newline it prints ``a``): then the text is parsed as it is. Nodes keep their
    byte offsets, which all lie within ``source``.
    """
    if source.endswith((b"\n", b"\\")):
        return source
    return source + b"\n"


def _first_error(node: Node) -> Node:
    for child in node.children:
        if child.type == "ERROR" or child.is_missing:
            return child
        if child.has_error:
            return _first_error(child)
    return node


@dataclass(slots=True)
class _Redirects:
    """The redirections of one command: as ``Redirect``s, the words fed to its standard
    input (heredocs, here-strings), and words the grammar put among them that are really
    arguments (``echo a > f b``)."""

    kept: list[Redirect]
    feeds: list[Word]
    args: list[Word]
    after: list[Node] = field(default_factory=list)
    """Commands the grammar hangs on a heredoc (``cat <<EOF | sh``): they come after."""


class _Walker(Programs):
    """Reads the syntax tree of one script (see the module docstring)."""

    # -- statements -------------------------------------------------------------------

    def script(self, text: str) -> list[Invocation]:
        if "\x00" in text:
            raise ShellSyntaxError("the command contains a NUL character")
        self.source = text.encode()
        root = _parser().parse(_terminated(self.source)).root_node
        if root.has_error:
            # said of the text as given (the newline added could move where it points)
            bad = _first_error(_parser().parse(self.source).root_node)
            near = bad.text.decode(errors="replace")[:40] if bad.text else ""
            where = f" near '{near}'" if near.strip() else ""
            raise ShellSyntaxError(
                f"the command is not valid shell or uses syntax this parser does not "
                f"support{where} (column {bad.start_point[1] + 1})"
            )
        self.statement(root)
        return self.out

    def child_script(self, text: str) -> list[Invocation]:
        return _Walker(self.depth + 1, self.cwd).script(text)

    def statement(self, node: Node, in_pipe: bool = False) -> None:
        kind = node.type
        if kind == "command":
            self.command(node, _Redirects([], [], []), in_pipe)
        elif kind == "redirected_statement":
            self.redirected(node, in_pipe)
        elif kind == "compound_statement" and node.children and node.children[0].type == "((":
            self.arithmetic(node)
            for child in node.named_children:
                self.statement(child)
        elif kind in _BLOCKS:
            for child in node.named_children:
                if child.type == "word" and kind == "function_definition":
                    continue  # the function's name
                self.statement(child)
        elif kind == "pipeline":
            for i, child in enumerate(node.named_children):
                self.statement(child, in_pipe=i > 0)
        elif kind == "variable_assignment":
            self.assign(node)
        elif kind == "variable_assignments":
            for child in node.named_children:
                self.assign(child)
        elif kind in ("declaration_command", "unset_command"):
            self.declaration(node)
        elif kind == "for_statement":
            self.for_loop(node)
        elif kind == "case_statement":
            for child in node.named_children:
                if child.type == "case_item":
                    for part in child.named_children:
                        self.statement(part)
                else:
                    self.words(child)
        elif kind in ("c_style_for_statement", "test_command"):
            if kind == "c_style_for_statement":
                self.arithmetic(node)
            for child in node.named_children:
                self.statement(child)
        elif kind in _EXPRESSIONS:
            self.words(node)
        elif kind in ("comment", "heredoc_body"):
            pass
        else:
            raise ShellSyntaxError(f"'{kind.replace('_', ' ')}' is not supported")

    def redirected(self, node: Node, in_pipe: bool) -> None:
        body = node.child_by_field_name("body")
        if body is not None and body.type in ("list", "pipeline"):
            # tree-sitter-bash hangs `a && b > F` on the list; bash gives it to `b`
            children = body.named_children
            for i, child in enumerate(children[:-1]):
                self.statement(child, in_pipe=body.type == "pipeline" and i > 0)
            last = children[-1]
            piped = body.type == "pipeline" and len(children) > 1
            self.with_redirects(last, [c for c in node.named_children if c != body], piped)
            return
        self.with_redirects(body, [c for c in node.named_children if c != body], in_pipe)

    def with_redirects(self, body: Node | None, nodes: list[Node], in_pipe: bool) -> None:
        if body is not None and body.type in ("list", "pipeline", "redirected_statement"):
            if body.type == "redirected_statement":
                inner = body.child_by_field_name("body")
                nodes = [c for c in body.named_children if c != inner] + nodes
                body = inner
            if body is not None and body.type in ("list", "pipeline"):
                children = body.named_children
                for i, child in enumerate(children[:-1]):
                    self.statement(child, in_pipe=body.type == "pipeline" and i > 0)
                piped = body.type == "pipeline" and len(children) > 1
                self.with_redirects(children[-1], nodes, piped or in_pipe)
                return
        redirects = _Redirects([], [], [])
        if body is not None and body.type != "command":
            self.statement(body, in_pipe)
            body = None
        for child in nodes:
            self.redirect(child, redirects)
        if body is not None and body.type == "command":
            self.command(body, redirects, in_pipe)
            return
        if body is not None:
            self.statement(body, in_pipe)
        if redirects.kept:
            self.redirects_only(redirects.kept)
        self.followers(redirects)

    def assign(self, node: Node) -> None:
        name_node = node.child_by_field_name("name")
        value_node = node.child_by_field_name("value")
        name = _text(name_node) if name_node is not None else ""
        if name_node is not None and name_node.type != "variable_name":
            self.nested(name_node)  # a[$(cmd)]=1 runs cmd
        if value_node is None:
            value = Word("", code="")
        elif value_node.type == "array":
            for child in value_node.named_children:
                self.words(child)
            value = Word(_text(value_node), known=False)
        else:
            value = self.joined(value_node)
        if name_node is not None and name_node.type == "variable_name":
            appended = b"+=" in (node.text or b"")
            if appended:
                old = self.env.get(name)
                value = Word(_text(node), known=False) if old is None else old.plus(value)
            self.env[name] = value

    def declaration(self, node: Node) -> None:
        argv: list[Word] = [Word(_text(node.children[0]), code=_text(node.children[0]))]
        for child in node.named_children:
            if child.type == "variable_assignment":
                self.assign(child)
                argv.append(Word(_text(child), known=False))
            elif child.type == "variable_name":
                name = _text(child)
                if argv[0].text == "unset":
                    self.env[name] = Word("", code="")
                argv.append(Word(name, code=name))
            else:
                argv += self.words(child)
        self.emit(Invocation(tuple(w.text for w in argv)))

    def for_loop(self, node: Node) -> None:
        variable = node.child_by_field_name("variable")
        values: list[Word] = []
        for child in node.children_by_field_name("value"):
            values += self.words(child)
        if variable is not None:
            name = _text(variable)
            if node.child_by_field_name("value") is None:
                self.env[name] = Word(f"${name}", known=False, code=f"${name}")
            elif len(values) == 1:
                self.env[name] = values[0]
            elif values and all(v.known for v in values):
                choices = tuple(v.text for v in values)
                self.env[name] = Word(f"${name}", known=False, choices=choices, code=f"${name}")
            else:
                self.env[name] = Word(f"${name}", known=False)
        body = node.child_by_field_name("body")
        if body is not None:
            self.statement(body)

    # -- words --------------------------------------------------------------------------

    def words(self, node: Node) -> list[Word]:
        """The words ``node`` becomes (brace expansion and splitting may make several)."""
        kind = node.type
        if kind == "word" or kind == "raw_string":
            raw = _text(node)
            if kind == "raw_string":
                raw = raw[1:-1]
                return [Word(raw, True, raw, raw)]
            if not _SPECIAL.search(raw):
                return [Word(raw, True, raw, raw)]
        return Word.build(self.parts(node, quoted=False))

    def joined(self, node: Node) -> Word:
        """``node`` as one word (an assignment's value: no splitting, no globbing)."""
        return Word.join(self.parts(node, quoted=True))

    def parts(self, node: Node, *, quoted: bool) -> list[Part]:
        kind = node.type
        if kind == "word" or kind == "number" or kind == "variable_name":
            raw = _text(node)
            return [Part(raw)] if quoted else unescape(raw)
        if kind == "raw_string":
            return [Part(_text(node)[1:-1], quoted=True)]
        if kind == "ansi_c_string":
            return [Part(decode_ansi_c(_text(node)[2:-1]), quoted=True)]
        if kind in ("string", "translated_string"):
            out: list[Part] = []
            for child in node.named_children:
                if child.type == "string_content":
                    text = re.sub(r"\\([$`\"\\])|\\\n", r"\1", _text(child))
                    out.append(Part(text, quoted=True))
                else:
                    out += self.parts(child, quoted=True)
            if not out:
                out.append(Part("", quoted=True))
            return out
        if kind == "concatenation":
            return [p for child in node.children for p in self.parts(child, quoted=quoted)]
        if kind == "simple_expansion" or kind == "expansion":
            return [self.expansion(node, quoted=quoted)]
        if kind == "command_substitution":
            return [self.substitution(node)]
        if kind == "process_substitution":
            for statement in node.named_children:
                self.statement(statement)
            return [Part(_text(node), known=False, code=None, procsub=True)]
        if kind == "arithmetic_expansion":
            self.arithmetic(node)
            has_sub = self.nested(node)
            text = _text(node)
            return [Part(text, known=False, code=None if has_sub else text, quoted=quoted)]
        if kind == "brace_expression":
            return [Part(_text(node))]
        if not node.is_named:
            return [Part(_text(node))] if quoted else unescape(_text(node))
        self.nested(node)
        return [Part(_text(node), known=False, code=None, quoted=quoted)]

    def expansion(self, node: Node, *, quoted: bool) -> Part:
        text = _text(node)
        names = [
            c for c in node.named_children if c.type in ("variable_name", "special_variable_name")
        ]
        simple = len(node.named_children) == 1 and len(names) == 1
        if simple and names[0].type == "variable_name":
            value = self.env.get(_text(names[0]))
            if value is not None:
                return value.as_part(quoted=quoted)
        if "@P" in text:  # prompt expansion runs the substitutions in the value
            self.emit(Invocation((text,), unknown=(UnknownWord(0),), runs_code="unknown-code"))
        has_sub = self.nested(node)
        tainted = any(_text(n) in self.env and self.env[_text(n)].code is None for n in names)
        code = None if has_sub or tainted else text
        return Part(text, known=False, code=code, quoted=quoted)

    def arithmetic(self, node: Node) -> None:
        """Variables evaluated as arithmetic: bash evaluates their values as expressions,
        so ``x='a[$(cmd)]'; echo $((x))`` runs cmd."""
        for child in node.named_children:
            if child.type in ("variable_name", "word"):
                value = self.env.get(_text(child))
                if value is None:
                    continue
                if value.known and ("$(" in value.text or "`" in value.text):
                    self.emit(
                        Invocation(
                            (value.text,), unknown=(UnknownWord(0),), runs_code="unknown-code"
                        )
                    )
                elif not value.known and value.code is None:
                    self.emit(Invocation(("((",), runs_code="arithmetic"))
            elif child.type not in ("command_substitution", "process_substitution"):
                self.arithmetic(child)

    def substitution(self, node: Node) -> Part:
        """``$( )`` or backticks: its commands run; its value is unknown, except
        ``$(which X)`` / ``$(command -v X)``, which is X."""
        text = _text(node)
        if text.startswith("`") and "\\`" in text:
            # `a \`b\``: bash unescapes the body and runs the inner backticks too
            body = re.sub(r"\\([`$\\])", r"\1", text[1:-1])
            self.out += self.child_script(body)
            return Part(text, known=False, code=None)
        before = len(self.out)
        inner = [c for c in node.named_children if c.type != "comment"]
        for statement in inner:
            self.statement(statement)
        found = self.out[before:]
        if len(inner) == 1 and len(found) == 1 and (name := which(found[0])) is not None:
            return Part(name, quoted=True)
        return Part(_text(node), known=False, code=None)

    def nested(self, node: Node) -> bool:
        """Judge the commands of the substitutions inside ``node``; True if there are."""
        found = False
        for child in node.named_children:
            if child.type in ("command_substitution", "process_substitution"):
                found = True
                for statement in child.named_children:
                    self.statement(statement)
            elif child.named_child_count:
                found = self.nested(child) or found
        return found

    # -- commands -------------------------------------------------------------------------

    def redirect(self, node: Node, into: _Redirects) -> None:
        kind = node.type
        if kind == "file_redirect":
            op = "".join(
                _text(c) for c in node.children if c.type == "file_descriptor" or not c.is_named
            )
            targets = node.children_by_field_name("destination")
            if not targets:
                return
            words = self.words(targets[0])
            for extra in targets[1:]:
                into.args += self.words(extra)
            bare = op.lstrip("0123456789")
            word = words[0] if len(words) == 1 else Word(_text(targets[0]), known=False)
            if bare in ("<&", ">&", "<&-", ">&-") and (word.text.isdigit() or word.text == "-"):
                return
            if bare.endswith("-") and not word.text:
                return
            redirect = self.target(op, word)
            if redirect.known and (
                redirect.target in SILENT_TARGETS or redirect.target.startswith("/dev/fd/")
            ):
                return
            into.kept.append(redirect)
        elif kind == "herestring_redirect":
            value = node.named_children[-1] if node.named_children else None
            word = self.joined(value) if value is not None else Word("", code="")
            into.feeds.append(word)
            into.kept.append(Redirect("<<<", word.text if word.known else "", known=word.known))
        elif kind == "heredoc_redirect":
            start = next((c for c in node.named_children if c.type == "heredoc_start"), None)
            body = next((c for c in node.named_children if c.type == "heredoc_body"), None)
            quoted = start is not None and any(q in _text(start) for q in "'\"\\")
            if body is None:
                word = Word("", code="")
            elif quoted:
                word = Word(_text(body), code=_text(body))
            else:
                parts = [
                    Part(re.sub(r"\\([$`\\])|\\\n", r"\1", _text(c)), quoted=True)
                    if c.type == "heredoc_content"
                    else self.parts(c, quoted=True)[0]
                    for c in body.named_children
                ] or [Part(_text(body), quoted=True)]
                word = Word.join(parts)
            into.feeds.append(word)
            op = "".join(
                _text(c) for c in node.children if c.type == "file_descriptor" or not c.is_named
            )
            into.kept.append(
                Redirect(op or "<<", word.text if word.known else "", known=word.known)
            )
            for child in node.named_children:
                if child.type.endswith("_redirect"):
                    self.redirect(child, into)
                elif child.type in _HEREDOC_FOLLOWERS:
                    into.after.append(child)
                elif child.type not in ("heredoc_start", "heredoc_body", "heredoc_end"):
                    raise ShellSyntaxError(f"'{child.type}' after a heredoc is not supported")
        else:
            raise ShellSyntaxError(f"'{kind.replace('_', ' ')}' is not supported")

    def command(self, node: Node, redirects: _Redirects, in_pipe: bool) -> None:
        words: list[Word] = []
        assigned: list[str] = []
        for child in node.named_children:
            kind = child.type
            if kind == "variable_assignment":
                name = child.child_by_field_name("name")
                value = child.child_by_field_name("value")
                if value is not None:
                    self.joined(value)
                if name is not None:
                    if name.type != "variable_name":
                        self.nested(name)
                    assigned.append(_text(name))
            elif kind == "command_name":
                for part in child.named_children:
                    words += self.words(part)
            elif kind.endswith("_redirect"):
                self.redirect(child, redirects)
            elif kind != "comment":
                words += self.words(child)  # an argument
        words += redirects.args
        code = ""
        if not assigned:
            pass
        elif any(git_env_runs_code(n) for n in assigned):
            code = "git-config"
        elif any(DANGEROUS_ENV.fullmatch(n) for n in assigned):
            code = "env-code"
        if not words:
            if redirects.kept:
                self.redirects_only(redirects.kept)
            self.followers(redirects)
            return
        self.out += self.invoke(words, redirects.kept, redirects.feeds, in_pipe=in_pipe, code=code)
        self.after(words)
        self.followers(redirects)

    def followers(self, redirects: _Redirects) -> None:
        """What follows a heredoc on its line: piped into, or after, the command."""
        for node in redirects.after:
            self.piped(node)

    def piped(self, node: Node) -> None:
        if node.type == "pipeline":
            for child in node.named_children:
                self.statement(child, in_pipe=True)
        elif node.type == "list":
            children = node.named_children
            if children:
                self.piped(children[0])
            for child in children[1:]:
                self.statement(child)
        else:
            self.statement(node, in_pipe=True)


def _text(node: Node) -> str:
    data = node.text
    return data.decode("utf-8", errors="surrogateescape") if data is not None else ""
