#!/usr/bin/env bash
# Peer benchmark: Vera, evalite and promptfoo on one mock-model workload (see README.md).
# Derived from the shared peer kit (shared/bench-peers); Vera is added as the first tool, so the
# ratios read "peer ÷ Vera".
#   bash run-peers.sh                      # N=200, C=32, latency 0 and 200 ms, 3 runs each
#   PERF_N=50 PERF_REPEAT=1 bash run-peers.sh
# Installs and results go under $PERF_PEERS_DIR (default /tmp/perf-peers).
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
N=${PERF_N:-200}                      # test cases per run (one model call each)
C=${PERF_CONCURRENCY:-32}             # max concurrent cases / model calls, both peers
LATENCIES=${PERF_LATENCIES:-"0 200"}  # mock latency settings, ms
REPEAT=${PERF_REPEAT:-3}              # measured runs per peer per setting; the median is reported
WARMUP_N=${PERF_WARMUP_N:-5}          # one unmeasured run per peer per setting with this N (0 = none)
PEERS=${PERF_PEERS:-"vera evalite promptfoo"}
REPO=$(cd "$HERE/../.." && pwd)
DIR=${PERF_PEERS_DIR:-/tmp/perf-peers}   # installs, stores and logs, outside the checkout
NETNS=${PERF_NETNS:-1}                # 1 = measure inside a new network namespace: loopback only
SAMPLE_MS=${PERF_SAMPLE_MS:-100}      # process-tree RSS sampling interval (one /proc scan ~3 ms CPU)

# Exact versions. On Node 20: promptfoo >= 0.122 and openai >= 7 require Node 22; vitest 5 too.
EVALITE_PKGS=(evalite@0.19.0 vitest@4.1.12 vite@8.3.8 openai@6.49.0)
PROMPTFOO_PKGS=(promptfoo@0.121.20)

# promptfoo: no telemetry, update check, sharing, runtime nag; its DB and logs stay in $DIR.
export PROMPTFOO_DISABLE_TELEMETRY=1 PROMPTFOO_DISABLE_UPDATE=1 PROMPTFOO_DISABLE_SHARING=1 \
  PROMPTFOO_DISABLE_RUNTIME_WARNINGS=1 PROMPTFOO_DISABLE_REMOTE_GENERATION=1 \
  PROMPTFOO_CONFIG_DIR="$DIR/promptfoo/.promptfoo" NO_COLOR=1

install_peer() { # name pkg@version...
  local name=$1 d="$DIR/$1"; shift
  if [[ -f $d/.installed && "$(cat "$d/.installed")" == "$*" ]]; then return; fi
  echo "installing $name: $* (into $d)"
  rm -rf "$d" && mkdir -p "$d"
  echo "{\"name\":\"peer-$name\",\"private\":true,\"type\":\"module\"}" >"$d/package.json"
  if ! (cd "$d" && npm install --no-audit --no-fund --save-exact "$@" >install.log 2>&1); then
    tail -20 "$d/install.log"; exit 1
  fi
  echo "$*" >"$d/.installed"
}

if [[ ${1:-} != --measure ]]; then
  for p in $PEERS; do
    case $p in
      vera) (cd "$REPO" && npm run build >/dev/null) || { echo "could not build Vera in $REPO"; exit 1; } ;;
      evalite) install_peer evalite "${EVALITE_PKGS[@]}" ;;
      promptfoo) install_peer promptfoo "${PROMPTFOO_PKGS[@]}" ;;
      *) echo "unknown peer $p" >&2; exit 2 ;;
    esac
  done
  RUN="$DIR/run-$(date +%Y%m%dT%H%M%S)"
  mkdir -p "$RUN"
  export RUN
  if [[ $NETNS == 1 ]] && unshare -n true 2>/dev/null; then
    exec unshare -n -- env PERF_IN_NETNS=1 bash "${BASH_SOURCE[0]}" --measure
  fi
  echo "WARNING: measuring without a network namespace; promptfoo 0.121.x still tries one" \
    "telemetry POST to r.promptfoo.app with telemetry disabled" >&2
fi

# ---- measure phase -------------------------------------------------------------------------
[[ -n ${PERF_IN_NETNS:-} ]] && ip link set lo up
MOCK_PID="" RUN_PID=""
cleanup() {
  [[ -n $RUN_PID ]] && kill -- "-$RUN_PID" 2>/dev/null || true # peer's process group
  [[ -n $MOCK_PID ]] && kill "$MOCK_PID" 2>/dev/null || true
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

mock_reset() { curl -s -X POST "http://127.0.0.1:$PORT/stats/reset" >/dev/null; }
mock_stat() { curl -s "http://127.0.0.1:$PORT/stats" | sed -n "s/.*\"$1\":\([0-9]*\).*/\1/p"; }

peer_cmd() { # name n -> sets CMD (array) and CWD
  case $1 in
    vera)
      # N single-call safety cases in one suite file; the project uses this repo's build.
      CWD=$DIR/vera
      node "$HERE/vera/make-project.mjs" "$2" "$PORT" "$C" "$CWD" "$REPO"
      CMD=(node ./node_modules/vitest/vitest.mjs run --reporter=dot) ;;
    evalite)
      CWD=$DIR/evalite
      CMD=(env "PERF_N=$2" "PERF_CONCURRENCY=$C" "MOCK_PORT=$PORT" ./node_modules/.bin/evalite run --threshold 100) ;;
    promptfoo)
      CWD=$DIR/promptfoo
      node "$HERE/promptfoo/make-config.mjs" "$2" "$PORT" >"$CWD/promptfooconfig.yaml"
      CMD=(./node_modules/.bin/promptfoo eval -c promptfooconfig.yaml --no-cache -j "$C" --no-table --no-progress-bar --no-share) ;;
  esac
}

# measure TAG: runs CMD in CWD under /usr/bin/time -v plus the tree sampler; sets WALL RSS_MB TREE_MB RC
measure() {
  local out=$RUN/$1
  (cd "$CWD" && exec setsid /usr/bin/time -v -o "$out.time" "${CMD[@]}" >"$out.log" 2>&1) &
  RUN_PID=$!
  node "$HERE/treepeak.mjs" "$RUN_PID" "$SAMPLE_MS" >"$out.tree" &
  local sampler=$!
  RC=0; wait "$RUN_PID" || RC=$?
  RUN_PID=""
  wait "$sampler"
  WALL=$(awk -F': ' '/Elapsed \(wall clock\)/ {n=split($2,a,":"); s=0; for(i=1;i<=n;i++) s=s*60+a[i]; printf "%.2f", s}' "$out.time")
  RSS_MB=$(awk -F': ' '/Maximum resident set size/ {printf "%.0f", $2/1024}' "$out.time")
  TREE_MB=$(sed -n 's/peak_tree_kb=\([0-9]*\).*/\1/p' "$out.tree" | awk '{printf "%.0f", $1/1024}')
}

# Same starting state every invocation: no stored results from earlier invocations.
rm -rf "$PROMPTFOO_CONFIG_DIR" "$DIR/evalite/node_modules/.evalite" "$DIR/vera/.vera"
cp "$HERE"/evalite/*.ts "$DIR/evalite/" 2>/dev/null || true
RESULTS=$RUN/results.tsv
printf 'latency_ms\tpeer\trun\twall_s\tmaxrss_mb\ttree_mb\tmodel_calls\tmax_inflight\trc\n' >"$RESULTS"
{
  echo "# peer benchmark  $(date -Is)  node $(node -v)  $(nproc) cores  netns=${PERF_IN_NETNS:-0}"
  echo "# N=$N concurrency=$C repeat=$REPEAT warmup_n=$WARMUP_N  logs: $RUN"
  for p in $PEERS; do
    case $p in
      vera) echo "# peer vera: vera-safety@$(node -p "require('$REPO/package.json').version") (this checkout) $(node -p "['vitest','vite','openai'].map(p=>p+'@'+require('$REPO/node_modules/'+p+'/package.json').version).join(' ')")" ;;
      evalite) echo "# peer evalite: $(node -p "['evalite','vitest','vite','openai'].map(p=>p+'@'+require('$DIR/evalite/node_modules/'+p+'/package.json').version).join(' ')")" ;;
      promptfoo) echo "# peer promptfoo: promptfoo@$(node -p "require('$DIR/promptfoo/node_modules/promptfoo/package.json').version")" ;;
    esac
  done
} | tee "$RUN/header.txt"
printf '%-9s %-10s %3s %7s %10s %8s %11s %12s %3s\n' latency peer run wall_s maxrss_MB tree_MB model_calls max_inflight rc

for L in $LATENCIES; do
  MOCK_PORT=0 MOCK_LATENCY_MS=$L node "$HERE/mock-model.mjs" >"$RUN/mock-$L.out" 2>"$RUN/mock-$L.err" &
  MOCK_PID=$!
  for _ in $(seq 50); do grep -q listening "$RUN/mock-$L.out" 2>/dev/null && break; sleep 0.1; done
  PORT=$(sed -n 's/.*127\.0\.0\.1:\([0-9]*\).*/\1/p' "$RUN/mock-$L.out")
  [[ -n $PORT ]] || { echo "mock did not start:"; cat "$RUN/mock-$L.err"; exit 1; }
  if ((WARMUP_N > 0)); then
    for p in $PEERS; do peer_cmd "$p" "$WARMUP_N"; measure "L$L-$p-warmup"; done
  fi
  for i in $(seq "$REPEAT"); do # rounds interleave the peers, so drift hits them alike
    for p in $PEERS; do
      peer_cmd "$p" "$N"
      mock_reset
      measure "L$L-$p-$i"
      calls=$(mock_stat chat) inflight=$(mock_stat maxInFlight)
      calls=${calls:-0}
      flag=""; ((calls == N && RC == 0)) || flag="  <-- FAILED (see $RUN/L$L-$p-$i.log)"
      printf '%-9s %-10s %3s %7s %10s %8s %11s %12s %3s%s\n' "${L}ms" "$p" "$i" "$WALL" "$RSS_MB" "$TREE_MB" "$calls/$N" "$inflight" "$RC" "$flag"
      printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$L" "$p" "$i" "$WALL" "$RSS_MB" "$TREE_MB" "$calls" "$inflight" "$RC" >>"$RESULTS"
    done
  done
  kill "$MOCK_PID"; wait "$MOCK_PID" || true; MOCK_PID=""
  echo "# mock L=${L}ms at exit (last window + totalChat): $(cat "$RUN/mock-$L.err")"
done

first=${PEERS%% *}
echo
echo "# median of $REPEAT runs; (x) = ratio to $first. peak = max(tree, maxrss): tree = summed RSS of the"
echo "# process tree sampled every ${SAMPLE_MS} ms, maxrss = /usr/bin/time -v (largest single process, exact)"
awk -F'\t' -v N="$N" -v C="$C" -v lats="$LATENCIES" -v peers="$PEERS" '
  function med(col, k,   i, j, c, v, t) {
    c = n[k]; for (i = 1; i <= c; i++) v[i] = x[k, i, col] + 0
    for (i = 1; i <= c; i++) for (j = i + 1; j <= c; j++) if (v[j] < v[i]) { t = v[i]; v[i] = v[j]; v[j] = t }
    return v[int((c + 1) / 2)]
  }
  # A run that failed (non-zero exit) or made fewer than N model calls measured nothing: it is
  # counted, never timed; a peer with no good run in a setting is reported FAILED, not as a time.
  NR > 1 { k = $1 SUBSEP $2; runs[k]++; if ($9 != 0 || $7 + 0 != N) { bad[k]++; next }
           n[k]++; for (c = 4; c <= 6; c++) x[k, n[k], c] = $c; x[k, n[k], 0] = $6 > $5 ? $6 : $5 }
  END {
    nl = split(lats, L, " "); np = split(peers, P, " ")
    for (a = 1; a <= nl; a++) {
      b = L[a] SUBSEP P[1]; base = (b in n); if (base) { bw = med(4, b); bm = med(0, b) }
      for (q = 1; q <= np; q++) {
        k = L[a] SUBSEP P[q]; if (!(k in runs)) continue
        if (!(k in n)) { printf "L=%-4s %-10s FAILED: %d of %d runs failed or made fewer than %d model calls (no time reported)\n", L[a], P[q], bad[k], runs[k], N; continue }
        w = med(4, k); m = med(0, k)
        if (!base) { bw = w; bm = m }
        line = sprintf("L=%-4s %-10s wall %6.2f s (%.2fx)  peak %4d MB (%.2fx)  [tree %4d, maxrss %4d]", L[a], P[q], w, w / bw, m, m / bm, med(6, k), med(5, k))
        if (L[a] > 0) line = line sprintf("  wall/ideal %.2fx", w / (N * L[a] / C / 1000))
        if (k in bad) line = line sprintf("  (%d of %d runs failed, left out)", bad[k], runs[k])
        if (!base) line = line sprintf("  (ratios to itself: %s failed)", P[1])
        print line
      }
      if (L[a] > 0) printf "L=%-4s ideal N*L/C = %.2f s; in whole waves ceil(N/C)*L = %.2f s\n", L[a], N * L[a] / C / 1000, int((N + C - 1) / C) * L[a] / 1000
    }
  }' "$RESULTS" | tee "$RUN/summary.txt"
echo "# results: $RESULTS"
