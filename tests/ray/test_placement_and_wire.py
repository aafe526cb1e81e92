"""The Ray backend's pure parts, no cluster: actor names, checkout placement, the wire records
and the backend settings."""

from __future__ import annotations

import pickle
import time
from concurrent.futures import Future
from pathlib import Path
from typing import Any

import pytest

from live_memory.actors import Ask, DrainTranscripts, FileEvent, GetStats, ImportFacts, Notify
from live_memory.agent import Source
from live_memory.config import constants as C
from live_memory.config import load_settings
from live_memory.errors import ConfigError, NoCheckoutNode
from live_memory.memory import LedgerFact
from live_memory.providers import Usage
from live_memory.ray_backend import (
    AnswerLog,
    AskRequest,
    PlainRequest,
    actor_name,
    checkout_resource,
    choose_node,
    choose_resource,
    to_request,
)
from live_memory.ray_backend.wire import request_message
from live_memory.workspace import Answer


def _node(*directories: str, alive: bool = True) -> dict[str, object]:
    return {
        "Alive": alive,
        "Resources": {"CPU": 1.0, **{checkout_resource(d): 1000.0 for d in directories}},
    }


def test_an_actor_name_is_stable_and_distinct_per_root() -> None:
    assert actor_name("/srv/a") == actor_name("/srv/a")
    assert actor_name("/srv/a") != actor_name("/srv/b")
    assert actor_name("/srv/a").startswith("workspace:")


def test_the_deepest_advertised_ancestor_is_chosen() -> None:
    nodes = [_node("/srv"), _node("/srv/team")]

    assert choose_resource("/srv/team/repo", nodes) == checkout_resource("/srv/team")
    assert choose_resource("/srv/other/repo", nodes) == checkout_resource("/srv")
    assert checkout_resource("/srv/team/") == checkout_resource("/srv/team")


def test_a_root_no_live_node_holds_is_refused_naming_the_resource() -> None:
    nodes = [_node("/srv"), _node("/data", alive=False)]

    with pytest.raises(NoCheckoutNode) as refused:
        choose_resource("/data/repo", nodes)

    assert checkout_resource("/data/repo") in str(refused.value)


def _roundtrip(message: Any) -> tuple[Any, Future[Any]]:
    request = to_request(message)
    assert request is not None
    reply: Future[Any] = Future()
    return request_message(pickle.loads(pickle.dumps(request)), reply), reply


def test_requests_cross_as_plain_records_and_come_back_as_the_same_messages() -> None:
    events = (FileEvent("a.py", "read", "x = 1\n"),)
    fact = LedgerFact("a fact", (("a.py", "0" * 64),), "architecture", False)

    notify, _ = _roundtrip(Notify(events, Future()))
    stats, _ = _roundtrip(GetStats(Future()))
    imported, _ = _roundtrip(ImportFacts((fact,), Future()))
    drain, drained = _roundtrip(DrainTranscripts())

    assert notify.events == events
    assert isinstance(stats, GetStats)
    assert imported.facts == (fact,)
    assert isinstance(drain, DrainTranscripts) and drained.result(timeout=0) is None
    assert to_request(object()) is None


def test_a_question_deadline_crosses_as_seconds_left_not_a_clock_reading() -> None:
    request = to_request(Ask("why?", 100, time.monotonic() + 30.0, Future()))

    assert isinstance(request, AskRequest) and 29.0 < request.budget_s <= 30.0
    ask, _ = _roundtrip(Ask("why?", 100, time.monotonic() + 30.0, Future()))
    assert 29.0 < ask.soft_deadline - time.monotonic() <= 30.0
    with pytest.raises(ValueError, match="unknown workspace request"):
        request_message(PlainRequest("Nope"), Future())


def test_the_backend_settings_parse_and_refuse_clearly(tmp_path: Path) -> None:
    base = {"LIVE_MEMORY_DATA_DIR": str(tmp_path), "HOME": str(tmp_path)}

    default = load_settings(base)
    ray = load_settings(
        base
        | {
            "LIVE_MEMORY_BACKEND": "ray",
            "LIVE_MEMORY_RAY_ADDRESS": "10.0.0.5:6379",
            "LIVE_MEMORY_RAY_NAMESPACE": "team",
        }
    )

    assert (default.backend, default.ray_address, default.ray_namespace) == (
        "local",
        "",
        "live-memory",
    )
    assert (ray.backend, ray.ray_address, ray.ray_namespace) == ("ray", "10.0.0.5:6379", "team")
    assert load_settings(base | {"LIVE_MEMORY_RAY_ADDRESS": "auto"}).ray_address == "auto"
    for name, value in (
        ("LIVE_MEMORY_BACKEND", "k8s"),
        ("LIVE_MEMORY_RAY_ADDRESS", "head"),
        ("LIVE_MEMORY_RAY_ADDRESS", "http://head:6379"),
    ):
        with pytest.raises(ConfigError, match=name):
            load_settings(base | {name: value})


def test_a_root_is_placed_on_one_holder_the_same_for_every_gateway() -> None:
    resource = checkout_resource("/srv")
    nodes = [
        {"NodeID": f"n{i}", "Alive": True, "Resources": {resource: 1000.0}} for i in range(4)
    ] + [
        {"NodeID": "dead", "Alive": False, "Resources": {resource: 1000.0}},
        {"NodeID": "other", "Alive": True, "Resources": {checkout_resource("/elsewhere"): 1.0}},
    ]

    chosen = {choose_node(f"/srv/repo-{i}", resource, nodes) for i in range(64)}

    assert chosen == {"n0", "n1", "n2", "n3"}  # spread over the live holders only
    assert choose_node("/srv/a", resource, nodes) == choose_node("/srv/a", resource, nodes[::-1])
    assert choose_node("/srv/a", resource, nodes[-2:]) is None


def test_the_answer_log_keeps_the_last_keys_and_outlives_its_process(tmp_path: Path) -> None:
    log = AnswerLog(tmp_path, "/srv/a")
    answers = [_answer(f"answer {i}") for i in range(C.RAY_ANSWER_LOG_MAX + 2)]
    for i, answer in enumerate(answers):
        log.put(f"key-{i}", answer)

    again = AnswerLog(tmp_path, "/srv/a")  # a restarted actor, maybe on another node

    assert again.get("key-0") is None and again.get("key-1") is None  # the oldest went
    assert again.get(f"key-{len(answers) - 1}") == answers[-1]
    assert AnswerLog(tmp_path, "/srv/b").get("key-5") is None  # per workspace
    (tmp_path / log.path.name).write_bytes(b"{not json")
    assert AnswerLog(tmp_path, "/srv/a").get("key-5") is None  # unreadable: asked again


def _answer(text: str) -> Answer:
    usage = Usage(input_tokens=10, output_tokens=3)
    sources = (Source("src/app.py", 1, 2, True, True),)
    return Answer(text, text, "m", 0.1, usage, 0, 0, 0.001, 1.0, False, "answered", 0.0, sources)
