"""The dashboard's routes under /ui: three server-rendered pages, the actors' live rows, the
login link and the confirmed actions (reset / empty a workspace, reload configuration)."""

from __future__ import annotations

import hmac
import time
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlencode

from jinja2 import ChainableUndefined, Environment, FileSystemLoader
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.templating import Jinja2Templates

from live_memory.config import constants as C
from live_memory.errors import InputError, LiveMemoryError, UnknownWorkspace
from live_memory.gateway.body import read_body
from live_memory.gateway.json_response import ORJSONResponse
from live_memory.gateway.service import LiveMemoryService
from live_memory.gateway.ui import charts, gather
from live_memory.gateway.ui.auth import DashboardAuth, cookie_value
from live_memory.knowledge import utc_today

__all__ = ["build_ui_routes"]

_HERE = Path(__file__).parent
_HEADERS = {
    # Our own files only, no inline script; nobody may frame us (a framed confirmation
    # button could be clicked by a foreign page); nothing is cached, no Referer leaves us.
    "content-security-policy": (
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
        "connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
    ),
    "x-frame-options": "DENY",
    "x-content-type-options": "nosniff",
    "referrer-policy": "same-origin",  # no-referrer would make form POSTs send Origin: null
    "cache-control": "no-store",
}
ACTIONS = {
    "reset": ("Reset", "wipe this workspace's memory and re-read its preload files"),
    "empty": ("Empty", "wipe this workspace's memory (history, files, ledger)"),
    "reload": ("Reload configuration", "re-read the configuration; in-flight questions finish"),
}

Reload = Callable[[Request], Awaitable[dict[str, object]]]


def _ago(at: object, now: float) -> str:
    if not isinstance(at, int | float):
        return "—"
    seconds = max(now - float(at), 0.0)
    for unit, size in (("d", 86400), ("h", 3600), ("min", 60)):
        if seconds >= size:
            return f"{seconds / size:.0f} {unit} ago"
    return f"{seconds:.0f} s ago"


def _clock(at: object) -> str:
    if not isinstance(at, int | float):
        return "—"
    return datetime.fromtimestamp(float(at), UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def _tokens(value: object) -> str:
    if not isinstance(value, int | float):
        return "—"
    if abs(value) >= 1_000_000:
        return f"{value / 1_000_000:.1f}M"
    if abs(value) >= 10_000:
        return f"{value / 1000:.0f}k"
    return f"{value:,.0f}"


def _usd(value: object) -> str:
    return f"${value:.4f}" if isinstance(value, int | float) else "n/a"


def _pct(value: object) -> str:
    return f"{100 * value:.0f}%" if isinstance(value, int | float) else "—"


_PAGE_POLL_S = 5.0
"""The overview and a workspace's page redraw themselves this often while visible (each
redraw asks every active workspace for its figures: slower than the actors' rows)."""


def _templates() -> Jinja2Templates:
    # Chainable: a figure another part of the server stops reporting renders as "—", not a 500.
    env = Environment(
        loader=FileSystemLoader(_HERE / "templates"),
        autoescape=True,
        undefined=ChainableUndefined,
    )
    templates = Jinja2Templates(env=env)
    templates.env.filters.update(tokens=_tokens, usd=_usd, pct=_pct, clock=_clock)
    return templates


def build_ui_routes(auth: DashboardAuth, reload: Reload) -> list[BaseRoute]:
    templates = _templates()

    def service_of(request: Request) -> LiveMemoryService:
        service: LiveMemoryService = request.app.state.service
        return service

    def session_of(request: Request) -> str | None:
        return cookie_value(request.headers.get("cookie", ""))

    def page(request: Request, name: str, context: dict[str, Any], status: int = 200) -> Response:
        now = time.time()
        base = {
            "csrf": auth.csrf_token(session_of(request)),
            "now": now,
            "ago": lambda at: _ago(at, now),
            "poll_ms": int(C.DASHBOARD_POLL_S * 1000),
            "page_poll_ms": int(_PAGE_POLL_S * 1000),
            "stuck_s": service_of(request).settings.stuck_after_s,
            "fork_stuck_s": service_of(request).settings.fork_stuck_after_s,
        }
        response = templates.TemplateResponse(request, name, base | context, status_code=status)
        response.headers.update(_HEADERS)
        return response

    def problem(request: Request, status: int, title: str, detail: str) -> Response:
        return page(request, "message.html", {"title": title, "detail": detail}, status)

    async def overview(request: Request) -> Response:
        number = request.query_params.get("page", "0")
        # isascii: "²".isdigit() holds, but int() refuses it (a 500 instead of this 400).
        if not (number.isascii() and number.isdigit()) or int(number) > C.DASHBOARD_MAX_PAGE:
            return problem(request, 400, "No such page", "Pages are numbered 0, 1, 2, …")
        data = await gather.overview(service_of(request), int(number))
        done = request.query_params.get("done")
        return page(request, "overview.html", data | {"done": done, "live": True})

    async def workspace(request: Request) -> Response:
        root = request.query_params.get("root", "")
        query = request.query_params.get("q", "")
        if not root:
            return problem(request, 400, "No workspace", "Pick a workspace on the overview.")
        if len(query) > C.DASHBOARD_SEARCH_MAX_CHARS:
            return problem(
                request, 400, "Search too long", f"At most {C.DASHBOARD_SEARCH_MAX_CHARS} chars."
            )
        try:
            data = await gather.workspace_page(service_of(request), root, query)
        except UnknownWorkspace as exc:
            return problem(request, 404, "Unknown workspace", str(exc))
        layout = data.get("layout")
        rects, marks, scale = (
            charts.window_bar(layout) if isinstance(layout, dict) else ([], [], 0.0)
        )
        days = data.get("by_day")
        bars = charts.day_bars(
            days if isinstance(days, list) else [], C.DASHBOARD_DAYS, utc_today()
        )
        return page(
            request,
            "workspace.html",
            data
            | {
                "root": root,
                "query": query,
                "rects": rects,
                "marks": marks,
                "scale": scale,
                "bars": bars,
                "chart": {"width": charts.BAR_WIDTH, "height": charts.CHART_HEIGHT},
                "done": request.query_params.get("done"),
                "live": True,
            },
        )

    async def actors(request: Request) -> Response:
        return page(request, "actors.html", {"actors": gather.actor_rows(service_of(request))})

    async def actor_rows(request: Request) -> Response:
        return page(request, "actor_rows.html", {"actors": gather.actor_rows(service_of(request))})

    async def login(request: Request) -> Response:
        if not auth.required:
            return RedirectResponse("/ui", 303)
        session = auth.redeem(request.query_params.get("once", ""))
        if session is None:
            return problem(
                request,
                401,
                "Login link used or expired",
                "Each link works once, for a short while: run `live-memory dashboard` again.",
            )
        response = RedirectResponse("/ui", 303)
        response.set_cookie(
            C.DASHBOARD_SESSION_COOKIE,
            session,
            max_age=int(C.DASHBOARD_SESSION_TTL_S),
            path="/ui",
            httponly=True,
            samesite="strict",
        )
        response.headers.update(_HEADERS)
        return response

    async def login_link(request: Request) -> Response:
        """For `live-memory dashboard`, which holds the token: a cookie cannot mint links."""
        token = service_of(request).settings.token
        if auth.required:
            given = request.headers.get("authorization", "").encode()
            if not token or not hmac.compare_digest(given, f"Bearer {token}".encode()):
                return ORJSONResponse({"error": "a login link needs the bearer token"}, 403)
        base = str(request.base_url).rstrip("/")
        if not auth.required:
            return ORJSONResponse({"url": f"{base}/ui", "login": False})
        once = auth.issue_link()
        url = f"{base}/ui/login?{urlencode({'once': once})}"
        return ORJSONResponse({"url": url, "login": True, "expires_in_s": C.DASHBOARD_LOGIN_TTL_S})

    async def confirm(request: Request) -> Response:
        action = request.query_params.get("action", "")
        root = request.query_params.get("root", "")
        if action not in ACTIONS or (action != "reload" and not root):
            return problem(request, 400, "Unknown action", "Nothing to confirm.")
        title, what = ACTIONS[action]
        return page(
            request,
            "confirm.html",
            {"action": action, "root": root, "title": title, "what": what},
        )

    async def act(request: Request) -> Response:
        # Refusals are JSON, like the Guard's: whoever is refused is not one of our pages.
        if not _same_origin(request):
            return _refused(403, "actions are only taken from this dashboard's own pages")
        try:
            raw = await read_body(request.scope, request.receive, service_of(request).settings)
        except LiveMemoryError as exc:
            return _refused(400, str(exc))
        if len(raw) > C.DASHBOARD_FORM_MAX_BYTES:
            return _refused(413, "this is not one of the dashboard's forms (too large)")
        form = {k: v[0] for k, v in parse_qs(raw.decode("utf-8", "replace")).items()}
        if not auth.csrf_ok(session_of(request), form.get("csrf", "")):
            return _refused(403, "the form's CSRF token is missing or stale; reload the page")
        action, root = form.get("action", ""), form.get("root", "")
        service = service_of(request)
        try:
            if action == "reload":
                await reload(request)
                return RedirectResponse("/ui?done=reload", 303)
            if action not in ("reset", "empty") or not root:
                raise InputError(f"unknown action {action!r}")
            await (service.reset(root) if action == "reset" else service.clear(root))
        except LiveMemoryError as exc:
            return problem(request, 400, "Action failed", str(exc))
        target = f"/ui/workspace?{urlencode({'root': root, 'done': action})}"
        return RedirectResponse(target, 303)

    return [
        Route("/ui", overview, methods=["GET"]),
        Route("/ui/workspace", workspace, methods=["GET"]),
        Route("/ui/actors", actors, methods=["GET"]),
        Route("/ui/actors/rows", actor_rows, methods=["GET"]),
        Route("/ui/login", login, methods=["GET"]),
        Route("/ui/login-link", login_link, methods=["POST"]),
        Route("/ui/confirm", confirm, methods=["GET"]),
        Route("/ui/action", act, methods=["POST"]),
        Mount("/ui/static", StaticFiles(directory=_HERE / "static"), name="ui-static"),
    ]


def _refused(status: int, message: str) -> Response:
    response = ORJSONResponse({"error": message}, status)
    response.headers.update(_HEADERS)
    return response


def _same_origin(request: Request) -> bool:
    """The request comes from one of our own pages: its Origin is exactly ours (scheme, host
    and port; the Guard has already vetted Host), or, lacking an Origin, the browser says
    same-origin. Neither: refused (browsers send Origin on every form POST)."""
    own = f"{request.url.scheme}://{request.headers.get('host', '')}"
    origin = request.headers.get("origin")
    if origin is not None:
        return hmac.compare_digest(origin.encode(), own.encode())
    return request.headers.get("sec-fetch-site") == "same-origin"
