"""Scoring one answer against its question's key facts.

- key-fact recall: the share of facts whose value the answer states (a token match, so "5" is
  not found inside "15");
- citations: the answer's `sources` ([{path, start_line, end_line}], REST and the MCP
  structured content) where it has them, else `path:line` / `path:start-end` written in the
  text; one is precise when it names a fact's file and its lines reach a line holding that
  fact (within `CITATION_SLACK_LINES`);
- a negative (or a deleted file) is answered right when the answer says the thing is not
  there; anything else is a hallucination;
- a freshness item is stale when the answer states an old value and not the new one (or,
  for a deleted file, does not say it is gone).

Live Memory's notices (`[unverified: ...]`, `[best-effort answer: ...]`) and the trailer are
not the model's answer and are cut before scoring.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from bench.answers.check import fact_lines
from bench.answers.question_set import Fact, Question

__all__ = [
    "Citation",
    "Score",
    "answer_body",
    "citations",
    "says_absent",
    "score_answer",
]

CITATION_SLACK_LINES = 3
"""A citation of lines 10-12 holds a fact on line 15: models cite the block, not the line."""
_TRAILER = re.compile(r"\n---\n\[live-memory\].*\Z", re.S)
_NOTICE = re.compile(r"\[(?:unverified|best-effort answer|checked in the workspace)[^\]]*\]", re.S)
_CITED = re.compile(
    r"(?P<path>(?:[\w.-]+/)*[\w.-]+\.[A-Za-z]\w*)"
    r"(?::|#L|, lines? | lines? | line )(?P<start>\d+)(?:\s*[-\u2013]\s*L?(?P<end>\d+))?"
)
_ABSENT = re.compile(
    r"\b(?:(?:does|do|did|is|are|was|could|can)(?: not|n't)|cannot|no longer|unable to)"
    r"\s+(?:\w+\s+){0,2}?(?:exist|find|found|present|defined|define|appear|locate|see|contain"
    r"|have|has|mention|there|available)"
    r"|\bno (?:such|mention|definition|reference|file|class|function|constant|option|module"
    r"|variable|setting|method|attribute|longer)\b"
    r"|\bnot (?:found|present|defined|available|part of|exist)"
    r"|\b(?:been|was|is|were|got) (?:deleted|removed)\b"
    r"|\bthere (?:is|are) no\b|\bnowhere\b|\bdoes ?n[o']t exist",
    re.I,
)


@dataclass(frozen=True, slots=True)
class Citation:
    path: str
    start_line: int
    end_line: int


@dataclass(frozen=True, slots=True)
class Score:
    facts: int
    recalled: int
    citations: int
    precise_citations: int
    says_absent: bool
    hallucinated: bool
    """Only for questions whose right answer is "not there"."""
    stale: bool
    """Only for freshness items."""


def answer_body(text: str) -> str:
    """The model's answer: the trailer and Live Memory's own notices cut off."""
    return _NOTICE.sub("", _TRAILER.sub("", text)).strip()


def _recalled(fact: Fact, body: str) -> bool:
    for alternative in fact.any:
        pattern = re.escape(alternative)
        head = r"(?<![\w.])" if alternative[:1].isalnum() else ""
        tail = r"(?![\w])" if alternative[-1:].isalnum() else ""
        if re.search(head + pattern + tail, body, re.I):
            return True
    return False


def citations(body: str, sources: Sequence[Mapping[str, object]] | None) -> list[Citation]:
    """Structured sources when the answer has them, else the `path:line` citations of its text."""
    if sources:
        found = []
        for source in sources:
            start = int(str(source.get("start_line") or 1))
            end = int(str(source.get("end_line") or start))
            found.append(Citation(str(source.get("path", "")), start, max(start, end)))
        return found
    cited = []
    for match in _CITED.finditer(body):
        start = int(match["start"])
        end = int(match["end"]) if match["end"] else start
        cited.append(Citation(match["path"], start, max(start, end)))
    return list(dict.fromkeys(cited))


def says_absent(body: str) -> bool:
    return _ABSENT.search(body) is not None


def _same_file(cited: str, path: str, root: str) -> bool:
    cited = cited.removeprefix(root.rstrip("/") + "/").removeprefix("./")
    return cited == path or (path.endswith("/" + cited) and "/" in cited)


def _precise(
    citation: Citation, facts: Sequence[Fact], lines_of: Callable[[Fact], list[int]], root: str
) -> bool:
    for fact in facts:
        if not _same_file(citation.path, fact.path, root):
            continue
        low = citation.start_line - CITATION_SLACK_LINES
        high = citation.end_line + CITATION_SLACK_LINES
        if any(low <= n <= high for n in lines_of(fact)):
            return True
    return False


def score_answer(
    question: Question,
    text: str,
    *,
    sources: Sequence[Mapping[str, object]] | None = None,
    read: Callable[[str], str | None],
    root: str = "",
) -> Score:
    """Score `text` (an answer as received) for `question`; `read(path)` gives a file's text as
    the repository stood when the question was asked (None: no such file)."""
    body = answer_body(text)
    recalled = sum(_recalled(fact, body) for fact in question.facts)

    def lines_of(fact: Fact) -> list[int]:
        content = read(fact.path)
        return fact_lines(fact, content) if content is not None else []

    cited = citations(body, sources)
    precise = sum(_precise(c, question.facts, lines_of, root) for c in cited)
    absent = says_absent(body)
    hallucinated = question.expects_absence and not absent
    stale = False
    if question.kind == "freshness":
        if question.expects_absence:
            stale = not absent
        else:
            old = any(_recalled(Fact((s,), "", ""), body) for s in question.stale)
            stale = old and recalled < len(question.facts)
    return Score(len(question.facts), recalled, len(cited), precise, absent, hallucinated, stale)
