#!/usr/bin/env bash
# What a user's `npm install -D vera-safety vitest` costs: for each package tarball (default: this
# checkout, packed), a fresh `type: module` repository and the README's install, timed, with the
# packages added, node_modules' size and the packages that build native code at install. Rounds
# alternate the tarballs (A, B, A, B …) so they share the machine's load; the median is reported.
# A failed install is reported as failed, never with a time.
#
#   bash bench/consumer-install.sh                       # this checkout (npm pack --ignore-scripts; run npm run build first)
#   bash bench/consumer-install.sh old.tgz new.tgz       # compare two tarballs (e.g. before and after a dependency change)
#   ROUNDS=3 bash bench/consumer-install.sh …
# The npm cache is warm after the first round (as on a developer's machine); figures are wall times.
set -euo pipefail
cd "$(dirname "$0")/.."
REPO=$PWD
ROUNDS=${ROUNDS:-1}
VITEST=$(node -p 'require("./node_modules/vitest/package.json").version')
WORK=$(mktemp -d /tmp/vera-consumer-install-XXXXXX)
trap 'rm -rf "$WORK"' EXIT

tarballs=("$@")
if [[ ${#tarballs[@]} -eq 0 ]]; then
  [[ -f dist/plugin/index.js ]] || { echo "consumer-install: no dist/ (run npm run build)" >&2; exit 2; }
  npm pack --ignore-scripts --silent --pack-destination "$WORK" >/dev/null
  tarballs=("$WORK"/vera-safety-*.tgz)
fi

declare -A times
printf '%-44s %8s %9s %8s  %s\n' tarball wall packages size 'builds native code at install'
for round in $(seq 1 "$ROUNDS"); do
  for tgz in "${tarballs[@]}"; do
    dir=$WORK/round-$round-$(basename "$tgz" .tgz)-$RANDOM
    mkdir -p "$dir"
    echo '{ "name": "my-agent", "private": true, "type": "module" }' >"$dir/package.json"
    start=$(date +%s%N)
    if (cd "$dir" && npm install -D "$(realpath "$tgz")" "vitest@$VITEST" --no-audit --no-fund >install.log 2>&1); then
      ms=$((($(date +%s%N) - start) / 1000000))
      times[$tgz]+="$ms "
      added=$(grep -oE 'added [0-9]+ packages' "$dir/install.log" | grep -oE '[0-9]+' || echo '?')
      size=$(du -sm "$dir/node_modules" | cut -f1)
      native=$(find "$dir/node_modules" -name binding.gyp -not -path '*/test/*' | sed -E 's|.*/node_modules/((@[^/]+/)?[^/]+)/.*|\1|' | sort -u | while read -r pkg; do
        if [[ -d $dir/node_modules/$pkg/build ]]; then echo "$pkg"; fi
      done | tr '\n' ' ')
      printf '%-44s %7.1fs %9s %6s MB  %s\n' "$(basename "$(dirname "$tgz")")/$(basename "$tgz")" "$(echo "$ms / 1000" | bc -l)" "$added" "$size" "${native:-none}"
    else
      printf '%-44s %8s  (see %s)\n' "$(basename "$tgz")" FAILED "$dir/install.log"
      trap - EXIT
    fi
  done
done
if [[ $ROUNDS -gt 1 ]]; then
  for tgz in "${tarballs[@]}"; do
    [[ -n ${times[$tgz]:-} ]] || continue
    median=$(echo "${times[$tgz]}" | tr ' ' '\n' | grep . | sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }')
    printf 'median of %d: %-30s %.1fs\n' "$ROUNDS" "$(basename "$(dirname "$tgz")")/$(basename "$tgz")" "$(echo "$median / 1000" | bc -l)"
  done
fi
