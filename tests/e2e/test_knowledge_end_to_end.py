"""Learning from conversations and sharing what is learnt, through the real server."""

from __future__ import annotations

import json
import shutil
import signal
import time
from pathlib import Path

import pytest

from tests.e2e.conftest import provider_env
from tests.e2e.test_concurrency_end_to_end import _warm
from tests.e2e.test_lifecycle_end_to_end import _ask
from tests.support.app_server import AppServer, RunningServer
from tests.support.fakes import Error, FakeProvider, Recorded, Reply, Text
from tests.support.fixtures import TRANSCRIPT
from tests.support.server_process import ServerProcess

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

FACT = "[decision] Session tests are kept flat and blocking, see src/app.py."


def _summariser_or_answer(recorded: Recorded) -> Reply:
    return Text(FACT) if not recorded.body.get("tools") else Text("answer")


def _enqueue(server: RunningServer, repo: Path, transcript: Path, session: str = "s-1") -> dict:
    body = {"cwd": str(repo), "session_id": session, "transcript_path": str(transcript)}
    reply = server.request("POST", "/api/enqueue", json=body)
    assert reply.status_code == 200, reply.text
    return dict(reply.json())


def _wait_for(server: RunningServer, repo: Path, key: str, want: int) -> dict:
    # A failing row takes 3 attempts, each through the provider's own retries with backoff
    # (about 25 s on an idle machine): the bound is for a loaded one.
    deadline = time.monotonic() + 90
    while True:
        stats = server.request("GET", "/stats", params={"cwd": str(repo)}).json()
        if stats["transcripts"].get(key, 0) >= want or time.monotonic() > deadline:
            return dict(stats)
        time.sleep(0.1)  # polling the server's view of a background job


def test_a_stop_hook_transcript_becomes_ledger_knowledge_once(
    fake: FakeProvider, repo: Path, tmp_path: Path
) -> None:
    transcript = tmp_path / "session.jsonl"
    shutil.copy(TRANSCRIPT, transcript)
    fake.responder = _summariser_or_answer
    insights = tmp_path / "insights"
    env = provider_env(fake, "anthropic") | {"LIVE_MEMORY_INSIGHTS_ROOT": str(insights)}
    with AppServer(tmp_path / "data", env) as server:
        _warm(server, repo)
        assert _enqueue(server, repo, transcript)["queued"] is True
        stats = _wait_for(server, repo, "done", 1)
        assert stats["ledger_facts"] == 1
        assert _enqueue(server, repo, transcript)["queued"] is False
        assert _ask(server, repo, "how are tests kept?").status_code == 200
        stats = server.request("GET", "/stats", params={"cwd": str(repo)}).json()
    assert stats["ledger_facts"] == 1
    assert "kept flat and blocking" in (insights / repo.name / "decision.md").read_text()
    summaries = [r for r in fake.requests if not r.body.get("tools")]
    assert len(summaries) == 1
    assert "flat + blocking test" in json.dumps(summaries[0].body)
    assert "kept flat and blocking" in json.dumps(fake.requests[-1].body)


def test_the_queue_survives_kill_9(fake: FakeProvider, repo: Path, tmp_path: Path) -> None:
    transcript = tmp_path / "session.jsonl"
    shutil.copy(TRANSCRIPT, transcript)
    env = provider_env(fake, "anthropic")
    fake.responder = lambda recorded: Text("answer")
    with ServerProcess(tmp_path / "data", env | {"ANTHROPIC_API_KEY": ""}) as server:
        # No provider: nothing can drain, so the row stays pending across the kill.
        assert _enqueue(server, repo, transcript)["queued"] is True
        server.stop(signal.SIGKILL)
    fake.responder = _summariser_or_answer
    # What survived is on disk: the app reads it back the same in process.
    with AppServer(tmp_path / "data", env) as server:
        stats = _wait_for(server, repo, "done", 1)
        assert stats["transcripts"]["done"] == 1 and stats["ledger_facts"] == 1


def test_a_failing_row_ends_as_failed_and_the_banner_says_so(
    fake: FakeProvider, repo: Path, tmp_path: Path
) -> None:
    # A refusal the provider adapter does not retry: the row's own 3 attempts, without the
    # adapter's backoff between retries (a 500 would add about 25 s of it).
    fake.responder = lambda recorded: Error(400, "invalid_request_error", "boom")
    other = tmp_path / "other.jsonl"
    other.write_text(TRANSCRIPT.read_text().replace("flat + blocking test", "another session"))
    with AppServer(tmp_path / "data", provider_env(fake, "anthropic")) as server:
        _enqueue(server, repo, other, session="s-2")
        stats = _wait_for(server, repo, "failed", 1)
        banner = server.request("GET", "/api/banner", params={"cwd": str(repo)}).json()
    assert stats["transcripts"]["failed"] == 1
    assert banner["banner"].startswith("live-memory: ⚠ 1 transcript failed")
    assert len(fake.requests) == 3  # one per attempt, none retried by the adapter


def test_export_then_import_into_an_empty_data_dir_starts_warm(
    fake: FakeProvider, repo: Path, tmp_path: Path
) -> None:
    transcript = tmp_path / "session.jsonl"
    shutil.copy(TRANSCRIPT, transcript)
    fake.responder = _summariser_or_answer
    with AppServer(tmp_path / "data", provider_env(fake, "anthropic")) as server:
        _enqueue(server, repo, transcript)
        _wait_for(server, repo, "done", 1)
        exported = server.request("GET", "/api/export", params={"cwd": str(repo)}).json()
    assert [f["text"] for f in exported["facts"]] == [FACT.split("] ", 1)[1]]
    assert exported["facts"][0]["category"] == "decision"
    with AppServer(tmp_path / "fresh-data", provider_env(fake, "anthropic")) as server:
        body = {"cwd": str(repo), "facts": exported["facts"]}
        imported = server.request("POST", "/api/import", json=body).json()
        assert (imported["added"], imported["ledger_facts"]) == (1, 1)
        assert imported["stored"] == {"added": 1, "confirmed": 0, "superseded": 0, "evicted": 0}
        again = server.request("POST", "/api/import", json=body).json()
        assert again["added"] == 0
        assert again["stored"]["confirmed"] == 1  # the store confirms, it does not re-count
        assert _ask(server, repo, "tests?").status_code == 200
    assert "kept flat and blocking" in json.dumps(fake.requests[-1].body)
