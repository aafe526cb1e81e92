"""Reading rg's stdout records and the lines of its debug log that Grep relies on."""

from __future__ import annotations

from live_memory.tools.grep_engine import FileHits
from live_memory.tools.ripgrep_output import parse_hits, parse_walk_log

# Lines as ripgrep 15.2 writes them with --debug (the other debug lines are noise to Grep).
_OVERRIDE = 'Override(Glob(Matched(Glob { from: None, original: "!.git", actual: "**/.git" }))))'
_LINK_TYPE = "Some(FileType { is_file: false, is_dir: false, is_symlink: true, .. })"
_FIFO_TYPE = "Some(FileType { is_file: false, is_dir: false, is_symlink: false, .. })"
LOG = "\n".join(
    [
        "rg: DEBUG|rg::flags::hiargs|crates/core/flags/hiargs.rs:175: using 2 thread(s)",
        "rg: DEBUG|ignore::gitignore|crates/ignore/src/gitignore.rs:409: "
        "opened gitignore file: ./.gitignore",
        "rg: DEBUG|ignore::gitignore|crates/ignore/src/gitignore.rs:409: "
        "opened gitignore file: /home/u/.config/git/ignore",
        f"rg: DEBUG|ignore::walk|crates/ignore/src/walk.rs:2011: "
        f"ignoring ./.git: Ignore(IgnoreMatch({_OVERRIDE})",
        f"rg: DEBUG|ignore::walk|crates/ignore/src/walk.rs:2011: "
        f"ignoring ./vendor/lib/.git: Ignore(IgnoreMatch({_OVERRIDE})",
        "rg: DEBUG|ignore::walk|crates/ignore/src/walk.rs:2011: "
        'ignoring ./build: Ignore(IgnoreMatch(Gitignore(Glob { original: "build/" })))',
        "rg: DEBUG|rg::haystack|crates/core/haystack.rs:70: ignoring ./docs/link.md: "
        f"failed to pass haystack filter: file type: {_LINK_TYPE}, metadata: Ok(Metadata {{}})",
        "rg: DEBUG|rg::haystack|crates/core/haystack.rs:70: ignoring ./pipe: "
        f"failed to pass haystack filter: file type: {_FIFO_TYPE}, metadata: Ok(Metadata {{}})",
        "rg: DEBUG|grep_printer::summary|crates/printer/src/summary.rs:686: "
        "ignoring logo.bin: found binary data at offset 4",
        "rg: DEBUG|grep_printer::standard|crates/printer/src/standard.rs:830: "
        "ignoring sub/a: b.txt: found binary data at offset 9012",
    ]
).encode()


def test_walk_log_names_binary_files_links_nested_repositories_and_ignore_files() -> None:
    log = parse_walk_log(LOG)
    assert log.binary == {"logo.bin": 4, "sub/a: b.txt": 9012}
    assert log.links == ("docs/link.md",)
    assert log.nested_repositories == ("vendor/lib/",)
    assert log.ignore_files == frozenset({"./.gitignore", "/home/u/.config/git/ignore"})


def test_hits_are_read_from_each_output_mode() -> None:
    assert parse_hits(b"a.py\0dir/b c.py\0", "files_with_matches") == {
        "a.py": FileHits(count=1),
        "dir/b c.py": FileHits(count=1),
    }
    assert parse_hits(b"a.py\x003\nb.py\x0012\n", "count") == {
        "a.py": FileHits(count=3),
        "b.py": FileHits(count=12),
    }
    content = b"a.py\x004:[Omitted long line with 1 matches]\na.py\x002:x\nb.py\0: WARNING\n"
    assert parse_hits(content, "content") == {"a.py": FileHits(count=2, lines=(2, 4))}
    assert parse_hits(b"", "count") == {}


def test_count_records_survive_a_path_with_a_newline() -> None:
    assert parse_hits(b"odd\nname.py\x002\nb.py\x001\n", "count") == {
        "name.py": FileHits(count=2),
        "b.py": FileHits(count=1),
    }
