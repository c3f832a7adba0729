"""The customer-service manifest of the paper's Listing 1, built by hand (tests share it)."""

from __future__ import annotations

from agentassay._features.structure._model import AgentNode, Delegation, Manifest, ToolNode

TRIAGE, FAQ, SEAT = "Triage Agent", "FAQ Agent", "Seat Booking Agent"


def customer_service(*extra_agents: AgentNode, **changes: object) -> Manifest:
    """The paper's running example (Listing 1), built by hand."""
    m = Manifest(
        system="customer_service",
        entry_agent="triage_agent",
        agents=(
            AgentNode("triage_agent", TRIAGE),
            AgentNode("faq_agent", FAQ),
            AgentNode("seat_booking_agent", SEAT),
            *extra_agents,
        ),
        tools=(ToolNode("faq_lookup_tool", "faq_lookup_tool"), ToolNode("update_seat", "update_seat")),
        allow=(("faq_agent", "faq_lookup_tool"), ("seat_booking_agent", "update_seat")),
        restrict=(
            ("triage_agent", "faq_lookup_tool"),
            ("triage_agent", "update_seat"),
            ("faq_agent", "update_seat"),
            ("seat_booking_agent", "faq_lookup_tool"),
        ),
        delegations=(
            Delegation("triage_agent", "faq_agent", "handoff", tool="transfer_to_faq_agent"),
            Delegation("faq_agent", "triage_agent", "handoff", tool="transfer_to_triage_agent"),
            Delegation(
                "triage_agent", "seat_booking_agent", "handoff", tool="transfer_to_seat_booking_agent"
            ),
            Delegation("seat_booking_agent", "triage_agent", "handoff", tool="transfer_to_triage_agent"),
        ),
    )
    return Manifest(**{**m.__dict__, **changes})  # type: ignore[arg-type]
