"""The Guard's Host check reads the host name as urlsplit does (gateway/guard.host_name),
without urlsplit for a plain name: drawn Host values of the accepted shape, both readings."""

from __future__ import annotations

from urllib.parse import urlsplit

from hypothesis import given
from hypothesis import strategies as st

from live_memory.gateway.guard import HOST_SHAPE, host_name


def _by_urlsplit(value: str) -> str:
    try:
        return (urlsplit(f"//{value}").hostname or "").lower()
    except ValueError:
        return ""


@given(st.from_regex(HOST_SHAPE, fullmatch=True))
def test_the_host_name_is_the_one_urlsplit_reads(value: str) -> None:
    shape = HOST_SHAPE.fullmatch(value)
    assert shape is not None
    assert host_name(shape) == _by_urlsplit(value)


def test_known_host_values() -> None:
    cases = {
        "127.0.0.1:8765": "127.0.0.1",
        "LocalHost": "localhost",
        "[::1]:80": "::1",
        "[1.2.3.4]": "",  # urlsplit refuses an IPv4 address in brackets
        "example.com.": "example.com.",
    }
    for value, expected in cases.items():
        shape = HOST_SHAPE.fullmatch(value)
        assert shape is not None, value
        assert host_name(shape) == expected == _by_urlsplit(value), value
