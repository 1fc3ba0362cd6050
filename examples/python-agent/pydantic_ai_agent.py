"""An agent built with PydanticAI (`pydantic-ai-slim[openai,mcp]`), under Vera with no glue.

PydanticAI's MCP toolset connects to the gateway, and its OpenAI model to the endpoint Vera serves:

    agent: { type: 'python', entry: 'pydantic_ai_agent:run', pythonPath: ['examples/python-agent'],
             python: '.venv/bin/python', model: 'gpt-4o-mini' }
"""

from __future__ import annotations

from pydantic_ai import Agent
from pydantic_ai.mcp import MCPToolset
from pydantic_ai.messages import ModelMessage, ModelRequest, ModelResponse, TextPart, UserPromptPart
from pydantic_ai.models.openai import OpenAIChatModel
from pydantic_ai.providers.openai import OpenAIProvider

from vera_agent import AgentContext

INSTRUCTIONS = "You are a helpful assistant. Use the tools to do what the user asks."


async def run(message: str, ctx: AgentContext) -> str:
    model = OpenAIChatModel(ctx.model.model, provider=OpenAIProvider(base_url=ctx.model.base_url, api_key=ctx.model.api_key))
    agent = Agent(model, instructions=INSTRUCTIONS, toolsets=[MCPToolset(ctx.gateway.url)])
    earlier: list[ModelMessage] = [
        ModelRequest(parts=[UserPromptPart(turn.text)]) if turn.role == "user" else ModelResponse(parts=[TextPart(turn.text)])
        for turn in ctx.history
    ]
    async with agent:
        result = await agent.run(message, message_history=earlier)
    return result.output
