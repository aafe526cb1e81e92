#!/bin/sh
# Install live-memory for this user from a clone, giving a `live-memory` command on PATH.
# No published package is needed: the package is built from this directory (its dependencies
# come from your usual package index or wheel cache).
#
#   make install-user                        # or: sh deploy/install-user.sh
#   LIVE_MEMORY_INSTALL_METHOD=venv make install-user   # force one of: pipx, uv, venv
#
# It uses pipx when present, else uv (`uv tool install`), else a private virtualenv under
# ~/.local/share/live-memory/venv with a symlink in ~/.local/bin. Run it again to upgrade.
# Then `live-memory install-service` keeps the server running (systemd user unit / launchd).
set -eu

repo="$(cd "$(dirname "$0")/.." && pwd)"
python="${PYTHON:-python3}"
method="${LIVE_MEMORY_INSTALL_METHOD:-}"
bin_dir="$HOME/.local/bin"
venv="$HOME/.local/share/live-memory/venv"

if [ -z "$method" ]; then
  if command -v pipx >/dev/null 2>&1; then method=pipx
  elif command -v uv >/dev/null 2>&1; then method=uv
  else method=venv
  fi
fi

echo "install-user: installing live-memory from $repo with $method (about half a minute)..."
case "$method" in
  pipx)
    pipx install --force "$repo"
    command_path="$(pipx environment --value PIPX_BIN_DIR 2>/dev/null || echo "$bin_dir")/live-memory"
    ;;
  uv)
    uv tool install --force --reinstall "$repo"
    command_path="$(uv tool dir --bin 2>/dev/null || echo "$bin_dir")/live-memory"
    ;;
  venv)
    if [ ! -x "$venv/bin/python" ]; then
      echo "install-user: creating $venv"
      "$python" -m venv "$venv"
    fi
    echo "install-user: building and installing the package and its dependencies"
    "$venv/bin/python" -m pip install --quiet --upgrade pip
    "$venv/bin/python" -m pip install --quiet --upgrade "$repo"
    mkdir -p "$bin_dir"
    ln -sf "$venv/bin/live-memory" "$bin_dir/live-memory"
    command_path="$bin_dir/live-memory"
    ;;
  *)
    echo "install-user: unknown LIVE_MEMORY_INSTALL_METHOD=$method (pipx, uv or venv)" >&2
    exit 2
    ;;
esac

version="$("$command_path" --version)"
echo "installed $version as $command_path ($method)"
dir="$(dirname "$command_path")"
case ":$PATH:" in
  *":$dir:"*)
    echo "next: live-memory install-service   # keep the server running (systemd / launchd)"
    ;;
  *)
    echo "note: $dir is not on your PATH; add it, e.g. for bash:"
    echo "  echo 'export PATH=\"$dir:\$PATH\"' >> ~/.bashrc && . ~/.bashrc"
    echo "then: live-memory install-service   # keep the server running (systemd / launchd)"
    ;;
esac
