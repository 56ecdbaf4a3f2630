#!/usr/bin/env bash
# Writes fedtopo's MATCHA / MATCHA+ designs (matchings, probabilities,
# lambda_2, certificate) for every paper underlay at 1 Gbit/s access, Cb = 0.5,
# into designs/ (read by solve.py). Usage: dump.sh [FEDTOPO_BINARY]
set -euo pipefail
cd "$(dirname "$0")"
BIN=${1:-../../target/release/fedtopo}
PAPER=../../underlays/paper  # shipped with the repository
mkdir -p designs
SCRATCH=$(mktemp -d)
trap 'rm -rf "$SCRATCH"' EXIT
for u in gaia amazon_us geantdistance exodus ebone; do
  for o in matcha matcha+; do
    "$BIN" overlay "$o:budget=0.5" "$PAPER/$u.gml" --access 1G --format json \
      -o "$SCRATCH/rounds.json" --matcha-design "designs/$u-$o.json" 2>"$SCRATCH/err" \
      || { cat "$SCRATCH/err" >&2; exit 1; }
    tail -n1 "$SCRATCH/err"
  done
done
