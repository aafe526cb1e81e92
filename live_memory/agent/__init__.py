"""Answering questions: the agent loop, compaction runs, prompts, trailer, services."""

from __future__ import annotations

from live_memory.agent.compactor import CoreMap, has_core_map, stable_tree, tree_chars
from live_memory.agent.endpoint_speed import Budget, SpeedBoard, SpeedSnapshot, question_budget
from live_memory.agent.progress import ProgressPacer, ProgressSnapshot, QuestionProgress
from live_memory.agent.prompt import SYSTEM_PROMPT
from live_memory.agent.question import (
    QuestionJob,
    QuestionOutcome,
    answer_question,
    clamp_answer_tokens,
)
from live_memory.agent.recall import (
    FACTS_SOURCE,
    STALE_MARK,
    fact_retrievers,
    forget_facts,
    known_facts,
    resident_chars,
    resident_facts,
    store_learnt,
)
from live_memory.agent.retrieval import (
    Retrieval,
    RetrievalPart,
    Retriever,
    SymbolRetriever,
    append_retrieval,
    retrieve_all,
)
from live_memory.agent.services import Services, Stores, build_services, with_endpoint
from live_memory.agent.sources import Source, cited_paths
from live_memory.agent.summarizer import summarize

__all__ = [
    "FACTS_SOURCE",
    "STALE_MARK",
    "SYSTEM_PROMPT",
    "Budget",
    "CoreMap",
    "ProgressPacer",
    "ProgressSnapshot",
    "QuestionJob",
    "QuestionOutcome",
    "QuestionProgress",
    "Retrieval",
    "RetrievalPart",
    "Retriever",
    "Services",
    "Source",
    "SpeedBoard",
    "SpeedSnapshot",
    "Stores",
    "SymbolRetriever",
    "answer_question",
    "append_retrieval",
    "build_services",
    "cited_paths",
    "clamp_answer_tokens",
    "fact_retrievers",
    "forget_facts",
    "has_core_map",
    "known_facts",
    "question_budget",
    "resident_chars",
    "resident_facts",
    "retrieve_all",
    "stable_tree",
    "store_learnt",
    "summarize",
    "tree_chars",
    "with_endpoint",
]
