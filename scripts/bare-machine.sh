#!/usr/bin/env bash
# Runs the README's quick start as a new user would, on a machine that has only Node and npm:
# a fresh clone of HEAD, with bubblewrap, Docker (client, daemon and socket) and Chromium hidden
# (a private mount namespace: they are not on any path, as on a machine that never installed
# them), no .agents/ folder, and CI unset.
#
#   scripts/bare-machine.sh                 # clone, npm install, npm run demo, npm test
#   scripts/bare-machine.sh -- <command…>   # clone, npm install, then <command…> instead
#
# Needs root (unshare -m, mount --bind). Writes the vitest JSON report of `npm test` to
# $BARE_REPORT (default .ci/out/bare-vitest.json) and prints the wall time of each command.
set -euo pipefail
cd "$(dirname "$0")/.."
REPO=$PWD
REPORT=${BARE_REPORT:-$REPO/.ci/out/bare-vitest.json}
mkdir -p "$(dirname "$REPORT")"

if [[ ${VERA_BARE_INSIDE:-} != 1 ]]; then
  [[ $(id -u) == 0 ]] || { echo "bare-machine.sh needs root (a private mount namespace hides the prerequisites)" >&2; exit 2; }
  exec unshare --mount --propagation private env VERA_BARE_INSIDE=1 bash "$0" "$@"
fi

# -- hide the prerequisites: each bin directory is replaced by a hard-linked copy without them.
HIDDEN='^(bwrap|chromium|chromium-browser|chromedriver|docker|dockerd|docker-init|docker-proxy|containerd.*|runc|ctr)$'
SCRATCH=$(mktemp -d /tmp/vera-bare-XXXXXX)
for dir in /usr/bin /usr/sbin /usr/local/bin /bin /sbin; do
  [[ -d $dir && ! -L $dir ]] || continue
  copy=$SCRATCH/bin$(echo "$dir" | tr / _)
  mkdir -p "$copy"
  for entry in "$dir"/* "$dir"/.[!.]*; do
    [[ -e $entry || -L $entry ]] || continue
    name=${entry##*/}
    [[ $name =~ $HIDDEN ]] && continue
    ln "$entry" "$copy/$name" 2>/dev/null || cp -a "$entry" "$copy/$name"
  done
  mount --bind "$copy" "$dir"
done
for sock in /run/docker.sock /var/run/docker.sock; do
  [[ -S $sock ]] && mount --bind /dev/null "$sock"
done
unset CI DOCKER_HOST VERA_AGENTS_DIR VERA_CODEX_BIN VERA_CLAUDE_CODE_BIN VERA_OPENCLAW_BIN VERA_HERMES_BIN OPENAI_API_KEY OPENAI_BASE_URL ANTHROPIC_API_KEY ANTHROPIC_BASE_URL
for tool in bwrap docker dockerd chromium; do
  if command -v "$tool" >/dev/null 2>&1; then echo "bare-machine: $tool is still visible at $(command -v "$tool")" >&2; exit 2; fi
done
echo "== bare machine: node $(node -v), npm $(npm -v); bwrap, docker and chromium hidden; CI unset"

# -- a fresh clone of what is committed, as `git clone` gives a new user.
CLONE=$SCRATCH/vera
git clone --quiet --no-hardlinks "$REPO" "$CLONE"
git -C "$CLONE" checkout --quiet "$(git -C "$REPO" rev-parse HEAD)"
cd "$CLONE"

timed() { # label, command…
  local label=$1; shift
  local start=$SECONDS status=0
  "$@" || status=$?
  echo "== bare machine: $label exited $status after $((SECONDS - start)) s"
  return $status
}

timed "npm install" npm install --no-audit --no-fund
if [[ ${1:-} == -- ]]; then
  shift
  timed "$*" "$@"
  exit
fi
demo=0; tests=0
timed "npm run demo" npm run demo || demo=$?
timed "npm test" npm test -- --reporter=default --reporter=json --outputFile.json="$REPORT" || tests=$?
cd /
rm -rf "$SCRATCH"
[[ $demo == 0 && $tests == 0 ]]
