"""Shared pytest set-up: `--real-model` and the session's real local LLM (tests/_support/real_model.py).

Tests marked `real_model` need the pinned model wheels and start a llama.cpp server; they are skipped
unless `--real-model` is given (`.ci/run` has a job for them): `pytest --real-model -m real_model`.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--real-model", action="store_true", default=False,
        help="run the tests marked real_model on a local LLM (install: python -m pip install "
        "--require-hashes -r tests/_support/real_model_requirements.txt; docs/real-model.md)",
    )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if config.getoption("--real-model"):
        return
    skip = pytest.mark.skip(
        reason="needs the real local LLM: run with --real-model after `python -m pip install --require-hashes "
        "-r tests/_support/real_model_requirements.txt` (docs/real-model.md)"
    )
    for item in items:
        if "real_model" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(scope="session")
def real_model_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """The model served on 127.0.0.1 behind the normaliser, for the whole session (`real_model.Served`).

    Asked for with --real-model but not installed is an error, not a skip: the run was meant to use it.
    """
    from tests._support import real_model

    missing = real_model.missing_packages()
    if missing:
        pytest.fail(f"--real-model: missing {', '.join(missing)}; install with `{real_model.install_hint()}`",
                    pytrace=False)
    log = tmp_path_factory.mktemp("real-model") / "server.log"
    try:
        with real_model.serve(log=log) as served:
            yield served
    except real_model.RealModelError as e:
        pytest.fail(f"{e} (server log: {log})", pytrace=False)
