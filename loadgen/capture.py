"""Record an application's DynamoDB traffic for ``loadgen replay``: ``install(client, FILE)``.

The public name of `loadgen.traffic.capture` (see there)::

    from loadgen import capture
    recording = capture.install(boto3.client("dynamodb"), "t.jsonl.gz", hash_keys="s3cret")
"""

from loadgen.traffic.capture import Capture, install

__all__ = ["Capture", "install"]
