"""Agents for the host's tests."""

from __future__ import annotations

from vera_agent import AgentContext


def echo(message: str, ctx: AgentContext) -> str:
    print("the agent prints this; the protocol never sees it")
    return f"{message} (turn {len(ctx.history) // 2 + 1}, model {ctx.model.model})"


async def echo_async(message: str, ctx: AgentContext) -> dict:
    return {"response": message.upper(), "usage": {"input": 3, "output": 1}}


def broken(message: str, ctx: AgentContext) -> str:
    return parse_reply("unknown to the parser")


def parse_reply(text: str) -> str:
    raise ValueError(f"cannot parse {text!r}")


def wrong_type(message: str, ctx: AgentContext) -> int:
    return 42
