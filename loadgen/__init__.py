"""Partition Heat: load tests and partition-heat observability for DynamoDB."""

from __future__ import annotations

from loadgen.errors import ConfigError, CredentialsError, HarnessError, TargetError

__all__ = ["ConfigError", "CredentialsError", "HarnessError", "TargetError", "__version__"]

__version__ = "0.1.0"
