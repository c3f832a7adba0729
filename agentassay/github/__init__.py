"""GitHub: the action's job (baseline artifact, sticky comment, commit status, outputs) and its REST client.

Only ``requests`` is needed, imported when a client is made, so the CLI stays fast.
"""

from ._action import Action, Outcome, run_action
from ._artifacts import Artifact, BaselineError, download, find_baseline, unpack
from ._client import GitHubClient, GitHubError
from ._comments import find_comment, set_status, upsert_comment
from ._context import ActionContext, ActionInputError, Inputs

__all__ = [
    "Action",
    "ActionContext",
    "ActionInputError",
    "Artifact",
    "BaselineError",
    "GitHubClient",
    "GitHubError",
    "Inputs",
    "Outcome",
    "download",
    "find_baseline",
    "find_comment",
    "run_action",
    "set_status",
    "unpack",
    "upsert_comment",
]
