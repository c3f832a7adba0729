"""docs/adapters.md documents the dict form of the offline behaviour table (issue 25, point 7): its example loads."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from agentassay._integrations.adapters._simulator import load_behaviour

DOC = Path(__file__).resolve().parents[3] / "docs" / "adapters.md"


def documented_table() -> dict:
    text = DOC.read_text(encoding="utf-8").split("### The behaviour table", 1)[1]
    code = re.search(r"```python\n(.*?)```", text, re.S)
    assert code is not None, "docs/adapters.md: the behaviour table section has no Python example"
    scope: dict = {}
    exec(code.group(1), scope)  # the documentation's own example, as a user would paste it
    return scope["OFFLINE_BEHAVIOUR"]


def test_the_documented_dict_form_loads() -> None:
    table = documented_table()
    behaviour = load_behaviour(table)
    assert set(behaviour.agents) == {"Triage Agent", "Seat Booking Agent", "*"}
    seat = behaviour.for_agent("Seat Booking Agent")
    assert set(seat.arguments["update_seat"]) == {"new_seat", "confirmation_number"}


def test_a_mistake_in_the_dict_names_agent_and_key() -> None:
    table = documented_table()
    table["Triage Agent"]["rulez"] = []
    with pytest.raises(ValueError, match=r"Triage Agent.*unknown key\(s\) \['rulez'\]"):
        load_behaviour(table)
