#!/usr/bin/env bash
# Installs python/ (the paradnn package) into a venv under BUILD_DIR with no
# package index, then runs tests/python with pytest against BUILD_DIR/bin.
# Usage: run_python_tests.sh BUILD_DIR SOURCE_DIR [PYTEST ARGS...]
# Fails, naming the Debian packages, when the system Python cannot run the
# tests (scripts/install-deps.sh installs them): a skip would hide a missing
# install step.
set -euo pipefail
build_dir=$(cd "$1" && pwd)
source_dir=$(cd "$2" && pwd)
shift 2
# Debian's python3-grpcio, -protobuf, -pandas and -pytest are installed for
# this interpreter; the `python3` on PATH may be another one without them.
python=${PARADNN_PYTHON:-/usr/bin/python3}
venv=$build_dir/python-venv

if ! "$python" -c 'import grpc, google.protobuf, pandas, numpy, pytest, ensurepip' 2>/dev/null; then
  echo "run_python_tests: $python cannot import grpc, google.protobuf, pandas, pytest and ensurepip" \
    "(Debian: python3-grpcio python3-protobuf python3-pandas python3-pytest python3-venv)"
  exit 1
fi
if ! command -v protoc >/dev/null || [ ! -x /usr/bin/grpc_python_plugin ]; then
  echo "run_python_tests: protoc or /usr/bin/grpc_python_plugin is missing" \
    "(Debian: protobuf-compiler protobuf-compiler-grpc)"
  exit 1
fi

# Kept between runs: it holds only this package; the rest comes from the
# system site-packages (Debian 12's pip refuses to install there, PEP 668).
if ! "$venv/bin/python" -c '' 2>/dev/null; then
  rm -rf "$venv"
  "$python" -m venv --system-site-packages "$venv"
fi
cd "$source_dir"
"$venv/bin/pip" install --quiet --no-index --no-cache-dir --disable-pip-version-check \
  --force-reinstall --no-deps ./python

export PARADNN_BIN_DIR=${PARADNN_BIN_DIR:-$build_dir/bin}
export PARADNN_SOURCE_DIR=$source_dir
# Nothing written into the source tree: no __pycache__, no .pytest_cache.
export PYTHONDONTWRITEBYTECODE=1
exec "$venv/bin/python" -m pytest tests/python -q -p no:cacheprovider "$@"
