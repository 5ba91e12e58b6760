"""``python -m swarm`` is the ``swarm`` command."""

from swarm.cli import entry_point

entry_point()
