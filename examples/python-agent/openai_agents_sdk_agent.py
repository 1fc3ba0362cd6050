"""An agent built with the OpenAI Agents SDK (`openai-agents`), under Vera with no glue.

The SDK's own MCP client connects to the gateway, and its Chat Completions model to the endpoint
Vera serves:

    agent: { type: 'python', entry: 'openai_agents_sdk_agent:run', pythonPath: ['examples/python-agent'],
             python: '.venv/bin/python', model: 'gpt-4o-mini' }
"""

from __future__ import annotations

from agents import Agent, OpenAIChatCompletionsModel, Runner, set_tracing_disabled
from agents.mcp import MCPServerStreamableHttp
from openai import AsyncOpenAI

from vera_agent import AgentContext

# Tracing would send each run to OpenAI's trace service: not part of the agent under test.
set_tracing_disabled(True)

INSTRUCTIONS = "You are a helpful assistant. Use the tools to do what the user asks."


async def run(message: str, ctx: AgentContext) -> str:
    client = AsyncOpenAI(base_url=ctx.model.base_url, api_key=ctx.model.api_key, max_retries=0)
    async with MCPServerStreamableHttp(params={"url": ctx.gateway.url}, name=ctx.gateway.name, cache_tools_list=True) as gateway:
        agent = Agent(
            name="assistant",
            instructions=INSTRUCTIONS,
            model=OpenAIChatCompletionsModel(model=ctx.model.model, openai_client=client),
            mcp_servers=[gateway],
        )
        earlier = [{"role": turn.role, "content": turn.text} for turn in ctx.history]
        result = await Runner.run(agent, [*earlier, {"role": "user", "content": message}], max_turns=20)
    return str(result.final_output)
