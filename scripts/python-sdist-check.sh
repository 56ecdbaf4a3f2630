#!/usr/bin/env bash
# Checks the Python package's source distribution: builds it with
# `maturin sdist` (python/ plus the root crate the bindings depend on by
# path, with the workspace Cargo.toml and Cargo.lock), installs it with pip
# in a fresh venv (a release build from the unpacked sdist) and runs a smoke
# test. Not in .ci/run: the release build from scratch takes several minutes.
#
#   scripts/python-sdist-check.sh            # sdist left in $TMPDIR, path printed
#
# Set CARGO_TARGET_DIR=$PWD/target to reuse this clone's compiled
# dependencies (about 3 minutes instead of a full build).
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
work="$(mktemp -d)"

python3 -m venv "$work/build-venv"
"$work/build-venv/bin/pip" install --quiet --disable-pip-version-check "maturin>=1.5,<2"
"$work/build-venv/bin/maturin" sdist -m "$ROOT/python/Cargo.toml" -o "$work/dist"
sdist="$(ls "$work"/dist/fedtopo-*.tar.gz)"
echo "sdist: $sdist ($(du -h "$sdist" | cut -f1))"

python3 -m venv "$work/venv"
MATURIN_PEP517_ARGS="--locked" "$work/venv/bin/pip" install --quiet --disable-pip-version-check "$sdist"
cd "$work"
"$work/venv/bin/python" - <<'PY'
import numpy as np

import fedtopo

net = fedtopo.Network("aws-north-america", access="1G")
ring = net.overlay("ring")
clock = fedtopo.Clock(net, ring)
t = clock.advance(200)
assert t.shape == (len(net),) and np.isfinite(t).all()
assert abs(clock.now_ms / 200 - ring.cycle_time_ms()) < 0.02 * ring.cycle_time_ms()
rows = net.compare(["star", "ring"])
assert isinstance(rows, fedtopo.Records) and [r["overlay"] for r in rows] == ["star", "ring"]
print(f"fedtopo {fedtopo.__version__} from the sdist: ring cycle time {ring.cycle_time_ms():.3f} ms, ok")
PY
