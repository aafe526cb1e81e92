from __future__ import annotations

from live_memory.config.constants import BINARY_SNIFF_BYTES
from live_memory.hygiene import looks_binary


def test_nul_byte_in_the_sniffed_prefix_means_binary() -> None:
    assert looks_binary(b"GIF89a\x00\x01")


def test_nul_byte_after_the_sniffed_prefix_is_not_seen() -> None:
    assert not looks_binary(b"a" * BINARY_SNIFF_BYTES + b"\x00")


def test_utf8_text_and_empty_input_are_text() -> None:
    assert not looks_binary("naïve café — ünïcode ✓\n".encode())
    assert not looks_binary(b"")


def test_mostly_invalid_utf8_is_binary() -> None:
    assert looks_binary(bytes(range(0x80, 0x100)) * 4)


def test_latin1_text_with_a_few_accents_is_text() -> None:
    assert not looks_binary("Le café est très bon, dit-il.\n".encode("latin-1"))


def test_multibyte_character_cut_by_the_sniff_window_does_not_count_as_invalid() -> None:
    data = "é".encode() * (BINARY_SNIFF_BYTES // 2) + "é".encode()
    data = b"a" + data  # shift so the window ends inside a character
    assert not looks_binary(data)
