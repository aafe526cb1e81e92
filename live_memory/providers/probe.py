"""Asking an OpenAI-compatible server, once, what it is and how large its context is.

A local model's context is whatever its server was started with (llama.cpp `-c`, Ollama's
`num_ctx`), not what the model was trained for, and no pricing table knows it. Each server
family says it somewhere else:

| server                 | route                    | field                                   |
|------------------------|--------------------------|-----------------------------------------|
| llama.cpp llama-server | `GET /props`             | `default_generation_settings.n_ctx`     |
| llama.cpp (older)      | `GET /slots`             | `[0].n_ctx`                             |
| vLLM                   | `GET /v1/models`         | `data[].max_model_len`                  |
| LM Studio              | `GET /api/v0/models`     | `loaded_context_length` (else the max)  |
| Ollama                 | `POST /api/show {model}` | `num_ctx` in `parameters`, else default |

Every request is bounded (a short timeout, a byte cap on the reply, a total time), and a
failure of any kind is just "not this one": the probe never raises. The parsers are pure
functions of the decoded reply, tested on their own.
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from typing import TYPE_CHECKING, Any, Literal
from urllib.parse import urlsplit, urlunsplit

import orjson

from live_memory.config import constants as C

if TYPE_CHECKING:
    import httpx2

__all__ = [
    "EndpointFacts",
    "ProbeStatus",
    "facts_from_lm_studio",
    "facts_from_models",
    "facts_from_ollama_show",
    "facts_from_props",
    "facts_from_slots",
    "probe_endpoint",
]

logger = logging.getLogger(__name__)

ProbeStatus = Literal["pending", "found", "nothing_found", "not_probed"]
_NUM_CTX = re.compile(r"^\s*num_ctx\s+(\d+)\s*$", re.MULTILINE)


@dataclass(frozen=True, slots=True)
class EndpointFacts:
    """What the probe learnt about one endpoint (plain data: /health and /stats show it)."""

    status: ProbeStatus
    server: str | None = None
    """`llama.cpp`, `vllm`, `lm-studio` or `ollama` when recognised."""
    context_tokens: int | None = None
    source: str | None = None
    """Where `context_tokens` was read, e.g. `GET /props default_generation_settings.n_ctx`."""
    model: str | None = None
    slots: int | None = None
    """Requests the server runs at once (llama.cpp `total_slots`)."""
    tools: bool | None = None
    """Whether the server says the model takes tools (Ollama `capabilities`)."""
    tried: tuple[str, ...] = field(default_factory=tuple)

    def to_json(self) -> dict[str, object]:
        body = asdict(self)
        body["tried"] = list(self.tried)
        return body


def facts_from_props(body: object) -> EndpointFacts | None:
    """llama-server's `/props`."""
    settings = _get(body, "default_generation_settings")
    n_ctx = _positive(_get(settings, "n_ctx"))
    if n_ctx is None:
        return None
    path = _get(body, "model_path")
    return EndpointFacts(
        "found",
        server="llama.cpp",
        context_tokens=n_ctx,
        source="GET /props default_generation_settings.n_ctx",
        model=path.rsplit("/", 1)[-1] if isinstance(path, str) and path else None,
        slots=_positive(_get(body, "total_slots")),
    )


def facts_from_slots(body: object) -> EndpointFacts | None:
    """llama.cpp's `/slots`: one entry per slot, each with its `n_ctx`."""
    if not isinstance(body, list) or not body:
        return None
    n_ctx = _positive(_get(body[0], "n_ctx"))
    if n_ctx is None:
        return None
    return EndpointFacts(
        "found",
        server="llama.cpp",
        context_tokens=n_ctx,
        source="GET /slots [0].n_ctx",
        slots=min(len(body), C.ENDPOINT_PROBE_MAX_MODELS),
    )


def facts_from_models(body: object, model: str) -> EndpointFacts | None:
    """`/v1/models`: vLLM gives `max_model_len` per model."""
    entry = _entry(body, model)
    n_ctx = _positive(_get(entry, "max_model_len"))
    if n_ctx is None:
        return None
    name = _get(entry, "id")
    return EndpointFacts(
        "found",
        server="vllm",
        context_tokens=n_ctx,
        source="GET /v1/models max_model_len",
        model=name if isinstance(name, str) else None,
    )


def facts_from_lm_studio(body: object, model: str) -> EndpointFacts | None:
    """LM Studio's `/api/v0/models`: the loaded context, else the model's maximum."""
    entry = _entry(body, model)
    loaded = _positive(_get(entry, "loaded_context_length"))
    n_ctx = loaded or _positive(_get(entry, "max_context_length"))
    if n_ctx is None:
        return None
    key = "loaded_context_length" if loaded else "max_context_length"
    name = _get(entry, "id")
    return EndpointFacts(
        "found",
        server="lm-studio",
        context_tokens=n_ctx,
        source=f"GET /api/v0/models {key}",
        model=name if isinstance(name, str) else None,
    )


def facts_from_ollama_show(body: object, model: str) -> EndpointFacts | None:
    """Ollama's `/api/show`: a `num_ctx` the model was created with, else Ollama's default
    (it runs every model at its default context unless told otherwise, whatever the model's
    `context_length` allows)."""
    if not isinstance(body, dict) or not isinstance(body.get("model_info"), dict):
        return None
    capabilities = body.get("capabilities")
    tools = "tools" in capabilities if isinstance(capabilities, list) else None
    parameters = body.get("parameters")
    match = _NUM_CTX.search(parameters) if isinstance(parameters, str) else None
    if match:
        n_ctx, source = int(match.group(1)), "POST /api/show parameters num_ctx"
    else:
        trained = next(
            (
                _positive(v)
                for k, v in body["model_info"].items()
                if isinstance(k, str) and k.endswith(".context_length")
            ),
            None,
        )
        n_ctx = min(C.OLLAMA_DEFAULT_NUM_CTX, trained or C.OLLAMA_DEFAULT_NUM_CTX)
        source = "Ollama's default num_ctx (the model sets none)"
    return EndpointFacts(
        "found", server="ollama", context_tokens=n_ctx, source=source, model=model, tools=tools
    )


async def probe_endpoint(
    base_url: str,
    model: str,
    api_key: str | None = None,
    *,
    timeout_s: float = C.ENDPOINT_PROBE_TIMEOUT_S,
    total_s: float = C.ENDPOINT_PROBE_TOTAL_S,
) -> EndpointFacts:
    """Try each server family's route in turn; the first that names a context size wins.

    Never raises (a timeout, refusal or odd reply is "not this one"), never takes longer
    than `total_s`."""
    import httpx2  # noqa: PLC0415 (half a second to import: only when a probe runs)

    root, api = _roots(base_url)
    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    tried: list[str] = []
    lm_studio = f"{root}/api/v0/models"
    steps: Sequence[tuple[str, str, str, Callable[[object], EndpointFacts | None]]] = (
        ("GET", f"{root}/props", "/props", facts_from_props),
        ("GET", f"{root}/slots", "/slots", facts_from_slots),
        ("GET", f"{api}/models", "/v1/models", lambda b: facts_from_models(b, model)),
        ("GET", lm_studio, "/api/v0/models", lambda b: facts_from_lm_studio(b, model)),
        ("POST", f"{root}/api/show", "/api/show", lambda b: facts_from_ollama_show(b, model)),
    )
    timeout = httpx2.Timeout(timeout_s, connect=timeout_s)
    try:
        async with (
            asyncio.timeout(total_s),
            httpx2.AsyncClient(timeout=timeout, headers=headers, follow_redirects=False) as client,
        ):
            for method, url, label, parse in steps:
                tried.append(label)
                body = await _fetch(client, method, url, model)
                facts = parse(body) if body is not None else None
                if facts is not None:
                    return replace(facts, tried=tuple(tried))
    except TimeoutError:
        logger.info("probing %s took longer than %.0f s; stopped", base_url, total_s)
    except Exception as exc:  # never let a probe fail start-up or a reload
        logger.info("probing %s failed: %s", base_url, exc)
    return EndpointFacts("nothing_found", tried=tuple(tried))


async def _fetch(client: httpx2.AsyncClient, method: str, url: str, model: str) -> object:
    """The decoded JSON reply, or None (error status, not JSON, too large, unreachable)."""
    import httpx2  # noqa: PLC0415 (loaded by probe_endpoint already)

    try:
        kwargs: dict[str, Any] = {"json": {"model": model}} if method == "POST" else {}
        async with client.stream(method, url, **kwargs) as response:
            if response.status_code != 200:
                return None
            chunks: list[bytes] = []
            size = 0
            async for chunk in response.aiter_bytes():
                size += len(chunk)
                if size > C.ENDPOINT_PROBE_MAX_BYTES:
                    return None
                chunks.append(chunk)
        return orjson.loads(b"".join(chunks))
    except (httpx2.HTTPError, orjson.JSONDecodeError, OSError):
        return None


def _roots(base_url: str) -> tuple[str, str]:
    """(server root, OpenAI API base): `http://h:8080/v1` -> `http://h:8080`, `.../v1`."""
    parts = urlsplit(base_url.rstrip("/"))
    path = parts.path
    api_path = path if path not in ("", "/") else "/v1"
    root_path = path[: -len("/v1")] if path.endswith("/v1") else path
    root = urlunsplit((parts.scheme, parts.netloc, root_path, "", ""))
    api = urlunsplit((parts.scheme, parts.netloc, api_path, "", ""))
    return root.rstrip("/"), api.rstrip("/")


def _entry(body: object, model: str) -> object:
    """The `/models` entry for `model`, else the only one listed."""
    data = _get(body, "data")
    if not isinstance(data, list) or not data:
        return None
    entries = data[: C.ENDPOINT_PROBE_MAX_MODELS]
    for entry in entries:
        if _get(entry, "id") == model:
            return entry
    return entries[0] if len(entries) == 1 else None


def _get(body: object, key: str) -> object:
    return body.get(key) if isinstance(body, Mapping) else None


def _positive(value: object) -> int | None:
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        return None
    return value
