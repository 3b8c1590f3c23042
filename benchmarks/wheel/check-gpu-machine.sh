#!/usr/bin/env bash
# Checks a self-contained gpuopt wheel on a GPU machine that has a CUDA driver,
# Python with PyTorch, Triton and numpy, but no LLVM/MLIR and (hidden here) no
# CUDA toolkit: ptxas is Triton's bundled one. Run from the repository root:
#
#   bash benchmarks/wheel/check-gpu-machine.sh [OPTIONS] WHEEL OUT_DIR
#
#   --dry-run        print what would run (nothing is installed, run or written)
#   --site DIR       install into DIR (must not exist or be empty; default: a
#                    fresh folder under a new temporary work folder)
#   --steps LIST     which of a,b,c,d to run (default: a,b,c,d; step 0 always runs)
#   --budget SECONDS stop starting steps past this many seconds (default 480);
#                    each step also has a time limit of its own
#   --ptxas-env      export PTXAS=Triton's bundled ptxas (and put it first on
#                    PATH) for every step; default: leave $PTXAS unset, so that
#                    the tools find Triton's ptxas themselves (a ptxas of
#                    another origin on PATH fails step 0)
#
# Steps (each prints "[STEP] PASS|FAIL: reason", logs under OUT_DIR/STEP-*/,
# and the script goes on past a failure; exit status 1 if any failed):
#   0  nvidia-smi -L and the versions of Python, PyTorch, Triton, numpy, cupy;
#      `pip install --no-deps --target SITE WHEEL`; the CUDA toolkit hidden
#      (/usr/local/cuda* out of PATH and LD_LIBRARY_PATH; CUDA_HOME, CUDA_PATH,
#      ... unset); PATH=SITE/bin:...,
#      PYTHONPATH=SITE; gpuopt, gpuopt._core and gpuopt._runtime import from
#      SITE; ldd of every ELF under SITE names no LLVM, MLIR, yaml-cpp, z3, ICU
#      or libxml2 library and nothing "not found"; gpu-opt --version,
#      gpu-translate --version, gpu-run --help.
#   a  the user's command `gpu-opt --hfuse --probe=block_sched
#      examples/gpu-dialect/pair.mlir -o pair.cubin --manifest pair.json`, its
#      manifest checked; then the pair apart vs fused on the same random inputs,
#      bit for bit: examples/gpu-dialect/run.sh (from a copy of
#      examples/gpu-dialect, BIN = the installed tools) when Triton's ptxas
#      reads nvcc's PTX (pair.nvcc.ptx, the nvcc baseline run.sh assembles and
#      probes), else benchmarks/wheel/gpu_dialect_pair.py: run.sh's MLIR part
#      without the nvcc baseline (said so in the result), which also runs the
#      user's pair.cubin itself.
#   b  strategy=auto measure= on held-out pair sub-wave-1 (committed PTX;
#      benchmarks/heldout/specs.py's run spec): in process
#      (gpuopt Module.fuse(measure=...)), with gpu-opt --hfuse="... measure=...",
#      and gpu-opt again applying the cached decision
#      (benchmarks/wheel/heldout_measure.py).
#   c  gpuopt-trace -p block_sched --benchmark on benchmarks/wheel/
#      compiled_program.py (torch.compile: pointwise ops and reductions); the
#      trace has > 0 kernels, probed, and launches; its outputs equal an
#      untraced run's bit for bit.
#   d  gpuopt.triton.fuse(add, softmax, measure=True), and forced interleave,
#      every output bit-identical to the kernels apart
#      (benchmarks/wheel/triton_fuse_check.py).
# OUT_DIR/summary.md has the results as a table and each step's details, in
# the form of docs/results/*.md; OUT_DIR/results.tsv one line per step.
#
# Large files (the install, Triton and Inductor caches, traces' records,
# kernels' buffers) go to the work folder, not OUT_DIR; its path is printed.
# $PYTHON names the Python (default python3); the wheel is installed for it.
set -uo pipefail

usage() { sed -n '2,/^set -uo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'; }

DRY=0 SITE="" STEPS="a b c d" BUDGET=480 PTXAS_ENV=0
while [ $# -gt 0 ]; do
  case $1 in
    --dry-run) DRY=1; shift ;;
    --site) SITE=${2:?--site needs a folder}; shift 2 ;;
    --steps) STEPS=${2:?--steps needs a list}; STEPS=${STEPS//,/ }; shift 2 ;;
    --budget) BUDGET=${2:?--budget needs seconds}; shift 2 ;;
    --ptxas-env) PTXAS_ENV=1; shift ;;
    -h | --help) usage; exit 0 ;;
    --) shift; break ;;
    -*) echo "check-gpu-machine.sh: unknown option $1" >&2; usage >&2; exit 2 ;;
    *) break ;;
  esac
done
if [ $# -ne 2 ]; then
  usage >&2
  exit 2
fi
abspath() { case $1 in /*) echo "$1" ;; *) echo "$PWD/$1" ;; esac; }
WHEEL=$(abspath "$1")
OUT=$(abspath "$2")
[ -z "$SITE" ] || SITE=$(abspath "$SITE")
for s in $STEPS; do
  case $s in a | b | c | d) ;; *) echo "check-gpu-machine.sh: unknown step '$s' (a, b, c, d)" >&2; exit 2 ;; esac
done
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$ROOT" || exit 2
HERE=benchmarks/wheel
PY=${PYTHON:-python3}
T_START=$(date +%s)
FAILED=0 TRITON_PTXAS=""

if [ "$DRY" = 1 ]; then
  WORK=\$WORK
  [ -n "$SITE" ] || SITE=\$WORK/site
  echo "dry run: nothing is installed, run or written; \$WORK is a new temporary folder"
else
  if [ ! -f "$WHEEL" ]; then
    echo "check-gpu-machine.sh: no wheel $WHEEL" >&2
    exit 2
  fi
  if [ -n "$SITE" ] && [ -e "$SITE" ] && [ -n "$(ls -A "$SITE" 2>/dev/null)" ]; then
    echo "check-gpu-machine.sh: --site $SITE is not empty (the install must be fresh)" >&2
    exit 2
  fi
  mkdir -p "$OUT"
  WORK=$(mktemp -d "${TMPDIR:-/tmp}/gpuopt-wheel-check.XXXXXX")
  [ -n "$SITE" ] || SITE=$WORK/site
  : >"$OUT/results.tsv"
  exec > >(tee "$OUT/check.log") 2>&1
fi

# ---------------------------------------------------------------------------
# Running commands
# ---------------------------------------------------------------------------

# Seconds left of the budget.
remaining() { echo $((BUDGET - ($(date +%s) - T_START))); }

# x LOG LIMIT CMD...: logs the command and runs it with a time limit, its
# output appended to LOG (and shown too when SHOW=1). In a dry run: prints it.
x() {
  local log=$1 limit=$2 q rc=0
  shift 2
  q=$(printf '%q ' "$@")
  if [ "$DRY" = 1 ]; then
    echo "  \$ ${q% }"
    return 0
  fi
  local left
  left=$(remaining)
  [ "$limit" -le "$left" ] || limit=$((left > 5 ? left : 5))
  echo "\$ ${q% }" >>"$log"
  if [ "${SHOW:-0}" = 1 ]; then
    timeout -k 10 "$limit" "$@" 2>&1 | tee -a "$log"
    rc=${PIPESTATUS[0]}
  else
    timeout -k 10 "$limit" "$@" >>"$log" 2>&1
    rc=$?
  fi
  if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
    echo "(timed out after $limit s)" >>"$log"
    TIMED_OUT=1
  fi
  return "$rc"
}

# The reason a helper gave: its last "RESULT: PASS|FAIL reason" line in LOG.
helper_reason() {
  local line
  line=$(grep -E '^RESULT: (PASS|FAIL) ' "$1" 2>/dev/null | tail -n 1)
  echo "${line#RESULT: * }"
}

STEP="" STEP_T0=0 STEP_DIR="" LOG="" TIMED_OUT=0
# begin STEP DIR TITLE: a fresh step folder.
begin() {
  STEP=$1 STEP_DIR=$OUT/$2 STEP_T0=$(date +%s) TIMED_OUT=0
  LOG=$STEP_DIR/log.txt
  echo
  echo "== [$STEP] $3"
  if [ "$DRY" = 0 ]; then
    rm -rf "$STEP_DIR"
    mkdir -p "$STEP_DIR"
    : >"$LOG"
  fi
}

# result STATUS REASON: the step's verdict.
result() {
  local status=$1 reason=$2 secs
  secs=$(($(date +%s) - STEP_T0))
  if [ "$DRY" = 1 ]; then
    echo "[$STEP] (dry run)"
    return 0
  fi
  [ "$TIMED_OUT" = 0 ] || reason="timed out; $reason"
  reason=${reason//$'\t'/ }
  reason=${reason//$'\n'/ }
  echo "[$STEP] $status: $reason"
  printf '%s\t%s\t%s\t%s\n' "$STEP" "$status" "$secs" "$reason" >>"$OUT/results.tsv"
  [ "$status" = PASS ] || FAILED=$((FAILED + 1))
}

# out_of_time: true (and the step failed) when the budget is spent.
out_of_time() {
  [ "$DRY" = 0 ] || return 1
  if [ "$(remaining)" -lt 20 ]; then
    result FAIL "not run: the --budget of $BUDGET s is spent"
    return 0
  fi
  return 1
}

# ---------------------------------------------------------------------------
# 0. install and environment
# ---------------------------------------------------------------------------

# PATH or LD_LIBRARY_PATH without the CUDA toolkit's folders.
without_cuda() {
  local IFS=: p
  local -a keep=()
  for p in $1; do
    case $p in
      /usr/local/cuda* | */cuda/bin | */cuda/lib64 | */cuda-[0-9]*) ;;
      "") ;;
      *) keep+=("$p") ;;
    esac
  done
  echo "${keep[*]}"
}

hide_toolkit() {
  PATH=$(without_cuda "$PATH")
  LD_LIBRARY_PATH=$(without_cuda "${LD_LIBRARY_PATH:-}")
  unset CUDA_HOME CUDA_PATH CUDA_ROOT CUDA_TOOLKIT_ROOT_DIR CUDACXX NVCC_PREPEND_FLAGS
  # gpuopt's tools from the install only, its caches fresh.
  unset GPUOPT_BIN_DIR GPUOPT_TRITON_FUSE_TOOL GPUOPT_TRITON_FUSE_CACHE TRITON_PTXAS_PATH PTXAS
  export PATH="$SITE/bin:$PATH" PYTHONPATH=$SITE LD_LIBRARY_PATH
  [ -n "$LD_LIBRARY_PATH" ] || unset LD_LIBRARY_PATH
  export XDG_CACHE_HOME=$WORK/cache TRITON_CACHE_DIR=$WORK/triton-cache
  export TORCHINDUCTOR_CACHE_DIR=$WORK/inductor-cache
  export GPUOPT_CHECK_SITE=$SITE
}

step0() {
  begin 0 0-setup "install, environment, libraries, tools"
  local problems=() reason rc
  echo "GPU:"
  SHOW=1 x "$LOG" 60 nvidia-smi -L || problems+=("nvidia-smi -L failed")
  SHOW=1 x "$LOG" 30 sha256sum "$WHEEL"
  SHOW=1 x "$LOG" 60 "$PY" -c 'import sys; print("python", sys.version.split()[0])'
  x "$LOG" 120 "$PY" -m pip install --no-deps --no-index --disable-pip-version-check \
    --target "$SITE" "$WHEEL" || problems+=("pip install failed (see $LOG)")
  echo "installed into $SITE; work folder $WORK"
  if [ "$DRY" = 1 ]; then
    echo "  (toolkit hidden: /usr/local/cuda* out of PATH and LD_LIBRARY_PATH;" \
      "CUDA_HOME CUDA_PATH CUDA_ROOT ... PTXAS unset; PATH=$SITE/bin:...; PYTHONPATH=$SITE)"
    [ "$PTXAS_ENV" = 0 ] || echo "  \$ export PTXAS=\$($PY $HERE/wheelcheck.py triton-ptxas)"
  fi
  hide_toolkit
  if [ "$DRY" = 0 ]; then
    # Triton's bundled ptxas: what the tools should find by themselves, and
    # what run.sh is given (it would take /usr/local/cuda/bin/ptxas otherwise).
    TRITON_PTXAS=$("$PY" "$HERE/wheelcheck.py" triton-ptxas 2>>"$LOG")
    [ -n "$TRITON_PTXAS" ] || problems+=("Triton's bundled ptxas not found")
    if [ "$PTXAS_ENV" = 1 ] && [ -n "$TRITON_PTXAS" ]; then
      # Any lookup of ptxas on PATH finds Triton's too (a toolkit's ptxas may
      # be linked from a folder such as /usr/local/bin, which stays on PATH).
      mkdir -p "$WORK/ptxas-bin"
      ln -sf "$TRITON_PTXAS" "$WORK/ptxas-bin/ptxas"
      export PTXAS=$TRITON_PTXAS PATH="$WORK/ptxas-bin:$PATH"
    fi
    {
      echo "PATH=$PATH"
      echo "LD_LIBRARY_PATH=${LD_LIBRARY_PATH:-}"
      echo "PYTHONPATH=$PYTHONPATH"
      local unset_note="(unset: the tools find Triton's ptxas themselves)"
      echo "PTXAS=${PTXAS:-$unset_note}"
      echo "Triton's ptxas: ${TRITON_PTXAS:-none}"
    } | tee -a "$LOG"
  fi
  SHOW=1 x "$LOG" 120 "$PY" "$HERE/wheelcheck.py" env --site "$SITE" \
    --json "$STEP_DIR/env.json" || problems+=("environment: $(helper_reason "$LOG")")
  x "$LOG" 120 "$PY" "$HERE/wheelcheck.py" ldd "$SITE" --json "$STEP_DIR/ldd.json"
  rc=$?
  reason=$(helper_reason "$LOG")
  [ "$DRY" = 1 ] || echo "ldd: ${reason:-no result}"
  [ $rc = 0 ] || problems+=("ldd: ${reason:-no result (see $LOG)}")
  SHOW=1 x "$LOG" 60 gpu-opt --version || problems+=("gpu-opt --version failed")
  SHOW=1 x "$LOG" 60 gpu-translate --version || problems+=("gpu-translate --version failed")
  x "$LOG" 60 gpu-run --help || problems+=("gpu-run --help failed")
  x "$LOG" 60 gpuopt-trace --help || problems+=("gpuopt-trace --help failed")
  if [ "$DRY" = 0 ]; then
    {
      echo "- Installed: \`pip install --no-deps --no-index --target SITE $(basename "$WHEEL")\`;" \
        "$(grep -c . <(find "$SITE" -type f 2>/dev/null)) files," \
        "$(du -sh "$SITE" 2>/dev/null | cut -f1)."
      echo "- ldd of every ELF file under the install: $reason."
      echo "- \`gpu-opt --version\`: $(gpu-opt --version 2>&1 | grep -m1 -i -E 'version|gpu-opt' || true)"
      echo "- ELF files and the libraries they need: \`0-setup/ldd.json\`."
    } >"$STEP_DIR/details.md"
  fi
  if [ ${#problems[@]} = 0 ]; then
    result PASS "installed; toolkit hidden; gpuopt, _core, _runtime and the tools from the install; $reason"
  else
    local IFS=';'
    result FAIL "${problems[*]}"
  fi
}

# ---------------------------------------------------------------------------
# a. the gpu-dialect pair
# ---------------------------------------------------------------------------

stepa() {
  begin a a-gpu-dialect "gpu-opt --hfuse --probe=block_sched examples/gpu-dialect/pair.mlir; apart vs fused"
  out_of_time && return
  local problems=() reason="" via nvcc_isa ptxas_ok=0 cubin_note=""
  if ! x "$LOG" 120 gpu-opt --hfuse --probe=block_sched examples/gpu-dialect/pair.mlir \
    -o "$STEP_DIR/pair.cubin" --manifest "$STEP_DIR/pair.json"; then
    reason=$(grep -v -E '^(\$ |\(timed out)' "$LOG" | grep -m1 -i 'error' || tail -n 1 "$LOG")
    result FAIL "gpu-opt --hfuse --probe=block_sched pair.mlir failed: $reason"
    return
  fi
  x "$LOG" 60 "$PY" "$HERE/wheelcheck.py" manifest-check "$STEP_DIR/pair.json" "$STEP_DIR/pair.cubin" ||
    problems+=("$(helper_reason "$LOG")")
  nvcc_isa=$(sed -n 's/^\.version[[:space:]]*\([0-9.]*\).*/\1/p' examples/gpu-dialect/pair.nvcc.ptx | head -n 1)
  # run.sh assembles nvcc's PTX with $PTXAS: a bundled ptxas that reads it.
  local run_ptxas=""
  if [ "$DRY" = 0 ] && run_ptxas=$("$PY" "$HERE/wheelcheck.py" triton-ptxas --isa "$nvcc_isa" 2>>"$LOG"); then
    ptxas_ok=1
  fi
  if [ "$DRY" = 1 ]; then
    echo "  (if Triton's ptxas reads pair.nvcc.ptx's PTX ISA $nvcc_isa: run.sh from a copy; else:)"
  fi
  if [ "$ptxas_ok" = 1 ] || [ "$DRY" = 1 ]; then
    via="examples/gpu-dialect/run.sh"
    local tree=$WORK/a/tree bin=$WORK/a/bin ex=$WORK/a/example t
    if [ "$DRY" = 0 ]; then
      # A copy of the example, so that run.sh's PYTHONPATH=$PWD/python finds no
      # package there and the installed gpuopt runs; BIN: the installed tools.
      rm -rf "$WORK/a"
      mkdir -p "$tree/examples" "$bin"
      cp -r examples/gpu-dialect "$tree/examples/"
      for t in gpu-opt gpu-run gpu-translate; do
        ln -s "$(command -v $t)" "$bin/$t"
      done
    fi
    x "$LOG" 240 env BIN="$bin" PTXAS="${run_ptxas:-\$TRITON_PTXAS}" SEED="$((T_START % 1000000))" \
      bash "$tree/examples/gpu-dialect/run.sh" all "$ex" || problems+=("run.sh failed")
    if [ "$DRY" = 0 ]; then
      if cmp -s "$STEP_DIR/pair.cubin" "$ex/fused.probed.cubin"; then
        cubin_note="pair.cubin is byte-identical to run.sh's fused.probed.cubin (the same command), which run.sh ran"
      else
        cubin_note="pair.cubin differs from run.sh's fused.probed.cubin"
      fi
      mkdir -p "$STEP_DIR/example"
      find "$ex" -maxdepth 1 -type f \( -name '*.json' -o -name '*.txt' -o -name '*.log' \
        -o -name '*.ptx' -o -name '*.png' \) -exec cp {} "$STEP_DIR/example/" \;
    fi
    x "$LOG" 60 "$PY" "$HERE/wheelcheck.py" gpu-dialect-report "$LOG" "$STEP_DIR" \
      --cubin-note "$cubin_note"
  fi
  if [ "$ptxas_ok" = 0 ] || [ "$DRY" = 1 ]; then
    via="benchmarks/wheel/gpu_dialect_pair.py (run.sh without its nvcc baseline)"
    [ "$DRY" = 1 ] || echo "Triton's ptxas does not read PTX ISA $nvcc_isa (pair.nvcc.ptx): run.sh's nvcc baseline skipped" | tee -a "$LOG"
    x "$LOG" 240 "$PY" "$HERE/gpu_dialect_pair.py" --out "$STEP_DIR/run" \
      --cubin "$STEP_DIR/pair.cubin" --manifest "$STEP_DIR/pair.json" --seed "$((T_START % 1000000))"
    [ "$DRY" = 1 ] || cp "$STEP_DIR/run/details.md" "$STEP_DIR/details.md" 2>/dev/null
  fi
  [ "$DRY" = 0 ] || { result PASS ""; return; }
  reason=$(helper_reason "$LOG")
  grep -qE '^RESULT: PASS' <(grep -E '^RESULT: ' "$LOG" | tail -n 1) || problems+=("$reason")
  {
    echo
    echo "Command: \`gpu-opt --hfuse --probe=block_sched examples/gpu-dialect/pair.mlir -o pair.cubin --manifest pair.json\`; run and compared by $via."
    [ "$ptxas_ok" = 1 ] || echo "The nvcc baseline (run.sh step 3: nvcc's PTX, \`.version $nvcc_isa\`, fused and probed with ptxas) is skipped: Triton's bundled ptxas does not read that PTX ISA."
  } >>"$STEP_DIR/details.md"
  if [ ${#problems[@]} = 0 ]; then
    [ "$ptxas_ok" = 1 ] || reason="$reason; nvcc baseline skipped (Triton's ptxas does not read PTX ISA $nvcc_isa)"
    result PASS "$reason"
  else
    local IFS=';'
    result FAIL "${problems[*]}"
  fi
}

# ---------------------------------------------------------------------------
# b, c, d
# ---------------------------------------------------------------------------

# helper_step LIMIT CMD...: a step whose verdict is one helper's RESULT line.
helper_step() {
  local limit=$1
  shift
  x "$LOG" "$limit" "$@"
  local rc=$? reason
  [ "$DRY" = 0 ] || { result PASS ""; return; }
  reason=$(helper_reason "$LOG")
  if [ $rc = 0 ] && [ -n "$reason" ]; then
    result PASS "$reason"
  else
    result FAIL "${reason:-exit status $rc, no result (see $LOG)}"
  fi
}

stepb() {
  begin b b-heldout-measure "strategy=auto measure= on held-out pair sub-wave-1"
  out_of_time && return
  helper_step 150 "$PY" "$HERE/heldout_measure.py" --out "$STEP_DIR" --pair sub-wave-1
}

stepc() {
  begin c c-trace "gpuopt-trace -p block_sched on a torch.compile program"
  out_of_time && return
  local traces=$WORK/c/traces problems=() rc
  [ "$DRY" = 1 ] || mkdir -p "$traces"
  x "$LOG" 240 gpuopt-trace -p block_sched --benchmark --tracedir "$traces" \
    "$PY" "$HERE/compiled_program.py" "$STEP_DIR/traced.json"
  rc=$?
  [ $rc = 0 ] || problems+=("gpuopt-trace exited $rc")
  # The same program untraced, for the outputs' bit identity (a fresh
  # Inductor cache, so it compiles as the traced run did).
  if [ "$DRY" = 1 ] || [ "$(remaining)" -gt 60 ]; then
    x "$LOG" 150 env TORCHINDUCTOR_CACHE_DIR="$WORK/c/inductor-plain" \
      "$PY" "$HERE/compiled_program.py" "$STEP_DIR/plain.json" ||
      problems+=("the untraced run failed")
  fi
  x "$LOG" 60 "$PY" "$HERE/wheelcheck.py" trace-check "$traces" --copy-to "$STEP_DIR/trace" \
    --outputs "$STEP_DIR/traced.json" "$STEP_DIR/plain.json" --details "$STEP_DIR/details.md"
  [ "$DRY" = 0 ] || { result PASS ""; return; }
  local reason
  reason=$(helper_reason "$LOG")
  grep -qE '^RESULT: PASS' <(grep -E '^RESULT: ' "$LOG" | tail -n 1) || problems+=("${reason:-no trace check}")
  grep -E '^gpuopt-trace: ' "$LOG" | head -n 3
  if [ ${#problems[@]} = 0 ]; then
    result PASS "$reason"
  else
    local IFS=';'
    result FAIL "${problems[*]}"
  fi
}

stepd() {
  begin d d-triton-fuse "gpuopt.triton.fuse(add, softmax, measure=True)"
  out_of_time && return
  helper_step 180 "$PY" "$HERE/triton_fuse_check.py" --out "$STEP_DIR"
}

# ---------------------------------------------------------------------------

echo "check-gpu-machine.sh: wheel $WHEEL, results in $OUT, budget $BUDGET s"
step0
for s in $STEPS; do
  "step$s"
done

echo
if [ "$DRY" = 1 ]; then
  echo "  \$ $PY $HERE/wheelcheck.py summary $OUT --wheel $WHEEL"
  echo "dry run done"
  exit 0
fi
CMD="bash benchmarks/wheel/check-gpu-machine.sh $(basename "$WHEEL") OUT_DIR"
if ! "$PY" "$HERE/wheelcheck.py" summary "$OUT" --wheel "$WHEEL" --command "$CMD" \
  >"$OUT/summary.log" 2>&1; then
  # Without Python's summary, the results as they are.
  {
    echo "# gpuopt wheel check (the summary helper failed: see summary.log)"
    echo
    echo "| step | result | time (s) | reason |"
    echo "| --- | --- | ---: | --- |"
    awk -F'\t' '{ printf "| %s | %s | %s | %s |\n", $1, $2, $3, $4 }' "$OUT/results.tsv"
  } >"$OUT/summary.md"
fi
echo "== results ($(($(date +%s) - T_START)) s; summary: $OUT/summary.md; work folder: $WORK)"
awk -F'\t' '{ printf "  [%s] %s (%s s): %s\n", $1, $2, $3, $4 }' "$OUT/results.tsv"
[ "$FAILED" = 0 ]
