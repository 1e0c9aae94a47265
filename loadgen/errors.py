"""The harness's error hierarchy.

Every error a user can cause is a `HarnessError`; the CLI prints its message on one line and
exits with `exit_code`, without a traceback.
"""

from __future__ import annotations

__all__ = ["ConfigError", "CredentialsError", "HarnessError", "TargetError"]


class HarnessError(Exception):
    """Base class for errors the CLI reports as one line."""

    exit_code = 2


class ConfigError(HarnessError, ValueError):
    """A flag, spec string or config file value is not what was expected."""


class TargetError(HarnessError):
    """The DynamoDB target cannot be reached or started."""


class CredentialsError(HarnessError):
    """No usable AWS credentials or region for a real-AWS run."""
