#!/usr/bin/env bash
# Sets up libtorch for the `train` cargo feature (tch) and runs the given command with it.
#
#   scripts/libtorch.sh cargo test --features train
#   scripts/libtorch.sh cargo run --release --features train -- train aws-na ...
#
# Idempotent: creates a Python venv (default: .venv in the repo root, override with
# FEDTOPO_VENV=/some/dir) and pip-installs the exact PyTorch version that the tch
# crate in Cargo.lock expects (tch 0.26.0 -> torch 2.13.0; torch-sys checks it).
# Then exports LIBTORCH_USE_PYTORCH=1 (torch-sys finds libtorch inside the Python
# package), puts the venv's python first on PATH and torch/lib on LD_LIBRARY_PATH,
# builds into target/train (binaries: target/train/release/fedtopo), and execs "$@". With no command it only installs.
set -euo pipefail
TORCH_VERSION="${FEDTOPO_TORCH_VERSION:-2.13.0}"
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
VENV="${FEDTOPO_VENV:-$ROOT/.venv}"

if [ ! -x "$VENV/bin/python" ]; then
  echo "libtorch.sh: creating venv $VENV" >&2
  python3 -m venv "$VENV"
fi
if ! "$VENV/bin/python" -c "import torch,sys; sys.exit(0 if torch.__version__.split('+')[0]=='$TORCH_VERSION' else 1)" 2>/dev/null; then
  echo "libtorch.sh: installing torch==$TORCH_VERSION into $VENV (a few minutes, ~5 GB)" >&2
  "$VENV/bin/pip" install --disable-pip-version-check -q "torch==$TORCH_VERSION"
fi
TORCH_LIB="$("$VENV/bin/python" -c 'import torch,os;print(os.path.join(os.path.dirname(torch.__file__),"lib"))' 2>/dev/null)"
export LIBTORCH_USE_PYTORCH=1
export PATH="$VENV/bin:$PATH"
export LD_LIBRARY_PATH="$TORCH_LIB${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
# Builds linked against libtorch go to their own target directory, so that the
# default target/{debug,release}/fedtopo (no libtorch needed) is never
# replaced by a binary that only starts with torch/lib on the loader path.
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$ROOT/target/train}"
if [ "$#" -eq 0 ]; then
  echo "libtorch.sh: torch $TORCH_VERSION ready in $VENV ($TORCH_LIB)" >&2
  exit 0
fi
exec "$@"
