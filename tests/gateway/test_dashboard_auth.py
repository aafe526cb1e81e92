"""The dashboard's login links, sessions and CSRF tokens (pure, with a hand-driven clock)."""

from __future__ import annotations

from live_memory.config import constants as C
from live_memory.gateway.ui.auth import DashboardAuth, cookie_value


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_a_login_link_works_once() -> None:
    auth = DashboardAuth(required=True, clock=Clock())
    once = auth.issue_link()
    session = auth.redeem(once)
    assert session is not None
    assert auth.session_valid(session)
    assert auth.redeem(once) is None
    assert not auth.session_valid("forged")
    assert not auth.session_valid(None)


def test_links_and_sessions_expire() -> None:
    clock = Clock()
    auth = DashboardAuth(required=True, clock=clock)
    stale = auth.issue_link()
    clock.now += C.DASHBOARD_LOGIN_TTL_S + 1
    assert auth.redeem(stale) is None
    session = auth.redeem(auth.issue_link())
    clock.now += C.DASHBOARD_SESSION_TTL_S + 1
    assert not auth.session_valid(session)


def test_links_and_sessions_are_bounded_oldest_first() -> None:
    auth = DashboardAuth(required=True, clock=Clock())
    links = [auth.issue_link() for _ in range(C.DASHBOARD_MAX_LOGIN_LINKS + 1)]
    assert auth.redeem(links[0]) is None
    assert auth.redeem(links[-1]) is not None
    sessions = [auth.redeem(auth.issue_link()) for _ in range(C.DASHBOARD_MAX_SESSIONS + 1)]
    assert not auth.session_valid(sessions[0])
    assert all(auth.session_valid(s) for s in sessions[1:])


def test_csrf_tokens_are_per_session_and_unguessable_across_servers() -> None:
    auth = DashboardAuth(required=True, clock=Clock())
    one, two = auth.redeem(auth.issue_link()), auth.redeem(auth.issue_link())
    assert auth.csrf_ok(one, auth.csrf_token(one))
    assert not auth.csrf_ok(two, auth.csrf_token(one))
    assert not auth.csrf_ok(one, "")
    assert not auth.csrf_ok(one, "é")  # non-ASCII input is refused, not an error
    other_server = DashboardAuth(required=True, clock=Clock())
    assert not other_server.csrf_ok(one, auth.csrf_token(one))


def test_without_a_token_the_csrf_token_is_the_servers_own() -> None:
    auth = DashboardAuth(required=False)
    assert auth.csrf_ok(None, auth.csrf_token(None))
    assert auth.csrf_token("anything") == auth.csrf_token(None)
    assert not DashboardAuth(required=False).csrf_ok(None, auth.csrf_token(None))


def test_cookie_value() -> None:
    assert cookie_value("a=1; lm_session=abc; b=2") == "abc"
    assert cookie_value("lm_session_x=1") is None
    assert cookie_value("") is None
