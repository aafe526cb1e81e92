"""`live-memory config get|set`: config.json written, validated, and the server reloaded."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.cli.conftest import REPO, clean_env, cli
from tests.plugin.capture_server import CaptureServer, Seen, closed_port
from tests.support.fifo import plant_fifo
from tests.support.server_process import ServerProcess


def _env(tmp_path: Path) -> dict[str, str]:
    return {"HOME": str(tmp_path / "home"), "LIVE_MEMORY_DATA_DIR": str(tmp_path / "data")}


def test_config_set_writes_config_json_and_reloads_the_server(tmp_path: Path) -> None:
    def respond(seen: Seen) -> tuple[int, object]:
        return 200, {"status": "reloaded"}

    with CaptureServer(respond=respond) as server:
        argv = ["config", "set", "model=claude-haiku-4-5", "LIVE_MEMORY_KEEP_WARM=true"]
        result = cli([*argv, "--server", server.url], _env(tmp_path))
        config, reload = server.wait_for(2)
    config_file = tmp_path / "data" / "config.json"
    assert result.code == 0, result.err
    assert result.out == (
        f"wrote {config_file} (model, keep_warm); server reloaded; applied now: model, keep_warm\n"
    )
    assert config.path == "/config"
    assert json.loads(config_file.read_text()) == {"keep_warm": True, "model": "claude-haiku-4-5"}
    assert (reload.method, reload.path) == ("POST", "/reload")

    down = f"http://127.0.0.1:{closed_port()}"
    one = cli(["config", "get", "keep_warm", "--server", down], _env(tmp_path))
    assert (one.code, one.out) == (0, "true\n")
    everything = cli(["config", "get", "--server", down], _env(tmp_path))
    assert everything.out.splitlines()[0] == f"# {config_file}"
    assert "model                      = claude-haiku-4-5" in everything.out
    machine = cli(["config", "get", "model", "--json", "--server", down], _env(tmp_path))
    assert json.loads(machine.out) == {"model": "claude-haiku-4-5"}


def test_an_empty_value_removes_the_key(tmp_path: Path) -> None:
    down = f"http://127.0.0.1:{closed_port()}"
    cli(["config", "set", "model=x-model", "keep_warm=true", "--server", down], _env(tmp_path))
    result = cli(["config", "set", "model=", "--server", down], _env(tmp_path))
    assert result.code == 0
    assert json.loads((tmp_path / "data" / "config.json").read_text()) == {"keep_warm": True}


def test_config_set_with_the_server_down_keeps_the_change_and_says_so(tmp_path: Path) -> None:
    down = f"http://127.0.0.1:{closed_port()}"
    result = cli(["config", "set", "max_answer_tokens=512", "--server", down], _env(tmp_path))
    config_file = tmp_path / "data" / "config.json"
    assert result.code == 0
    assert result.out == f"wrote {config_file} (max_answer_tokens)\n"
    assert result.err == f"note: the server is not running; {config_file} applies when it starts\n"
    assert json.loads(config_file.read_text()) == {"max_answer_tokens": 512}


def test_bad_keys_and_values_exit_2_and_leave_the_file_alone(tmp_path: Path) -> None:
    down = f"http://127.0.0.1:{closed_port()}"
    cli(["config", "set", "model=kept", "--server", down], _env(tmp_path))
    config_file = tmp_path / "data" / "config.json"
    before = config_file.read_bytes()
    unknown = cli(["config", "set", "colour=blue", "--server", down], _env(tmp_path))
    bad = cli(["config", "set", "port=0", "--server", down], _env(tmp_path))
    get_unknown = cli(["config", "get", "colour", "--server", down], _env(tmp_path))
    assert unknown.code == bad.code == get_unknown.code == 2
    assert "unknown setting 'colour'" in unknown.err
    assert "port" in bad.err and "1-65535" in bad.err
    assert config_file.read_bytes() == before


def test_config_set_never_writes_where_the_server_says(tmp_path: Path) -> None:
    # A server (even one that proves it is ours) reports another config file: `set` edits the
    # file this shell's settings name and says how to edit the other; it never writes there.
    planted = tmp_path / "autostart" / "evil.desktop"
    planted.parent.mkdir()

    def respond(seen: Seen) -> tuple[int, object]:
        if seen.path in ("/config", "/health"):
            return 200, {"status": "ok", "config_file": str(planted), "settings": {}}
        return 200, {"status": "reloaded"}

    with CaptureServer(respond=respond) as server:
        result = cli(["config", "set", "model=m1", "--server", server.url], _env(tmp_path))
    ours = tmp_path / "data" / "config.json"
    assert result.code == 0, result.err
    assert not planted.exists()
    assert json.loads(ours.read_text()) == {"model": "m1"}
    assert f"note: the server at {server.url} reads {planted}, not this file" in result.out


def test_an_explicit_config_file_wins(tmp_path: Path) -> None:
    chosen = tmp_path / "elsewhere.json"
    down = f"http://127.0.0.1:{closed_port()}"
    argv = ["config", "set", "model=m2", "--config", str(chosen), "--server", down]
    assert cli(argv, _env(tmp_path)).code == 0
    assert json.loads(chosen.read_text()) == {"model": "m2"}


def _config_set(
    server: ServerProcess, pairs: list[str], **env: str
) -> subprocess.CompletedProcess[str]:
    """The real `live-memory config set` in its own process, against `server`."""
    argv = [
        sys.executable,
        "-m",
        "live_memory.cli",
        "config",
        "set",
        *pairs,
        "--server",
        server.url,
    ]
    # A terminal names the server's data dir itself: `set` never writes where a server says.
    environ = clean_env(server.data_dir / "home", LIVE_MEMORY_DATA_DIR=str(server.data_dir), **env)
    return subprocess.run(
        argv, env=environ, capture_output=True, text=True, timeout=120, check=False
    )


def test_config_set_refuses_what_the_next_start_could_not_use(tmp_path: Path) -> None:
    fifo = plant_fifo(tmp_path / "pipe.log")
    # An interpreter where `ray` cannot be imported, as without the extra: a None entry in
    # sys.modules is how Python marks a module unimportable (find_spec then answers None).
    no_ray = tmp_path / "no-ray"
    no_ray.mkdir()
    (no_ray / "sitecustomize.py").write_text("import sys\nsys.modules['ray'] = None\n")
    with ServerProcess(tmp_path / "data", {}) as server:
        kept = _config_set(server, ["model=kept"])
        assert kept.returncode == 0, kept.stderr
        config_file = server.data_dir / "config.json"
        before = config_file.read_bytes()
        refusals = {
            "LIVE_MEMORY_BACKEND": _config_set(
                server, ["backend=ray"], PYTHONPATH=f"{no_ray}{os.pathsep}{REPO}"
            ),
            "LIVE_MEMORY_LOG_FILE": _config_set(server, ["log_file=/proc/self/mem"]),
        }
        for variable, bad in (
            ("LIVE_MEMORY_LOG_FILE", f"log_file={fifo}"),
            ("LIVE_MEMORY_LOG_FILE", f"log_file={tmp_path}"),  # a directory
            ("LIVE_MEMORY_INSIGHTS_ROOT", "insights_root=/sys/kernel/insights"),
            ("LIVE_MEMORY_INSIGHTS_ROOT", f"insights_root={fifo}"),
        ):
            refusals[f"{variable} ({bad})"] = _config_set(server, [bad])
        for variable, refused in refusals.items():
            assert refused.returncode == 2, (variable, refused.stdout, refused.stderr)
            assert variable.split()[0] in refused.stderr, refused.stderr
            assert "is unchanged" in refused.stderr
        assert "pip install 'live-memory[ray]'" in refusals["LIVE_MEMORY_BACKEND"].stderr
        assert config_file.read_bytes() == before
        assert server.request("GET", "/health").status_code == 200
        # The same check passes where the extra is there and the paths are usable.
        usable = _config_set(server, ["backend=ray", f"log_file={tmp_path / 'logs' / 'lm.log'}"])
        assert usable.returncode == 0, usable.stderr
        assert json.loads(config_file.read_text())["backend"] == "ray"
