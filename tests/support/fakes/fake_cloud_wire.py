"""Anthropic's Messages API as Bedrock and Vertex serve it, as the fake provider speaks it.

Bedrock: `POST /model/<model>/invoke` (a JSON message) and `.../invoke-with-response-stream`
(the Messages events, each JSON event base64-encoded in a `chunk` frame of AWS's binary
`application/vnd.amazon.eventstream`), the model in the path, `anthropic_version` in the body,
signed with SigV4 (`check_sigv4` verifies the signature as AWS would). Vertex:
`POST /v1/projects/<p>/locations/<r>/publishers/anthropic/models/<m>:rawPredict` (JSON) or
`:streamRawPredict` (the same server-sent events as Anthropic's API), with a Google bearer
token; and Google's OAuth token endpoint (`POST /token`), so application-default credentials
refresh against the fake instead of Google.
"""

from __future__ import annotations

import base64
import struct
import zlib
from collections.abc import Iterator, Mapping

import orjson

__all__ = ["EVENT_STREAM", "GOOGLE_TOKEN", "check_sigv4", "event_stream_frames"]

EVENT_STREAM = "application/vnd.amazon.eventstream"
GOOGLE_TOKEN = {
    "access_token": "ya29.fake-google-token",
    "expires_in": 3600,
    "token_type": "Bearer",
}

_STRING = 7  # the event stream's header value type for a UTF-8 string


def event_stream_frames(sse: Iterator[bytes]) -> Iterator[bytes]:
    """The Messages events of `sse` (server-sent events) as Bedrock's event stream frames."""
    for event in sse:
        for line in event.split(b"\n"):
            if line.startswith(b"data: "):
                payload = orjson.dumps({"bytes": base64.b64encode(line[6:]).decode()})
                yield _frame(
                    {
                        ":event-type": "chunk",
                        ":content-type": "application/json",
                        ":message-type": "event",
                    },
                    payload,
                )


def _frame(headers: Mapping[str, str], payload: bytes) -> bytes:
    encoded = b"".join(
        struct.pack("B", len(name))
        + name.encode()
        + struct.pack(">BH", _STRING, len(value))
        + value.encode()
        for name, value in headers.items()
    )
    prelude = struct.pack(">II", 16 + len(encoded) + len(payload), len(encoded))
    head = prelude + struct.pack(">I", zlib.crc32(prelude)) + encoded + payload
    return head + struct.pack(">I", zlib.crc32(head))


def check_sigv4(
    method: str, url: str, headers: Mapping[str, str], body: bytes, credentials: tuple[str, str]
) -> str | None:
    """Why the request's SigV4 signature is wrong for `credentials` (key id, secret), or None.

    Recomputed with botocore over exactly the headers the request says it signed."""
    from botocore.auth import SigV4Auth  # noqa: PLC0415 (the bedrock extra, only when asked)
    from botocore.awsrequest import AWSRequest  # noqa: PLC0415
    from botocore.credentials import Credentials  # noqa: PLC0415

    authorization = headers.get("authorization", "")
    scheme, _, fields = authorization.partition(" ")
    parts = dict(p.strip().split("=", 1) for p in fields.split(",") if "=" in p)
    if scheme != "AWS4-HMAC-SHA256" or not {"Credential", "SignedHeaders", "Signature"} <= set(
        parts
    ):
        return f"not a SigV4 authorization: {authorization[:40]!r}"
    key_id, _, region, service, _ = parts["Credential"].split("/")
    if key_id != credentials[0]:
        return f"signed with key {key_id}"
    signed = parts["SignedHeaders"].split(";")
    request = AWSRequest(method, url, {h: headers[h] for h in signed if h in headers}, body)
    request.context["timestamp"] = headers.get("x-amz-date", "")
    signer = SigV4Auth(Credentials(*credentials), service, region)
    expected = signer.signature(
        signer.string_to_sign(request, signer.canonical_request(request)), request
    )
    return None if expected == parts["Signature"] else "the signature does not match"
