"""Transcript digests: asks, conclusions, tools and paths kept; dumps, noise and secrets dropped."""

from __future__ import annotations

from pathlib import Path

import pytest

from live_memory.config.constants import SECRET_REDACTION, TRANSCRIPT_ENTRY_MAX_CHARS
from live_memory.knowledge import TranscriptError, digest_transcript
from tests.knowledge.conftest import fixture_records, write_transcript

SESSION = "3c3d112b-e3b7-4cb3-9afd-52072cb2a140"
CWD = "/home/dev/project"


def _user(text: object, **extra: object) -> dict[str, object]:
    return {"type": "user", "cwd": CWD, "message": {"role": "user", "content": text}, **extra}


def _assistant(*blocks: dict[str, object], **extra: object) -> dict[str, object]:
    return {
        "type": "assistant",
        "cwd": CWD,
        "message": {"role": "assistant", "content": list(blocks)},
        **extra,
    }


def test_fixture_digest_keeps_the_ask_the_tools_with_their_paths_and_the_conclusion(
    transcript: Path,
) -> None:
    digest = digest_transcript(transcript, max_chars=10_000)

    assert digest.text.splitlines() == [
        "user: flat + blocking test",
        "tool: Read /home/dev/project/input.txt",
        "tool: Write /home/dev/project/out.txt",
        "tool: Edit /home/dev/project/out.txt",
        "tool: mcp__plugin_live-memory_live-memory__ask_live_memory 'what colour is the sky?'",
        "assistant: FINAL: live memory says the sky is green.",
    ]
    assert digest.paths == ("/home/dev/project/input.txt", "/home/dev/project/out.txt")
    assert digest.session_id == SESSION
    assert digest.entries_kept == 6
    assert digest.malformed_lines == 0
    assert digest.secrets_redacted == 0


def test_with_a_root_the_text_names_files_workspace_relative_and_paths_stay_absolute(
    transcript: Path,
) -> None:
    digest = digest_transcript(transcript, max_chars=10_000, root=Path(CWD))

    assert "tool: Read input.txt" in digest.text.splitlines()
    assert "tool: Edit out.txt" in digest.text.splitlines()
    assert digest.paths == ("/home/dev/project/input.txt", "/home/dev/project/out.txt")


def test_tool_results_file_contents_and_edit_strings_never_reach_the_digest(
    tmp_path: Path,
) -> None:
    records = fixture_records()
    dump = "\n".join(f"DUMP-LINE {i}: def handler(): return {i}" for i in range(5000))
    read_result = records[6]
    read_result["message"]["content"][0]["content"] = dump  # type: ignore[index]
    read_result["toolUseResult"]["file"]["content"] = dump  # type: ignore[index]
    path = write_transcript(tmp_path / "big.jsonl", records)

    digest = digest_transcript(path, max_chars=10_000)

    assert "DUMP-LINE" not in digest.text
    assert "hello from input.txt" not in digest.text  # the original Read output
    assert "line one" not in digest.text  # Write content
    assert "line 2 edited" not in digest.text  # Edit new_string
    assert "LIVE-MEMORY-ANSWER" not in digest.text  # an MCP tool's result
    assert len(digest.text) < 1000


def test_secrets_in_asks_conclusions_and_commands_are_redacted(tmp_path: Path) -> None:
    anthropic_key = "sk-ant-api03-Zq8vN2xLmP4rT6yW1bC3dE5fG7hJ9kA0"
    password = "hunter2-Secret!x9"
    openai_key = "sk-proj-7Hq2Lm9Xc4Vb8Nz1Qw3Er5Ty"
    records = fixture_records()
    records[2] = _user(f"flat + blocking test, my key is {anthropic_key}", sessionId=SESSION)
    records.append(
        _assistant(
            {"type": "text", "text": f'Set password = "{password}" in the config.'},
            {
                "type": "tool_use",
                "id": "toolu_1",
                "name": "Bash",
                "input": {"command": f"export OPENAI_API_KEY={openai_key} && pytest -q"},
            },
        )
    )
    path = write_transcript(tmp_path / "secret.jsonl", records)

    digest = digest_transcript(path, max_chars=10_000)

    for secret in (anthropic_key, password, openai_key):
        assert secret not in digest.text
    assert digest.text.count(SECRET_REDACTION) == 3
    assert digest.secrets_redacted == 3
    assert "pytest -q" in digest.text  # the rest of the command is kept


def test_malformed_lines_are_skipped_and_counted(transcript: Path) -> None:
    with transcript.open("a", encoding="utf-8") as handle:
        handle.write('{"type": "user", "message": {"content": "cut off\n')
        handle.write("not json at all\n")
        handle.write("[1, 2, 3]\n")
        handle.write("\n")  # blank lines are not malformed

    digest = digest_transcript(transcript, max_chars=10_000)

    assert digest.malformed_lines == 3
    assert digest.entries_kept == 6


def test_a_missing_transcript_raises_transcript_error_naming_it(tmp_path: Path) -> None:
    missing = tmp_path / "gone.jsonl"

    with pytest.raises(TranscriptError, match=r"gone\.jsonl"):
        digest_transcript(missing, max_chars=1000)
    with pytest.raises(TranscriptError, match="not a regular file"):
        digest_transcript(tmp_path, max_chars=1000)


def test_over_the_budget_the_latest_entries_are_kept(transcript: Path) -> None:
    full = digest_transcript(transcript, max_chars=10_000)
    lines = full.text.splitlines()
    budget = len("\n".join(lines[-3:]))

    digest = digest_transcript(transcript, max_chars=budget)

    assert digest.text.splitlines() == lines[-3:]
    assert digest.entries_kept == 3
    assert len(digest.text) <= budget
    assert digest.paths == ("/home/dev/project/out.txt",)  # input.txt left with its entry


def test_a_last_entry_longer_than_the_budget_is_cut_to_fit(transcript: Path) -> None:
    digest = digest_transcript(transcript, max_chars=20)

    assert len(digest.text) == 20
    assert digest.text.startswith("assistant: ")
    assert digest.entries_kept == 1


def test_a_pasted_wall_of_text_is_cut_at_the_entry_limit(tmp_path: Path) -> None:
    path = write_transcript(
        tmp_path / "paste.jsonl", [_user("why does this fail?\n" + "x" * 50_000)]
    )

    digest = digest_transcript(path, max_chars=100_000)

    assert digest.text.startswith("user: why does this fail?")
    assert len(digest.text) == TRANSCRIPT_ENTRY_MAX_CHARS
    assert digest.text.endswith("…[cut]")


def test_meta_sidechain_thinking_reminders_and_interruptions_are_dropped(tmp_path: Path) -> None:
    records: list[dict[str, object]] = [
        _user("Caveat: The messages below were generated by the user", isMeta=True),
        _user(
            "<command-message>review</command-message>\n<command-name>/review</command-name>"
            "\n<command-args>PR 12</command-args>"
        ),
        _user("<local-command-stdout>Compacted</local-command-stdout>"),
        _user(
            [{"type": "text", "text": "where is auth?<system-reminder>be nice</system-reminder>"}]
        ),
        _assistant({"type": "thinking", "thinking": "SECRET PLAN", "signature": "abc"}),
        _assistant({"type": "text", "text": "subagent chatter"}, isSidechain=True),
        _user([{"type": "text", "text": "[Request interrupted by user]"}]),
        _assistant({"type": "text", "text": "Auth lives in /home/dev/project/src/auth.py."}),
        {"type": "summary", "summary": "Auth walkthrough", "leafUuid": "x"},
        {"type": "system", "content": "hook ran"},
    ]
    path = write_transcript(tmp_path / "noise.jsonl", records)

    digest = digest_transcript(path, max_chars=10_000)

    assert digest.text.splitlines() == [
        "user: /review PR 12",
        "user: where is auth?",
        "assistant: Auth lives in /home/dev/project/src/auth.py.",
    ]
    assert digest.paths == ("/home/dev/project/src/auth.py",)


def test_relative_tool_paths_are_resolved_against_the_session_cwd(tmp_path: Path) -> None:
    records = [
        _assistant(
            {
                "type": "tool_use",
                "id": "t1",
                "name": "Grep",
                "input": {"pattern": "def login", "path": "src"},
            },
            {"type": "tool_use", "id": "t2", "name": "Read", "input": {"file_path": "./a/../b.py"}},
        ),
    ]
    path = write_transcript(tmp_path / "rel.jsonl", records)

    digest = digest_transcript(path, max_chars=10_000)

    assert digest.text.splitlines() == [
        "tool: Grep 'def login' /home/dev/project/src",
        "tool: Read /home/dev/project/b.py",
    ]
    assert digest.paths == ("/home/dev/project/src", "/home/dev/project/b.py")


def test_without_a_session_id_the_file_name_is_the_session(tmp_path: Path) -> None:
    path = write_transcript(tmp_path / "abc-123.jsonl", [_user("hello")])

    assert digest_transcript(path, max_chars=100).session_id == "abc-123"


def test_a_non_positive_budget_is_refused(transcript: Path) -> None:
    with pytest.raises(ValueError, match="max_chars"):
        digest_transcript(transcript, max_chars=0)
