"""DynamoDB's prices per region, read from a dated data file.

The package's own file (``prices.json`` beside this module) gives each figure with where AWS
published it (the source and its date) and whether a source gives it (``verified``); ``--prices
FILE`` reads another file of the same shape. A file that does not parse, or lacks a figure,
raises `ConfigError` naming the value and what was expected (the CLI exits 2).

Each region's table is in its own currency (``"currency": "CNY"`` for the China regions; USD
where a file names none). A figure is ``null`` where no source gave it: the cost it would price
is then no figure (``None``), never a guess.

    prices = load_prices(region="us-east-1")
    prices.on_demand_write_per_million          # 0.625 (Standard table class)
    prices.of("standard_ia").storage_gb_month   # 0.1
    prices.stamp()                              # 'us-east-1, AWS Price List 2026-08-15'
    load_prices(region="cn-north-1").currency   # 'CNY'
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from loadgen.errors import ConfigError

__all__ = [
    "CALCULATOR_MONTH_HOURS",
    "CLASSES",
    "DEFAULT_REGION",
    "FIGURES",
    "ClassPrices",
    "Prices",
    "add_price_flags",
    "load_prices",
]

DEFAULT_REGION = "us-east-1"
CALCULATOR_MONTH_HOURS = 730.0
"""AWS's Pricing Calculator's month: 365 days x 24 h / 12 (its pages' examples take 720)."""
CLASSES = ("standard", "standard_ia")
"""Table classes: DynamoDB Standard and DynamoDB Standard-Infrequent Access."""
FIGURES = (
    "on_demand_read_per_million",
    "on_demand_write_per_million",
    "provisioned_rcu_hour",
    "provisioned_wcu_hour",
    "storage_gb_month",
)
"""The figures each table class needs, in the region's currency."""


@dataclass(frozen=True)
class ClassPrices:
    """One table class's prices in one region, in its currency; None: no source gave it."""

    on_demand_read_per_million: float | None
    on_demand_write_per_million: float | None
    provisioned_rcu_hour: float | None
    provisioned_wcu_hour: float | None
    storage_gb_month: float | None


@dataclass(frozen=True)
class Prices:
    """A region's prices, with where and when they were read."""

    region: str
    read_on: str
    """The date the figures were looked up (ISO)."""
    verified: bool
    """True when a source gives every figure that has a price."""
    status: str
    sources: tuple[str, ...]
    """Where AWS published the figures."""
    classes: dict[str, ClassPrices]
    currency: str = "USD"
    """ISO 4217 code of every figure in the table: ``USD``, ``CNY``."""
    partly_verified: bool = False
    """True when a source gives some of the priced figures, not all."""
    unpriced: tuple[str, ...] = ()
    """``class.figure`` of each figure no source gave: ``standard.storage_gb_month``."""
    hours_per_month: float = 730.0
    """Hours a month is carried to: 730, as AWS's Pricing Calculator counts it."""
    gb_bytes: int = 1024**3
    origin: str = "loadgen/pricing/prices.json"
    """The file read: the package's, or ``--prices FILE``."""
    published: str = ""
    """Where and when the region's figures were published: ``AWS Price List 2026-08-15``."""

    def of(self, table_class: str) -> ClassPrices:
        return self.classes[table_class]

    @property
    def on_demand_write_per_million(self) -> float | None:
        return self.classes["standard"].on_demand_write_per_million

    def stamp(self) -> str:
        """``us-east-1, AWS Price List 2026-08-15``: printed with every figure (``(unverified)``
        after it where a file marks a priced figure so)."""
        if self.verified:
            mark = ""
        elif self.partly_verified:
            mark = " (partly verified)"
        else:
            mark = " (unverified)"
        return f"{self.region}, {self.published or f'prices read {self.read_on}'}{mark}"

    def month(self) -> str:
        """``a month of 730 h, as AWS's Pricing Calculator counts it``: with every figure."""
        words = f"a month of {self.hours_per_month:g} h"
        if self.hours_per_month == CALCULATOR_MONTH_HOURS:
            words += ", as AWS's Pricing Calculator counts it"
        return words

    def to_dict(self) -> dict[str, Any]:
        return {
            "region": self.region,
            "published": self.published,
            "read_on": self.read_on,
            "verified": self.verified,
            "partly_verified": self.partly_verified,
            "currency": self.currency,
            "unpriced": list(self.unpriced),
            "sources": list(self.sources),
            "file": self.origin,
            "hours_per_month": self.hours_per_month,
        }


def _number(where: str, value: Any, currency: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise ConfigError(f"{where}: expected a price in {currency}, a number >= 0 (got {value!r})")
    if value < 0:
        raise ConfigError(f"{where}: expected a price in {currency}, a number >= 0 (got {value!r})")
    return float(value)


def _figure(where: str, value: Any, currency: str) -> tuple[float | None, str | None, bool]:
    """A figure is a number, or ``{"price": number or null, "source": text, "verified": bool}``
    (``"usd"`` for ``"price"`` in files of the first shape); null: no source gave it."""
    source, verified = None, True
    if isinstance(value, dict):
        source = value.get("source")
        verified = bool(value.get("verified", True))
        key = "price" if "price" in value else "usd"
        if key not in value:
            raise ConfigError(f"{where}: expected 'price', a number >= 0 or null (got {value!r})")
        value = value[key]
        if value is None:
            return None, source if isinstance(source, str) else None, False
    return _number(where, value, currency), source if isinstance(source, str) else None, verified


def parse_prices(data: Any, region: str, origin: str) -> Prices:
    """Check a loaded prices file and take one region's figures."""
    if not isinstance(data, dict) or not isinstance(data.get("regions"), dict):
        raise ConfigError(
            f"{origin}: expected a mapping with 'regions' (got {type(data).__name__})"
        )
    regions = data["regions"]
    body = regions.get(region)
    if not isinstance(body, dict):
        raise ConfigError(
            f"unknown region {region!r} in {origin} (expected one of: {', '.join(sorted(regions))})"
        )
    where = f"{origin}: regions.{region}"
    classes_in = body.get("classes")
    if not isinstance(classes_in, dict) or "standard" not in classes_in:
        raise ConfigError(
            f"{where}.classes: expected a mapping with 'standard' (got {classes_in!r})"
        )
    currency = body.get("currency", data.get("currency", "USD"))
    if not isinstance(currency, str) or not re.fullmatch(r"[A-Z]{3}", currency):
        raise ConfigError(
            f"{where}.currency: expected a currency code such as USD or CNY (got {currency!r})"
        )
    sources: list[str] = []
    verified = bool(body.get("verified", True))
    seen: list[bool] = []
    unpriced: list[str] = []
    classes: dict[str, ClassPrices] = {}
    for name, figures in classes_in.items():
        if name not in CLASSES:
            raise ConfigError(
                f"{where}.classes.{name}: unknown table class (expected: {', '.join(CLASSES)})"
            )
        if not isinstance(figures, dict):
            raise ConfigError(f"{where}.classes.{name}: expected a mapping of prices")
        values: dict[str, float | None] = {}
        for figure in FIGURES:
            if figure not in figures:
                raise ConfigError(f"{where}.classes.{name}: lacks {figure} (expected a price)")
            value, source, ok = _figure(
                f"{where}.classes.{name}.{figure}", figures[figure], currency
            )
            values[figure] = value
            if value is None:
                unpriced.append(f"{name}.{figure}")
            else:
                seen.append(ok)
            if source and source not in sources:
                sources.append(source)
        classes[name] = ClassPrices(**values)
    if "standard_ia" not in classes:
        classes["standard_ia"] = classes["standard"]
    read_on = body.get("read_on")
    if not isinstance(read_on, str) or not read_on:
        raise ConfigError(
            f"{where}.read_on: expected the date the prices were read (got {read_on!r})"
        )
    hours = data.get("hours_per_month", 730)
    if isinstance(hours, bool) or not isinstance(hours, int | float) or not 0 < hours < math.inf:
        raise ConfigError(
            f"{origin}: hours_per_month: expected hours, a number > 0 (got {hours!r})"
        )
    gb = data.get("gb_bytes", 1024**3)
    if isinstance(gb, bool) or not isinstance(gb, int) or gb <= 0:
        raise ConfigError(
            f"{origin}: gb_bytes: expected bytes in a GB, an integer > 0 (got {gb!r})"
        )
    published = body.get("published", "")
    if not isinstance(published, str):
        raise ConfigError(
            f"{where}.published: expected where the prices were published (got {published!r})"
        )
    return Prices(
        region=region,
        read_on=read_on,
        published=published,
        verified=verified and all(seen),
        status=str(body.get("status", "")),
        currency=currency,
        partly_verified=any(seen) and not all(seen),
        unpriced=tuple(unpriced),
        sources=tuple(sources),
        classes=classes,
        hours_per_month=float(hours),
        gb_bytes=gb,
        origin=origin,
    )


def load_prices(path: str | Path | None = None, *, region: str | None = None) -> Prices:
    """The package's prices (or those of ``path``) for ``region`` (default us-east-1)."""
    region = region or DEFAULT_REGION
    if path is None:
        text = resources.files("loadgen.pricing").joinpath("prices.json").read_text()
        origin = "loadgen/pricing/prices.json"
    else:
        origin = str(path)
        try:
            text = Path(path).read_text()
        except OSError as e:
            raise ConfigError(f"cannot read prices file {origin!r}: {e.strerror}") from None
    try:
        data = json.loads(text)
    except ValueError as e:
        raise ConfigError(f"prices file {origin!r} is not JSON: {e}") from None
    return parse_prices(data, region, origin)


def add_price_flags(parser: Any) -> None:
    """``--prices FILE`` and ``--prices-region REGION`` on an argparse parser: the prices a
    command's costs are read at (`load_prices`)."""
    parser.add_argument(
        "--prices",
        metavar="FILE",
        help="prices file for the costs (default: the package's, sourced and dated per region)",
    )
    parser.add_argument(
        "--prices-region",
        metavar="REGION",
        help=f"region of the prices (default {DEFAULT_REGION}; a run on AWS: its region)",
    )
