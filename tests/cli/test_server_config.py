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


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    """A server on Anthropic (a key that is never used: nothing is asked) with a token."""
    data = tmp_path_factory.mktemp("config-server")
    env = {
        "ANTHROPIC_API_KEY": API_KEY,
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
    argv = ["config", "set", "keep_warm=true", "port=7799", "model=other", "--server", server.url]
    # A terminal names the server's data dir itself: `set` never writes where a server says.
    shell = {**_shell(tmp_path), "LIVE_MEMORY_DATA_DIR": str(server.data_dir)}
    result = cli(argv, shell)
    assert result.code == 0, result.err
    config_file = server.data_dir / "config.json"
    assert result.out.splitlines() == [
        f"wrote {config_file} (keep_warm, port, model); server reloaded; applied now: "
        "keep_warm; needs a restart of the server: port",
        "note: model has no effect while the server's environment sets LIVE_MEMORY_MODEL "
        "(the environment wins over the config file)",
    ]
    machine = cli(["config", "set", "port=", "model=", "--json", "--server", server.url], shell)
    body = json.loads(machine.out)
    assert body["restart_required"] == ["port"] and body["content"] == {"keep_warm": True}
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
