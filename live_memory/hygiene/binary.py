"""Telling binary files from text before any of their bytes reach the model."""

from __future__ import annotations

import codecs
import logging

from live_memory.config.constants import BINARY_INVALID_UTF8_RATIO, BINARY_SNIFF_BYTES

__all__ = ["looks_binary"]

logger = logging.getLogger(__name__)


def looks_binary(data: bytes) -> bool:
    """True when `data` (a file's bytes, or at least its first BINARY_SNIFF_BYTES) is binary.

    A NUL byte in the sniffed prefix means binary, as git and ripgrep decide it. Without one,
    a prefix that is mostly invalid UTF-8 is binary too; a Latin-1 file with a few accented
    characters is not (it is shown with replacement characters instead).
    """
    sample = data[:BINARY_SNIFF_BYTES]
    if b"\x00" in sample:
        return True
    if not sample:
        return False
    # Incremental decoding so a multi-byte character cut by the sniff window is not counted.
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    text = decoder.decode(sample, final=len(data) <= BINARY_SNIFF_BYTES)
    if not text:
        return False
    return text.count("\ufffd") > len(text) * BINARY_INVALID_UTF8_RATIO
