"""The edge: the ways in and out of the engine — the CLI, the GitHub Action, the pytest plugin, the agent
adapters (OpenAI Agents SDK, plain callables, the offline simulator) and the trace importers.

Nothing in the kernel or the features imports from here except through the adapter and importer entry
points the runner and ``analyze`` call (docs/architecture.md, "Layers").
"""
