#!/usr/bin/env bash
# Builds the Go-installed tools the checks and integration tests use into
# .tools/bin, once; later runs reuse them (CI caches nothing else).
set -euo pipefail
cd "$(dirname "$0")/.."
export GOBIN="$PWD/.tools/bin"
mkdir -p "$GOBIN"
need() { [ -x "$GOBIN/$1" ] || { echo "tools: building $1 ($2)"; go install "$2"; }; }
need staticcheck honnef.co/go/tools/cmd/staticcheck@v0.8.2
need influxd github.com/influxdata/influxdb/cmd/influxd@v1.8.10
need mailpit github.com/axllent/mailpit@v1.33.1
