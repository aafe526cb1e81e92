"""The dashboard in a real headless Chromium against a real `live-memory serve` (token set).

One server and one browser for the module (Chromium starts slowly on two cores). The server
knows two workspaces, each asked one question, and has a third question held in flight by
the fake provider while the pages are looked at (its fork is marked stuck past the lowered
LIVE_MEMORY_DASHBOARD_STUCK_ACTOR_S). A third workspace was only notified, by an earlier
server on the same data directory: it is passivated and has no usage, and is still listed.
Each page is screenshotted (into $LIVE_MEMORY_SCREENSHOT_DIR, else a temp dir) and checked for
browser console errors.

Without chromium / chromedriver / selenium the module skips locally and fails under CI=true.
"""

from __future__ import annotations

import io
import os
import re
import shutil
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx
import pytest

from live_memory.cli.main import run
from tests.e2e.conftest import REPO_FILES, provider_env
from tests.support import loopback
from tests.support.app_server import AppServer
from tests.support.fakes import FakeProvider
from tests.support.repo import make_repo
from tests.support.server_process import ServerProcess

try:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions
    from selenium.webdriver.support.ui import WebDriverWait

    HAVE_SELENIUM = True
except ImportError:  # skipped locally, failed under CI=true (see _require_browser)
    HAVE_SELENIUM = False

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
TOKEN = "dashboard-test-token-5b1f"
QUESTION_A = "Where is answer() defined? (dash-marker-a1)"
QUESTION_B = "What does shout() do? (dash-marker-b2)"
HELD_QUESTION = "A question held in flight (dash-marker-held)"
FACT_CURRENT = "answer() in src/app.py returns 42 (fact-marker-current)"
FACT_DEMOTED = "shout() lower-cases its input (fact-marker-demoted)"
PAGE_TIMEOUT_S = 20.0
STUCK_AFTER_S = 1.0

pytestmark = [pytest.mark.e2e, pytest.mark.slow]


def _in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")


def _require_browser() -> None:
    missing = [p for p in (CHROMIUM, CHROMEDRIVER) if shutil.which(p) is None]
    if not HAVE_SELENIUM:
        missing.append("selenium (pip)")
    if missing:
        message = (
            f"browser tests need {', '.join(missing)} (apt-get install chromium chromium-driver)"
        )
        if _in_ci():
            pytest.fail(message)
        pytest.skip(message)


def _bearer() -> dict[str, str]:
    return {"authorization": f"Bearer {TOKEN}"}


class World:
    """The server, its workspaces and the held question."""

    def __init__(
        self, server: ServerProcess, fake: FakeProvider, a: Path, b: Path, c: Path
    ) -> None:
        self.server, self.fake, self.a, self.b, self.c = server, fake, a, b, c
        self.held: threading.Event | None = None
        self.held_thread: threading.Thread | None = None
        self.held_status = 0

    @property
    def url(self) -> str:
        return self.server.url

    def ask(self, question: str, cwd: Path) -> httpx.Response:
        return loopback.post(
            f"{self.url}/api/ask",
            json={"question": question, "cwd": str(cwd)},
            headers=_bearer(),
            timeout=None,  # the held question waits for the module's end
        )

    def ask_held(self) -> None:
        self.held_status = self.ask(HELD_QUESTION, self.b).status_code

    def login_url(self) -> str:
        out, err = io.StringIO(), io.StringIO()
        env = {"LIVE_MEMORY_TOKEN": TOKEN}
        code = run(["--server", self.url, "dashboard", "--json"], env, out, err)
        assert code == 0, err.getvalue()
        match = re.search(r'"url":\s*"([^"]+)"', out.getvalue())
        assert match, out.getvalue()
        return match.group(1)


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    _require_browser()
    tmp = tmp_path_factory.mktemp("dashboard")
    a = make_repo(tmp / "alpha", REPO_FILES)
    b = make_repo(tmp / "beta", REPO_FILES)
    c = make_repo(tmp / "gamma", REPO_FILES)
    with FakeProvider() as fake:
        env = provider_env(fake, "anthropic") | {
            "LIVE_MEMORY_TOKEN": TOKEN,
            "LIVE_MEMORY_DEFAULT_TIMEOUT_S": "600",  # the held question outlives the module
            "LIVE_MEMORY_DASHBOARD_STUCK_ACTOR_S": str(STUCK_AFTER_S),
        }
        with AppServer(tmp / "data", env) as earlier:  # leaves c's snapshot, no usage
            event = {"path": "src/app.py", "kind": "read", "content": REPO_FILES["src/app.py"]}
            for path, body in (("/clear", {}), ("/notify", {"events": [event]})):
                done = earlier.request(
                    "POST", path, json={"cwd": str(c), **body}, headers=_bearer()
                )
                assert done.status_code in (200, 202), done.text
        with ServerProcess(tmp / "data", env) as server:
            w = World(server, fake, a, b, c)
            assert w.ask(QUESTION_A, a).status_code == 200
            assert w.ask(QUESTION_B, b).status_code == 200
            notified = loopback.post(
                f"{w.url}/notify",
                json={
                    "cwd": str(a),
                    "events": [
                        {"path": "src/app.py", "kind": "read", "content": REPO_FILES["src/app.py"]}
                    ],
                },
                headers=_bearer(),
            )
            assert notified.status_code in (200, 202), notified.text
            sha = __import__("hashlib").sha256(REPO_FILES["src/app.py"].encode()).hexdigest()
            imported = loopback.post(
                f"{w.url}/api/import",
                json={
                    "cwd": str(a),
                    "facts": [
                        {
                            "text": FACT_CURRENT,
                            "sources": [["src/app.py", sha]],
                            "category": "architecture",
                        },
                        {"text": FACT_DEMOTED, "category": "gotcha", "stale": True},
                    ],
                },
                headers=_bearer(),
            )
            assert imported.status_code == 200, imported.text
            before = len(fake.requests)
            w.held = fake.hold()
            w.held_thread = threading.Thread(target=w.ask_held, daemon=True)
            w.held_thread.start()
            fake.wait_for_requests(before + 1, timeout_s=30)
            try:
                yield w
            finally:
                w.held.set()
                w.held_thread.join(timeout=60)
                assert w.held_status == 200


@pytest.fixture(scope="module")
def screens(tmp_path_factory: pytest.TempPathFactory) -> Path:
    chosen = os.environ.get("LIVE_MEMORY_SCREENSHOT_DIR")
    path = Path(chosen) if chosen else tmp_path_factory.mktemp("dashboard-screenshots")
    path.mkdir(parents=True, exist_ok=True)
    return path


@pytest.fixture(scope="module")
def browser(world: World) -> Iterator[Any]:

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--disable-extensions",
        "--no-first-run",
        "--window-size=1300,1800",
    ):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    # An explicit driver path: Selenium Manager is not asked to find (or download) anything.
    driver = webdriver.Chrome(service=Service(executable_path=CHROMEDRIVER), options=options)
    driver.set_page_load_timeout(PAGE_TIMEOUT_S)
    try:
        yield driver
    finally:
        driver.quit()


def _console_errors(driver: Any) -> list[str]:
    return [e["message"] for e in driver.get_log("browser") if e["level"] == "SEVERE"]


def _text(driver: Any, css: str) -> str:

    return str(driver.find_element(By.CSS_SELECTOR, css).text)


def _wait_for(driver: Any, css: str) -> str:
    """The text of `css` once a navigation (a click's: Selenium does not wait) shows it."""

    located = expected_conditions.presence_of_element_located((By.CSS_SELECTOR, css))
    return str(WebDriverWait(driver, PAGE_TIMEOUT_S).until(located).text)


def _show(driver: Any, url: str, screens: Path, name: str) -> None:
    driver.get_log("browser")  # drop what earlier pages logged
    driver.get(url)
    driver.save_screenshot(str(screens / f"{name}.png"))
    assert _console_errors(driver) == []


def _logged_in(world: World, browser: Any) -> None:
    if not any(c["name"] == "lm_session" for c in browser.get_cookies()):
        browser.get(world.login_url())


# --- authentication ------------------------------------------------------------------------


def test_refused_without_a_login(world: World, browser: Any) -> None:
    assert loopback.get(f"{world.url}/ui").status_code == 401
    browser.get(f"{world.url}/ui")
    assert "not logged in" in browser.page_source
    assert "Overview" not in browser.title


def test_login_link_sets_a_strict_httponly_cookie_and_works_once(
    world: World, browser: Any, screens: Path
) -> None:
    link = world.login_url()
    assert TOKEN not in link
    browser.get(link)
    assert browser.current_url == f"{world.url}/ui"  # no secret left in the address bar
    cookie = next(c for c in browser.get_cookies() if c["name"] == "lm_session")
    assert cookie["httpOnly"] is True
    assert cookie["sameSite"] == "Strict"
    assert cookie["value"] not in TOKEN
    assert "Overview" in browser.title
    replay = loopback.get(link, follow_redirects=False)
    assert replay.status_code == 401  # the link was used
    assert "used or expired" in replay.text
    browser.get(link)  # a 401 page: its console line "failed to load resource" is expected
    browser.save_screenshot(str(screens / "login-replayed.png"))
    assert "Login link used or expired" in browser.page_source


# --- pages ---------------------------------------------------------------------------------


def test_overview_shows_every_workspace_and_the_question_in_flight(
    world: World, browser: Any, screens: Path
) -> None:

    _logged_in(world, browser)
    _show(browser, f"{world.url}/ui", screens, "overview")
    rows = {
        r.get_attribute("data-root"): r
        for r in browser.find_elements(By.CSS_SELECTOR, "#workspaces tbody tr")
    }
    assert set(rows) == {str(world.a), str(world.b), str(world.c)}
    # Passivated and never asked (no usage at all): listed from the snapshot store.
    passivated = rows.pop(str(world.c))
    assert passivated.find_element(By.CSS_SELECTOR, ".state").text == "passivated"
    assert passivated.find_element(By.CSS_SELECTOR, ".questions-today").text == "0"
    assert "2 active" in _text(browser, "#workspace-counts")
    for row in rows.values():
        assert row.find_element(By.CSS_SELECTOR, ".state").text == "active"
        assert row.find_element(By.CSS_SELECTOR, ".questions-today").text == "1"
        assert row.find_element(By.CSS_SELECTOR, ".cost-today").text.startswith("$0.0")
        assert row.find_element(By.CSS_SELECTOR, ".fill").text.endswith("%")
    assert _text(browser, "#provider") == "anthropic"
    assert _text(browser, "#questions-today") == "2"
    assert _text(browser, "#queue-in-flight") == "1 in flight"
    assert _text(browser, "#health-status") == "ok"


def test_workspace_page_shows_window_ledger_files_and_questions(
    world: World, browser: Any, screens: Path
) -> None:

    _logged_in(world, browser)
    page = f"{world.url}/ui/workspace?root={quote(str(world.a))}"
    _show(browser, page, screens, "workspace")
    assert _text(browser, "#root") == str(world.a)
    assert _text(browser, "#questions") == "1"
    segments = browser.find_elements(By.CSS_SELECTOR, "#window-bar rect.seg")
    assert [s.get_attribute("class") for s in segments] == [
        "seg stable",
        "seg frozen",
        "seg history",
        "seg last_turn",
    ]
    legend = {
        e.get_attribute("data-seg"): int(e.text)
        for e in browser.find_elements(By.CSS_SELECTOR, "#window-legend [data-seg]")
    }
    assert legend["stable"] > 0
    assert legend["last_turn"] > 0  # the answered question's turn
    assert "compaction threshold" in _text(browser, "#window-bar")
    facts = {
        r.find_element(By.CSS_SELECTOR, "td").text: r.get_attribute("class")
        for r in browser.find_elements(By.CSS_SELECTOR, "#facts tbody tr")
    }
    assert facts == {FACT_CURRENT: "current", FACT_DEMOTED: "demoted"}
    assert "src/app.py" in _text(browser, "#facts")
    files = browser.find_elements(By.CSS_SELECTOR, "#files tbody tr")
    app = next(r for r in files if "src/app.py" in r.text)
    assert "current" in app.text and "with content" in app.text
    assert "return 42" not in browser.page_source  # paths and hashes, never file bytes
    questions = _text(browser, "#questions-table")
    assert QUESTION_A in questions
    assert QUESTION_B not in questions
    assert browser.find_elements(By.CSS_SELECTOR, "#tokens-chart rect")
    assert browser.find_elements(By.CSS_SELECTOR, "#cost-chart rect.cost")
    assert "Keep-warm pings" in _text(browser, "#economics")

    search = browser.find_element(By.ID, "q")
    search.send_keys("gotcha")
    search.submit()
    _wait_for(browser, "#q[value='gotcha']")
    rows = browser.find_elements(By.CSS_SELECTOR, "#facts tbody tr")
    assert [r.find_element(By.CSS_SELECTOR, "td").text for r in rows] == [FACT_DEMOTED]
    assert "1 of 2 facts" in _text(browser, "#facts-count")
    assert _console_errors(browser) == []


def test_actors_page_lists_every_actor_and_refreshes_itself(
    world: World, browser: Any, screens: Path
) -> None:

    _logged_in(world, browser)
    _show(browser, f"{world.url}/ui/actors", screens, "actors")
    # In one script: the page re-renders its rows on each refresh, and a row found first and
    # read after a refresh is stale (a loaded run failed on exactly that).
    kinds = browser.execute_script(
        "return [...document.querySelectorAll('#actors tbody tr')].map(r => r.dataset.kind)"
    )
    assert kinds.count("workspace") == 2
    assert "gateway" in kinds
    assert "fork" in kinds  # the held question's fork
    inventory = loopback.get(f"{world.url}/actors", headers=_bearer()).json()
    assert len(kinds) == len(inventory)
    WebDriverWait(browser, PAGE_TIMEOUT_S).until(
        lambda d: d.find_element(By.TAG_NAME, "body").get_attribute("data-refreshed")
    )
    first = browser.find_element(By.TAG_NAME, "body").get_attribute("data-refreshed")
    WebDriverWait(browser, PAGE_TIMEOUT_S).until(
        lambda d: d.find_element(By.TAG_NAME, "body").get_attribute("data-refreshed") != first
    )
    assert browser.find_elements(By.CSS_SELECTOR, "#actors tbody tr[data-kind='fork']")
    assert _console_errors(browser) == []


def test_an_actor_busy_past_the_threshold_is_highlighted_as_stuck(
    world: World, browser: Any, screens: Path
) -> None:
    """The held question's fork is busy on it until the fake provider's Event is set; past
    the lowered threshold the refreshing actors page marks its row stuck."""

    _logged_in(world, browser)
    _show(browser, f"{world.url}/ui/actors", screens, "actors-before-stuck")
    stuck = "#actors tbody tr.stuck[data-kind='fork']"
    row = WebDriverWait(browser, PAGE_TIMEOUT_S).until(
        expected_conditions.presence_of_element_located((By.CSS_SELECTOR, stuck))
    )
    assert row.find_element(By.CSS_SELECTOR, ".stuck-tag").text == "stuck"
    assert f"question: {HELD_QUESTION}" in row.text  # what it is busy on, not a message name
    assert not browser.find_elements(
        By.CSS_SELECTOR, "#actors tbody tr.stuck:not([data-kind='fork'])"
    )
    browser.save_screenshot(str(screens / "actors-stuck.png"))
    assert _console_errors(browser) == []
    browser.get(f"{world.url}/ui")
    assert _text(browser, "#stuck-count") == "1 stuck"


# --- actions -------------------------------------------------------------------------------


class _ForeignPage(BaseHTTPRequestHandler):
    """Another local web app (a different port: same site, other origin) that tries to make
    the dashboard empty a workspace, with the best form it can build."""

    target = ""
    root = ""

    def do_GET(self) -> None:
        body = (
            "<!doctype html><title>foreign</title><body>"
            f'<form id="f" method="post" action="{self.target}/ui/action">'
            '<input name="action" value="empty">'
            f'<input name="root" value="{self.root}">'
            '<input name="csrf" value="guessed"></form>'
            '<button id="go" form="f">go</button></body>'
        ).encode()
        self.send_response(200)
        self.send_header("content-type", "text/html")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


def _fact_count(world: World) -> int:
    body = loopback.get(
        f"{world.url}/stats", params={"cwd": str(world.a)}, headers=_bearer()
    ).json()
    return int(body["ledger_facts"])


def test_a_foreign_origin_cannot_drive_the_actions(world: World, browser: Any) -> None:

    _logged_in(world, browser)
    assert _fact_count(world) == 2
    _ForeignPage.target, _ForeignPage.root = world.url, str(world.a)
    foreign = ThreadingHTTPServer(("127.0.0.1", 0), _ForeignPage)
    threading.Thread(target=foreign.serve_forever, daemon=True).start()
    try:
        browser.get(f"http://127.0.0.1:{foreign.server_address[1]}/")
        browser.find_element(By.ID, "go").click()
        # The Guard refuses the other origin before the page's own checks run.
        WebDriverWait(browser, PAGE_TIMEOUT_S).until(lambda d: "not allowed" in d.page_source)
    finally:
        foreign.shutdown()
        foreign.server_close()
    assert _fact_count(world) == 2

    # The real token from our own page, sent by something that is not our page.
    browser.get(f"{world.url}/ui/confirm?action=empty&root={quote(str(world.a))}")
    csrf = browser.find_element(By.NAME, "csrf").get_attribute("value")
    cookie = {"lm_session": browser.get_cookie("lm_session")["value"]}
    form = {"action": "empty", "root": str(world.a), "csrf": csrf}
    for headers in (
        {"origin": "http://127.0.0.1:1"},  # same site, other port
        {"origin": "http://evil.example"},
        {"sec-fetch-site": "same-site"},  # no Origin, and not same-origin
        {},  # neither: a form body without our Origin is not even read (415)
    ):
        refused = loopback.post(
            f"{world.url}/ui/action", data=form, headers=headers, cookies=cookie
        )
        assert refused.status_code in (403, 415), (headers, refused.text)
    wrong = form | {"csrf": "0" * 64}
    stale = loopback.post(
        f"{world.url}/ui/action", data=wrong, headers={"origin": world.url}, cookies=cookie
    )
    assert stale.status_code == 403
    no_cookie = loopback.post(f"{world.url}/ui/action", data=form, headers={"origin": world.url})
    assert no_cookie.status_code == 401
    assert _fact_count(world) == 2


def test_confirmed_actions_empty_a_workspace_and_reload(
    world: World, browser: Any, screens: Path
) -> None:

    _logged_in(world, browser)
    _show(
        browser, f"{world.url}/ui/workspace?root={quote(str(world.a))}", screens, "workspace-before"
    )
    browser.find_element(By.ID, "empty").click()
    _wait_for(browser, "#confirm-form")
    assert _text(browser, "h1") == "Empty?"
    assert _fact_count(world) == 2  # nothing happens before the confirmation
    browser.save_screenshot(str(screens / "confirm.png"))
    browser.find_element(By.ID, "confirm").click()
    assert "emptied" in _wait_for(browser, "#done")
    browser.save_screenshot(str(screens / "after-empty.png"))
    assert "0 of 0 facts" in _text(browser, "#facts-count")
    assert _fact_count(world) == 0
    assert _console_errors(browser) == []

    browser.get(f"{world.url}/ui")
    browser.find_element(By.ID, "reload").click()
    _wait_for(browser, "#confirm-form")
    browser.find_element(By.ID, "confirm").click()
    assert "Configuration reloaded" in _wait_for(browser, "#done")
    assert _console_errors(browser) == []


# --- live pages ----------------------------------------------------------------------------


def test_the_overview_redraws_itself_and_its_totals_add_up_after_an_empty(
    world: World, browser: Any, screens: Path
) -> None:
    """Runs after the empty above: every workspace that spent today is still a row (the
    totals are the rows' sum), and the page shows a workspace waking without a reload."""

    _logged_in(world, browser)
    _show(browser, f"{world.url}/ui", screens, "overview-live")
    browser.execute_script("window.liveMarker = 'same page';")
    today = [
        int(cell.text)
        for cell in browser.find_elements(By.CSS_SELECTOR, "#workspaces .questions-today")
    ]
    assert sum(today) == int(_text(browser, "#questions-today"))
    gamma = f"#workspaces tr[data-root='{world.c}'] .state"
    assert _text(browser, gamma) == "passivated"
    event = {"path": "src/app.py", "kind": "read", "content": REPO_FILES["src/app.py"]}
    woke = loopback.post(
        f"{world.url}/notify", json={"cwd": str(world.c), "events": [event]}, headers=_bearer()
    )
    assert woke.status_code in (200, 202), woke.text
    WebDriverWait(browser, PAGE_TIMEOUT_S).until(lambda d: _text(d, gamma) == "active")
    assert browser.execute_script("return window.liveMarker;") == "same page"
    assert _console_errors(browser) == []


def test_a_workspace_page_shows_all_time_cost_at_least_today(world: World, browser: Any) -> None:
    _logged_in(world, browser)
    browser.get(f"{world.url}/ui/workspace?root={quote(str(world.b))}")
    all_time = float(_text(browser, "#cost").lstrip("$"))
    today = float(_text(browser, "#cost + .sub").split()[0].lstrip("$"))
    assert all_time >= today > 0
