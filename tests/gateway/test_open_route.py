"""POST /api/open: a session's start opens its workspace, so what the hooks tee before the
repository's first question is kept; notifications alone still create nothing."""

from __future__ import annotations

from pathlib import Path

from tests.support.repo import make_repo
from tests.support.server_process import ServerProcess


def _read(server: ServerProcess, repo: Path) -> dict[str, object]:
    body = {"cwd": str(repo), "events": [{"path": "src/app.py", "kind": "read", "content": "A\n"}]}
    return dict(server.request("POST", "/notify", json=body).json())


def test_a_notification_for_an_unopened_workspace_creates_nothing(
    edge_server: ServerProcess, tmp_path: Path
) -> None:
    repo = make_repo(tmp_path / "repo", {"src/app.py": "A\n"})
    assert _read(edge_server, repo) == {"accepted": 0, "ignored": 1}


def test_an_opened_workspace_keeps_the_reads_teed_before_its_first_question(
    edge_server: ServerProcess, tmp_path: Path
) -> None:
    repo = make_repo(tmp_path / "repo", {"src/app.py": "A\n"})
    opened = edge_server.request("POST", "/api/open", json={"cwd": str(repo)})
    assert opened.status_code == 200, opened.text
    assert str(opened.json()["banner"]).startswith("live-memory: ")
    assert _read(edge_server, repo) == {"accepted": 1, "ignored": 0}
    stats = edge_server.request("GET", "/stats", params={"cwd": str(repo)}).json()
    assert stats["file_contexts"]["with_content"] >= 1


def test_opening_a_relative_or_missing_directory_is_refused(
    edge_server: ServerProcess, tmp_path: Path
) -> None:
    for cwd in ("relative/dir", str(tmp_path / "missing"), 42):
        reply = edge_server.request("POST", "/api/open", json={"cwd": cwd})
        assert reply.status_code == 422, (cwd, reply.text)
    assert edge_server.request("POST", "/api/open", json=[1]).status_code == 422
