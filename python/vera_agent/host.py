"""The process Vera starts for a Python agent: ``python -m vera_agent.host <module>:<function>``.

Protocol, one JSON object per line: Vera writes ``{"type": "turn", "message": …}`` on stdin; the host
answers ``{"type": "ready"}`` once the entry is imported, then per turn ``{"type": "reply",
"response": …, "usage": {…}}`` or ``{"type": "error", "kind", "message", "traceback"}`` (the
agent's own exception, with its stack, for the record). The protocol has stdout to itself: what the
agent prints goes to stderr, which Vera keeps as the program's diagnostics.
"""

from __future__ import annotations

import asyncio
import importlib
import inspect
import json
import os
import sys
import traceback
from typing import IO, Any, Callable

from .context import AgentContext, Turn


def _protocol_stream() -> IO[str]:
    """The real stdout for protocol lines; fd 1 and ``sys.stdout`` become stderr for the agent."""
    stream = os.fdopen(os.dup(1), "w", buffering=1, encoding="utf-8")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return stream


def load_entry(spec: str) -> Callable[..., Any]:
    """``package.module:function`` → the function (the module found on VERA_AGENT_PATH, then sys.path)."""
    module_name, sep, attr = spec.partition(":")
    if not sep or not module_name or not attr:
        raise ValueError(f"entry {spec!r} is not 'module:function'")
    for folder in reversed([p for p in os.environ.get("VERA_AGENT_PATH", "").split(os.pathsep) if p]):
        if folder not in sys.path:
            sys.path.insert(0, folder)
    target: Any = importlib.import_module(module_name)
    for part in attr.split("."):
        target = getattr(target, part)
    if not callable(target):
        raise TypeError(f"entry {spec!r} is not callable")
    return target


def run_turn(entry: Callable[..., Any], message: str, ctx: AgentContext) -> dict[str, Any]:
    """One turn: the entry's reply (a string, or a dict with ``response`` and optional ``usage``)."""
    out = entry(message, ctx)
    if inspect.isawaitable(out):
        out = asyncio.run(_await(out))
    if isinstance(out, str):
        return {"response": out}
    if isinstance(out, dict) and isinstance(out.get("response"), str):
        return {"response": out["response"], **({"usage": out["usage"]} if "usage" in out else {})}
    raise TypeError(f"the agent returned {type(out).__name__}; return the reply as a str (or a dict with 'response')")


async def _await(value: Any) -> Any:
    return await value


def _error(error: BaseException) -> dict[str, Any]:
    return {
        "type": "error",
        "kind": type(error).__name__,
        "message": str(error),
        "traceback": "".join(traceback.format_exception(type(error), error, error.__traceback__)),
    }


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    protocol = _protocol_stream()
    send = lambda message: protocol.write(json.dumps(message) + "\n")  # noqa: E731
    if len(args) != 1:
        send({"type": "error", "kind": "UsageError", "message": "usage: python -m vera_agent.host module:function", "traceback": ""})
        return 2
    try:
        entry = load_entry(args[0])
    except Exception as error:  # the user's import error, with its stack
        send(_error(error))
        return 1
    send({"type": "ready"})
    history: list[Turn] = []
    for line in sys.stdin:
        if not line.strip():
            continue
        request = json.loads(line)
        if request.get("type") != "turn":
            continue
        message = str(request.get("message", ""))
        ctx = AgentContext.from_environment(history)
        try:
            reply = run_turn(entry, message, ctx)
        except Exception as error:
            send(_error(error))
            continue
        history += [Turn("user", message), Turn("assistant", reply["response"])]
        send({"type": "reply", **reply})
    return 0


if __name__ == "__main__":
    sys.exit(main())
