"""Fixtures of the Action's harness (tests/_support/github.py): ``gh``, ``ws``, ``recorded``."""

from tests._support.github import gh, recorded, ws  # noqa: F401
