"""Profiles: steps, ramps, holds, daily curves and spikes, and one line for bad input."""

from __future__ import annotations

from pathlib import Path

import pytest

from loadgen.errors import ConfigError
from loadgen.simulate.profile import constant, load_profile, parse_profile


def test_a_ramp_then_a_hold() -> None:
    profile = parse_profile(["0 -> 20k/s over 5m", "hold 10m"])
    assert profile.duration_s == 900
    assert profile.rate(0) == pytest.approx(20000 * 0.5 / 300)
    assert profile.rate(150) == pytest.approx(20000 * 150.5 / 300)
    assert profile.rate(299) == pytest.approx(20000 * 299.5 / 300)
    assert set(profile.rates[300:]) == {20000.0}
    assert sum(profile.rates[:300]) == pytest.approx(20000 * 300 / 2)  # a ramp's mean is half


def test_steps_spikes_and_a_daily_curve() -> None:
    profile = parse_profile(["100/s for 1h", "6000/min for 1h", "x3 for 5m at 1h"])
    assert profile.duration_s == 7200
    assert profile.rate(3599) == 100
    assert profile.rate(3600) == profile.rate(3899) == 300
    assert profile.rate(3900) == 100
    daily = parse_profile(["daily 2k/s..20k/s for 24h"])
    assert daily.duration_s == 86400
    assert daily.rate(0) == pytest.approx(2000, rel=1e-6)
    assert daily.rate(43200) == pytest.approx(20000, rel=1e-6)
    assert min(daily.rates) >= 2000 and max(daily.rates) <= 20000


def test_constant_rate() -> None:
    assert constant(50.0, 120).rates == (50.0,) * 120


@pytest.mark.parametrize(
    ("lines", "message"),
    [
        (["0 -> 20k/s in 5m"], "profile line '0 -> 20k/s in 5m' does not parse"),
        (["0 -> fast over 5m"], "'fast' is not a rate"),
        (["100/s for soon"], "'soon' is not a time span"),
        (["x3 for 5m at 2h"], "at least one step"),
        (["100/s for 1h", "x3 for 5m at 2h"], "starts after the profile's end"),
    ],
)
def test_bad_lines_name_the_value_and_what_was_expected(lines: list[str], message: str) -> None:
    with pytest.raises(ConfigError, match=message.replace("(", r"\(")):
        parse_profile(lines)


def test_a_profile_file_is_a_yaml_list(tmp_path: Path) -> None:
    path = tmp_path / "launch.yaml"
    path.write_text("profile:\n  - 0 -> 1k/s over 1m\n  - hold 1m\n")
    assert load_profile(str(path)).duration_s == 120
    path.write_text("rate: 5\n")
    with pytest.raises(ConfigError, match="expected a list of lines"):
        load_profile(str(path))
