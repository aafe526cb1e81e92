"""The answers of a workspace's recent questions by request key: a question is answered once.

A gateway gives every question it sends a key and keeps it when it sends the question again
(Ray's own retry of the call over an actor restart, or the gateway's re-send with backoff).
The workspace actor's host answers a key it has answered before from this log instead of
asking the model again, and joins a key still being answered; so a question re-sent after its
answer was committed (spend recorded, history appended) but before the reply reached the
gateway is neither asked, paid nor counted twice. The log lives on the shared data directory
next to the snapshot, so a restarted (or re-created) actor on another node reads the same
one; it keeps the last RAY_ANSWER_LOG_MAX keys.
"""

from __future__ import annotations

import dataclasses
import hashlib
import logging
import os
from collections import OrderedDict
from pathlib import Path
from typing import Any

import orjson

from live_memory.agent import Source
from live_memory.config import constants as C
from live_memory.providers import Usage
from live_memory.regular_file import read_regular
from live_memory.workspace import Answer

__all__ = ["AnswerLog"]

logger = logging.getLogger(__name__)


class AnswerLog:
    def __init__(self, directory: Path, root: str) -> None:
        digest = hashlib.sha256(os.fsencode(root)).hexdigest()[: C.RAY_ACTOR_NAME_DIGEST_CHARS]
        self.path = directory / f"{digest}.json"
        self.root = root
        self.entries: OrderedDict[str, Answer] = OrderedDict()
        self._load()

    def _load(self) -> None:
        try:
            document = orjson.loads(read_regular(self.path))
        except FileNotFoundError:
            return
        except (OSError, orjson.JSONDecodeError) as exc:  # unreadable: questions are asked again
            logger.warning("answer log %s unreadable: %s", self.path, exc)
            return
        if not isinstance(document, dict) or document.get("root") != self.root:
            return
        for key, fields in list(document.get("answers", {}).items())[-C.RAY_ANSWER_LOG_MAX :]:
            answer = _answer(fields)
            if answer is not None:
                self.entries[str(key)] = answer

    def get(self, key: str) -> Answer | None:
        return self.entries.get(key)

    def put(self, key: str, answer: Answer) -> None:
        """Remember `key`'s answer, durably (written before the answer is returned)."""
        self.entries[key] = answer
        self.entries.move_to_end(key)
        while len(self.entries) > C.RAY_ANSWER_LOG_MAX:
            self.entries.popitem(last=False)
        answers = {k: dataclasses.asdict(a) for k, a in self.entries.items()}
        body = orjson.dumps({"root": self.root, "answers": answers})
        self.path.parent.mkdir(parents=True, exist_ok=True)
        partial = self.path.with_suffix(".tmp")
        partial.write_bytes(body)
        os.replace(partial, self.path)


def _answer(fields: Any) -> Answer | None:
    """An Answer back from its JSON form (None when it does not fit the current one)."""
    try:
        sources = tuple(Source(**s) for s in fields.get("sources", ()))
        return Answer(**{**fields, "usage": Usage(**fields["usage"]), "sources": sources})
    except (TypeError, KeyError):
        return None
