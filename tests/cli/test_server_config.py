"""`GET /config` and `config get|set` against a real server: the server's settings, not the
shell's; which keys applied and which wait for a restart; combinations refused before writing."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.cli.conftest import cli
from tests.support.server_process import ServerProcess

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

TOKEN = "tok-" + "q" * 28
API_KEY = "sk-ant-api03-" + "k" * 40
GATEWAY = "https://gateway.example/anthropic"  # never called: nothing is asked


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    """A server on Anthropic (a key that is never used: nothing is asked) with a token."""
    data = tmp_path_factory.mktemp("config-server")
    env = {
        "ANTHROPIC_API_KEY": API_KEY,
        "ANTHROPIC_BASE_URL": GATEWAY,
        "LIVE_MEMORY_MODEL": "claude-haiku-4-5",
        "LIVE_MEMORY_TOKEN": TOKEN,
    }
    with ServerProcess(data, env) as running:
        yield running


def _shell(tmp_path: Path) -> dict[str, str]:
    """A terminal with none of the server's settings, only the token to talk to it."""
    return {"HOME": str(tmp_path / "home"), "LIVE_MEMORY_TOKEN": TOKEN}


def test_get_config_is_behind_the_guard_and_masks_secrets(server: ServerProcess) -> None:
    assert server.request("GET", "/config").status_code == 401
    reply = server.request("GET", "/config", headers={"Authorization": f"Bearer {TOKEN}"})
    assert reply.status_code == 200, reply.text
    body = reply.json()
    assert body["data_dir"] == str(server.data_dir)
    assert body["config_file"] == str(server.data_dir / "config.json")
    settings, sources = body["settings"], body["sources"]
    assert settings["provider"] == "anthropic" and settings["model"] == "claude-haiku-4-5"
    assert API_KEY not in reply.text and TOKEN not in reply.text
    assert sources["model"] == "LIVE_MEMORY_MODEL" and sources["port"] == "command line"
    assert sources["keep_warm"] == "default"
    assert {"host", "port", "token", "data_dir"} <= set(body["restart_required"])


def test_config_get_reports_the_running_servers_values(
    server: ServerProcess, tmp_path: Path
) -> None:
    one = cli(["config", "get", "provider", "--server", server.url], _shell(tmp_path))
    assert (one.code, one.out) == (0, "anthropic\n"), one.err
    data_dir = cli(["config", "get", "data_dir", "--server", server.url], _shell(tmp_path))
    assert data_dir.out == f"{server.data_dir}\n"
    everything = cli(["config", "get", "--server", server.url], _shell(tmp_path))
    lines = everything.out.splitlines()
    assert lines[0] == f"# {server.data_dir / 'config.json'} (the server at {server.url})"
    assert any(
        line.split() == ["model", "=", "claude-haiku-4-5", "#", "LIVE_MEMORY_MODEL"]
        for line in lines
    )
    machine = cli(["config", "get", "--json", "--server", server.url], _shell(tmp_path))
    assert json.loads(machine.out)["provider"] == "anthropic"


def test_config_set_names_what_applied_what_needs_a_restart_and_what_is_overridden(
    server: ServerProcess, tmp_path: Path
) -> None:
    argv = ["config", "set", "keep_warm=true", "log_level=debug", "model=other"]
    # A terminal names the server's data dir itself: `set` never writes where a server says.
    shell = {**_shell(tmp_path), "LIVE_MEMORY_DATA_DIR": str(server.data_dir)}
    result = cli([*argv, "--server", server.url], shell)
    assert result.code == 0, result.err
    config_file = server.data_dir / "config.json"
    assert result.out.splitlines() == [
        f"wrote {config_file} (keep_warm, log_level, model); server reloaded; applied now: "
        "keep_warm; needs a restart of the server: log_level",
        "note: model has no effect while the server's environment sets LIVE_MEMORY_MODEL "
        "(the environment wins over the config file)",
    ]
    machine = cli(
        ["config", "set", "log_level=", "model=", "--json", "--server", server.url], shell
    )
    body = json.loads(machine.out)
    assert body["restart_required"] == ["log_level"] and body["content"] == {"keep_warm": True}
    assert body["overridden_by_environment"] == {"model": "LIVE_MEMORY_MODEL"}
    got = cli(["config", "get", "keep_warm", "--server", server.url], _shell(tmp_path))
    assert got.out == "true\n"  # reloaded: the server reports the new value


def test_a_public_host_without_a_token_is_refused_before_writing(
    server: ServerProcess, tmp_path: Path
) -> None:
    chosen = tmp_path / "config.json"
    chosen.write_text('{"model": "m"}\n')
    env = {"HOME": str(tmp_path / "home")}
    refused = cli(["config", "set", "host=0.0.0.0", "--config", str(chosen)], env)
    assert refused.code == 2
    assert "refusing to bind 0.0.0.0: a non-loopback address needs LIVE_MEMORY_TOKEN" in (
        refused.err
    )
    assert chosen.read_text() == '{"model": "m"}\n'
    with_token = cli(
        ["config", "set", "host=0.0.0.0", "token=" + "t" * 20, "--config", str(chosen)], env
    )
    assert with_token.code == 0, with_token.err
    # Against the server, its own token (from its environment) counts.
    accepted = cli(["config", "set", "host=0.0.0.0", "--server", server.url], _shell(tmp_path))
    assert accepted.code == 0, accepted.err
    assert "needs a restart of the server: host" in accepted.out
    cli(["config", "set", "host=", "keep_warm=", "--server", server.url], _shell(tmp_path))


def test_config_get_names_the_provider_variables_detection_took_values_from(
    server: ServerProcess, tmp_path: Path
) -> None:
    reply = server.request("GET", "/config", headers={"Authorization": f"Bearer {TOKEN}"})
    sources = reply.json()["sources"]
    assert sources["api_key"] == "ANTHROPIC_API_KEY"
    assert sources["base_url"] == "ANTHROPIC_BASE_URL"
    assert sources["provider"] == "detected from ANTHROPIC_API_KEY"
    lines = cli(["config", "get", "--server", server.url], _shell(tmp_path)).out.splitlines()
    assert any(
        line.split() == ["base_url", "=", GATEWAY, "#", "ANTHROPIC_BASE_URL"] for line in lines
    ), lines


def test_config_set_port_is_refused_saying_how_to_move_the_server_and_its_clients(
    server: ServerProcess, tmp_path: Path
) -> None:
    config_file = server.data_dir / "config.json"
    before = config_file.read_bytes() if config_file.exists() else None
    # A terminal names the server's data dir itself: `set` never writes where a server says.
    shell = {**_shell(tmp_path), "LIVE_MEMORY_DATA_DIR": str(server.data_dir)}
    result = cli(["config", "set", "port=8000", "--server", server.url], shell)
    assert (result.code, result.out) == (2, "")
    assert "the CLI, the plugin's .mcp.json and its hooks find the server at LIVE_MEMORY_PORT" in (
        result.err
    )
    assert "set LIVE_MEMORY_PORT=8000 where the server starts" in result.err
    assert f"{config_file} is unchanged" in result.err
    assert (config_file.read_bytes() if config_file.exists() else None) == before
    as_json = cli(["config", "set", "port=8000", "--json", "--server", server.url], shell)
    assert json.loads(as_json.out)["error"]["exit_code"] == 2
