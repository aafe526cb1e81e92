"""A Starlette response rendered by orjson."""

from __future__ import annotations

from typing import Any

import orjson
from starlette.responses import Response

__all__ = ["ORJSONResponse"]


class ORJSONResponse(Response):
    media_type = "application/json"

    def render(self, content: Any) -> bytes:
        return orjson.dumps(content, option=orjson.OPT_NON_STR_KEYS)
