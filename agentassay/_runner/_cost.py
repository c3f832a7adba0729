"""USD of a trial from its tokens: the suite's ``config.prices``, else the maintained price table.

The table is Pydantic's ``genai-prices`` package (docs/prices.md): a data snapshot that ships inside the
package and is refreshed by its releases, so upgrading the package updates the prices. We never use its
opt-in ``UpdatePrices`` download: a run makes no network look-ups, and the same installed version prices
the same tokens the same way (the results and the plan name the version). ``config.prices`` overrides it,
entry by entry; the offline simulator makes no paid calls.
"""

from __future__ import annotations

import contextlib
import functools
import warnings
from dataclasses import dataclass
from typing import Any

from .._traces import Cost

# The suite's providers (``model.provider``) as the table knows them: "openai-compatible" may be anything,
# so its model is looked up by name alone, as is a framework agent's own model (no provider in the suite).
_PROVIDER_IDS = {"openai": "openai", "litellm": "litellm"}
OFFLINE = "offline"
OFFLINE_NOTE = "the offline simulator (model.provider: offline) makes no paid calls: its trials cost $0"


@dataclass(frozen=True)
class PriceSource:
    """Where a model's price comes from: ``config.prices``, the table (with its version), or the simulator."""

    kind: str  # "config" | "table" | "offline"
    label: str  # for messages: "config.prices", "genai-prices 0.2.3", "the offline simulator"


def table_version() -> str | None:
    """The installed price table's name and version ("genai-prices 0.2.3"), or None when it is not installed."""
    mod = _table()
    return None if mod is None else f"genai-prices {getattr(mod, '__version__', '?')}"


@functools.lru_cache(maxsize=1)
def _table() -> Any:
    try:
        # An optional dependency, loaded on the first price look-up (about 0.3 s): `agentassay --help` stays fast.
        import genai_prices
    except ImportError:  # Python 3.10 (genai-prices needs 3.11) or a stripped install: config.prices only
        return None
    return genai_prices


@functools.lru_cache(maxsize=256)
def _table_usd(model: str, provider: str | None, input_tokens: int, output_tokens: int) -> float | None:
    mod = _table()
    if mod is None or not model:
        return None
    provider_id = _PROVIDER_IDS.get(provider or "")
    usage = mod.Usage(input_tokens=input_tokens, output_tokens=output_tokens)
    for pid in dict.fromkeys([provider_id, None]):  # the provider's own entry first, then by model name alone
        try:
            with warnings.catch_warnings():  # a model priced by request size warns; the price is still right
                warnings.simplefilter("ignore")
                return float(mod.calc_price(usage, model, provider_id=pid).total_price)
        except Exception:  # not in the table (LookupError), or a price it cannot compute: unpriced, never a crash
            continue
    return None


def load_table(provider: str | None, prices: dict[str, dict[str, float]]) -> None:
    """Load the table before the trials start when they may look prices up in it: its first import and data
    load (about 0.5 s) would otherwise run on the event loop at the first trial's end, holding up every trial
    in flight (and adding to their measured latency)."""
    if provider == OFFLINE or _configured(None, prices) is not None:  # "*": the table is never asked
        return
    mod = _table()
    if mod is not None:
        with contextlib.suppress(Exception):  # only the data load is wanted: no model has an empty name
            mod.calc_price(mod.Usage(), "")


def _configured(model: str | None, prices: dict[str, dict[str, float]]) -> dict[str, float] | None:
    return prices.get(model or "") or prices.get("*")


def price_source(model: str | None, provider: str | None, prices: dict[str, dict[str, float]]) -> PriceSource | None:
    """Where ``model``'s price would come from, or None when nothing prices it (say so: never count it as free)."""
    if _configured(model, prices) is not None:
        return PriceSource("config", "config.prices")
    if provider == OFFLINE:
        return PriceSource("offline", "the offline simulator")
    if model and _table_usd(model, provider, 1_000_000, 0) is not None:
        return PriceSource("table", table_version() or "the price table")
    return None


def unpriced_message(model: str, provider: str | None, why: str) -> str:
    """Why ``model``'s trials have no USD (``why``: what that stops), and the fix, in the words a user acts on."""
    table = table_version()
    where = f"the price table ({table})" if table else "the price table (genai-prices, on Python >= 3.11)"
    of = f" for provider '{provider}'" if provider and provider != "openai-compatible" else ""
    return (
        f"model '{model}' has no price: {where} does not list it{of} and config.prices has "
        f"no entry for it, so {why}. Add its price in USD per million "
        f"tokens to the suite, e.g. `config: {{prices: {{\"{model}\": {{input: 0.40, output: 1.60}}}}}}` "
        '(or `"*"` for any model); docs/prices.md.'
    )


def usd_for(
    input_tokens: float,
    output_tokens: float,
    model: str | None,
    prices: dict[str, dict[str, float]],
    provider: str | None = None,
) -> float | None:
    """USD of these tokens: ``config.prices`` (the model's entry, else ``"*"``), else the table by provider
    and model; 0 on the offline simulator. None when no price applies."""
    table = _configured(model, prices)
    if table is not None:
        return (input_tokens * table.get("input", 0.0) + output_tokens * table.get("output", 0.0)) / 1e6
    if provider == OFFLINE:
        return 0.0
    if not model:
        return None
    # Whole tokens for the look-up: a plan's mean tokens per trial are fractional (a sub-token difference).
    return _table_usd(model, provider, round(input_tokens), round(output_tokens))


def price_usd(
    cost: Cost, model: str | None, prices: dict[str, dict[str, float]], provider: str | None = None
) -> float | None:
    """A trial's USD (:func:`usd_for`), except that the offline simulator's trials stay unpriced (None) in the
    results: they cost nothing, and what counts USD reads them as $0 and says why (OFFLINE_NOTE)."""
    if provider == OFFLINE and _configured(model, prices) is None:
        return None
    return usd_for(cost.input_tokens, cost.output_tokens, model, prices, provider)
