"""`live-memory install-service` and the deploy/ files agree with each other and the config."""

from __future__ import annotations

import io
import os
import plistlib
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from live_memory.cli import CommandFailed, ExitCode
from live_memory.cli.service import install_service, launchd_plist, systemd_unit
from live_memory.config import constants as C
from live_memory.config import env_name
from live_memory.config.variables import VARIABLES
from tests.cli.conftest import REPO, cli

DEPLOY = REPO / "deploy"


def _unit_lines(text: str) -> list[str]:
    return [
        line
        for line in text.splitlines()
        if line.strip() and not line.startswith("#") and not line.startswith("ExecStart=")
    ]


def test_dry_run_prints_the_unit_and_the_systemctl_steps_without_touching_home(
    tmp_path: Path,
) -> None:
    out = io.StringIO()
    code = install_service({"HOME": str(tmp_path)}, platform="linux", dry_run=True, out=out)
    text = out.getvalue()
    assert code == 0
    unit_path = tmp_path / ".config" / "systemd" / "user" / C.SYSTEMD_UNIT_NAME
    assert text.startswith(f"# would write {unit_path}\n")
    assert f"ExecStart={sys.executable} -m live_memory.cli serve\n" in text
    assert "systemctl --user daemon-reload\n" in text
    assert f"systemctl --user enable --now {C.SYSTEMD_UNIT_NAME}\n" in text
    assert list(tmp_path.iterdir()) == []


def test_the_cli_runs_install_service_dry_run(tmp_path: Path) -> None:
    result = cli(["install-service", "--dry-run"], {"HOME": str(tmp_path)})
    assert result.code == 0
    assert "[Service]" in result.out or "launchctl" in result.out
    assert list(tmp_path.iterdir()) == []


def test_install_without_systemctl_leaves_nothing_behind_and_says_what_to_run(
    tmp_path: Path,
) -> None:
    env = {"HOME": str(tmp_path / "home"), "PATH": str(tmp_path / "no-bin")}
    unit_path = tmp_path / "home" / ".config" / "systemd" / "user" / C.SYSTEMD_UNIT_NAME
    env_file = tmp_path / "home" / ".config" / "live-memory" / "env"
    for _ in range(2):
        with pytest.raises(CommandFailed) as failed:
            install_service(env, platform="linux", dry_run=False, out=io.StringIO())
        assert "systemctl not found" in failed.value.message
        assert "Nothing was installed" in failed.value.message
        assert "`live-memory serve`" in failed.value.message
        assert not unit_path.exists() and not env_file.exists()
    env_file.parent.mkdir(parents=True)
    env_file.write_text("ANTHROPIC_API_KEY=mine\n")
    with pytest.raises(CommandFailed):
        install_service(env, platform="linux", dry_run=False, out=io.StringIO())
    assert env_file.read_text() == "ANTHROPIC_API_KEY=mine\n"  # never overwritten or removed


@pytest.mark.skipif(shutil.which("systemctl") is None, reason="needs the real systemctl")
def test_install_where_the_user_bus_is_missing_restores_the_files_and_names_the_fallback(
    tmp_path: Path,
) -> None:
    """The real CLI and the real systemctl, with no user manager to reach (a container, WSL,
    an SSH session without lingering): the earlier unit is put back, nothing new is left."""
    home = tmp_path / "home"
    unit_path = home / ".config" / "systemd" / "user" / C.SYSTEMD_UNIT_NAME
    unit_path.parent.mkdir(parents=True)
    unit_path.write_text("[Unit]\nDescription=the user's own earlier unit\n")
    env = {
        "HOME": str(home),
        "PATH": os.path.dirname(shutil.which("systemctl") or "") + ":/usr/bin:/bin",
        "XDG_RUNTIME_DIR": str(tmp_path / "no-runtime-dir"),
        "DBUS_SESSION_BUS_ADDRESS": f"unix:path={tmp_path / 'no-bus'}",
    }
    result = cli(["install-service"], env)
    assert result.code == ExitCode.FAILED, result.out
    assert "systemctl --user daemon-reload exited" in result.err
    assert "Nothing was installed" in result.err and "serve --as-service" in result.err
    assert unit_path.read_text() == "[Unit]\nDescription=the user's own earlier unit\n"
    assert not (home / ".config" / "live-memory" / "env").exists()


def test_macos_gets_a_loadable_plist_and_the_launchctl_steps(tmp_path: Path) -> None:
    out = io.StringIO()
    assert install_service({"HOME": str(tmp_path)}, platform="darwin", dry_run=False, out=out) == 0
    text = out.getvalue()
    plist_path = tmp_path / "Library" / "LaunchAgents" / f"{C.LAUNCHD_LABEL}.plist"
    assert f"Save this as {plist_path}:" in text
    assert "launchctl bootstrap gui/$(id -u)" in text
    parsed = plistlib.loads(launchd_plist(tmp_path).encode())
    assert parsed["Label"] == C.LAUNCHD_LABEL
    assert parsed["ProgramArguments"] == [sys.executable, "-m", "live_memory.cli", "serve"]
    assert parsed["KeepAlive"] == {"SuccessfulExit": False}


def test_other_platforms_are_told_where_to_look(tmp_path: Path) -> None:
    with pytest.raises(CommandFailed) as refused:
        install_service({"HOME": str(tmp_path)}, platform="win32", dry_run=False, out=io.StringIO())
    assert refused.value.exit_code == ExitCode.USAGE
    assert "SUPERVISING.md" in refused.value.message


def test_the_deploy_unit_is_the_unit_install_service_writes() -> None:
    shipped = (DEPLOY / "live-memory.service").read_text()
    assert _unit_lines(shipped) == _unit_lines(systemd_unit())
    assert "ExecStart=%h/.local/bin/live-memory serve" in shipped
    for needed in ("Restart=on-failure", "EnvironmentFile=-%h/.config/live-memory/env"):
        assert needed in shipped


def test_the_deploy_plist_parses_and_runs_serve() -> None:
    parsed = plistlib.loads((DEPLOY / "com.live-memory.plist").read_bytes())
    assert parsed["Label"] == C.LAUNCHD_LABEL
    assert parsed["ProgramArguments"][-1] == "serve"


def test_the_env_example_lists_every_variable() -> None:
    text = (DEPLOY / "live-memory.env.example").read_text()
    listed = {line.split("=")[0].lstrip("#") for line in text.splitlines() if "=" in line}
    missing = {env_name(key) for key in VARIABLES} - listed
    assert not missing


def test_the_dockerfile_runs_as_non_root_with_a_health_check() -> None:
    text = (DEPLOY / "Dockerfile").read_text()
    assert "FROM python:3.11-slim" in text
    assert "\nUSER livememory\n" in text
    assert "HEALTHCHECK" in text and "/health" in text
    assert "LIVE_MEMORY_HOST=0.0.0.0" in text and "LIVE_MEMORY_TOKEN" in text
    assert 'ENTRYPOINT ["live-memory"]' in text


def test_the_install_script_is_valid_bash() -> None:
    subprocess.run(["bash", "-n", str(DEPLOY / "install-systemd.sh")], check=True, timeout=30)
    assert (DEPLOY / "install-systemd.sh").stat().st_mode & 0o111


def test_the_docker_build_context_leaves_out_the_clones_venv_and_caches() -> None:
    """After `make test` a clone holds .venv (hundreds of MB) and .cache: never sent to
    the Docker daemon; what the Dockerfile copies still is."""
    ignored = {
        line.strip()
        for line in (REPO / ".dockerignore").read_text().splitlines()
        if line.strip() and not line.startswith("#")
    }
    assert {".venv", ".cache", ".git", ".mypy_cache", "tests"} <= ignored
    copied = {"pyproject.toml", "README.md", "live_memory"}
    assert not copied & ignored
    docker = (DEPLOY / "Dockerfile").read_text()
    assert "$HOME/.claude/projects:$HOME/.claude/projects" in docker
    assert "LIVE_MEMORY_ALLOWED_HOSTS" in docker


@pytest.mark.skipif(shutil.which("make") is None, reason="needs make")
def test_make_serve_installs_the_package_alone_and_make_test_what_every_test_needs(
    tmp_path: Path,
) -> None:
    """`make -n` (what make would run) in the clone, for a venv that does not exist yet."""

    def planned(target: str) -> str:
        done = subprocess.run(
            ["make", "-n", target, f"VENV={tmp_path / 'venv'}"],
            cwd=REPO,
            capture_output=True,
            text=True,
            timeout=60,
            check=True,
        )
        return done.stdout

    serve = planned("serve")
    assert "pip install --quiet -e .\n" in serve and "[dev" not in serve and "ray" not in serve
    test = planned("test")
    assert "-e '.[dev,ray]'" in test
    assert "deploy/test-deps.sh" in test  # Chromium for the browser tests, when missing
