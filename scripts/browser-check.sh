#!/usr/bin/env bash
# The HTML reports in a real browser (issue 26): Debian's headless Chromium
# opens the report.html that `--report DIR` writes for compare, simulate,
# design and run, and scripts/browser-check.py checks that each loads with no
# console error and no request (self-contained), and that a screenshot shows
# the map: the marker colour at every silo's pixel, computed from the SVG
# coordinates in the page and the map's box in the laid-out page.
#
# Usage: scripts/browser-check.sh [--bin PATH] [--keep]
#   --bin PATH: the fedtopo binary (default: build target/debug/fedtopo);
#   --keep: keep the scratch directory (reports and screenshots) and print it.
# Installs the `chromium` package with apt-get when it is missing (as root,
# on Debian; measured cold: ~100 s for 155 MB, 115 packages). The `run`
# report uses the paper underlays shipped in underlays/paper/.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD

BIN=
KEEP=0
while [ $# -gt 0 ]; do
  case "$1" in
    --bin) shift; BIN=$1 ;;
    --keep) KEEP=1 ;;
    -h|--help) sed -n '2,17p' "$0"; exit 0 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
  shift
done

if ! command -v chromium >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "installing chromium (apt-get)"
    start=$(date +%s)
    DEBIAN_FRONTEND=noninteractive apt-get update -q >/dev/null
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends chromium >/dev/null
    echo "chromium installed in $(( $(date +%s) - start )) s"
  else
    echo "error: chromium not found; install Debian's chromium package (apt-get install chromium)" >&2
    exit 1
  fi
fi
chromium --version 2>/dev/null || true

if [ -z "$BIN" ]; then
  cargo build --locked --quiet --bin fedtopo
  BIN=$ROOT/target/debug/fedtopo
fi

SCRATCH=$(mktemp -d "${TMPDIR:-/tmp}/browser-check.XXXXXX")
if [ "$KEEP" = 1 ]; then
  echo "scratch: $SCRATCH"
else
  trap 'rm -rf "$SCRATCH"' EXIT
fi

pages=()
no_map=()
"$BIN" compare --overlays star,mst,delta-mbst,ring-opt,matcha --report "$SCRATCH/compare" >/dev/null 2>&1
pages+=("$SCRATCH/compare/report.html")
"$BIN" simulate --overlays star,ring-opt,exp-1peer --rounds 20 --network flow --access 1G \
  --report "$SCRATCH/simulate" >/dev/null 2>&1
pages+=("$SCRATCH/simulate/report.html")
"$BIN" design aws-gaia --report "$SCRATCH/design" >/dev/null 2>&1
pages+=("$SCRATCH/design/report.html")
# The paper underlays ship in underlays/paper/: the run report needs nothing else.
"$BIN" run experiments/fig3-access-sweep/experiment.toml \
  --out "$SCRATCH/run-out" --report "$SCRATCH/run" >/dev/null 2>&1
no_map+=(--no-map "$SCRATCH/run/report.html")

# The run report has no map (an experiment spans many underlays): it is
# checked for console errors and requests only.
python3 scripts/browser-check.py --self-test --screenshot-dir "$SCRATCH/screenshots" \
  "${no_map[@]}" "${pages[@]}"
