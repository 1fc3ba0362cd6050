"""A plain Python agent for Vera: the OpenAI client and the MCP SDK, no framework.

It offers the model every tool the gateway serves and runs the calls the model asks for until it
answers in text. Run it under Vera with

    agent: { type: 'python', entry: 'tool_loop_agent:run', pythonPath: ['examples/python-agent'],
             python: '.venv/bin/python', model: 'gpt-4o-mini' }
"""

from __future__ import annotations

import json

from openai import OpenAI

from vera_agent import AgentContext

SYSTEM = "You are a helpful assistant. Use the tools to do what the user asks."


def run(message: str, ctx: AgentContext) -> dict:
    client = OpenAI(base_url=ctx.model.base_url, api_key=ctx.model.api_key, max_retries=0)
    tools = [
        {"type": "function", "function": {"name": t.name, "description": t.description, "parameters": t.input_schema}}
        for t in ctx.list_tools()
    ]
    messages: list[dict] = [{"role": "system", "content": SYSTEM}]
    messages += [{"role": turn.role, "content": turn.text} for turn in ctx.history]
    messages.append({"role": "user", "content": message})
    usage = {"input": 0, "output": 0}
    for _ in range(20):
        reply = client.chat.completions.create(model=ctx.model.model, messages=messages, tools=tools)
        if reply.usage:
            usage["input"] += reply.usage.prompt_tokens
            usage["output"] += reply.usage.completion_tokens
        choice = reply.choices[0].message
        if not choice.tool_calls:
            return {"response": choice.content or "", "usage": usage}
        messages.append(choice.model_dump(exclude_none=True))
        for call in choice.tool_calls:
            result = ctx.call_tool(call.function.name, json.loads(call.function.arguments or "{}"))
            messages.append({"role": "tool", "tool_call_id": call.id, "content": result.text})
    return {"response": "I stopped after 20 tool rounds.", "usage": usage}
