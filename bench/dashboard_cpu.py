"""What the dashboard costs the server: its CPU time over a window with no page open, then with
one `/ui/actors` page polling in headless Chromium (Debian's `chromium` + `chromium-driver`).

    python bench/dashboard_cpu.py [--window-s 60]

Target: nothing measurable while closed; one open page adds under 1 % of a core.
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
import time
from pathlib import Path

import _repo_root  # noqa: F401  (puts the repository on sys.path for tests.support)
from _proc import cpu_s
from selenium import webdriver
from selenium.webdriver.chrome.service import Service

from tests.e2e.conftest import REPO_FILES, provider_env
from tests.support.fakes import FakeProvider, Text
from tests.support.repo import make_repo
from tests.support.server_process import ServerProcess

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
SETTLE_S = 3.0  # start-up work and the page's first load are not what is measured


def _browser() -> webdriver.Chrome:
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"):
        options.add_argument(flag)
    return webdriver.Chrome(service=Service(executable_path=CHROMEDRIVER), options=options)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--window-s", type=float, default=60.0)
    args = parser.parse_args()
    if not (shutil.which(CHROMIUM) and shutil.which(CHROMEDRIVER)):
        raise SystemExit(f"needs {CHROMIUM} and {CHROMEDRIVER} (apt-get install chromium-driver)")
    tmp = Path(tempfile.mkdtemp(prefix="dashboard-cpu-"))
    try:
        repos = [make_repo(tmp / name, REPO_FILES) for name in ("a", "b")]
        with (
            FakeProvider() as fake,
            ServerProcess(tmp / "data", provider_env(fake, "anthropic")) as server,
        ):
            fake.responder = lambda recorded: Text("an answer")
            for repo in repos:  # two live workspaces for the pages to show
                server.request("POST", "/api/ask", json={"question": "q?", "cwd": str(repo)})
            pid = server.proc.pid
            time.sleep(SETTLE_S)
            start = cpu_s(pid)
            time.sleep(args.window_s)
            closed = cpu_s(pid) - start
            browser = _browser()
            try:
                browser.get(server.url + "/ui/actors")
                time.sleep(SETTLE_S)
                start = cpu_s(pid)
                time.sleep(args.window_s)
                polling = cpu_s(pid) - start
            finally:
                browser.quit()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    share, window = 100.0 / args.window_s, f"{args.window_s:.0f} s"
    print(f"page closed:        {closed:.3f} s CPU in {window} = {closed * share:.2f} %")
    print(
        f"one page polling:   {polling:.3f} s CPU in {window} = "
        f"{polling * share:.2f} % (the page adds {(polling - closed) * share:.2f} % of a core)"
    )


if __name__ == "__main__":
    main()
