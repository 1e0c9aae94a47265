"""What DynamoDB charges: dated prices per region and the monthly arithmetic.

Owns: the prices data file (``prices.json``, with the AWS page and date of every figure) and
its reading (`prices`), and the cost of units per second and stored bytes over a window (a
month unless a launch's hours are given), on demand, provisioned and stored, per table class
(`cost`). Pure arithmetic: imports `loadgen.errors`
only, so the verdict (a run's measured units) and the design check (a file's estimate) print
the same figures in the same form.
"""

from __future__ import annotations

from loadgen.pricing.cost import (
    COUNTED,
    MONTH,
    TARGET_UTILIZATION,
    Usage,
    Window,
    currency_of,
    format_cost,
    format_money,
    format_usd,
    monthly_cost,
    window_of,
)
from loadgen.pricing.prices import (
    DEFAULT_REGION,
    ClassPrices,
    Prices,
    add_price_flags,
    load_prices,
)

__all__ = [
    "COUNTED",
    "DEFAULT_REGION",
    "MONTH",
    "TARGET_UTILIZATION",
    "ClassPrices",
    "Prices",
    "Usage",
    "Window",
    "add_price_flags",
    "currency_of",
    "format_cost",
    "format_money",
    "format_usd",
    "load_prices",
    "monthly_cost",
    "window_of",
]
