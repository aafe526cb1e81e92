"""`live-memory install-service`: run the server under the user's service manager.

On Linux it writes the systemd user unit (the same unit as `deploy/live-memory.service`, with
ExecStart pointing at the interpreter running this CLI, so a venv or pipx install just works),
reloads systemd and enables it at once. On macOS it prints the launchd plist and the two
commands that load it: launchd agents are plain files the user should see before loading.
"""

from __future__ import annotations

import contextlib
import os
import shlex
import shutil
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Final, TextIO

from live_memory.cli.outcome import CommandFailed, ExitCode
from live_memory.config import constants as C
from live_memory.config import service_env_file
from live_memory.regular_file import read_regular

__all__ = ["exec_start", "install_service", "launchd_plist", "systemd_unit"]

_SYSTEMCTL_TIMEOUT_S: Final = 30.0

SYSTEMD_UNIT_TEMPLATE: Final = """\
[Unit]
Description=Live Memory: persistent codebase Q&A server for coding agents
After=network.target

[Service]
Type=exec
# glibc gives each thread that allocates its own arena (up to 8 per core) and an arena keeps
# what it freed: one actor thread per active workspace would each hold its freed tree-build
# memory. Two arenas share it instead (measured in bench/workspaces_at_scale.py).
Environment=MALLOC_ARENA_MAX=2
EnvironmentFile=-%h/.config/live-memory/env
ExecStart={exec_start}
Restart=on-failure
RestartSec=2
TimeoutStopSec=30
KillSignal=SIGTERM
# Exit 2 means bad configuration (e.g. a public bind without a token): restarting cannot help.
RestartPreventExitStatus=2
NoNewPrivileges=yes

[Install]
WantedBy=default.target
"""

LAUNCHD_PLIST_TEMPLATE: Final = """\
<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" \
"http://www.apple.com/DTDs/PropertyList-1.0.dtd">
<plist version="1.0">
<dict>
  <key>Label</key>
  <string>{label}</string>
  <key>ProgramArguments</key>
  <array>
{arguments}
  </array>
  <key>RunAtLoad</key>
  <true/>
  <key>KeepAlive</key>
  <dict>
    <key>SuccessfulExit</key>
    <false/>
  </dict>
  <key>ThrottleInterval</key>
  <integer>5</integer>
  <key>StandardOutPath</key>
  <string>{log_dir}/live-memory.out.log</string>
  <key>StandardErrorPath</key>
  <string>{log_dir}/live-memory.err.log</string>
</dict>
</plist>
"""


def exec_start() -> list[str]:
    """The command a service manager runs: this interpreter, so its packages are found."""
    return [sys.executable, "-m", "live_memory.cli", "serve"]


def systemd_unit() -> str:
    return SYSTEMD_UNIT_TEMPLATE.format(exec_start=shlex.join(exec_start()))


def launchd_plist(home: Path) -> str:
    arguments = "\n".join(f"    <string>{_xml_escape(arg)}</string>" for arg in exec_start())
    log_dir = _xml_escape(str(home / "Library" / "Logs"))
    return LAUNCHD_PLIST_TEMPLATE.format(
        label=C.LAUNCHD_LABEL, arguments=arguments, log_dir=log_dir
    )


def install_service(
    environ: Mapping[str, str], *, platform: str, dry_run: bool, out: TextIO
) -> int:
    """Install (Linux) or explain (macOS) the user service; CommandFailed when a step fails."""
    home = Path(environ.get("HOME") or Path.home())
    if platform == "darwin":
        return _explain_launchd(home, out)
    if not platform.startswith("linux"):
        raise CommandFailed(
            f"install-service supports Linux (systemd) and macOS (launchd), not {platform}; "
            "see deploy/SUPERVISING.md to run `live-memory serve` under your supervisor",
            ExitCode.USAGE,
        )
    config_home = Path(environ.get("XDG_CONFIG_HOME") or home / ".config")
    unit_path = config_home / "systemd" / "user" / C.SYSTEMD_UNIT_NAME
    env_file = service_env_file({**environ, "HOME": str(home)})
    if dry_run:
        out.write(f"# would write {unit_path}\n{systemd_unit()}")
        out.write(f"# would create {env_file} if missing, then run:\n")
        for command in _systemctl_commands():
            out.write(f"{shlex.join(command)}\n")
        return ExitCode.OK
    previous_unit = _read_or_none(unit_path)
    created_env = not env_file.exists()
    created_dirs: list[Path] = []
    try:
        created_dirs += _make_dirs(unit_path.parent)
        _write_if_changed(unit_path, systemd_unit())
        if created_env:
            created_dirs += _make_dirs(env_file.parent)
            env_file.write_text(
                "# Environment for the live-memory user service (KEY=value lines).\n"
                "# Every variable is listed in deploy/live-memory.env.example.\n",
                encoding="utf-8",
            )
            env_file.chmod(0o600)
    except OSError as exc:
        raise CommandFailed(f"cannot write the service files: {exc}", ExitCode.FAILED) from exc
    try:
        if shutil.which("systemctl", path=environ.get("PATH")) is None:
            raise CommandFailed("systemctl not found", ExitCode.FAILED)
        ran = [_run(command, environ) for command in _systemctl_commands()]
    except CommandFailed as exc:
        _undo(unit_path, previous_unit, env_file if created_env else None, created_dirs)
        raise CommandFailed(f"{exc}\n{_NOT_INSTALLED}", ExitCode.FAILED) from exc
    out.write(f"wrote {unit_path}\nenvironment file: {env_file}\n")
    out.writelines(f"ran: {command}\n" for command in ran)
    out.write(
        f"live-memory is enabled and started; logs: journalctl --user -u {C.SYSTEMD_UNIT_NAME}\n"
    )
    return ExitCode.OK


_NOT_INSTALLED: Final = (
    "Nothing was installed (the unit file was removed again). systemd's user manager is not "
    "reachable here (containers, WSL, SSH sessions without lingering: `loginctl enable-linger "
    "$USER` may help). Instead run `live-memory serve` in a terminal of its own, or under your "
    "own supervisor (deploy/SUPERVISING.md); the Claude Code plugin's SessionStart hook also "
    "starts `live-memory serve --as-service` by itself when no service runs."
)


def _read_or_none(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except OSError:
        return None


def _make_dirs(path: Path) -> list[Path]:
    """mkdir -p, returning the directories it created, deepest first."""
    missing = [p for p in (path, *path.parents) if not p.exists()]
    path.mkdir(parents=True, exist_ok=True)
    return missing


def _undo(
    unit_path: Path, previous_unit: str | None, created_env: Path | None, created_dirs: list[Path]
) -> None:
    """Put the files back as they were before a failed install."""
    try:
        if previous_unit is None:
            unit_path.unlink(missing_ok=True)
        else:
            _write_if_changed(unit_path, previous_unit)
        if created_env is not None:
            created_env.unlink(missing_ok=True)
        for directory in sorted(created_dirs, key=lambda p: len(p.parts), reverse=True):
            directory.rmdir()
    except OSError as exc:
        raise CommandFailed(
            f"install-service failed and could not remove {unit_path}: {exc}", ExitCode.FAILED
        ) from exc


def _systemctl_commands() -> list[list[str]]:
    return [
        ["systemctl", "--user", "daemon-reload"],
        ["systemctl", "--user", "enable", "--now", C.SYSTEMD_UNIT_NAME],
    ]


def _explain_launchd(home: Path, out: TextIO) -> int:
    plist_path = home / "Library" / "LaunchAgents" / f"{C.LAUNCHD_LABEL}.plist"
    out.write(f"Save this as {plist_path}:\n\n{launchd_plist(home)}\n")
    out.write(
        "Then load it (and again after editing it):\n"
        f"  launchctl bootout gui/$(id -u) {shlex.quote(str(plist_path))} 2>/dev/null; "
        f"launchctl bootstrap gui/$(id -u) {shlex.quote(str(plist_path))}\n"
        "Provider keys go in the plist as an EnvironmentVariables dict "
        "(see deploy/com.live-memory.plist).\n"
    )
    return ExitCode.OK


def _write_if_changed(path: Path, text: str) -> None:
    with contextlib.suppress(OSError):  # missing, or not a regular file: (re)written
        if read_regular(path) == text.encode("utf-8"):
            return
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def _run(command: list[str], environ: Mapping[str, str]) -> str:
    """Run one systemctl step in the caller's environment (its user bus); its shell form,
    or CommandFailed."""
    try:
        done = subprocess.run(
            command,
            capture_output=True,
            text=True,
            timeout=_SYSTEMCTL_TIMEOUT_S,
            check=False,
            env=dict(environ),
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise CommandFailed(f"{shlex.join(command)} failed: {exc}", ExitCode.FAILED) from exc
    if done.returncode != 0:
        detail = (done.stderr or done.stdout).strip()
        raise CommandFailed(
            f"{shlex.join(command)} exited {done.returncode}: {detail}", ExitCode.FAILED
        )
    return shlex.join(command)


def _xml_escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
