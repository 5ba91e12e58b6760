"""What a program does beyond its argv: code it runs that is not on the command line, and
the files it writes.

``effects(argv)`` reads a known program's arguments the way the program does and returns
why it runs other code (a short kind a rule can name: ``inline-code``, ``git-config``,
``tar-exec``, ``sed-exec``, ...) and the argv positions (with the text there) that name
files it writes (``tee F``, ``cp A B``, ``dd of=F``, ``sed -i``, ``sed 'w F'``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache

__all__ = ["DANGEROUS_ENV", "Effects", "effects", "git_env_runs_code", "long_option"]


@dataclass(slots=True)
class Effects:
    """``runs_code``: why the program runs other code (``""``: it does not); ``writes``:
    (argv index, path text) of the files it writes; ``scripts``: argv indices of words
    it runs as shell code (``git rebase --exec CMD``)."""

    runs_code: str = ""
    writes: list[tuple[int, str]] = field(default_factory=list)
    scripts: list[int] = field(default_factory=list)
    program_at: int | None = None
    """Where an argv the program runs starts (``git bisect run CMD ARGS``)."""


def long_option(arg: str, known: Sequence[str]) -> str:
    """``arg``'s long option as getopt_long reads it: ``--recurs`` is ``--recursive`` when
    that is the only option in ``known`` it abbreviates (``--opt=value`` gives ``--opt``)."""
    name = arg.split("=", 1)[0]
    if name in known:
        return name
    hits = [k for k in known if k.startswith(name)]
    return hits[0] if len(hits) == 1 and len(name) > 2 else name


def _operands(
    argv: Sequence[str],
    with_value: str = "",
    long_with_value: Sequence[str] = (),
    long_flags: Sequence[str] = (),
) -> tuple[list[int], dict[str, tuple[int, str]]]:
    """The operand positions of ``argv[1:]`` and the options seen (with their value's
    position and text); ``with_value``/``long_with_value`` take a value, ``long_flags``
    are other long options (for abbreviations)."""
    longs = (*long_with_value, *long_flags)
    operands: list[int] = []
    seen: dict[str, tuple[int, str]] = {}
    i = 1
    while i < len(argv):
        arg = argv[i]
        if arg == "--":
            operands += range(i + 1, len(argv))
            break
        if arg.startswith("--"):
            name = long_option(arg, longs)
            if "=" in arg:
                seen[name] = (i, arg.split("=", 1)[1])
            elif name in long_with_value and i + 1 < len(argv):
                i += 1
                seen[name] = (i, argv[i])
            else:
                seen[name] = (i, "")
        elif arg.startswith("-") and len(arg) > 1:
            for j, letter in enumerate(arg[1:], start=1):
                if letter in with_value:
                    value = arg[j + 1 :]
                    if not value and i + 1 < len(argv):
                        i += 1
                        value = argv[i]
                    seen["-" + letter] = (i, value)
                    break
                seen["-" + letter] = (i, "")
        else:
            operands.append(i)
        i += 1
    return operands, seen


def _all_operands(short: str = "", long: Sequence[str] = ()) -> Callable[[Sequence[str]], Effects]:
    def read(argv: Sequence[str]) -> Effects:
        operands, _ = _operands(argv, short, long)
        return Effects(writes=[(i, argv[i]) for i in operands])

    return read


def _copy(argv: Sequence[str]) -> Effects:
    """``cp``/``mv``/``install``/``ln``: the destination (``-t DIR`` or the last operand)."""
    operands, seen = _operands(
        argv, "tSmogT", ("--target-directory", "--suffix", "--mode", "--owner", "--group")
    )
    target = seen.get("-t") or seen.get("--target-directory")
    if target is not None:
        return Effects(writes=[target])
    if argv[0].rsplit("/", 1)[-1] == "install" and ("-d" in seen or "--directory" in seen):
        return Effects(writes=[(i, argv[i]) for i in operands])
    return Effects(writes=[(operands[-1], argv[operands[-1]])] if len(operands) > 1 else [])


def _dd(argv: Sequence[str]) -> Effects:
    return Effects(writes=[(i, a[3:]) for i, a in enumerate(argv) if i and a.startswith("of=")])


_SED_LONG = ("--expression", "--file", "--line-length")


def _sed(argv: Sequence[str]) -> Effects:
    operands, seen = _operands(argv, "efl", _SED_LONG, ("--in-place", "--separate", "--silent"))
    scripts = [v[1] for k, v in seen.items() if k in ("-e", "--expression")]
    found = Effects()
    if "-f" in seen or "--file" in seen:
        found.runs_code = "sed-exec"  # a script file: not on the line
    if not scripts and operands:
        scripts, operands = [argv[operands[0]]], operands[1:]
    for script in scripts:
        executes, files = sed_script(script)
        if executes:
            found.runs_code = "sed-exec"
        found.writes += [(0, f) for f in files]
    if "-i" in seen or "--in-place" in seen:
        found.writes += [(i, argv[i]) for i in operands]
    return found


_SED_ADDRESS = re.compile(r"\s*(?:\d+(?:~\d+)?|\$|/(?:[^/\\\n]|\\.)*/[IM]*|\\(.)(?:(?!\1).)*\1)?")


def sed_script(script: str) -> tuple[bool, list[str]]:
    """Whether a sed script runs commands (``e``, ``s///e``) and the files it writes
    (``w F``, ``s///w F``). A script it cannot read counts as running commands."""
    files: list[str] = []
    i, n = 0, len(script)
    while i < n:
        c = script[i]
        if c in " \t\n;{}!":
            i += 1
            continue
        address = _SED_ADDRESS.match(script, i)
        if address is not None and address.end() > i:
            i = address.end()
            if i < n and script[i] == ",":
                i += 1
            continue
        if c == "#":
            end = script.find("\n", i)
            i = n if end < 0 else end
            continue
        if c == "e":
            return True, files
        if c in "wW":
            end = script.find("\n", i)
            files.append(script[i + 1 : n if end < 0 else end].strip())
            i = n if end < 0 else end
            continue
        if c in "aicrRbtT:":
            stop = "\n" if c in "aicrR" else ";\n"
            end = min((p for p in (script.find(s, i) for s in stop) if p >= 0), default=n)
            i = end
            continue
        if c in "sy":
            if i + 1 >= n:
                return True, files
            delimiter = script[i + 1]
            i += 2
            for _ in range(2):
                while i < n and script[i] != delimiter:
                    i += 2 if script[i] == "\\" else 1
                i += 1
            if i > n:
                return True, files
            flags = re.match(r"[0-9gpiImMe]*", script[i:])
            assert flags is not None
            if "e" in flags.group():
                return True, files
            i += flags.end()
            if i < n and script[i] == "w":
                end = script.find("\n", i)
                files.append(script[i + 1 : n if end < 0 else end].strip())
                i = n if end < 0 else end
            continue
        if c in "=dDgGhHlnNpPqQxzF":
            i += 1
            continue
        return True, files  # not a command this reader knows: assume the worst
    return False, files


_TAR_EXEC = ("--checkpoint-action", "--to-command", "--use-compress-program", "--info-script",
             "--new-volume-script", "--rsh-command", "--rmt-command", "--index-file")  # fmt: skip
_TAR_LONG = (*_TAR_EXEC, "--checkpoint", "--file", "--directory", "--exclude", "--transform")


def _tar(argv: Sequence[str]) -> Effects:
    found = Effects()
    first = argv[1] if len(argv) > 1 else ""
    extracts = (not first.startswith("-") and "x" in first) or any(
        a in ("-x", "--extract", "--get")
        or (a.startswith("-") and not a.startswith("--") and "x" in a)
        for a in argv[1:]
    )
    if extracts:
        found.writes.append((0, "."))
    for k, arg in enumerate(argv[1:], start=1):
        if extracts and arg in ("-C", "--directory") and k + 1 < len(argv):
            found.writes.append((k + 1, argv[k + 1]))
        elif extracts and arg.startswith("--directory="):
            found.writes.append((k, arg.split("=", 1)[1]))
    for k, arg in enumerate(argv[1:], start=1):
        if arg.startswith("--"):
            name = long_option(arg, _TAR_LONG)
            if name in _TAR_EXEC and name != "--index-file":
                return Effects(runs_code="tar-exec")
        elif arg.startswith("-") or k == 1:
            letters = arg.lstrip("-")
            if "I" in letters or "F" in letters:
                return Effects(runs_code="tar-exec")
    return found


def _unzip(argv: Sequence[str]) -> Effects:
    for k, arg in enumerate(argv[1:], start=1):
        if arg == "-d" and k + 1 < len(argv):
            return Effects(writes=[(k + 1, argv[k + 1])])
        if arg.startswith("-d") and len(arg) > 2:
            return Effects(writes=[(k, arg[2:])])
    return Effects()


def _editor(argv: Sequence[str]) -> Effects:
    """``vim -c CMD``, ``+CMD``, ``emacs --eval``: editor commands can run programs."""
    for arg in argv[1:]:
        if arg in ("-c", "--cmd", "--eval", "-S", "-x", "--execute") or arg.startswith("+"):
            return Effects(runs_code="inline-code")
    return Effects()


# git configuration that makes git run a program named in it
_GIT_CODE_KEYS = re.compile(
    r"(alias\..*|core\.(hookspath|pager|editor|fsmonitor|sshcommand|askpass|gitproxy|"
    r"alternaterefscommand)|pager\..*|sequence\.editor|diff\.external|diff\..*\.(textconv|"
    r"command)|filter\..*|merge\..*\.driver|credential\..*|gpg\..*program|.*\.helper|"
    r"remote\..*\.(uploadpack|receivepack|vcs)|uploadpack\.packobjectshook|protocol\..*|"
    r"include\..*|includeif\..*|init\.templatedir|web\.browser|browser\..*|man\..*|"
    r"sendemail\..*|instaweb\..*|difftool\..*|mergetool\..*|interactive\..*)",
    re.IGNORECASE,
)
DANGEROUS_ENV = re.compile(r"(LD_PRELOAD|LD_LIBRARY_PATH|LD_AUDIT|BASH_ENV|ENV|PROMPT_COMMAND|"
                           r"PS4|SHELLOPTS|BASHOPTS|PYTHONSTARTUP|PYTHONPATH|PERL5OPT|"
                           r"NODE_OPTIONS|RUBYOPT)")  # fmt: skip
_GIT_ENV = re.compile(
    r"GIT_(CONFIG.*|SSH.*|PAGER|EDITOR|SEQUENCE_EDITOR|EXTERNAL_DIFF|ASKPASS|PROXY_COMMAND|"
    r"EXEC_PATH|TEMPLATE_DIR|DIR|WORK_TREE)"
)


def git_env_runs_code(name: str) -> bool:
    """Whether setting environment variable ``name`` makes git run a program it names."""
    return bool(_GIT_ENV.fullmatch(name))


def _git(argv: Sequence[str]) -> Effects:
    i = 1
    while i < len(argv):
        arg = argv[i]
        if arg == "-c" and i + 1 < len(argv):
            if _GIT_CODE_KEYS.fullmatch(argv[i + 1].split("=", 1)[0]):
                return Effects(runs_code="git-config")
            i += 2
            continue
        if arg.startswith("-c") and len(arg) > 2:
            if _GIT_CODE_KEYS.fullmatch(arg[2:].split("=", 1)[0]):
                return Effects(runs_code="git-config")
        elif arg.startswith("--config-env") or arg.startswith("--exec-path="):
            return Effects(runs_code="git-config")
        elif arg in ("-C", "--git-dir", "--work-tree", "--namespace"):
            i += 1
        elif not arg.startswith("-"):
            break
        i += 1
    command = argv[i] if i < len(argv) else ""
    if command == "config":
        keys = [a.split("=", 1)[0] for a in argv[i + 1 :] if not a.startswith("-")]
        if keys and _GIT_CODE_KEYS.fullmatch(keys[0]):
            return Effects(runs_code="git-config")
    found = Effects()
    options = _GIT_EXEC_OPTIONS.get(command, ())
    for k in range(i + 1, len(argv)):
        arg = argv[k]
        if arg in options and k + 1 < len(argv):
            found.scripts.append(k + 1)
        elif any(arg.startswith(o + "=") for o in options if o.startswith("--")):
            found.runs_code = "unknown-code"  # --exec=CMD: not read, so not judged
    sub = argv[i + 1] if i + 2 < len(argv) else ""
    if command == "bisect" and sub == "run":
        found.runs_code, found.program_at = "git-exec", i + 2
    elif command == "submodule" and sub == "foreach":
        start = i + 2 + (argv[i + 2] == "--recursive")
        found.runs_code = found.runs_code or "git-exec"
        found.scripts += range(start, len(argv))
    return found


_GIT_EXEC_OPTIONS = {
    "rebase": ("-x", "--exec"),
    "difftool": ("-x", "--extcmd"),
    "mergetool": ("--tool",),
}


_INLINE = {
    "python": ("-c",),
    "pypy": ("-c",),
    "perl": ("-e", "-E"),
    "ruby": ("-e",),
    "node": ("-e", "--eval", "-p", "--print"),
    "nodejs": ("-e", "--eval", "-p", "--print"),
    "php": ("-r",),
    "lua": ("-e",),
    "Rscript": ("-e",),
    "osascript": ("-e",),
}
_AWK_CODE = re.compile(r"system|\||getline|print[^;}]*>|printf[^;}]*>")


@lru_cache(maxsize=256)
def _interpreter(name: str) -> str | None:
    base = re.sub(r"[0-9.]+$", "", name)
    return base if base in _INLINE else None


def _inline(argv: Sequence[str]) -> Effects:
    base = _interpreter(argv[0].rsplit("/", 1)[-1])
    assert base is not None
    flags = _INLINE[base]
    for arg in argv[1:]:
        if arg == "-m" or (arg.startswith("-m") and base in ("python", "pypy")):
            return Effects()  # a module: ``python -m`` is unwrapped as a program
        if arg in flags or (
            arg.startswith("-")
            and not arg.startswith("--")
            and any(f[1] in arg[1:] for f in flags if len(f) == 2)
        ):
            return Effects(runs_code="inline-code")
        if not arg.startswith("-"):
            return Effects(runs_code="script")
    if all(a in ("-V", "-VV", "--version", "-h", "--help", "-v") for a in argv[1:]) and argv[1:]:
        return Effects()
    return Effects(runs_code="inline-code")  # reads its program from standard input


def _awk(argv: Sequence[str]) -> Effects:
    operands, seen = _operands(argv, "fvF", ("--file", "--assign", "--field-separator"))
    if "-f" in seen or "--file" in seen:
        return Effects(runs_code="script")
    if operands and _AWK_CODE.search(argv[operands[0]]):
        return Effects(runs_code="inline-code")
    return Effects()


def _find(argv: Sequence[str]) -> Effects:
    found = Effects()
    for i, arg in enumerate(argv):
        if arg in ("-exec", "-execdir", "-ok", "-okdir"):
            found.runs_code = "find-exec"
        elif arg in ("-fprint", "-fprint0", "-fprintf", "-fls") and i + 1 < len(argv):
            found.writes.append((i + 1, argv[i + 1]))
    return found


def _sort(argv: Sequence[str]) -> Effects:
    _, seen = _operands(
        argv, "otkSTz", ("--output", "--key", "--buffer-size", "--temporary-directory")
    )
    out = seen.get("-o") or seen.get("--output")
    return Effects(writes=[out] if out else [])


_EFFECTS: dict[str, Callable[[Sequence[str]], Effects]] = {
    "tee": _all_operands("", ("--output-error",)),
    "touch": _all_operands("rdt", ("--reference", "--date")),
    "mkdir": _all_operands("m", ("--mode", "--context")),
    "rmdir": _all_operands(),
    "truncate": _all_operands("sr", ("--size", "--reference")),
    "cp": _copy,
    "mv": _copy,
    "install": _copy,
    "ln": _copy,
    "dd": _dd,
    "sed": _sed,
    "gsed": _sed,
    "tar": _tar,
    "gtar": _tar,
    "git": _git,
    "awk": _awk,
    "gawk": _awk,
    "mawk": _awk,
    "nawk": _awk,
    "find": _find,
    "sort": _sort,
    "unzip": _unzip,
    **dict.fromkeys(("vi", "vim", "nvim", "ex", "view", "emacs", "nano"), _editor),
}


def has_effects(name: str) -> bool:
    """Whether ``effects`` can find anything for the program ``name`` (when False, it
    finds nothing whatever the arguments)."""
    return name in _EFFECTS or _interpreter(name) is not None


def effects(argv: Sequence[str]) -> Effects:
    """What the program of ``argv`` (a known name) does beyond its argv."""
    name = argv[0].rsplit("/", 1)[-1]
    read = _EFFECTS.get(name)
    if read is not None:
        return read(argv)
    if _interpreter(name) is not None:
        return _inline(argv)
    return Effects()
