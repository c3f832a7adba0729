#!/usr/bin/env bash
# Each agent framework's tests in an environment of its own (issue 24): their pins conflict (CrewAI needs
# openai<3 and opentelemetry-sdk>=1.45.1, the Agents SDK and PydanticAI openai>=3, ADK opentelemetry-sdk<=1.44),
# so one environment cannot hold them all. Per framework: .venv-fw-<name> with the package, its test extra
# and .ci/frameworks/<name>.txt (the framework, pinned), then `pytest tests/frameworks/<name>` — offline.
#
# usage: bash .ci/frameworks.sh [NAME ...]      (default: every .ci/frameworks/*.txt)
set -euo pipefail
cd "$(dirname "$0")/.."

names=("$@")
if [ ${#names[@]} -eq 0 ]; then
    for f in .ci/frameworks/*.txt; do
        [ -e "$f" ] && names+=("$(basename "$f" .txt)")
    done
fi
command -v uv >/dev/null || python3 -m pip install --quiet uv

for name in "${names[@]}"; do
    start=$SECONDS
    env=".venv-fw-$name"
    echo "== framework $name ($env)"
    uv venv --quiet --allow-existing --python python3 "$env"
    uv pip install --quiet --python "$env/bin/python" --override .ci/overrides.txt -e ".[test]" \
        -r ".ci/frameworks/$name.txt"
    "$env/bin/python" -m pytest -q -p no:cacheprovider "tests/frameworks/$name"
    echo "framework $name: $((SECONDS - start)) s including install"
done
