"""Run a Python agent under Vera: the Python twin of ``functionAgent``.

Vera starts ``python -m vera_agent.host <module>:<function>`` once per test session (confined like
any agent program), and sends it each turn's user message. The function gets an
:class:`AgentContext` — the model endpoint Vera serves (an OpenAI-compatible base URL, a key and a
model name), the gateway that serves the case's tools over MCP, the workspace and the earlier turns —
and returns its reply::

    from vera_agent import AgentContext

    def run(message: str, ctx: AgentContext) -> str:
        client = OpenAI(base_url=ctx.model.base_url, api_key=ctx.model.api_key)
        ...
"""

from .context import AgentContext, Gateway, ModelEndpoint, Tool, ToolResult, Turn

__all__ = ["AgentContext", "Gateway", "ModelEndpoint", "Tool", "ToolResult", "Turn"]
