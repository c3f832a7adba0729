"""The OpenAI Agents SDK customer-service workflow (triage -> FAQ / seat booking), in two versions.

``v1`` is the baseline; ``v2`` changes the triage prompt and, in its simulated behaviour, mis-routes
part of the seat-change requests to the FAQ agent: the regression the example suite should catch.
"""
