"""An answer's sources: cited in its text or shown by its tools, checked against the jail."""

from __future__ import annotations

from pathlib import Path

from live_memory.agent.sources import SOURCES_MAX, answer_sources, sources_note
from live_memory.tools import Span, Toolbox


def _root(tmp_path: Path) -> Toolbox:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "app.py").write_text("a = 1\nb = 2\nc = 3\n", encoding="utf-8")
    (tmp_path / "src" / "server.pem").write_text("KEY\n", encoding="utf-8")
    return Toolbox(tmp_path)


def test_citations_are_checked_through_the_jail_and_marked_when_never_seen(
    tmp_path: Path,
) -> None:
    text = (
        "See `app.py` and src/app.py:2-3, src/app.py:9, `os.path`, src/server.pem, "
        "../etc/passwd.txt and `lib/gone.py`."
    )
    sources = answer_sources(text, [], {"src/app.py"}, _root(tmp_path).line_count)
    got = [(s.path, s.start_line, s.end_line, s.checked, s.seen) for s in sources]
    assert got == [
        ("src/app.py", None, None, True, True),  # the bare name the window knows at one path
        ("src/app.py", 2, 3, True, True),
        ("src/app.py", 9, 9, False, True),  # past the file's end
        ("src/server.pem", None, None, False, False),  # a secret file is refused by the jail
        ("lib/gone.py", None, None, False, False),
    ]
    note = sources_note(sources)
    assert "[not found in the repository: src/app.py:9, src/server.pem, lib/gone.py]" in note
    assert "unverified" not in note


def test_tool_spans_are_sources_seen_and_bounded(tmp_path: Path) -> None:
    spans = [Span("src/app.py", 1, 3)] + [Span("src/app.py", n, n) for n in range(1, 60)]
    sources = answer_sources("It is in src/app.py.", spans, set(), _root(tmp_path).line_count)
    assert len(sources) == SOURCES_MAX
    assert sources[0].path == "src/app.py" and (sources[0].start_line, sources[0].end_line) == (
        1,
        3,
    )
    assert all(s.seen for s in sources)
    assert [s.checked for s in sources[:4]] == [True, True, True, True]
    assert not sources[4].checked  # line 4 of a 3-line file


def test_a_file_that_exists_but_was_never_read_is_unverified(tmp_path: Path) -> None:
    sources = answer_sources("Defined in src/app.py:1.", [], set(), _root(tmp_path).line_count)
    assert [(s.checked, s.seen) for s in sources] == [(True, False)]
    assert sources_note(sources) == (
        "[unverified: src/app.py (named in the answer, never read this session)]"
    )
