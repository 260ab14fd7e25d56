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

runs=0 failed=0 failures=()
start=$(date +%s)
for pkg in $(go list $pkgs); do
  log="$out/$(echo "$pkg" | tr / _).log"
  if go test -race -count="$count" -timeout 60m "$pkg" >"$log" 2>&1; then
    echo "ok    $pkg (×$count)"
    rm -f "$log"
  else
    echo "FAIL  $pkg (×$count) — $log"
    failed=$((failed + 1))
    failures+=("$pkg")
  fi
  runs=$((runs + 1))
done
echo "stress: $runs packages × $count runs with $hogs CPU hogs, $failed failed, $(( $(date +%s) - start )) s"
[ "$failed" -eq 0 ] || { printf 'failed: %s\n' "${failures[@]}"; exit 1; }
