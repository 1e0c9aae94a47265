"""What a locustfile author imports: the user base class, its options and the client factory.

    from loadgen.workload import DynamoUser, WorkloadOptions, add_argument, register

    class CounterUser(DynamoUser):
        designs = ("single", "sharded")
        ...

    register(CounterUser)

Owns: the Locust user every workload derives from and the hooks it installs (`user`), the
workload's command-line options (`options`), table creation (`tables`), and the open load
model, where arrivals are launched at a rate (`arrivals`), driven from several Locust
processes where one is the limit (`processes`). Its keys are drawn by the key
distributions of `loadgen.design.keys`. Imports `loadgen.client`, `loadgen.design` (keys
only), `loadgen.heat`, `loadgen.model`, `loadgen.targets`
(to ask a running emulator its scale), `loadgen.webui` (installed on Locust's web UI) and
`loadgen.errors`; never the emulator, and the verdict only through the web UI.
"""

# Locust patches the standard library for gevent when it is imported: first, before boto3
# imports ssl, as `locust -f` does.
import locust  # noqa: F401

from loadgen.client import DynamoDBError, make_client
from loadgen.errors import ConfigError
from loadgen.workload.options import WorkloadOptions, add_argument, add_common_arguments
from loadgen.workload.user import DynamoUser, register, workload_options

__all__ = [
    "ConfigError",
    "DynamoDBError",
    "DynamoUser",
    "WorkloadOptions",
    "add_argument",
    "add_common_arguments",
    "make_client",
    "register",
    "workload_options",
]
