"""GitHub: the action's job (baseline artifact, sticky comment, commit status, outputs), its REST calls on PyGithub.

PyGithub is imported only when a client is made (``connect``), so importing this package, and the CLI, stays fast.
"""

from ._action import Action, Outcome, run_action
from ._artifacts import Artifact, BaselineError, download, find_baseline, unpack
from ._client import ClientSettings, GitHubError, connect
from ._comments import comment_author, find_comment, pull_head_sha, set_status, upsert_comment
from ._context import ActionContext, ActionInputError, Inputs

__all__ = [
    "Action",
    "ActionContext",
    "ActionInputError",
    "Artifact",
    "BaselineError",
    "ClientSettings",
    "GitHubError",
    "Inputs",
    "Outcome",
    "comment_author",
    "connect",
    "download",
    "find_baseline",
    "find_comment",
    "pull_head_sha",
    "run_action",
    "set_status",
    "unpack",
    "upsert_comment",
]
