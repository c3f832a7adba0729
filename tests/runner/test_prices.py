"""Prices (issue 25): config.prices first, the offline simulator at $0, else the maintained table (genai-prices)."""

from __future__ import annotations

import pytest

from agentassay._runner._cost import price_source, price_usd, table_version, usd_for
from agentassay._traces import Cost

genai_prices = pytest.importorskip("genai_prices")


def test_the_table_prices_a_known_hosted_model_with_no_configuration() -> None:
    usd = usd_for(1_000_000, 1_000_000, "gpt-4.1-mini", {}, "openai")
    expected = float(genai_prices.calc_price(
        genai_prices.Usage(input_tokens=1_000_000, output_tokens=1_000_000), "gpt-4.1-mini", provider_id="openai"
    ).total_price)
    assert usd is not None and usd > 0 and usd == pytest.approx(expected)
    # A framework agent's own model, or an OpenAI-compatible server: looked up by name alone.
    assert usd_for(1_000_000, 1_000_000, "gpt-4.1-mini", {}, None) == pytest.approx(expected)
    assert usd_for(1_000_000, 1_000_000, "gpt-4.1-mini", {}, "openai-compatible") == pytest.approx(expected)
    source = price_source("gpt-4.1-mini", "openai", {})
    assert source is not None and source.kind == "table" and source.label == table_version()
    assert table_version() == f"genai-prices {genai_prices.__version__}"


def test_litellm_names_carry_their_provider() -> None:
    assert usd_for(1000, 1000, "openai/gpt-4.1-mini", {}, "litellm") == pytest.approx(
        usd_for(1000, 1000, "gpt-4.1-mini", {}, "openai")
    )


def test_config_prices_override_the_table_and_star_prices_the_rest() -> None:
    mine = {"gpt-4.1-mini": {"input": 1.0, "output": 2.0}}
    assert usd_for(1_000_000, 1_000_000, "gpt-4.1-mini", mine, "openai") == pytest.approx(3.0)
    assert price_source("gpt-4.1-mini", "openai", mine).kind == "config"
    star = {"*": {"input": 5.0, "output": 0.0}}
    assert usd_for(1_000_000, 0, "gpt-4.1-mini", star, "openai") == pytest.approx(5.0)


def test_the_offline_simulator_costs_nothing_and_its_trials_stay_unpriced() -> None:
    assert usd_for(1_000_000, 1_000_000, "offline-simulator", {}, "offline") == 0.0
    assert price_source("gpt-4.1-mini", "offline", {}).kind == "offline"  # a simulator named after a model
    assert price_usd(Cost(100, 100), "offline-simulator", {}, "offline") is None
    # config.prices still prices it (the examples price the simulator to show costs).
    assert price_usd(Cost(1_000_000, 0), "offline-simulator", {"*": {"input": 0.4}}, "offline") == pytest.approx(0.4)


def test_an_unknown_model_is_unpriced_never_free() -> None:
    assert usd_for(10, 10, "my-local-finetune-7", {}, "openai-compatible") is None
    assert price_source("my-local-finetune-7", "openai-compatible", {}) is None
    assert usd_for(10, 10, None, {}, None) is None
    assert price_usd(Cost(10, 10), "my-local-finetune-7", {}, "openai") is None
