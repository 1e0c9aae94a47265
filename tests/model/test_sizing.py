"""How a remedy sizes a hot key's shards: for the busiest partition the model's hash makes of
them, with the rest of the keys' share, wherever a moving key's bucket falls."""

from __future__ import annotations

import datetime
import itertools
from fractions import Fraction

import pytest

from loadgen.model.hashing import bucket_of
from loadgen.model.partitions import PARTITION_WRITE_UNITS
from loadgen.model.sizing import (
    HEADROOM,
    MAX_SHARDS,
    PLACEMENT_ODDS,
    SPREAD,
    busiest,
    fits,
    shard_plan,
    shards_for,
)


def _exact(balls: int, bins: int, most: int) -> Fraction:
    """The chance no bin holds more than ``most``, by listing every placement."""
    placements = list(itertools.product(range(bins), repeat=balls))
    within = sum(1 for placed in placements if max(placed.count(b) for b in range(bins)) <= most)
    return Fraction(within, len(placements))


@pytest.mark.parametrize(("balls", "bins"), [(4, 4), (5, 3), (6, 4), (3, 8)])
def test_the_odds_of_a_placement_are_those_of_listing_every_one(balls: int, bins: int) -> None:
    odds = {most: _exact(balls, bins, most) for most in range(1, balls + 1)}
    assert busiest(balls, bins) == min(m for m, p in odds.items() if p >= PLACEMENT_ODDS)


def test_a_fixed_keys_shards_are_counted_where_the_model_places_them() -> None:
    key, partitions = "GAME#featured", 8
    places = [bucket_of(f"{key}#{n}", partitions) for n in range(6)]
    assert busiest(6, partitions, key) == max(places.count(p) for p in set(places))


def test_a_moving_keys_shards_fit_on_nearly_every_day_of_two_years() -> None:
    # iot's by-day key at launch: 1,667 write units/s on DAY#<day>, 8 partitions.
    units, partitions = 1_667.0, 8
    shards, needed = shard_plan(units, "write", partitions, moves=True)
    assert shards > shards_for(units, "write") and needed >= partitions
    day = datetime.date(2026, 1, 1)
    days = [day + datetime.timedelta(days=n) for n in range(730)]
    over = 0
    for day in days:
        places = [bucket_of(f"DAY#{day}#{n}", needed) for n in range(shards)]
        busiest_units = max(places.count(p) for p in set(places)) * units / shards
        over += busiest_units > PARTITION_WRITE_UNITS / HEADROOM
    # PLACEMENT_ODDS of the placements, on the model's own hash: a day in a few hundred.
    assert over <= 0.005 * len(days)
    # The least count the RISK rule gives would not: too many days put 3 of 4 on one.
    least = shards_for(units, "write")
    assert not fits(least, units, "write", partitions, moves=True)


def test_a_key_whose_neighbours_fill_its_partitions_asks_for_more_partitions() -> None:
    # 7,200 write units/s of other keys over 8 partitions leave less than the headroom.
    shards, partitions = shard_plan(2_400, "write", 8, key="GAME#featured", others=7_200)
    assert partitions > 8
    assert fits(shards, 2_400, "write", partitions, "GAME#featured", others=7_200)
    assert shards <= SPREAD * shards_for(2_400, "write")


def test_partitions_are_not_asked_past_what_a_quota_allows() -> None:
    shards, partitions = shard_plan(6_000, "write", 12, moves=True, others=0.0, most=44)
    assert partitions == 44 and shards <= MAX_SHARDS
    assert fits(shards, 6_000, "write", 44, moves=True)
