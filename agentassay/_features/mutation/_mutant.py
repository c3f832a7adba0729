"""The one mutant type every operator class makes, what building it yields, and the agent the operators see.

Kept apart from the operators so the operator modules (``_operators``, ``_structural``) and the config's
class list can all import it without a cycle.
"""

from __future__ import annotations

import contextlib
import hashlib
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..._integrations.adapters._openai_agents import OpenAIAgentsAdapter
from ..._integrations.adapters._resolve import is_sdk_agent
from ..._spec import Suite

if TYPE_CHECKING:
    from ._config import MutationConfig
    from ._structural import StructuralMutant


@dataclass
class Mutated:
    """What a mutant changes for its trials: the adapter, the suite (its inputs), and a patch held while they run."""

    adapter: Any = None  # None: the original agent
    suite: Suite | None = None  # None: the original suite
    patch: Callable[[], contextlib.AbstractContextManager[Any]] | None = None


@dataclass(frozen=True)
class Mutant:
    """One mutant: ``id`` (readable, stable), its class and operator, a one-line ``diff``, and how to build it."""

    id: str
    cls: str
    operator: str
    diff: str
    build: Callable[[], Mutated] = field(compare=False, repr=False)
    exclusive: bool = False  # patches shared state (a module's prompt): runs alone
    not_run: str | None = None  # why it is reported without trials (the offline simulator and prompts)
    edit: StructuralMutant | None = field(default=None, compare=False, repr=False)  # the graph edit of a `structure` mutant


@dataclass
class Target:
    """The agent under test, as the operators see it."""

    suite: Suite
    entry: str
    adapter: Any  # the original AgentAdapter
    config: MutationConfig
    seed: int
    load: Callable[[Any], Any]  # ModelConfig -> adapter of the same entry on that model
    notes: list[str] = field(default_factory=list)

    @property
    def sdk_agent(self) -> Any:

        agent = getattr(self.adapter, "agent", None)
        return agent if is_sdk_agent(agent) else None

    def rng(self, *parts: object) -> random.Random:
        digest = hashlib.blake2b("|".join(map(str, (self.seed, *parts))).encode(), digest_size=8).digest()
        return random.Random(int.from_bytes(digest, "big"))

    def sdk_adapter(self, entry_clone: Any, **kwargs: Any) -> Any:
        """An Agents SDK adapter like the original, for a mutated clone of its graph."""

        a = self.adapter
        return OpenAIAgentsAdapter(
            entry_clone, model=a.model_config, max_turns=a.max_turns, module=self.entry.partition(":")[0],
            root=a.root, **kwargs,
        )
