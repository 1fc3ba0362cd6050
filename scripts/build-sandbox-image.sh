#!/usr/bin/env bash
# Builds the container sandbox image (`vera-sandbox:<package version>`) WITHOUT a registry: a
# root filesystem made from this machine's own files — its `node` binary and the libraries `ldd`
# lists, /bin/sh and the coreutils the shell environment needs (with their libraries), and the
# bundled sandbox server — imported with `docker import`. The layout matches docker/Dockerfile
# (node at /usr/local/bin/node, the server at /opt/vera/sandbox-server.mjs, workspaces under
# /workspace), so the backend treats both images alike.
#
# Idempotent: the root filesystem is packed deterministically and hashed; when an image with that
# content hash is already tagged, nothing is imported.
#
#   scripts/build-sandbox-image.sh                 build (or confirm) the image
#   scripts/build-sandbox-image.sh --bundle DIR    only bundle the server (+ sql.js) into DIR
#                                                  (docker/Dockerfile uses this)
#   npx vera sandbox-image                         the same, from an installed vera-safety package
# Environment: VERA_SANDBOX_IMAGE overrides the tag; VERA_AGENTS_DIR the agents folder (default
# ./.agents of the directory it is run from).
set -euo pipefail
CALLER_DIR=$PWD
cd "$(dirname "$0")/.."
REPO=$PWD
# Packages the bundle keeps external (sql.js loads its WebAssembly file from beside its script);
# they are copied next to the bundle when the bundle imports them.
EXTERNAL_PACKAGES=(sql.js)
# What the server uses of each (the rest of sql.js is other builds of the same engine, ~30 MB).
declare -A KEEP_ONLY=([sql.js]="package.json dist/sql-wasm.js dist/sql-wasm.wasm")

# What the shell environment (and a CLI agent's own shell) needs inside the container.
TOOLS=(sh bash cat ls mkdir rmdir rm cp mv ln touch echo printf head tail wc grep sed sort uniq cut tr
  find xargs env pwd test true false sleep chmod date dirname basename tee stat id uname readlink realpath
  diff cmp md5sum sha256sum base64 kill ps mktemp)

# Agent CLIs under test run inside the container from a read-only bind mount of their install
# folder (README "Agents inside the container sandbox"); the image only has to hold the system
# libraries they link. Named here (from this machine's glibc, next to its libc) so the image does
# not depend on whether scripts/install-agents.sh ran first: Claude Code's native build links
# librt. Codex's binary is static, OpenClaw's Node 24 needs no more than node 20 does. Whatever
# else an installed agent program links is added by the ldd scan of $AGENTS_DIR below.
AGENT_LIBS=(librt.so.1)
AGENTS_DIR=${VERA_AGENTS_DIR:-$CALLER_DIR/.agents}

# The server bundle: from the sources in a checkout, else the one the package ships (dist/).
bundle() {
  local out=$1
  mkdir -p "$out"
  if [[ -f $REPO/sandbox/container/server-main.ts ]] && node -e 'require.resolve("esbuild")' >/dev/null 2>&1; then
    node "$REPO/scripts/bundle-sandbox-server.mjs" "$out/sandbox-server.mjs"
  elif [[ -f $REPO/dist/sandbox-server.mjs ]]; then
    cp "$REPO/dist/sandbox-server.mjs" "$out/sandbox-server.mjs"
  else
    echo "build-sandbox-image: no sandbox server to bundle (neither the sources with esbuild nor dist/sandbox-server.mjs)" >&2
    exit 1
  fi
  for pkg in "${EXTERNAL_PACKAGES[@]}"; do
    grep -q "from \"$pkg\"\|require(\"$pkg\")" "$out/sandbox-server.mjs" || continue
    copy_package "$pkg" "$out/node_modules"
  done
}

# Copies an installed package and its runtime dependencies (recursively) into DEST.
copy_package() {
  local pkg=$1 dest=$2
  [[ -d $dest/$pkg ]] && return 0
  # Where Node finds it from the package (its own node_modules, or hoisted into the project's).
  local src
  # (Through its main entry, not its package.json: a package's `exports` may not list package.json.)
  src=$(node -e '
    const { dirname, join } = require("node:path"); const { existsSync } = require("node:fs");
    try {
      let dir = dirname(require.resolve(process.argv[1], { paths: [process.argv[2]] }));
      while (!existsSync(join(dir, "package.json")) || require(join(dir, "package.json")).name !== process.argv[1]) {
        if (dir === dirname(dir)) throw new Error("not found");
        dir = dirname(dir);
      }
      console.log(dir);
    } catch {}' "$pkg" "$REPO")
  [[ -n $src && -d $src ]] || { echo "build-sandbox-image: the bundle needs $pkg, which is not installed" >&2; exit 1; }
  mkdir -p "$(dirname "$dest/$pkg")"
  if [[ -n ${KEEP_ONLY[$pkg]:-} ]]; then
    local file
    for file in ${KEEP_ONLY[$pkg]}; do mkdir -p "$(dirname "$dest/$pkg/$file")" && cp -a "$src/$file" "$dest/$pkg/$file"; done
  else
    cp -a "$src" "$dest/$pkg"
  fi
  local dep
  for dep in $(node -e 'const p = require(process.argv[1]); console.log(Object.keys(p.dependencies ?? {}).join(" "))' "$src/package.json"); do
    copy_package "$dep" "$dest"
  done
}

if [[ ${1:-} == --bundle ]]; then
  [[ -n ${2:-} ]] || { echo "usage: $0 --bundle DIR" >&2; exit 2; }
  bundle "$2"
  exit 0
fi

command -v docker >/dev/null || { echo "build-sandbox-image: docker is not installed" >&2; exit 1; }
docker info >/dev/null 2>&1 || { echo "build-sandbox-image: the Docker engine is not reachable (is dockerd running?)" >&2; exit 1; }

VERSION=$(node -p 'require("./package.json").version')
TAG=${VERA_SANDBOX_IMAGE:-vera-sandbox:$VERSION}

# One build at a time (test files may call this concurrently).
exec 9>/tmp/vera-sandbox-image.lock
flock 9

WORK=$(mktemp -d /tmp/vera-sandbox-image.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
ROOT=$WORK/rootfs
mkdir -p "$ROOT"/{usr/bin,usr/local/bin,usr/lib,usr/lib64,etc,tmp,root,workspace,run/vera,opt/vera,proc,sys,dev}
# Debian's merged /usr: /bin, /lib, /lib64 are links into /usr.
ln -s usr/bin "$ROOT/bin"
ln -s usr/lib "$ROOT/lib"
ln -s usr/lib64 "$ROOT/lib64"
ln -s bin "$ROOT/usr/sbin"
ln -s usr/bin "$ROOT/sbin"
chmod 1777 "$ROOT/tmp"

# Copies FILE (following links) to the same path in the root filesystem, and its libraries.
copy_with_libs() {
  local file=$1 target=${2:-$1}
  local real
  real=$(readlink -f "$file")
  install -D -m 0755 "$real" "$ROOT$target"
  local lib
  for lib in $(ldd "$real" 2>/dev/null | grep -oE '/[^ ]+' || true); do
    copy_lib "$lib"
  done
}

copy_lib() {
  local lib=$1
  # Keep the name ldd printed (often a symlink) and the file it resolves to.
  local canonical
  canonical=$(readlink -f "$lib")
  local path=${lib#/usr}
  [[ -e $ROOT/usr$path ]] || install -D -m 0755 "$canonical" "$ROOT/usr$path"
}

NODE_BIN=$(readlink -f "$(command -v node)")
copy_with_libs "$NODE_BIN" /usr/local/bin/node
for tool in "${TOOLS[@]}"; do
  # The executable file, also for names that are shell builtins too (test, echo, kill, …).
  path=$(type -P "$tool" 2>/dev/null || true)
  [[ -n $path ]] || { echo "build-sandbox-image: $tool is not installed on this machine; skipping it" >&2; continue; }
  copy_with_libs "$path" "/usr/bin/$tool"
done

LIBC_DIR=$(dirname "$(ldd "$NODE_BIN" | grep -oE '/[^ ]+/libc\.so\.6' | head -1)")
for lib in "${AGENT_LIBS[@]}"; do
  [[ -e $LIBC_DIR/$lib ]] || { echo "build-sandbox-image: $LIBC_DIR/$lib is missing on this machine; skipping it" >&2; continue; }
  copy_lib "$LIBC_DIR/$lib"
done
# Native programs of installed agents (ELF files in their packages' bin folders): their libraries.
shopt -s nullglob
for program in "$AGENTS_DIR"/*/node_modules/{,@*/}*/bin/* "$AGENTS_DIR"/*/node_modules/@*/*/vendor/*/bin/*; do
  [[ -f $program && $(head -c4 "$program" | tr -d '\0' | tail -c3) == ELF ]] || continue
  missing=$(ldd "$program" 2>/dev/null | grep 'not found' || true)
  [[ -z $missing ]] || echo "build-sandbox-image: $program needs libraries this machine lacks: $missing" >&2
  for lib in $(ldd "$program" 2>/dev/null | grep -oE '=> /[^ ]+' | cut -c4- || true); do copy_lib "$lib"; done
done
shopt -u nullglob

cat >"$ROOT/etc/passwd" <<'EOF'
root:x:0:0:root:/root:/bin/sh
nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin
EOF
cat >"$ROOT/etc/group" <<'EOF'
root:x:0:
nogroup:x:65534:
EOF

bundle "$ROOT/opt/vera"

# Deterministic archive: sorted names, fixed times and owners, so the hash only moves with content.
tar --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner -C "$ROOT" -cf "$WORK/rootfs.tar" .
HASH=$(sha256sum "$WORK/rootfs.tar" | cut -c1-16)

current=$(docker image inspect --format '{{ index .Config.Labels "vera.content-hash" }}' "$TAG" 2>/dev/null || true)
if [[ $current == "$HASH" ]]; then
  echo "build-sandbox-image: $TAG is up to date (content $HASH)"
  exit 0
fi

docker import \
  --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
  --change 'ENV HOME=/root' \
  --change 'ENV VERA_SANDBOX_CONTAINER=1' \
  --change 'WORKDIR /workspace' \
  --change 'ENTRYPOINT ["/usr/local/bin/node", "/opt/vera/sandbox-server.mjs"]' \
  --change "LABEL vera.content-hash=$HASH" \
  --change "LABEL vera.version=$VERSION" \
  --message "vera sandbox $VERSION (rootfs $HASH)" \
  "$WORK/rootfs.tar" "$TAG" >/dev/null
echo "build-sandbox-image: built $TAG (content $HASH, $(du -m "$WORK/rootfs.tar" | cut -f1) MiB, node $(node -v))"
