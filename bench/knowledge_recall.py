"""Knowledge recall at scale: does a fact taught long ago reach the prompt of a question
that names it?

One long session through the real server (in process, real HTTP) and the scripted fake
provider (Anthropic wire), in a small window so compaction runs many times:

1. teach: TEACH_QUESTIONS questions, each answered with FACTS_PER_ANSWER distinct facts of
   one shape (the issue's: a function, its path, its record type), 2,000 in all. The fake
   summariser is scripted like a model bounded by its output cap: it restates the facts of
   the evicted material, then the existing ledger, up to LEDGER_MAX_TOKENS.
2. ask: ASKED questions, each naming one random fact's subject ("What does
   handle_record_0042 parse?"); a hit is a question whose prompt holds that fact.

Printed: the share of hits (target >= 95 %), the window fill, compactions, and the cache
share the fake's prefix cache served (both phases, and the ask phase alone).

`--baseline DIR` runs the same session a second time against another checkout (a git worktree
of main before the fact store: today's regenerate-the-ledger behaviour) in a subprocess and
prints both. `--code DIR` is what that subprocess is given: import live_memory and tests.support
from DIR.

    python bench/knowledge_recall.py --baseline /tmp/lm-baseline
"""

from __future__ import annotations

import argparse
import json
import random
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any


def _args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--code", type=Path, help="import live_memory and tests from here")
    parser.add_argument("--baseline", type=Path, help="also run this checkout (subprocess)")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON only")
    parser.add_argument("--facts", type=int, default=2000)
    parser.add_argument("--asked", type=int, default=200)
    parser.add_argument("--window", type=int, default=16_000, help="context tokens")
    return parser.parse_args()


ARGS = _args()
if ARGS.code is not None:
    sys.path.insert(0, str(ARGS.code.resolve()))
else:
    import _repo_root  # noqa: F401 (puts the repository root on sys.path for tests.support)

import httpx  # noqa: E402

import live_memory  # noqa: E402
from live_memory.config import constants as C  # noqa: E402
from tests.support.app_server import AppServer  # noqa: E402
from tests.support.fakes import FakeProvider, Recorded, Reply, Text  # noqa: E402
from tests.support.fakes.fake_anthropic_wire import prompt_of  # noqa: E402
from tests.support.repo import make_repo  # noqa: E402

FACTS_PER_ANSWER = 10
_FACT = re.compile(r"Function handle_record_\d{4} in \S+ parses RecordType\d{4} records\.")
_QUESTION = re.compile(r"Question: (.*)", re.S)
_TEACH = re.compile(r"Describe batch (\d+)")


def fact(i: int) -> str:
    return (
        f"Function handle_record_{i:04d} in src/mod_{i:04d}/handler.py parses "
        f"RecordType{i:04d} records."
    )


def _text_of(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, str):
        return content
    return "".join(str(b.get("text", "")) for b in content or [] if isinstance(b, dict))


def _last_question(messages: list[dict[str, Any]]) -> str:
    """The trailing turn's text (a re-ask after it, e.g. the cold guard's, comes later)."""
    return next((_text_of(m) for m in reversed(messages) if "Question: " in _text_of(m)), "")


def _summarise(recorded: Recorded) -> Reply:
    """A bounded summariser: the material's facts first, then the existing ledger's, as
    many as fit in its output cap (newest knowledge kept, oldest squeezed out)."""
    text = _text_of(recorded.body["messages"][-1])
    ledger, _, material = text.partition("Material being evicted from memory:")
    lines: list[str] = []
    for found in [*_FACT.findall(material), *_FACT.findall(ledger)]:
        if found not in lines:
            lines.append(found)
    out, used = [], 0
    for line in lines:
        if used + len(line) + 1 > C.LEDGER_MAX_TOKENS * C.CHARS_PER_TOKEN:
            break
        out.append(line)
        used += len(line) + 1
    return Text("\n".join(out) or "[architecture] Records are parsed by handlers.")


def _responder(recorded: Recorded) -> Reply:
    if not recorded.body.get("tools"):
        return _summarise(recorded)
    match = _QUESTION.search(_last_question(recorded.body["messages"]))
    teach = _TEACH.search(match.group(1)) if match else None
    if teach is None:
        return Text("It parses its record type (see the cited handler).")
    batch = int(teach.group(1))
    first = batch * FACTS_PER_ANSWER
    return Text("\n".join(fact(i) for i in range(first, first + FACTS_PER_ANSWER)))


def _first_requests(bodies: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The first model request of each question (a question may take several: tool calls,
    the cold guard's re-ask); a request continuing a question has more messages after the
    same trailing question."""
    firsts: list[dict[str, Any]] = []
    previous: tuple[str, int] | None = None
    for body in bodies:
        messages = body["messages"]
        question = _last_question(messages)
        continues = previous is not None and previous[0] == question
        if not (continues and previous is not None and len(messages) > previous[1]):
            firsts.append(body)
        previous = (question, len(messages))
    return firsts


def _ask(client: httpx.Client, url: str, repo: Path, question: str) -> None:
    reply = client.post(f"{url}/api/ask", json={"question": question, "cwd": str(repo)})
    reply.raise_for_status()


def run_session() -> dict[str, Any]:
    tmp = Path(tempfile.mkdtemp(prefix="lm-recall-"))
    repo = make_repo(tmp / "repo", {"src/app.py": "def main():\n    return 0\n"})
    teach = ARGS.facts // FACTS_PER_ANSWER
    rng = random.Random(17)
    asked = [rng.randrange(ARGS.facts) for _ in range(ARGS.asked)]
    with FakeProvider() as fake:
        fake.responder = _responder
        env = {
            "ANTHROPIC_API_KEY": "dummy",
            "ANTHROPIC_BASE_URL": fake.anthropic_base_url,
            "LIVE_MEMORY_MODEL": "claude-sonnet-4-6",
            "LIVE_MEMORY_MAX_CONTEXT_TOKENS": str(ARGS.window),
        }
        with AppServer(tmp / "data", env) as server, httpx.Client(timeout=120) as client:
            client.post(f"{server.url}/clear", json={"cwd": str(repo)}).raise_for_status()
            started = time.monotonic()
            for batch in range(teach):
                _ask(client, server.url, repo, f"Describe batch {batch} of the record handlers.")
            taught_s = time.monotonic() - started
            before = fake.cache_stats()
            first_ask = len(fake.requests)
            fills = []
            for i in asked:
                _ask(client, server.url, repo, f"What does handle_record_{i:04d} parse?")
                stats = client.get(f"{server.url}/stats", params={"cwd": str(repo)}).json()
                fills.append(float(stats["context"]["fill_pct"]))
            after = fake.cache_stats()
        answers = [r.body for r in fake.requests[first_ask:] if r.body.get("tools")]
    firsts = _first_requests(answers)
    hits = sum(
        fact(i) in prompt_of(body)[0].decode() for i, body in zip(asked, firsts, strict=True)
    )
    knowledge = stats.get("knowledge") or {}
    ask_prompt = after.prompt_tokens - before.prompt_tokens
    return {
        "code": str(Path(live_memory.__file__).resolve().parents[1]),
        "facts_taught": teach * FACTS_PER_ANSWER,
        "asked": len(asked),
        "recall_pct": round(100.0 * hits / len(asked), 1),
        "fill_pct_mean": round(sum(fills) / len(fills), 1),
        "fill_pct_max": max(fills),
        "compactions": stats["compactions"],
        "ledger_facts": stats["ledger_facts"],
        "stored_facts": (knowledge.get("store") or {}).get("current"),
        "retrieval": knowledge.get("retrieval"),
        "cache_share_pct": round(100.0 * after.hit_ratio, 1),
        "cache_share_ask_phase_pct": round(
            100.0 * (after.cached_tokens - before.cached_tokens) / max(ask_prompt, 1), 1
        ),
        "teach_s": round(taught_s, 1),
    }


def _print(label: str, figures: dict[str, Any]) -> None:
    print(f"== {label}: {figures['code']}")
    print(
        f"   facts taught {figures['facts_taught']}, questions {figures['asked']}, "
        f"compactions {figures['compactions']}"
    )
    print(f"   prompt holds the named fact: {figures['recall_pct']} %  (target >= 95 %)")
    print(f"   window fill: mean {figures['fill_pct_mean']} %, max {figures['fill_pct_max']} %")
    print(
        f"   cache share: {figures['cache_share_pct']} % whole session, "
        f"{figures['cache_share_ask_phase_pct']} % while asking"
    )
    print(
        f"   window ledger {figures['ledger_facts']} facts; store {figures['stored_facts']}; "
        f"retrieval {figures['retrieval']}"
    )


def main() -> None:
    figures = run_session()
    if ARGS.json:
        print(json.dumps(figures))
        return
    _print("this checkout", figures)
    if ARGS.baseline is not None:
        command = [sys.executable, __file__, "--code", str(ARGS.baseline), "--json"]
        command += ["--facts", str(ARGS.facts), "--asked", str(ARGS.asked)]
        command += ["--window", str(ARGS.window)]
        done = subprocess.run(command, check=True, capture_output=True, text=True)
        _print("baseline", json.loads(done.stdout.strip().splitlines()[-1]))


if __name__ == "__main__":
    main()
