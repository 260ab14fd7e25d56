#!/usr/bin/env bash
# Vendors uPlot (MIT, https://github.com/leeoniya/uPlot) into the dashboard's
# embedded assets: dashboard/static/vendor/uplot/. The version and the SHA-256
# of each vendored file are pinned here; the script refuses a package whose
# files differ, and writes VERSION, which dashboard/vendor_test.go checks
# against the files (and against the pins below) so the bundle cannot drift.
#
# Usage: scripts/vendor-uplot.sh   (needs npm and the npm registry)
set -euo pipefail
cd "$(dirname "$0")/.."

VERSION=1.6.32
# sha256 <file in the package> <name in vendor/uplot>
PINS=(
  "19c8d4c6ad88929a79f4ae49d6f7161566dfd0ba3d15cc495e974f787eb78f1f package/dist/uPlot.iife.min.js uPlot.iife.min.js"
  "df630c6a8d6f8eeaff264b50f73ce5b114f646ffd9a0bb74f049b0a00135fa04 package/dist/uPlot.min.css uPlot.min.css"
  "8f989229699b4fe2f1a0432d0e9edc338a8a911e250e2d1b01ecd770a5f5b1bd package/LICENSE LICENSE"
)

dest=dashboard/static/vendor/uplot
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$tmp" && npm pack --silent "uplot@$VERSION" >/dev/null && tar xzf "uplot-$VERSION.tgz")

mkdir -p "$dest"
{
  echo "# uPlot vendored by scripts/vendor-uplot.sh; checked by dashboard/vendor_test.go."
  echo "uplot $VERSION"
} >"$tmp/VERSION"
for pin in "${PINS[@]}"; do
  read -r sum src name <<<"$pin"
  got=$(sha256sum "$tmp/$src" | cut -d' ' -f1)
  if [[ "$got" != "$sum" ]]; then
    echo "vendor-uplot: $src of uplot@$VERSION has sha256 $got, pinned $sum" >&2
    exit 1
  fi
  cp "$tmp/$src" "$dest/$name"
  echo "$sum  $name" >>"$tmp/VERSION"
done
cp "$tmp/VERSION" "$dest/VERSION"
echo "vendor-uplot: uplot@$VERSION in $dest"
