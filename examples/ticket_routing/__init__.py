"""Ticket routing: the AgentAssay paper's Sec. 8.4 suite, with a plain-callable agent."""
