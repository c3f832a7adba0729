"""``agentassay plan``: what a check will cost before it runs, and the estimate kept in the check's results.

The estimate (``_estimate``) uses the gate's own tests at the baseline's rates; the hooks (``_plugin``) record it
in a check's results (the ``plan`` section), so the PR comment can show the estimate beside what was used.
"""
