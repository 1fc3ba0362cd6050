"""The host process as Vera drives it: one JSON line per turn on stdin, one per answer on stdout."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from vera_agent.host import load_entry, run_turn
from vera_agent import AgentContext, Gateway, ModelEndpoint

HERE = Path(__file__).parent
PACKAGE = HERE.parent


def context() -> AgentContext:
    return AgentContext(ModelEndpoint("http://127.0.0.1:9/v1", "k", "m"), Gateway("http://127.0.0.1:9/mcp/", "vera"), "/tmp")


def host(entry: str, *turns: str) -> tuple[list[dict], str, int]:
    env = {
        **os.environ,
        "PYTHONPATH": str(PACKAGE),
        "VERA_AGENT_PATH": str(HERE),
        "VERA_MODEL_BASE_URL": "http://127.0.0.1:9/v1",
        "VERA_MODEL": "vera-scripted",
        "VERA_GATEWAY_URL": "http://127.0.0.1:9/mcp/",
        "VERA_GATEWAY_NAME": "vera",
    }
    stdin = "".join(json.dumps({"type": "turn", "message": t}) + "\n" for t in turns)
    done = subprocess.run([sys.executable, "-m", "vera_agent.host", entry], input=stdin, capture_output=True, text=True, env=env, timeout=60)
    return [json.loads(line) for line in done.stdout.splitlines()], done.stderr, done.returncode


def test_turns_are_answered_in_order_with_the_history_and_prints_go_to_stderr() -> None:
    lines, stderr, code = host("sample_agents:echo", "hello", "again")
    assert code == 0
    assert lines == [
        {"type": "ready"},
        {"type": "reply", "response": "hello (turn 1, model vera-scripted)"},
        {"type": "reply", "response": "again (turn 2, model vera-scripted)"},
    ]
    assert "the agent prints this" in stderr


def test_an_async_agent_and_a_reply_with_usage() -> None:
    lines, _, code = host("sample_agents:echo_async", "hi")
    assert code == 0
    assert lines[1] == {"type": "reply", "response": "HI", "usage": {"input": 3, "output": 1}}


def test_the_agents_exception_comes_back_with_its_stack_and_the_session_goes_on() -> None:
    lines, _, code = host("sample_agents:broken", "one", "two")
    assert code == 0
    errors = [l for l in lines if l["type"] == "error"]
    assert len(errors) == 2
    assert errors[0]["kind"] == "ValueError"
    assert errors[0]["message"] == "cannot parse 'unknown to the parser'"
    assert "sample_agents.py" in errors[0]["traceback"] and "parse_reply" in errors[0]["traceback"]


def test_a_missing_module_is_an_error_naming_it_before_any_turn() -> None:
    lines, _, code = host("no_such_module:run", "x")
    assert code == 1
    assert lines == [lines[0]] and lines[0]["type"] == "error" and "no_such_module" in lines[0]["message"]


def test_entries_must_be_module_colon_function() -> None:
    with pytest.raises(ValueError, match="not 'module:function'"):
        load_entry("sample_agents.echo")


def test_a_reply_that_is_not_text_is_refused_with_what_to_return() -> None:
    sys.path.insert(0, str(HERE))
    entry = load_entry("sample_agents:wrong_type")
    with pytest.raises(TypeError, match="return the reply as a str"):
        run_turn(entry, "x", context())
