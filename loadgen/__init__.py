"""Partition Heat: load tests and partition-heat observability for DynamoDB."""

from __future__ import annotations

from pathlib import Path

from loadgen.errors import ConfigError, CredentialsError, HarnessError, TargetError

__all__ = [
    "ConfigError",
    "CredentialsError",
    "HarnessError",
    "TargetError",
    "__version__",
    "shipped",
]

__version__ = "0.1.0"

_PACKAGE = Path(__file__).resolve().parent
# The workloads' locustfiles, the shipped workloads' design files, the pipeline recipes and the
# dashboards' source sit at a checkout's top level (workloads/, examples/designs/, examples/ci/,
# dashboards/); pyproject.toml maps them into the wheel beside the modules (loadgen/workloads/,
# ...). Which layout this is follows from where this very package lies, never from the current
# directory.
_SHIPPED = _PACKAGE if (_PACKAGE / "workloads").is_dir() else _PACKAGE.parent


def shipped(relative: str) -> Path:
    """A file or folder the package ships, by its path in the project: ``workloads/counter.py``,
    ``examples/designs/counter.yaml``, ``dashboards``. Found in the installed package (or the
    checkout it is installed from, for an editable install), whatever the current directory.

        >>> shipped("workloads/counter.py").is_file()
        True
    """
    return _SHIPPED / relative
