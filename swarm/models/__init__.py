"""Naming models: what a model string means, which transport it makes, what it costs.

- ``spec``: model spec strings (``openai:gpt-4.1-mini``, ``anthropic:...``,
  ``openai-compatible:<url>:<model>``, ``local``) to a transport: ``transport_from_spec``,
  ``register_provider``; the ``local`` provider imports ``swarm.local`` on its first use.
- ``resolver``: a role's ``model:`` (``inherit``, aliases, bare ids) to a spec, and
  ``ModelResolver``, one pooled transport per model in a run.
- ``registry``: what is known about models (context window, output limit, prices);
  ``estimate_cost``. It imports only ``swarm.types``: budgets charge at its prices.

The transports themselves (the protocols they speak) are in ``swarm.transports``. This
package imports nothing on its own, so the budgets can read the registry without loading
the transports; the public names are re-exported from ``swarm``.
"""
