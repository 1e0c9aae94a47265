# Locust patches the standard library for gevent when imported: first, before boto3 imports
# ssl, so these tests run as the rest of the suite does whatever order they are collected in.
import locust  # noqa: F401
