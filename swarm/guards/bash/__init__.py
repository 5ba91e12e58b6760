"""The command analyser: what a shell command line would run, read as bash reads it.

- ``parse``: ``parse_command`` and ``expand_argv``, and what they return (``Invocation``,
  ``Redirect``, ``UnknownWord``) or raise (``ShellSyntaxError``). Start here.
- ``_walker``: the tree-sitter-bash syntax tree walked into invocations.
- ``_words``: shell words evaluated (parts joined, split, brace-expanded).
- ``_programs``: the invocation of a simple command and the programs it runs.
- ``_wrappers``: programs that run other programs (``env``, ``sudo``, ``xargs``, ...).
- ``_code``: code a program runs that is not on its command line (``bash -c``, ``python``).
- ``_invocation``: the parser's output types.

The guards that judge what it finds are one level up, in ``swarm.guards``: ``shell``
(``ShellGuard``), ``prefixes``, ``rules`` (a policy rule's ``command`` conditions) and
``claude_rules``. This package imports nothing on its own: tree-sitter loads with ``parse``.
"""
