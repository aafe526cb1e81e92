#!/bin/sh
# What `make test` needs besides the Python packages: Debian's headless Chromium and its
# chromedriver for the dashboard's browser tests (tests/e2e/test_dashboard_browser.py).
# Installed with apt-get when missing (as root, or through sudo); where neither works it says
# so, and the browser tests then skip (under CI=true they fail instead).
set -eu
if [ -x /usr/bin/chromium ] && [ -x /usr/bin/chromedriver ]; then
  exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
  echo "make test: no apt-get here; install Chromium and chromedriver at /usr/bin to run the 8 browser tests (they skip otherwise)" >&2
  exit 0
fi
if [ "$(id -u)" -eq 0 ]; then sudo=""
elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then sudo="sudo -n"
else
  echo "make test: the 8 browser tests need Chromium: run 'sudo apt-get install chromium chromium-driver' (they skip otherwise)" >&2
  exit 0
fi
echo "make test: installing chromium and chromium-driver for the browser tests (apt-get)"
$sudo apt-get update -qq
$sudo apt-get install -y -qq chromium chromium-driver
