"""The core run: one agent's loop, from a task to its ``SessionEndEvent``.

- ``agent``: ``Agent`` (what one agent is: prompt, transport, tools, limits) and
  ``AgentStream`` (one run of it: the events, interrupt, steer, follow up).
- ``loop``: ``run_loop``, the loop itself as phases: prepare, stream a turn, run its
  calls, store, pick what comes next. Start reading here.
- ``state``: the state one run's phases share, how a run opens and how it ends.
- ``turn``: one model turn assembled from its stream events into an assistant message.
- ``calls``: the tool calls of a turn: validate, guard, observe, execute, after-call hooks.
- ``outputs``: results too large for the model, saved to a file and read back in parts.

Below the loop, at the package root: ``swarm.scope`` (what a whole run shares, carried
down the tree of agents), ``swarm.control`` (interrupt and the steering queues),
``swarm.budget``, ``swarm.tools`` and ``swarm.messages``/``swarm.events``. Above it:
``swarm.team`` runs agents as tools of other agents. The public names are re-exported
from ``swarm``; this package imports nothing on its own, so importing one of its modules
loads only what that module needs.
"""
