"""How file bytes become the text and lines every tool shows (one way, for all of them)."""

from __future__ import annotations

import logging

__all__ = ["decode_text", "split_lines"]

logger = logging.getLogger(__name__)


def decode_text(data: bytes) -> str:
    """Decode file bytes: UTF-8, a BOM dropped (as ripgrep does), bad bytes replaced."""
    return data.decode("utf-8-sig", errors="replace")


def split_lines(text: str) -> list[str]:
    """Lines as ripgrep and `cat -n` count them: split on '\\n', no phantom line after the last.

    A trailing '\\r' stays on the line (ripgrep matches it too); displays strip it.
    """
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    return lines
