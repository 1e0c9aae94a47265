"""The harness's error hierarchy.

Every error a user can cause is a `HarnessError`; the CLI prints its message on one line and
exits with `exit_code`, without a traceback.
"""

from __future__ import annotations

__all__ = ["ConfigError", "CredentialsError", "HarnessError", "InvalidSetting", "TargetError"]


class HarnessError(Exception):
    """Base class for errors the CLI reports as one line."""

    exit_code = 2


class ConfigError(HarnessError, ValueError):
    """A flag, spec string or config file value is not what was expected."""


class InvalidSetting(ConfigError):
    """A value a settings object refuses, said of its field (``attempts must be 1 to 20 (got
    0)``); a command that took it from a flag says it of the flag (`named`)."""

    def __init__(self, field: str, rule: str) -> None:
        super().__init__(f"{field} {rule}")
        self.field = field
        self.rule = rule

    def named(self, flags: dict[str, str]) -> ConfigError:
        """The same error said of the flag ``flags`` gives the field, where it gives one."""
        flag = flags.get(self.field)
        return ConfigError(f"{flag} {self.rule}") if flag else self


class TargetError(HarnessError):
    """The DynamoDB target cannot be reached or started."""


class CredentialsError(HarnessError):
    """No usable AWS credentials or region for a real-AWS run."""
