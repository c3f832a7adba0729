"""The airline customer-service workflow as an Agno team (``v1`` baseline, ``v2`` regressed triage).

The triage agent is the ``agno.team.Team``'s leader; the FAQ and seat-booking agents are its members, reached
through the ``delegate_task_to_member(member_id, task)`` tool Agno gives the leader. Needs ``agentassay[agno]``.
"""
