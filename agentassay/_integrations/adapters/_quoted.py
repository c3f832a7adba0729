"""Other agents' turns quoted into a user message, read back as the turns they were (for the offline server).

Google ADK shows an agent what the agents before it did as *user* messages: a preamble ("For context: ...")
and, per part, ``[agent] said:``, ``[agent] called tool `NAME` with parameters:`` or ``[agent] `NAME` tool
returned result:``, each followed by a Python ``repr`` (fenced between ADK's quote markers since 2.x). Read
literally, the latest user message after a transfer is that transcript, not the customer's request, and a
handoff would look like a user turn. :func:`quoted_items` turns such a message back into assistant text,
function calls and function results, so the simulator sees the conversation the receiving agent continues:
the request, then the transfer (``after: handoff``), with the tools' results as their values.
:func:`tool_output` unwraps ADK's function responses in tool messages the same way.
"""

from __future__ import annotations

import ast
import json
import re
from typing import Any

PREAMBLE = "For context:"
_BEGIN, _END = "<<<BEGIN_QUOTED_AGENT_CONTENT>>>", "<<<END_QUOTED_AGENT_CONTENT>>>"
_PART = re.compile(
    r"^\[(?P<agent>[^\]\n]+)\] (?:(?P<said>said:)|called tool `(?P<call>[^`\n]+)` with parameters:"
    r"|`(?P<result>[^`\n]+)` tool returned result:)[ \n]?",
    re.MULTILINE,
)


def _body(text: str) -> str:
    """A part's quoted content: between the markers when fenced, else the text up to the next part."""
    text = text.strip("\n")
    if text.startswith(_BEGIN):
        end = text.find(_END)
        return text[len(_BEGIN):end if end >= 0 else None].strip("\n")
    return text


def _value(text: str) -> Any:
    """A quoted Python ``repr`` as its value (text that is no literal stays text)."""
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return text


def _result_text(value: Any) -> str:
    """A function response as the tool's output: ADK wraps a plain return value as ``{"result": value}``."""
    if isinstance(value, dict) and list(value) == ["result"]:
        value = value["result"]
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, default=str)


def tool_output(text: str) -> str:
    """A tool message's content as the tool's output: ADK sends a plain function's return value ``v`` as the
    function response ``{"result": v}``, which the simulator's ``{tool_output}`` should not echo."""
    if not text.startswith('{"result"'):
        return text
    try:
        value = json.loads(text)
    except ValueError:
        return text
    return _result_text(value) if isinstance(value, dict) and list(value) == ["result"] else text


def quoted_items(text: str, earlier: list[dict[str, Any]]) -> list[dict[str, Any]] | None:
    """The Responses-API style items a quoted-turns user message stands for; None when it is not one.

    ``earlier`` are the request's items before it: a result is paired with the latest call of its tool.
    """
    if not text.startswith(PREAMBLE):
        return None
    found = list(_PART.finditer(text))
    if not found:
        return None
    items: list[dict[str, Any]] = []
    for match, after in zip(found, [*found[1:], None], strict=True):
        body = _body(text[match.end():after.start() if after is not None else None])
        if match.group("said"):
            items.append({"role": "assistant", "content": body})
        elif match.group("call"):
            arguments = _value(body)
            items.append({
                "type": "function_call",
                "call_id": f"quoted-{len(earlier) + len(items)}",
                "name": match.group("call"),
                "arguments": json.dumps(arguments if isinstance(arguments, dict) else {}, ensure_ascii=False),
            })
        else:
            name = match.group("result")
            call_id = next(
                (
                    i["call_id"] for i in reversed([*earlier, *items])
                    if i.get("type") == "function_call" and i.get("name") == name
                ),
                f"quoted-{name}",
            )
            items.append({"type": "function_call_output", "call_id": call_id, "output": _result_text(_value(body))})
    return items
