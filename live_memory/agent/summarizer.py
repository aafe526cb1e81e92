"""The neutral summariser: folds evicted material into the knowledge ledger.

It sees only the existing ledger and the evicted material — never the current question — so it
cannot bias the ledger toward recent queries.
"""

from __future__ import annotations

from collections.abc import Sequence

from live_memory.agent.prompt import NEUTRAL_SUMMARY_SYSTEM_PROMPT
from live_memory.config import constants as C
from live_memory.memory import FileContext, LedgerFact, Turn, render_ledger
from live_memory.providers import ChatRequest, Message, Provider, SystemBlock, TextBlock, Usage

__all__ = ["render_material", "summarize"]


def render_material(files: Sequence[FileContext] = (), turns: Sequence[Turn] = ()) -> str:
    """The evicted material as the summariser reads it, capped at SUMMARY_MAX_INPUT_CHARS."""
    parts = []
    for ctx in files:
        parts.append(f"### File {ctx.path}\n{ctx.content or ''}")
    for turn in turns:
        label = "Question" if turn.role == "user" else "Answer"
        parts.append(f"{label}: {turn.text}")
    text = "\n\n".join(parts)
    return text[: C.SUMMARY_MAX_INPUT_CHARS]


async def summarize(
    provider: Provider, model: str, ledger: Sequence[LedgerFact], material: str
) -> tuple[str, Usage]:
    """Return the updated ledger text (existing facts merged with the material's) and usage.

    Raises ProviderError when the provider fails.
    """
    request = ChatRequest(
        model=model,
        system=(SystemBlock(NEUTRAL_SUMMARY_SYSTEM_PROMPT),),
        messages=(
            Message(
                "user",
                (
                    TextBlock(
                        f"Existing ledger:\n{render_ledger(ledger)}\n\n"
                        f"Material being evicted from memory:\n{material}"
                    ),
                ),
            ),
        ),
        tools=(),
        max_tokens=C.LEDGER_MAX_TOKENS,
    )
    response = await provider.chat(request)
    return response.text, response.usage
