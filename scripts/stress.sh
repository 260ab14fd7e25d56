#!/usr/bin/env bash
# make stress: every package's tests, -race, COUNT times each, while HOGS
# busy loops keep the CPUs taken — the suite must pass on a busy machine.
# It prints each package's result, a summary line, and exits non-zero on any
# failure (the failing packages' output is kept in $OUT).
#   COUNT=5 HOGS=2 PKGS=./... OUT=var/stress make stress
set -uo pipefail
cd "$(dirname "$0")/.."
count="${COUNT:-5}"
hogs="${HOGS:-2}"
pkgs="${PKGS:-./...}"
out="${OUT:-var/stress}"
mkdir -p "$out"

pids=()
stop_hogs() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done; }
trap stop_hogs EXIT
for _ in $(seq "$hogs"); do
  (while :; do :; done) &
  pids+=("$!")
done

# Build everything once first, so a package's result is its tests', not a
# compile racing the hogs for the deadline.
go test -race -count=1 -run '^$' $pkgs >/dev/null || { echo "stress: build failed"; exit 2; }

# Each run is its own test binary run with make test's timeout, so a run's
# time is bounded alone and a failure names its run.
runs=0 failed=0 failures=()
start=$(date +%s)
for pkg in $(go list $pkgs); do
  log="$out/$(echo "$pkg" | tr / _).log"
  : >"$log"
  bad=0 t0=$(date +%s)
  for i in $(seq "$count"); do
    runs=$((runs + 1))
    if ! go test -race -count=1 -timeout 30m "$pkg" >>"$log" 2>&1; then
      bad=$((bad + 1))
      echo "--- run $i of $count failed" >>"$log"
    fi
  done
  if [ "$bad" -eq 0 ]; then
    echo "ok    $pkg (×$count, $(( $(date +%s) - t0 )) s)"
    rm -f "$log"
  else
    echo "FAIL  $pkg ($bad of $count runs failed) — $log"
    failed=$((failed + bad))
    failures+=("$pkg")
  fi
done
echo "stress: $runs runs ($count per package) with $hogs CPU hogs, $failed failed, $(( $(date +%s) - start )) s"
[ "$failed" -eq 0 ] || { printf 'failed: %s\n' "${failures[@]}"; exit 1; }
