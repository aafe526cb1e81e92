"""Answering questions: the agent loop, compaction runs, prompts, trailer, services."""

from __future__ import annotations

from live_memory.agent.question import (
    QuestionJob,
    QuestionOutcome,
    answer_question,
    clamp_answer_tokens,
)
from live_memory.agent.services import Services, build_services

__all__ = [
    "QuestionJob",
    "QuestionOutcome",
    "Services",
    "answer_question",
    "build_services",
    "clamp_answer_tokens",
]
