"""`GET /config`: the running server's effective settings (behind the guard, secrets masked).

The CLI's `config get` prints this rather than what its own shell would load, so it shows the
provider, data directory and config file of the server that actually answers.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from live_memory.config import config_file_values, config_report
from live_memory.errors import ConfigError
from live_memory.gateway.json_response import ORJSONResponse
from live_memory.gateway.service import LiveMemoryService

__all__ = ["build_config_route"]


def build_config_route(environ: Mapping[str, str]) -> Route:
    """The route; `environ` is the environment the server loads its settings from."""

    async def config(request: Request) -> Response:
        service: LiveMemoryService = request.app.state.service
        settings = service.settings
        path = settings.config_file
        try:
            values = await asyncio.to_thread(config_file_values, path) if path else {}
        except ConfigError:
            values = {}  # edited into something invalid since the last load: the load's values
        return ORJSONResponse(config_report(settings, environ, values))

    return Route("/config", config, methods=["GET"])
