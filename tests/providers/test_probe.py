"""Probing an OpenAI-compatible server for its context size: each family over real HTTP
(the replaying local fake), the parsers on their own, and the bounds."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Iterator

import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from live_memory.providers import probe_endpoint
from live_memory.providers.probe import (
    facts_from_lm_studio,
    facts_from_models,
    facts_from_ollama_show,
    facts_from_props,
)
from tests.support.background_server import ServedFake
from tests.support.fakes import FakeLocalServer, Flavour


def _probe(url: str, model: str = "qwen", **kwargs: float) -> object:
    return asyncio.run(probe_endpoint(url, model, **kwargs))


@pytest.mark.parametrize(
    ("flavour", "server", "source"),
    [
        ("llama-server", "llama.cpp", "GET /props default_generation_settings.n_ctx"),
        ("vllm", "vllm", "GET /v1/models max_model_len"),
        ("lm-studio", "lm-studio", "GET /api/v0/models loaded_context_length"),
    ],
)
def test_each_server_family_says_its_running_context(
    flavour: Flavour, server: str, source: str
) -> None:
    with FakeLocalServer(flavour=flavour, n_ctx=8192) as fake:
        facts = _probe(fake.openai_base_url, fake.model)
    assert facts.status == "found"  # type: ignore[attr-defined]
    assert facts.server == server  # type: ignore[attr-defined]
    assert facts.context_tokens == 8192  # type: ignore[attr-defined]
    assert facts.source == source  # type: ignore[attr-defined]


def test_ollama_without_num_ctx_runs_at_its_default_not_the_models_maximum() -> None:
    with FakeLocalServer(flavour="ollama", n_ctx=8192) as fake:
        facts = _probe(fake.openai_base_url, fake.model)
        paths = [r.path for r in fake.requests]
    assert facts.server == "ollama" and facts.tools is True  # type: ignore[attr-defined]
    assert "/api/show" in paths
    # The fake's /api/show carries num_ctx in `parameters`, as a Modelfile that sets it does.
    assert facts.context_tokens == 8192  # type: ignore[attr-defined]
    bare = facts_from_ollama_show(
        {"parameters": "", "model_info": {"qwen2.context_length": 32768}}, "qwen"
    )
    assert bare is not None and bare.context_tokens == 4096
    assert bare.source is not None and "default" in bare.source


def test_llama_cpp_python_says_nothing_and_the_probe_says_so() -> None:
    with FakeLocalServer(flavour="llama-cpp-python") as fake:
        facts = _probe(fake.openai_base_url, fake.model)
    assert facts.status == "nothing_found"  # type: ignore[attr-defined]
    assert facts.context_tokens is None  # type: ignore[attr-defined]
    assert facts.tried == (  # type: ignore[attr-defined]
        "/props",
        "/slots",
        "/v1/models",
        "/api/v0/models",
        "/api/show",
    )


def test_nothing_listening_is_nothing_found_quickly() -> None:
    facts = _probe("http://127.0.0.1:9/v1", timeout_s=1.0, total_s=5.0)
    assert facts.status == "nothing_found"  # type: ignore[attr-defined]


class _Stalling(ServedFake):
    """A server that never answers /props (a wedged server), and counts who asked."""

    def __init__(self) -> None:
        self.release = threading.Event()
        super().__init__(Starlette(routes=[Route("/props", self._props)]), "stalling")

    async def _props(self, request: Request) -> Response:
        await asyncio.to_thread(self.release.wait, 30)
        return Response("{}", media_type="application/json")

    @property
    def url(self) -> str:
        return self._base_url


@pytest.fixture
def stalling() -> Iterator[_Stalling]:
    with _Stalling() as fake:
        yield fake
        fake.release.set()


def test_a_wedged_server_costs_at_most_the_total_bound(stalling: _Stalling) -> None:
    started = time.monotonic()
    facts = _probe(f"{stalling.url}/v1", timeout_s=20.0, total_s=1.0)
    assert facts.status == "nothing_found"  # type: ignore[attr-defined]
    assert time.monotonic() - started < 15.0  # the 20 s per-request timeout never applied


@pytest.mark.parametrize(
    "body",
    [None, [], "x", {"default_generation_settings": {"n_ctx": -1}}, {"data": "x"}, {"data": []}],
)
def test_odd_replies_are_not_facts(body: object) -> None:
    assert facts_from_props(body) is None
    assert facts_from_models(body, "m") is None
    assert facts_from_lm_studio(body, "m") is None
    assert facts_from_ollama_show(body, "m") is None


def test_a_model_list_picks_the_configured_model() -> None:
    body = {"data": [{"id": "a", "max_model_len": 4096}, {"id": "b", "max_model_len": 16384}]}
    facts = facts_from_models(body, "b")
    assert facts is not None and facts.context_tokens == 16384
    assert facts_from_models(body, "c") is None  # two models, none named: no guess
