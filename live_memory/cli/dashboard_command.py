"""`live-memory dashboard`: the dashboard's address, as a one-time login link when the
server has a token (this command holds it; the browser then gets a session cookie)."""

from __future__ import annotations

import webbrowser
from collections.abc import Callable, Mapping

from live_memory.cli.commands import Invocation
from live_memory.cli.outcome import CommandFailed, ExitCode
from live_memory.cli.render import render_json

__all__ = ["dashboard"]


def dashboard(
    inv: Invocation, *, open_browser: bool, opener: Callable[[str], bool] = webbrowser.open
) -> int:
    payload = inv.client.post("/ui/login-link", {}).json()
    url = payload.get("url") if isinstance(payload, Mapping) else None
    if not isinstance(url, str) or not url:
        raise CommandFailed("POST /ui/login-link answered without a url (an old server?)")
    assert isinstance(payload, Mapping)
    if inv.as_json:
        inv.emit(render_json(payload))
    elif payload.get("login"):
        inv.emit(url)
        inv.emit(
            f"(a one-time login link, valid {payload.get('expires_in_s', 0):.0f} s; "
            "it sets a browser session and then leaves the address bar clean)"
        )
    else:
        inv.emit(url)
    if open_browser and not opener(url):
        raise CommandFailed("no browser could be opened; open the link above yourself")
    return ExitCode.OK
