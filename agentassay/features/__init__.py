"""The features: each package owns its suite keys, results section, gate evidence and report sections,
and registers through the same hooks a third-party plugin uses (docs/architecture.md, docs/plugins.md).

The kernel (``spec``, ``runner``, ``plugins``, ``gate``, ``results``, ``traces``, ``reports``) imports none
of them; ``plugins`` loads a feature's ``_plugin`` module only when a run, a report or a comparison needs it.
"""
