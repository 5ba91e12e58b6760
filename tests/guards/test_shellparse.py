"""The shell parser finds every program a command line would run, or refuses to guess."""

from __future__ import annotations

import pytest

from swarm.guards.shellparse import ShellSyntaxError, expand_argv, parse_command


def programs(command: str) -> list[str]:
    return [i.program for i in parse_command(command)]


def argvs(command: str) -> list[tuple[str, ...]]:
    return [i.argv for i in parse_command(command)]


def test_simple_command_is_split_into_argv() -> None:
    assert argvs("ls -la 'my dir'") == [("ls", "-la", "my dir")]


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("a; b && c || d | e & f", ["a", "b", "c", "d", "e", "f"]),
        ("a\nb", ["a", "b"]),
        ("(a; b) | c", ["a", "b", "c"]),
        ("{ a; b; }", ["a", "b"]),
        ("if a; then b; elif c; then d; else e; fi", ["a", "b", "c", "d", "e"]),
        ("while a; do b; done", ["a", "b"]),
        ("for f in $(a); do b $f; done", ["a", "b"]),
        ("! a", ["a"]),
        ("[[ -f x && -d y ]] && a", ["a"]),
    ],
)
def test_operators_and_compound_commands_are_followed(command: str, expected: list[str]) -> None:
    assert programs(command) == expected


@pytest.mark.parametrize(
    "command",
    [
        "echo $(rm -rf /)",
        'echo "$(rm -rf /)"',
        "echo `rm -rf /`",
        'echo "`rm -rf /`"',
        "echo ${x:-$(rm -rf /)}",
        "cat <(rm -rf /)",
        "x=$(rm -rf /)",
        "echo $((1 + 2)) $(rm -rf /)",
        "cat <<EOF\n$(rm -rf /)\nEOF",
        "echo > $(rm -rf /)",
    ],
)
def test_substitutions_are_parsed_as_commands(command: str) -> None:
    assert ("rm", "-rf", "/") in argvs(command)


def test_single_quotes_keep_substitution_literal() -> None:
    assert argvs("echo '$(rm -rf /)'") == [("echo", "$(rm -rf /)")]


def test_quoted_heredoc_body_is_data() -> None:
    assert programs("cat <<'EOF'\n$(rm -rf /)\nEOF\nls") == ["cat", "ls"]


@pytest.mark.parametrize(
    "command",
    [
        "r''m -rf /",
        'r""m -rf /',
        "\\rm -rf /",
        "'rm' -rf /",
        "$'\\x72\\x6d' -rf /",
        "$'\\162m' -rf /",
    ],
)
def test_quoting_tricks_resolve_to_the_real_program(command: str) -> None:
    assert argvs(command) == [("rm", "-rf", "/")]


@pytest.mark.parametrize(
    ("command", "wrapped"),
    [
        ("env A=1 B=2 rm -rf /", "env"),
        ("/usr/bin/env -i rm -rf /", "env"),
        ("env -S 'rm -rf' /", "env"),
        ("sudo -u root -E rm -rf /", "sudo"),
        ("timeout -s KILL 5 rm -rf /", "timeout"),
        ("nice -n 10 rm -rf /", "nice"),
        ("nohup rm -rf /", "nohup"),
        ("xargs -I{} -P 4 rm -rf /", "xargs"),
        ("command rm -rf /", "command"),
        ("exec rm -rf /", "exec"),
        ("time -p rm -rf /", "time"),
        ("stdbuf -oL rm -rf /", "stdbuf"),
        ("busybox rm -rf /", "busybox"),
        ("doas rm -rf /", "doas"),
        ("setsid rm -rf /", "setsid"),
        ("flock /tmp/lock rm -rf /", "flock"),
        ("chroot /srv rm -rf /", "chroot"),
    ],
)
def test_wrappers_are_unwrapped(command: str, wrapped: str) -> None:
    found = parse_command(command)
    assert found[0].program == wrapped
    assert found[-1].argv == ("rm", "-rf", "/")


@pytest.mark.parametrize(
    "command",
    [
        "bash -c 'rm -rf /'",
        "sh -ec 'rm -rf /'",
        "zsh -c 'rm -rf /' zsh",
        "/bin/bash --norc -c 'rm -rf /'",
        "eval 'rm -rf /'",
        "su -c 'rm -rf /' root",
        "flock -c 'rm -rf /' /tmp/lock",
        "watch rm -rf /",
        "bash <<< 'rm -rf /'",
        "bash <<'EOF'\nrm -rf /\nEOF",
        "bash -c \"bash -c 'rm -rf /'\"",
    ],
)
def test_scripts_given_to_shells_are_parsed(command: str) -> None:
    assert ("rm", "-rf", "/") in argvs(command)


def test_find_exec_runs_its_command() -> None:
    assert argvs("find . -name '*.tmp' -exec rm -f {} \\;")[-1] == ("rm", "-f", "{}")


def test_redirections_are_kept_with_their_command() -> None:
    (invocation,) = parse_command("sort < in.txt > out.txt 2>&1")
    assert [(r.op, r.target, r.writes) for r in invocation.redirects] == [
        ("<", "in.txt", False),
        (">", "out.txt", True),
    ]


def test_redirections_to_dev_null_are_dropped() -> None:
    (invocation,) = parse_command("ls 2>/dev/null >/dev/null")
    assert invocation.redirects == ()


def test_redirection_without_command_is_an_invocation() -> None:
    (invocation,) = parse_command("> /etc/passwd")
    assert invocation.argv == () and invocation.redirects[0].target == "/etc/passwd"


def test_comments_are_ignored() -> None:
    assert programs("ls # ; rm -rf /") == ["ls"]


def test_argv_lists_are_unwrapped_without_a_shell() -> None:
    assert [i.argv for i in expand_argv(["sudo", "rm", "-rf", "/"])] == [
        ("sudo",),
        ("rm", "-rf", "/"),
    ]


@pytest.mark.parametrize(
    "command",
    [
        "echo 'unterminated",
        'echo "unterminated',
        "echo $(unclosed",
        "echo `unclosed",
        "if true; then ls",
        "strace -o /dev/null rm -rf /",
        "parallel rm ::: a b",
        "cat <<EOF\nno end",
        "echo \x00",
        "exec 3<>/dev/tcp/example.com/80",
    ],
)
def test_what_cannot_be_judged_is_refused(command: str) -> None:
    with pytest.raises(ShellSyntaxError):
        parse_command(command)


@pytest.mark.parametrize("command", ["$(" * 1000 + "ls" + ")" * 1000, "eval " * 40 + "ls"])
def test_deep_nesting_is_refused(command: str) -> None:
    with pytest.raises(ShellSyntaxError):
        parse_command(command)
