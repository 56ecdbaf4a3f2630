#!/usr/bin/env bash
# Times every decomposition of decomp.py with fedtopo's delay model: samples
# 1000 rounds of each (rounds.py) and runs `fedtopo compare` on them, next to
# fedtopo's own matcha+, at 1 Gbit/s access (iNaturalist, s = 1, Cb = 0.5).
# Per-round files are replayed periodically, so their cycle time is the
# max-plus rate (`maxplus_ms`); for matcha+ `cycle_time_ms` is the paper's
# round estimate and `maxplus_ms` the max-plus rate of its own 1000 rounds.
# Usage: timing.sh [FEDTOPO_BINARY] [PYTHON]   (writes timing.csv here)
set -euo pipefail
cd "$(dirname "$0")"
BIN=${1:-../../target/release/fedtopo}
PY=${2:-python3}
PAPER=../../underlays/paper  # shipped with the repository
SCRATCH=$(mktemp -d)
trap 'rm -rf "$SCRATCH"' EXIT
"$PY" rounds.py "$SCRATCH" 1000 >&2
echo "underlay,overlay,arcs,max_degree,cycle_time_ms,maxplus_ms" > timing.csv
for u in exodus ebone; do
  list=matcha+
  for f in "$SCRATCH/$u"-*.json; do list="$list,file:$f"; done
  "$BIN" compare "$PAPER/$u.gml" --access 1G --overlays "$list" --format csv 2>/dev/null \
    | "$PY" -c '
import csv, sys
for r in csv.DictReader(sys.stdin):
    name = r["overlay"].split("/")[-1].removesuffix(".json")
    print(",".join([r["underlay"], name, r["arcs"], r["max_degree"],
                    "%.1f" % float(r["cycle_time_ms"]), "%.1f" % float(r["maxplus_ms"])]))
' >> timing.csv
done
cat timing.csv
