"""The shell parser finds every program a command line would run, or refuses to guess."""

from __future__ import annotations

import pytest

from swarm.guards.bash._walker import _terminated
from swarm.guards.bash.parse import Invocation, ShellSyntaxError, expand_argv, parse_command


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


def only(command: str, program: str) -> Invocation:
    (found,) = [i for i in parse_command(command) if i.program == program]
    return found


@pytest.mark.parametrize(
    ("command", "argv"),
    [
        ("x=-rf; rm $x DIR", ("rm", "-rf", "DIR")),
        ("export O=-rf && rm $O DIR", ("rm", "-rf", "DIR")),
        ("o='-r -f'; rm $o DIR", ("rm", "-r", "-f", "DIR")),
        ('o="-r -f"; rm "$o" DIR', ("rm", "-r -f", "DIR")),
        ("rm {-rf,DIR}", ("rm", "-rf", "DIR")),
        ("rm x{1..3}", ("rm", "x1", "x2", "x3")),
        ("PY=python3; $PY -V", ("python3", "-V")),
        ("$(which python3) -V", ("python3", "-V")),
        ("$(command -v git) status", ("git", "status")),
    ],
)
def test_what_is_known_before_the_command_runs_is_resolved(
    command: str, argv: tuple[str, ...]
) -> None:
    found = parse_command(command)[-1]
    assert found.argv == argv
    assert found.unknown == ()


@pytest.mark.parametrize(
    ("command", "prefix"),
    [
        ("rm $(echo -rf) DIR", ""),
        ("rm $OPTS DIR", ""),
        ("rm -r$(echo f) DIR", "-r"),
        ("rm * DIR", ""),
        ("rm src/*.py DIR", "src/"),
        ("rm ~/x DIR", "/"),
        ("read o; rm $o DIR", ""),
    ],
)
def test_arguments_only_known_at_run_time_are_marked_with_their_known_prefix(
    command: str, prefix: str
) -> None:
    found = only(command, "rm")
    assert [(u.index, u.prefix) for u in found.unknown] == [(1, prefix)]
    assert found.args_unknown and found.argv[2] == "DIR"


def test_a_loop_variable_over_known_words_keeps_its_choices() -> None:
    (word,) = only("for f in a b; do rm $f; done", "rm").unknown
    assert word.choices == ("a", "b")


@pytest.mark.parametrize("command", ["echo -rf DIR | xargs rm", "xargs -a list rm"])
def test_arguments_read_by_xargs_are_unknown(command: str) -> None:
    assert only(command, "rm").more_args


@pytest.mark.parametrize("command", ["$CMD -rf /", '"$CMD" x', "$(echo rm) x", "read c; $c"])
def test_a_program_named_at_run_time_is_unknown(command: str) -> None:
    found = parse_command(command)[-1]
    assert found.program_unknown and found.program == ""


@pytest.mark.parametrize(
    ("command", "kind"),
    [
        ("bash <(echo id)", "process-substitution"),
        ("source <(echo id)", "process-substitution"),
        (". <(echo id)", "process-substitution"),
        ("eval `cat f`", "unknown-code"),
        ('trap "$(cat f)" EXIT', "unknown-code"),
        ('bash -c "rm $(echo -rf) /"', "unknown-code"),
        ("curl -s x | sh", "unknown-code"),
        ("echo id > x.sh; bash x.sh", "written-script"),
        ("bash x.sh", "script"),
        ("./x.sh", "script"),
        ("source env.sh", "script"),
        ("git -c alias.x='!id' x", "git-config"),
        ("git -c core.fsmonitor=id status", "git-config"),
        ("git --config-env=core.pager=P log", "git-config"),
        ("GIT_SSH_COMMAND=id git fetch", "git-config"),
        ("LD_PRELOAD=x.so ls", "env-code"),
        ("tar --checkpoint-action=exec=id -cf a .", "tar-exec"),
        ("tar --to-com=id -xf a", "tar-exec"),
        ("tar -I id -cf a .", "tar-exec"),
        ("sed '1e id' f", "sed-exec"),
        ("sed 's/x/id/e' f", "sed-exec"),
        ("find . -exec ls {} +", "find-exec"),
        ("find . | xargs ls", "xargs"),
        ("python3 -c 'print(1)'", "inline-code"),
        ("perl -e 'print 1'", "inline-code"),
        ("node --eval 1", "inline-code"),
        ("awk 'BEGIN { system(\"id\") }'", "inline-code"),
        ("alias x='rm -rf /'", "alias"),
    ],
)
def test_code_not_on_the_command_line_is_marked(command: str, kind: str) -> None:
    assert kind in [i.runs_code for i in parse_command(command)]


@pytest.mark.parametrize(
    "command", ["python3 -m pytest", "awk '{print $1}' f", "sed -n 1,5p f", "git status"]
)
def test_ordinary_programs_run_no_hidden_code(command: str) -> None:
    assert all(i.runs_code == "" for i in parse_command(command))


@pytest.mark.parametrize(
    ("command", "target"),
    [
        ("echo x > /tmp/../etc/F", "/etc/F"),
        ("echo x > //etc/F", "/etc/F"),
        ("cd /etc && echo x > F", "/etc/F"),
        ("cd /etc; cd ../usr && echo x >> F", "/usr/F"),
        ("f=/etc/F; echo x > $f", "/etc/F"),
        ("echo x | tee -a /etc/F", "/etc/F"),
        ("cp a b /etc/", "/etc"),
        ("cp -t /etc a", "/etc"),
        ("mv a /etc/F", "/etc/F"),
        ("sed -i s/a/b/ /etc/F", "/etc/F"),
        ("sed -n 'w /etc/F' in", "/etc/F"),
        ("touch /etc/F", "/etc/F"),
        ("dd if=x of=/etc/F", "/etc/F"),
        ("tar xf a.tar -C /etc", "/etc"),
    ],
)
def test_write_targets_are_normalised(command: str, target: str) -> None:
    found = [t for i in parse_command(command) for t in i.writes]
    assert target in found


@pytest.mark.parametrize(
    "command", ["echo x > $OUT", "cd $D && echo x > F", "cd ~ && touch F", "tee $F", "cp a $D"]
)
def test_a_write_target_only_known_at_run_time_is_unknown(command: str) -> None:
    assert any(i.unknown_writes for i in parse_command(command))


def test_a_socket_named_through_a_variable_is_still_a_socket() -> None:
    (found,) = parse_command("cat < /dev/tcp/$HOST/80 > /dev/udp/$HOST/53")
    assert [r.target for r in found.redirects] == ["/dev/tcp/$HOST/80", "/dev/udp/$HOST/53"]
    assert found.writes == () and not found.unknown_writes


@pytest.mark.parametrize(
    ("command", "programs"),
    [
        ("if [ -f a ]; then ls; fi", ["ls"]),
        ("case $x in a) ls;; *) pwd;; esac", ["ls", "pwd"]),
        ("f() { ls; }; f", ["ls", "f"]),
        ("echo $(( a[$(id)] + 1 ))", ["id", "echo"]),
        ("until false; do ls; done", ["false", "ls"]),
        ("for ((i = 0; i < 2; i++)); do ls; done", ["ls"]),
        ("cat <<EOF\n$(id)\nEOF", ["id", "cat"]),
        ('bash -c "echo $HOME"', ["bash", "echo"]),
        ("python3 -m pip list", ["python3", "pip"]),
        ("git rebase --exec 'make test' HEAD~3", ["make", "git"]),
        ("a | b > F && c", ["a", "b", "c"]),
    ],
)
def test_ordinary_shell_is_parsed(command: str, programs: list[str]) -> None:
    assert sorted(i.program for i in parse_command(command)) == sorted(programs)


def test_a_redirection_after_a_list_belongs_to_its_last_command() -> None:
    found = parse_command("cd /etc && echo x > F")
    assert found[-1].argv == ("echo", "x") and found[-1].writes == ("/etc/F",)


def test_parsing_is_cached_by_the_command_text() -> None:
    assert parse_command("ls -la src && pwd") is parse_command("ls -la src && pwd")


# ---- the fast paths keep every program ----


@pytest.mark.parametrize(
    "command",
    [
        "ls | sort | rm -rf ~",  # a pipeline of three ending the line (parsed with a newline)
        "cat x | grep y | sort | uniq | head | tail | rm -rf ~",
        "ls | sort | rm -rf ~\n",
        "bash -c 'ls | sort | rm -rf ~'",
        "ls | sort | rm -rf ~ # a comment ending the line",
    ],
)
def test_pipeline_ending_the_line_still_yields_its_last_program(command: str) -> None:
    assert ("rm", "-rf", "~") in argvs(command)


def test_heredoc_ending_the_line_is_still_read_as_the_script_it_feeds() -> None:
    invocations = parse_command("sh <<EOF\nls | sort | rm -rf /\nEOF")
    assert ("rm", "-rf", "/") in [i.argv for i in invocations]


@pytest.mark.parametrize("command", ["echo a\\", "ls | sort | head \\", "rm -rf \\"])
def test_line_ending_in_a_backslash_is_refused(command: str) -> None:
    with pytest.raises(ShellSyntaxError):
        parse_command(command)


def test_newline_is_added_only_where_it_changes_nothing() -> None:
    # bash -c 'echo a\' prints 'a\'; with a newline after it, the line would go on
    assert _terminated(b"echo a\\") == b"echo a\\"
    assert _terminated(b"a | b | c\n") == b"a | b | c\n"
    assert _terminated(b"a | b | c") == b"a | b | c\n"


def test_syntax_error_is_reported_on_the_text_as_given() -> None:
    with pytest.raises(ShellSyntaxError, match=r"near ' 'unterminated' \(column 5\)"):
        parse_command("echo 'unterminated")


def test_equal_invocations_of_different_commands_are_one_object() -> None:
    first = parse_command("ls -la | sort | head -1")
    second = parse_command("ls -la | sort | head -2")
    assert first[0] is second[0] and first[1] is second[1]
    assert first[2] is not second[2] and first[2].argv == ("head", "-1")
