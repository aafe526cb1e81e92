"""The bodies a local model server sends, per flavour, for the replaying fake (pure functions).

Shapes follow the real servers: llama.cpp's `llama-server` (usage with
`prompt_tokens_details.cached_tokens` plus a `timings` object, `/props`, `/slots`),
llama-cpp-python (bare usage), Ollama's `/api/show`, vLLM's `max_model_len`, LM Studio's
`/api/v0/models`. Token counts come from a ChatML rendering of the request at the recordings'
3.7 characters per token.
"""

from __future__ import annotations

import time
from typing import Any, Literal

import orjson

__all__ = [
    "CHARS_PER_TOKEN",
    "Flavour",
    "chunk_bytes",
    "completion_body",
    "error_body",
    "models_body",
    "ollama_show_body",
    "overflow_error",
    "props_body",
    "render_prompt",
    "tokens",
    "usage_and_timings",
]

Flavour = Literal["llama-server", "llama-cpp-python", "ollama", "vllm", "lm-studio"]

CHARS_PER_TOKEN = 3.7  # the recordings: 10,554 rendered characters were 2,825 tokens
_TRAINED_CTX = 32768  # Qwen2.5-Coder's trained context


def render_prompt(messages: list[Any], tools: list[Any]) -> str:
    """A ChatML rendering, as Qwen's template renders a request (tools into the system)."""
    parts = []
    for index, message in enumerate(messages):
        if not isinstance(message, dict):
            continue
        content = message.get("content")
        text = content if isinstance(content, str) else orjson.dumps(content).decode()
        if index == 0 and tools:
            text += "\n\n# Tools\n" + orjson.dumps(tools).decode()
        if message.get("tool_calls"):
            text += orjson.dumps(message["tool_calls"]).decode()
        parts.append(f"<|im_start|>{message.get('role')}\n{text}<|im_end|>\n")
    return "".join(parts) + "<|im_start|>assistant\n"


def tokens(chars: int) -> int:
    return max(1, int(chars / CHARS_PER_TOKEN))


def usage_and_timings(
    flavour: Flavour,
    total: int,
    cache_n: int,
    predicted: int,
    speeds: tuple[float, float],
) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """`usage`, and llama-server's `timings` (None elsewhere). `speeds`: prefill and
    generation tokens per second."""
    usage: dict[str, Any] = {
        "prompt_tokens": total,
        "completion_tokens": predicted,
        "total_tokens": total + predicted,
    }
    if flavour != "llama-server":
        return usage, None  # llama-cpp-python reports no cached tokens, no timings
    usage["prompt_tokens_details"] = {"cached_tokens": cache_n}
    prefill_tps, generate_tps = speeds
    prompt_n = total - cache_n
    prompt_ms = 1000.0 * prompt_n / prefill_tps
    predicted_ms = 1000.0 * predicted / generate_tps
    timings = {
        "cache_n": cache_n,
        "prompt_n": prompt_n,
        "prompt_ms": prompt_ms,
        "prompt_per_token_ms": prompt_ms / max(prompt_n, 1),
        "prompt_per_second": prefill_tps,
        "predicted_n": predicted,
        "predicted_ms": predicted_ms,
        "predicted_per_token_ms": predicted_ms / max(predicted, 1),
        "predicted_per_second": generate_tps,
    }
    return usage, timings


def completion_body(
    *,
    chat_id: str,
    model: str,
    message: dict[str, Any],
    finish: str,
    usage: dict[str, Any],
    timings: dict[str, Any] | None,
) -> dict[str, Any]:
    payload: dict[str, Any] = {
        "id": chat_id,
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": usage,
    }
    if timings is not None:
        payload["timings"] = timings
    return payload


def chunk_bytes(
    chat_id: str,
    model: str,
    delta: dict[str, Any],
    finish: str | None = None,
    tail: tuple[dict[str, Any], dict[str, Any] | None] | None = None,
) -> bytes:
    """One `data:` chunk; the finishing one carries `tail` (usage, timings), as llama.cpp's."""
    data: dict[str, Any] = {
        "id": chat_id,
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }
    if tail is not None:
        data["usage"] = tail[0]
        if tail[1] is not None:
            data["timings"] = tail[1]
    return b"data: " + orjson.dumps(data) + b"\n\n"


def props_body(n_ctx: int, model: str) -> dict[str, Any]:
    return {
        "default_generation_settings": {"id": 0, "n_ctx": n_ctx, "params": {}},
        "total_slots": 1,
        "model_path": f"/models/{model}",
        "chat_template": "{% for message in messages %}<|im_start|>...{% endfor %}",
        "build_info": "b6500-fake",
    }


def models_body(flavour: Flavour, n_ctx: int, model: str) -> dict[str, Any]:
    """`/v1/models` (llama-server adds `meta`, vLLM `max_model_len`) or LM Studio's
    `/api/v0/models`."""
    entry: dict[str, Any] = {"id": model, "object": "model", "owned_by": "me"}
    if flavour == "llama-server":
        entry |= {"owned_by": "llamacpp", "meta": {"n_ctx_train": _TRAINED_CTX}}
    elif flavour == "vllm":
        entry |= {"owned_by": "vllm", "max_model_len": n_ctx}
    elif flavour == "lm-studio":
        entry |= {
            "state": "loaded",
            "max_context_length": _TRAINED_CTX,
            "loaded_context_length": n_ctx,
        }
    return {"object": "list", "data": [entry]}


def ollama_show_body(n_ctx: int) -> dict[str, Any]:
    return {
        "parameters": f"num_ctx                        {n_ctx}",
        "model_info": {"general.architecture": "qwen2", "qwen2.context_length": _TRAINED_CTX},
        "capabilities": ["completion", "tools"],
    }


def overflow_error(flavour: Flavour, wanted: int, n_ctx: int) -> dict[str, Any]:
    if flavour == "llama-server":
        return error_body(
            "the request exceeds the available context size, try increasing it",
            "exceed_context_size_error",
        )
    return error_body(
        f"Requested tokens ({wanted}) exceed context window of {n_ctx}", "invalid_request_error"
    )


def error_body(message: str, kind: str, status: int = 400) -> dict[str, Any]:
    return {"error": {"code": status, "message": message, "type": kind}}
