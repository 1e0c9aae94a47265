"""Reading the YAML or TOML files users hand us: run configs and thresholds."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from loadgen.errors import ConfigError

__all__ = ["read_yaml_or_toml"]


def read_yaml_or_toml(path: str | Path, kind: str) -> Any:
    """The data of a ``.yaml``/``.yml`` or ``.toml`` file.

    Any failure is a `ConfigError` of one line naming the ``kind`` of file and its path.
    """
    file = Path(path)
    try:
        text = file.read_text()
    except OSError as e:
        raise ConfigError(f"cannot read {kind} {str(path)!r}: {e.strerror}") from None
    if file.suffix not in (".toml", ".yaml", ".yml"):
        raise ConfigError(f"{kind} {str(path)!r} must end in .yaml, .yml or .toml")
    try:
        if file.suffix == ".toml":
            import tomllib

            return tomllib.loads(text)
        import yaml

        return yaml.safe_load(text)
    except Exception as e:
        first = str(e).splitlines()[0] if str(e) else type(e).__name__
        raise ConfigError(f"{kind} {str(path)!r} is not valid: {first}") from None
