# The AgentAssay GitHub Action: the engine with the OpenAI Agents SDK, run as the runner runs
# container actions (workspace mounted at /github/workspace, inputs as INPUT_* variables).
# No USER: the runner mounts the workspace owned by root.
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

WORKDIR /action
COPY pyproject.toml README.md entrypoint.py ./
COPY agentassay ./agentassay
# Size: no bytecode for third-party packages (compiled on import instead, about
# 4 s per run) and no test suites of numpy and scipy; our own package keeps its bytecode. This took
# the image from 488 to 395 MB on the CI's 191 MB stand-in base (docs/action.md).
SHELL ["/bin/sh", "-eu", "-c"]
RUN python -m pip install --no-cache-dir --no-compile "./[agents]"; \
    site="$(python -c 'import numpy, os; print(os.path.dirname(os.path.dirname(numpy.__file__)))')"; \
    find "$site/numpy" "$site/scipy" -depth -type d -name tests -prune -exec rm -rf {} +; \
    python -m compileall -q "$site/agentassay"; \
    python -c "import agentassay._integrations.github, github, agents, scipy.stats"

ENTRYPOINT ["/usr/local/bin/python", "/action/entrypoint.py"]
