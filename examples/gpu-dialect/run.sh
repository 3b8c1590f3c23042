#!/usr/bin/env bash
# Two kernels as an ML compiler hands them over (examples/gpu-dialect/
# pair.mlir: a gpu.module with a compute-bound logistic map and a
# memory-bound workgroup-memory block sum, and host code that launches them)
# taken through gpu-opt in one process: NVVM and LLVM's NVPTX backend to PTX,
# the ptx dialect, horizontal fusion (strategy=auto: the fusion model chooses
# how), a block scheduling probe, PTX and cubin out.
#
# compile (no GPU; gpu-opt and ptxas), everything into OUT_DIR:
#   1. the two kernels apart, as PTX (gpu-opt --gpu-to-ptx);
#   2. fused and probed (gpu-opt --hfuse --probe=block_sched pair.mlir), to
#      PTX and to a cubin, and fused alone for timing; the fused kernel's
#      launch manifest and ptxas's register and shared memory report;
#      and pair.mlir's host code launching the fused kernel instead of the
#      two (gpu-opt --ptx-to-gpu-binary);
#   3. the same pair from nvcc (pair.nvcc.ptx, built from pair.cu) fused the
#      same way (strategy, thread split or ratio, blocks and grids read from
#      the first fusion's manifest);
#   and pair.mlir's host function @forward built into two executables, as an
#   ML compiler builds its host code: host/apart (the kernels apart, gpu-opt
#   --gpu-to-ptx --ptx-to-gpu-binary) and host/fused (host.mlir), each
#   lowered by upstream's pipeline (mlir-opt-22, mlir-translate-22, llc-22)
#   and linked (cc) with host/main.c, a caller with device buffers of its
#   own, and host/mgpu.c, MLIR's CUDA runtime wrappers over the driver;
#   skipped when those tools are missing.
# run (a GPU; gpu-run and python3 with numpy, no LLVM or MLIR), from OUT_DIR:
#   4. every kernel on the same fresh random inputs in one gpu-run process:
#      the MLIR kernels apart, nvcc's apart, and each fused kernel, probed or
#      not; every output compared byte for byte with the MLIR kernels' apart,
#      and the MLIR kernels' against numpy;
#   5. the block_sched records of the fused kernel analysed (per-SM
#      scheduling gaps against block running time);
#   6. registers and CUDA-event times (warm-up, medians) side by side;
#   7. host/apart and host/fused on the same inputs (only libc and the CUDA
#      driver needed): their outputs compared byte for byte, and with numpy.
#
# usage: examples/gpu-dialect/run.sh [compile|run|forward|all] [OUT_DIR]
#   all (the default) compiles, then runs when `nvidia-smi -L` lists a GPU;
#   forward runs step 7 alone.
#   OUT_DIR defaults to build/gpu-dialect-example. `compile` on one machine
#   and `run` on another (with OUT_DIR and gpu-run copied there) split the
#   work between a machine with the compiler and one with the GPU.
# $BIN names the folder with gpu-opt and gpu-run (default build/bin), $PTXAS
# the ptxas (default: PATH, then /usr/local/cuda/bin), $MLIR_OPT,
# $MLIR_TRANSLATE, $LLC and $CC the host code's tools (default: the -22
# names on PATH, then /usr/lib/llvm-22/bin; cc); $HFUSE_OPTS fusion
# options that override the model's choice (e.g. strategy=interleave;
# default none: strategy=auto); $SEED the inputs' random seed (default: from
# the clock, printed).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
STEP=all
case "${1:-}" in
  compile | run | forward | all) STEP=$1; shift ;;
esac
BIN=${BIN:-build/bin}
OUT=${1:-build/gpu-dialect-example}
SRC=examples/gpu-dialect
CHIP=sm_90a
mkdir -p "$OUT"

# Both kernels use 256-thread blocks and 528 blocks (pair.mlir's
# known_block_size and known_grid_size); logistic runs over 135000 floats.
GRID=528
N=135000
M=$((GRID * 256))
# logistic's r, in gpu-run's runs and in host/main.c.
R=3.7

# A compute-bound and a memory-bound kernel: strategy=auto's model
# (docs/fusion.md, "Choosing") fuses them by a thread split; the blocks and
# grids come from pair.mlir. $HFUSE_OPTS, when set, names the fusion instead.
HFUSE_OPTS=${HFUSE_OPTS:-}
# min-gain=0.10 accepts the model's estimate, which without a measurement
# only ranks.
HFUSE=(--hfuse=min-gain=0.10)
[ -z "$HFUSE_OPTS" ] || HFUSE=(--hfuse="$HFUSE_OPTS")

find_ptxas() {
  local c
  for c in "${PTXAS:-}" "$(command -v ptxas || true)" /usr/local/cuda/bin/ptxas; do
    if [ -n "$c" ] && [ -x "$c" ]; then
      echo "$c"
      return 0
    fi
  done
  echo "run.sh: no ptxas (set PTXAS)" >&2
  return 1
}

# A summary of a launch manifest's fused kernel (python3, standard library).
print_manifest() {
  python3 - "$1" <<'PY'
import json, sys
man = json.load(open(sys.argv[1]))
for k in man["kernels"]:
    launch = k.get("launch", {})
    print(f"  kernel {k['name']} ({man['module']['format']}, {man['module'].get('target')}): "
          f"grid {launch.get('grid')}, block {launch.get('block')}, "
          f"dynamic smem {launch.get('dynamic_smem')}, {len(k['params'])} parameters")
    if k.get("fused_from"):
        print(f"  fusion_strategy {k['fusion_strategy']}")
    for p in k.get("fused_from", []):
        am = p["arg_map"]
        print(f"    fused_from {p['kernel']}: grid {p['grid']}, block {p['block']}, "
              f"ratio {p.get('ratio', 1)}, threads {p['threads']}, "
              f"arguments -> parameters {am[0]}..{am[-1]}")
    for pr in k.get("probes", []):
        print(f"    probe {pr['name']} ({pr.get('probe')}): parameter {pr['param']}, "
              f"{pr['level']} records of {pr['record_bytes']} bytes, capacity "
              f"{pr['capacity']}, fields {', '.join(f['name'] for f in pr['fields'])}")
PY
}

compile() {
  local ptxas
  ptxas=$(find_ptxas)
  echo "== 1. the kernels apart: gpu-opt --gpu-to-ptx=\"chip=$CHIP\" -> $OUT/pair.ptx"
  "$BIN/gpu-opt" --gpu-to-ptx="chip=$CHIP" $SRC/pair.mlir -o "$OUT/pair.ptx" \
    --manifest "$OUT/pair.json"
  grep -E '^\.(visible|entry)|^\.(reqntid|maxntid)|^\.target' "$OUT/pair.ptx"

  echo "== 2. fused and probed: gpu-opt ${HFUSE[*]} --probe=block_sched $SRC/pair.mlir -o $OUT/fused.probed.cubin"
  "$BIN/gpu-opt" "${HFUSE[@]}" --probe=block_sched $SRC/pair.mlir \
    -o "$OUT/fused.probed.cubin" --manifest "$OUT/fused.probed.cubin.json"
  "$BIN/gpu-opt" "${HFUSE[@]}" --probe=block_sched $SRC/pair.mlir \
    -o "$OUT/fused.probed.ptx" --manifest "$OUT/fused.probed.json"
  "$BIN/gpu-opt" "${HFUSE[@]}" $SRC/pair.mlir \
    -o "$OUT/fused.ptx" --manifest "$OUT/fused.json"
  echo "launch manifest $OUT/fused.probed.json:"
  print_manifest "$OUT/fused.probed.json"
  # The host code of pair.mlir given back the fused kernel (not probed: the
  # host code would not pass the probe buffer), as the ML compiler lowers it.
  "$BIN/gpu-opt" "${HFUSE[@]}" --ptx-to-gpu-binary $SRC/pair.mlir \
    -o "$OUT/host.mlir"
  echo "host code $OUT/host.mlir launches:"
  grep -o 'gpu.launch_func .*threads in ([^)]*)' "$OUT/host.mlir" | sed 's/^/  /'

  # nvcc's build of the same pair, fused by the same plan: strategy, thread
  # split (threads=) or ratio, blocks and grids.
  local nvcc_opts
  nvcc_opts=$(python3 - "$OUT/fused.json" <<'PY'
import json, sys
k = json.load(open(sys.argv[1]))["kernels"][0]
parts = k["fused_from"]
opts = [f"strategy={k['fusion_strategy']}"]
if k["fusion_strategy"] == "thread":
    opts.append("threads=" + ",".join(str(p["threads"][1] - p["threads"][0]) for p in parts))
else:
    opts.append("ratio=" + ",".join(str(p.get("ratio", 1)) for p in parts))
def shape(dims):  # [256, 1, 1] -> 256, [16, 16, 1] -> 16x16
    dims = list(dims)
    while len(dims) > 1 and dims[-1] == 1:
        dims.pop()
    return "x".join(map(str, dims))
opts.append("blocks=" + ",".join(shape(p["block"]) for p in parts))
opts.append("grids=" + ",".join(shape(p["grid"]) for p in parts))
print(" ".join(opts))
PY
  )
  echo "== 3. nvcc's PTX of pair.cu: gpu-opt --hfuse=\"$nvcc_opts\""
  cp $SRC/pair.nvcc.ptx "$OUT/nvcc.ptx"
  "$BIN/gpu-opt" "$OUT/nvcc.ptx" --hfuse="$nvcc_opts" \
    -o "$OUT/nvcc.fused.ptx" --manifest "$OUT/nvcc.fused.json"
  "$BIN/gpu-opt" "$OUT/nvcc.ptx" --hfuse="$nvcc_opts" --probe=block_sched \
    -o "$OUT/nvcc.fused.probed.ptx" --manifest "$OUT/nvcc.fused.probed.json"

  # ptxas -v of each module, in ptxas.log, and one line per entry:
  # "FILE ENTRY N registers, B bytes smem", in ptxas.txt.
  echo "== ptxas -arch=$CHIP -v ($ptxas)"
  # An older ptxas than nvcc's PTX (Triton's, CUDA 12.8: PTX ISA 8.7) is
  # given the .version it takes, as gpu-opt gives it when it assembles.
  local f isa input
  isa=$(PTXAS=$ptxas "$BIN/gpu-opt" --print-ptxas-isa 2>/dev/null || true)
  : >"$OUT/ptxas.log"
  for f in pair fused fused.probed nvcc nvcc.fused nvcc.fused.probed; do
    input=$OUT/$f.ptx
    if [ -n "$isa" ] && awk -v b="$isa" '/^\.version/ { split($2, x, "."); split(b, y, ".");
        exit !(x[1] > y[1] || (x[1] == y[1] && x[2] > y[2])) }' "$input"; then
      input=$OUT/$f.ptxas-$isa.ptx
      sed "s/^\.version .*/.version $isa/" "$OUT/$f.ptx" >"$input"
    fi
    { "$ptxas" -arch=$CHIP -v "$input" -o /dev/null 2>&1 >/dev/null; } |
      tee -a "$OUT/ptxas.log" |
      awk -v file="$f.ptx" '
        /Compiling entry function/ { entry = $7; gsub(/\047/, "", entry) }
        /Used [0-9]+ registers/ && entry != "" {
          smem = "0 bytes smem"
          if (match($0, /[0-9]+ bytes smem/)) smem = substr($0, RSTART, RLENGTH)
          printf "  %-22s %-26s %s registers, %s\n", file, entry, $5, smem
          entry = "" }'
  done | tee "$OUT/ptxas.txt"
  echo "compiled into $OUT: fused.probed.cubin ($(wc -c <"$OUT/fused.probed.cubin") bytes)," \
    "fused.probed.ptx, fused.ptx, nvcc.fused.ptx, nvcc.fused.probed.ptx"
  compile_host
}

# The first of its arguments that names a command (on PATH or a path).
first_command() {
  local c
  for c in "$@"; do
    if [ -n "$c" ] && command -v "$c" >/dev/null; then
      command -v "$c"
      return 0
    fi
  done
  return 1
}

# pair.mlir's @forward as two executables in $OUT/host, apart (both kernels
# in one gpu.binary, two launches) and fused (host.mlir: the fused kernel,
# one launch). No gpu.module is left in either, so upstream's pipeline
# lowers only host code; the kernels stay PTX, which the driver compiles
# when the module loads (mgpuModuleLoadJIT).
compile_host() {
  local h=$OUT/host mlir_opt mlir_translate llc cc f
  local -a missing=()
  mlir_opt=$(first_command "${MLIR_OPT:-}" mlir-opt-22 /usr/lib/llvm-22/bin/mlir-opt) ||
    missing+=(mlir-opt-22)
  mlir_translate=$(first_command "${MLIR_TRANSLATE:-}" mlir-translate-22 \
    /usr/lib/llvm-22/bin/mlir-translate) || missing+=(mlir-translate-22)
  llc=$(first_command "${LLC:-}" llc-22 /usr/lib/llvm-22/bin/llc) || missing+=(llc-22)
  cc=$(first_command "${CC:-}" cc) || missing+=(cc)
  rm -rf "$h"
  if [ ${#missing[@]} != 0 ]; then
    echo "== host executables: skipped: no ${missing[*]}" \
      "(\$MLIR_OPT, \$MLIR_TRANSLATE, \$LLC, \$CC name them)"
    return 0
  fi
  echo "== host executables: pair.mlir's @forward with $SRC/host/main.c and mgpu.c" \
    "($mlir_opt --gpu-lower-to-nvvm-pipeline, $mlir_translate, $llc, $cc)"
  mkdir -p "$h"
  "$BIN/gpu-opt" --gpu-to-ptx="chip=$CHIP" --ptx-to-gpu-binary $SRC/pair.mlir \
    -o "$h/apart.mlir"
  cp "$OUT/host.mlir" "$h/fused.mlir"
  "$cc" -O2 -c $SRC/host/main.c -o "$h/main.o"
  "$cc" -O2 -c $SRC/host/mgpu.c -o "$h/mgpu.o"
  for f in apart fused; do
    "$mlir_opt" "$h/$f.mlir" --gpu-lower-to-nvvm-pipeline -o "$h/$f.llvm.mlir"
    "$mlir_translate" --mlir-to-llvmir "$h/$f.llvm.mlir" -o "$h/$f.ll"
    "$llc" -O2 -filetype=obj -relocation-model=pic "$h/$f.ll" -o "$h/$f.o"
    # -ldl for a C library older than glibc 2.34, where dlopen is not in libc.
    "$cc" "$h/$f.o" "$h/main.o" "$h/mgpu.o" -ldl -o "$h/$f"
    echo "  $h/$f: @forward launches" \
      "$(grep -o 'gpu.launch_func *@[^ ]*' "$h/$f.mlir" | sed 's/gpu.launch_func *//' |
        paste -sd ',' | sed 's/,/, /g')"
  done
}

# "--arg A --arg B" as the JSON list ["A", "B"] (as examples/hfuse/run.sh).
args_json() {
  local sep="" a
  printf '['
  for a in "$@"; do
    printf '%s"%s"' "$sep" "$a"
    sep=", "
  done
  printf ']'
}

# The MLIR kernels' outputs against numpy (fusion is checked exactly by cmp):
# X0 X IN SUMS, x before and after logistic, blocksum's inputs and outputs.
# logistic: numpy's float32 multiplies and subtracts round to nearest even
# as mul.rn.f32 and sub.rn.f32 do, so the same steps in the same order give
# the same bits. blocksum: each block's sum of the inputs, within float32
# rounding of the float64 sum.
check_numpy() {
  python3 - "$R" "$@" <<'PY'
import sys, numpy as np
r = np.float32(sys.argv[1])
x0, x, inputs, sums = (np.fromfile(f, dtype=np.float32) for f in sys.argv[2:6])
v = x0
for _ in range(64):
    v = (r * v) * (np.float32(1) - v)
ok = v.dtype == np.float32 and np.array_equal(x.view(np.uint32), v.view(np.uint32))
print(f"  logistic against numpy: {x.size} floats, " +
      ("bit-identical" if ok else "NOT bit-identical" + (
          f": max abs diff {np.abs(x - v).max():.2e}, "
          f"{np.count_nonzero(x.view(np.uint32) != v.view(np.uint32))} differ"
          if x.size == v.size else f", {v.size} expected")))
ref = inputs.reshape(-1, 256).astype(np.float64).sum(1)
err = np.abs(sums - ref).max() if sums.size == ref.size else np.inf
print(f"  blocksum against numpy: max abs error {err:.2e} over {sums.size} sums")
sys.exit(0 if ok and err < 1e-4 else 1)
PY
}

run() {
  [ -f "$OUT/fused.probed.json" ] || {
    echo "run.sh: $OUT/fused.probed.json missing: run the compile step first" >&2
    exit 2
  }
  export PYTHONPATH=$PWD/python${PYTHONPATH:+:$PYTHONPATH}
  local seed=${SEED:-$(($(date +%s) % 1000000))}
  echo "== 4. one gpu-run process, inputs of seed $seed"
  # The inputs: x uniform in [0.01, 0.99), in uniform in [-1, 1), r a
  # scalar; sums 0xFF bytes before the run. logistic overwrites x.
  local r=scalar:f32:$R
  local x=buf:f32:$N:random:$seed:0.01:0.99
  local in=buf:f32:$M:random:$((seed + 1)) sums=buf:f32:$GRID:out
  # A memref<?xf32> argument is 5 parameters: allocated pointer, aligned
  # pointer, offset, size, stride. The kernels read only the aligned one.
  memref() { echo null "$1" scalar:s64:0 scalar:s64:"$2" scalar:s64:1; }
  local -a mlir_logistic mlir_blocksum nvcc_logistic nvcc_blocksum
  read -ra mlir_logistic <<<"$r $(memref "$x" $N) scalar:s64:$N"
  read -ra mlir_blocksum <<<"$(memref "$in" $M) $(memref "$sums" $GRID)"
  nvcc_logistic=("$r" "$x" "scalar:s64:$N")
  nvcc_blocksum=("$in" "$sums")
  # The outputs: x (argument 2 of the MLIR logistic, 1 of nvcc's) and sums
  # (argument 6 of the MLIR blocksum, 1 of nvcc's). A fused kernel takes its
  # parts' arguments one after the other (checked below against its
  # manifest's arg_map), so sums is argument 7 + 6 or 3 + 1 there.
  python3 - "$OUT" <<'PY'
import json, sys
for name, counts in (("fused", (7, 10)), ("fused.probed", (7, 10)),
                     ("fused.probed.cubin", (7, 10)), ("nvcc.fused", (3, 2)),
                     ("nvcc.fused.probed", (3, 2))):
    k = json.load(open(f"{sys.argv[1]}/{name}.json"))["kernels"][0]
    maps = [p["arg_map"] for p in k["fused_from"]]
    want = [list(range(counts[0])), list(range(counts[0], sum(counts)))]
    if [p["kernel"] for p in k["fused_from"]] != ["logistic", "blocksum"] or maps != want:
        sys.exit(f"run.sh: {name}.json: expected logistic's then blocksum's arguments "
                 f"in order, got {[(p['kernel'], p['arg_map']) for p in k['fused_from']]}")
PY
  local o=$OUT/outputs
  rm -rf "$o" "$OUT/trace"
  mkdir -p "$o"
  # A run spec entry (gpu-run --help): LABEL MODULE MANIFEST|"" KERNEL|"" OUTS
  # ARGS..., timed only in the groups below, which interleave round by round
  # each kernel alone, the two back to back and released together, and the
  # fused kernels. Every entry's checked launch starts from fresh buffers;
  # the first, logistic with n = 0 (every thread returns early), only writes
  # out x as the kernels read it, for the numpy check.
  kernel() {
    local label=$1 module=$2 manifest=$3 name=$4 outs=$5
    shift 5
    printf '  {"label": "%s", "module": "%s", "time_alone": false' "$label" "$module"
    [ -z "$manifest" ] || printf ', "manifest": "%s"' "$manifest"
    [ -z "$name" ] || printf ', "kernel": "%s", "grid": [%d], "block": [256], "smem": 0' \
      "$name" $GRID
    [ "$label" != mlir.fused.probed ] || printf ', "trace": "%s"' "$OUT/trace"
    printf ', "out": {%s},\n   "args": %s}' "$outs" "$(args_json "$@")"
  }
  local s=$OUT/spec.json f
  {
    printf '{"warmup": 20, "repeat": 200,\n "kernels": [\n'
    kernel x "$OUT/pair.ptx" "" logistic "\"2\": \"$o/x\"" \
      "${mlir_logistic[@]:0:6}" scalar:s64:0
    printf ',\n'
    kernel mlir.logistic "$OUT/pair.ptx" "" logistic "\"2\": \"$o/mlir.x\"" \
      "${mlir_logistic[@]}"
    printf ',\n'
    kernel mlir.blocksum "$OUT/pair.ptx" "" blocksum \
      "\"1\": \"$o/in\", \"6\": \"$o/mlir.sums\"" "${mlir_blocksum[@]}"
    printf ',\n'
    kernel nvcc.logistic "$OUT/nvcc.ptx" "" logistic "\"1\": \"$o/nvcc.x\"" \
      "${nvcc_logistic[@]}"
    printf ',\n'
    kernel nvcc.blocksum "$OUT/nvcc.ptx" "" blocksum "\"1\": \"$o/nvcc.sums\"" \
      "${nvcc_blocksum[@]}"
    for f in fused.ptx fused.probed.ptx fused.probed.cubin; do
      printf ',\n'
      kernel "mlir.${f%.ptx}" "$OUT/$f" "$OUT/${f%.ptx}.json" "" \
        "\"2\": \"$o/mlir.${f%.ptx}.x\", \"13\": \"$o/mlir.${f%.ptx}.sums\"" \
        "${mlir_logistic[@]}" "${mlir_blocksum[@]}"
    done
    for f in nvcc.fused nvcc.fused.probed; do
      printf ',\n'
      kernel "$f" "$OUT/$f.ptx" "$OUT/$f.json" "" \
        "\"1\": \"$o/$f.x\", \"4\": \"$o/$f.sums\"" \
        "${nvcc_logistic[@]}" "${nvcc_blocksum[@]}"
    done
    printf '],\n "groups": [\n'
    printf '  {"name": "%s", "kernels": ["%s.logistic", "%s.blocksum"],\n' mlir mlir mlir
    printf '   "modes": ["alone", "serial", "concurrent"],\n'
    printf '   "also": ["mlir.fused", "mlir.fused.probed", "mlir.fused.probed.cubin"]},\n'
    printf '  {"name": "%s", "kernels": ["%s.logistic", "%s.blocksum"],\n' nvcc nvcc nvcc
    printf '   "modes": ["alone", "serial", "concurrent"],\n'
    printf '   "also": ["nvcc.fused", "nvcc.fused.probed"]}]}\n'
  } >"$s"
  "$BIN/gpu-run" --spec "$s" --json "$OUT/time.json" >"$OUT/gpu-run.txt" || {
    cat "$OUT/gpu-run.txt"
    exit 1
  }
  grep -E '^ *probe ' "$OUT/gpu-run.txt" || true

  local ref bad=0
  for f in nvcc mlir.fused mlir.fused.probed mlir.fused.probed.cubin nvcc.fused nvcc.fused.probed; do
    for ref in x sums; do
      if ! cmp "$o/mlir.$ref" "$o/$f.$ref"; then
        echo "DIFFER: $f.$ref and mlir.$ref (the MLIR kernels apart)"
        bad=1
      fi
    done
  done
  [ $bad = 0 ] || exit 1
  echo "run.sh: every output (x: $N floats, sums: $GRID floats) bit-identical to the" \
    "MLIR kernels run apart: nvcc's apart, and fused (PTX, cubin; probed or not) from both"
  check_numpy "$o/x" "$o/mlir.x" "$o/in" "$o/mlir.sums"

  echo "== 5. block scheduling of the fused kernel (python3 -m gpuopt.block_sched)"
  local plot=()
  python3 -c "import matplotlib" 2>/dev/null && plot=(--plot "$OUT/timeline.png")
  python3 -m gpuopt.block_sched "$OUT/trace" "${plot[@]}" \
    --perfetto "$OUT/timeline.json" --json "$OUT/block_sched.json"

  echo "== 6. registers and times (median of 200 after 20 warm-up launches, CUDA events)"
  python3 - "$OUT/time.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
print(f"device: {r['device'].get('name')}")
kernels = {k["label"]: k for k in r["kernels"]}
ms = lambda t: t["median_ms"]
print(f"  {'':<32} {'registers':>9} {'smem':>6} {'median us':>10} {'/ serial':>9}")
def row(label, t, serial, k=None):
    regs, smem = (k["registers"], k["static_smem"]) if k else ("", "")
    print(f"  {label:<32} {regs:>9} {smem:>6} {1000 * ms(t):>10.2f} {ms(t) / serial:>9.2f}")
for g in r["groups"]:
    serial = ms(g["serial"])
    for label in g["kernels"]:
        row(label, g["alone"][label], serial, kernels[label])
    for mode in ("serial", "concurrent"):
        row(f"{g['name']}: both, {mode}", g[mode], serial)
    for label, t in g["also"].items():
        row(label, t, serial, kernels[label])
PY
  forward "$seed"
}

# Step 7: the executables of the compile step on the inputs of SEED.
forward() {
  local h=$OUT/host seed=$1 f
  echo "== 7. pair.mlir's @forward called by host/main.c, its kernels apart and fused," \
    "inputs of seed $seed"
  if [ ! -f "$h/apart" ] || [ ! -f "$h/fused" ]; then
    echo "run.sh: no $h/apart and $h/fused (the compile step builds them when" \
      "mlir-opt-22, mlir-translate-22, llc-22 and cc are there): skipping"
    return 0
  fi
  for f in apart fused; do
    rm -rf "$h/$f.out"
    mkdir -p "$h/$f.out"
    echo "  $h/$f:"
    MGPU_TRACE=1 "$h/$f" "$h/$f.out" "$seed" 2>&1 | sed 's/^/    /' || {
      echo "run.sh: $h/$f failed"
      exit 1
    }
  done
  local bad=0
  for f in x0 in x sums; do
    cmp "$h/apart.out/$f" "$h/fused.out/$f" || bad=1
  done
  [ $bad = 0 ] || {
    echo "DIFFER: the outputs of $h/apart and $h/fused"
    exit 1
  }
  echo "run.sh: @forward's outputs (x: $N floats, sums: $GRID floats) bit-identical" \
    "with its kernels apart and fused"
  check_numpy "$h/apart.out/x0" "$h/apart.out/x" "$h/apart.out/in" "$h/apart.out/sums"
}

case $STEP in
  compile) compile ;;
  run) run ;;
  forward) forward "${SEED:-$(($(date +%s) % 1000000))}" ;;
  all)
    compile
    if nvidia-smi -L 2>/dev/null | grep -q GPU; then
      run
    else
      echo "run.sh: no GPU (nvidia-smi -L lists none): skipping the runs;" \
        "copy $OUT and $BIN/gpu-run to a GPU machine and run: $0 run $OUT"
    fi
    ;;
esac
