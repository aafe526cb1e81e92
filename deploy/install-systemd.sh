#!/usr/bin/env bash
# Install live-memory as a systemd *user* service. Idempotent: run it again after an upgrade.
#
#   deploy/install-systemd.sh                                   # live-memory from PATH
#   LIVE_MEMORY_BIN=/opt/lm/.venv/bin/live-memory deploy/install-systemd.sh
#
# Writes ~/.config/systemd/user/live-memory.service (ExecStart = that binary), creates
# ~/.config/live-memory/env from live-memory.env.example when it does not exist yet (never
# overwrites it), reloads systemd, enables and starts the unit, and restarts it when the unit
# file changed.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
unit_name="live-memory.service"
unit_dir="${XDG_CONFIG_HOME:-$HOME/.config}/systemd/user"
env_dir="$HOME/.config/live-memory"
bin="${LIVE_MEMORY_BIN:-$(command -v live-memory || true)}"

if [ -z "$bin" ] || [ ! -x "$bin" ]; then
  echo "install-systemd: live-memory not found; install it (make install-user in a clone of" >&2
  echo "the repository) or set LIVE_MEMORY_BIN=/path/to/live-memory" >&2
  exit 1
fi
if ! command -v systemctl >/dev/null 2>&1; then
  echo "install-systemd: systemctl not found; see deploy/SUPERVISING.md for other supervisors" >&2
  exit 1
fi

mkdir -p "$unit_dir" "$env_dir"
tmp="$(mktemp)"
trap 'rm -f "$tmp"' EXIT
escaped="$(printf '%s' "$bin" | sed -e 's/[\\&|]/\\&/g')"
sed -e "s|^ExecStart=.*|ExecStart=\"$escaped\" serve|" "$here/$unit_name" > "$tmp"

changed=0
if ! cmp -s "$tmp" "$unit_dir/$unit_name"; then
  install -m 0644 "$tmp" "$unit_dir/$unit_name"
  changed=1
  echo "wrote $unit_dir/$unit_name"
fi
if [ ! -e "$env_dir/env" ]; then
  install -m 0600 "$here/live-memory.env.example" "$env_dir/env"
  echo "wrote $env_dir/env (every line commented; set your provider key there)"
fi

systemctl --user daemon-reload
systemctl --user enable --now "$unit_name"
if [ "$changed" = 1 ]; then
  systemctl --user try-restart "$unit_name"
fi
systemctl --user --no-pager --lines=0 status "$unit_name" || true
echo "logs: journalctl --user -u live-memory -f"
echo "to keep it running after you log out: loginctl enable-linger ${USER:-$(id -un)}"
