"""What a Python agent is given for one turn (see the package docstring)."""

from __future__ import annotations

import asyncio
import json
import os
from dataclasses import dataclass, field
from typing import Any, Literal


@dataclass(frozen=True)
class ModelEndpoint:
    """The model Vera serves: an OpenAI-compatible Chat Completions endpoint (``base_url`` ends in ``/v1``)."""

    base_url: str
    api_key: str
    model: str


@dataclass(frozen=True)
class Gateway:
    """The MCP server (streamable HTTP) that serves the case's tools and records every call."""

    url: str
    name: str


@dataclass(frozen=True)
class Turn:
    role: Literal["user", "assistant"]
    text: str


@dataclass(frozen=True)
class Tool:
    name: str
    description: str
    input_schema: dict[str, Any]


@dataclass(frozen=True)
class ToolResult:
    """A tool's result as text; a tool error is a result with ``is_error`` set, not an exception."""

    text: str
    is_error: bool


@dataclass
class AgentContext:
    model: ModelEndpoint
    gateway: Gateway
    workspace: str
    history: list[Turn] = field(default_factory=list)

    @classmethod
    def from_environment(cls, history: list[Turn] | None = None) -> AgentContext:
        """The context Vera passes to the host process in its environment."""
        env = os.environ
        return cls(
            model=ModelEndpoint(env["VERA_MODEL_BASE_URL"], env.get("OPENAI_API_KEY", "no-key"), env["VERA_MODEL"]),
            gateway=Gateway(env["VERA_GATEWAY_URL"], env["VERA_GATEWAY_NAME"]),
            workspace=env.get("VERA_WORKSPACE", os.getcwd()),
            history=list(history or []),
        )

    def list_tools(self) -> list[Tool]:
        """The case's tools, from the gateway (needs the MCP SDK: ``pip install vera-agent[mcp]``)."""
        return asyncio.run(self.alist_tools())

    def call_tool(self, name: str, args: dict[str, Any] | None = None) -> ToolResult:
        """Calls one of the case's tools through the gateway (which records it)."""
        return asyncio.run(self.acall_tool(name, args))

    async def alist_tools(self) -> list[Tool]:
        async with _session(self.gateway.url) as session:
            listed = await session.list_tools()
        # The MCP SDK 2 names fields in snake case (input_schema, is_error); SDK 1 as the wire does.
        return [Tool(t.name, t.description or "", dict(_field(t, "input_schema", "inputSchema") or {})) for t in listed.tools]

    async def acall_tool(self, name: str, args: dict[str, Any] | None = None) -> ToolResult:
        async with _session(self.gateway.url) as session:
            result = await session.call_tool(name, args or {})
        text = "\n".join(getattr(c, "text", "") or json.dumps(c.model_dump()) for c in result.content)
        return ToolResult(text, bool(_field(result, "is_error", "isError")))


def _field(obj: object, *names: str) -> Any:
    for name in names:
        if hasattr(obj, name):
            return getattr(obj, name)
    return None


class _session:
    """One MCP client session to the gateway over streamable HTTP."""

    def __init__(self, url: str) -> None:
        self.url = url

    async def __aenter__(self) -> Any:
        try:
            from mcp import ClientSession
            from mcp.client import streamable_http
        except ImportError as error:  # pragma: no cover - the message is the point
            raise RuntimeError("AgentContext tools need the MCP SDK: pip install 'vera-agent[mcp]'") from error
        # The MCP SDK 2 renamed its client (streamablehttp_client → streamable_http_client).
        connect = getattr(streamable_http, "streamable_http_client", None) or getattr(streamable_http, "streamablehttp_client")
        self._transport = connect(self.url)
        # (read, write) in SDK 2, (read, write, session id) in SDK 1.
        streams = await self._transport.__aenter__()
        read, write = streams[0], streams[1]
        self._session = ClientSession(read, write)
        session = await self._session.__aenter__()
        await session.initialize()
        return session

    async def __aexit__(self, *exc: object) -> None:
        await self._session.__aexit__(*exc)
        await self._transport.__aexit__(*exc)
