"""HTTP to the servers under test (plain http on 127.0.0.1), without a TLS context per call.

`httpx.get()` and the other top-level calls build a new `httpx.Client` each time, and every
new Client builds httpx's default TLS context, loading certifi's CA bundle: about 50 ms of CPU
(measured: `httpx.Client()` 49 ms, `httpx.Client(verify=ctx)` 0.15 ms), which plain http to a
loopback server never uses. The suite made hundreds of these calls per module (531 in
test_hardening_end_to_end.py, ~26 s of its ~41 s of CPU), and `ServerProcess` polled /health
with one every 50 ms while its server was starting on the same two cores.

These are the same calls (a new client, and so a new connection, per call; the same keyword
arguments) with one context built once per process: verification is unchanged should a test
ever use https.
"""

from __future__ import annotations

from typing import Any, Final

import httpx

__all__ = ["TLS", "client", "get", "post", "request"]

TLS: Final = httpx.create_ssl_context()
"""httpx's own default context (certifi's bundle), built once for every call here."""


def request(method: str, url: str, **kwargs: Any) -> httpx.Response:
    return httpx.request(method, url, verify=TLS, **kwargs)


def get(url: str, **kwargs: Any) -> httpx.Response:
    return request("GET", url, **kwargs)


def post(url: str, **kwargs: Any) -> httpx.Response:
    return request("POST", url, **kwargs)


def client(**kwargs: Any) -> httpx.Client:
    """An `httpx.Client` (for a test that wants one connection for several requests)."""
    return httpx.Client(verify=TLS, **kwargs)
