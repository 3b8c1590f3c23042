#!/usr/bin/env bash
# The GPU steps of the probe results, for a machine with a GPU and the CUDA
# tools but no compiler build: run `probe_suite.py generate`,
# `extra_checks.sh generate build/bin build/probe-extra` and
# `gpu-opt examples/probe/zero_fill.ptx --probe=block_sched` on a machine that
# has gpu-opt, then bring build/bin, build/probes, build/probe-extra and
# build/probe-example along.
#
#   gpu-session.sh check LOG_DIR   every probed kernel against its original
#                                  (probe_suite.py check), memcheck on a
#                                  sample, the fused and overflow checks, the
#                                  zero-fill example
# CHECK_ONLY="a b" limits the suite check to kernels whose names contain a or
# b, CHECK_PROBES to some probes, CHECK_LIMIT its seconds; SKIP="memcheck
# extra ..." leaves steps out.
#   gpu-session.sh bench LOG_DIR   overhead tables: light probes, then the
#                                  heavier ones
#
# Each step's log and result files land in LOG_DIR; a failing step is
# reported and the next one still runs; the exit code says whether all passed.
set -uo pipefail
MODE=${1:?usage: gpu-session.sh check|bench LOG_DIR}
LOG=${2:?usage: gpu-session.sh check|bench LOG_DIR}
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
mkdir -p "$LOG"
export PYTHONUNBUFFERED=1
# The scripts import the gpuopt package (python/); offline, pip builds it with
# the setuptools at hand.
python3 -c 'import gpuopt' 2>/dev/null || python3 -m pip install -q ./python ||
  python3 -m pip install -q --no-build-isolation --no-deps ./python
SUITE=benchmarks/probes/probe_suite.py
status=0

step() { # step NAME SECONDS COMMAND...: run with a time limit, log to LOG/NAME.log
  local name=$1 limit=$2
  shift 2
  case " ${SKIP:-} " in *" $name "*) return ;; esac
  local t0=$SECONDS
  timeout "$limit" "$@" >"$LOG/$name.log" 2>&1
  local rc=$?
  echo "gpu-session: $name: exit $rc in $((SECONDS - t0)) s"
  tail -n 3 "$LOG/$name.log"
  [ "$rc" = 0 ] || status=1
}

case "$MODE" in
check)
  step check "${CHECK_LIMIT:-450}" python3 $SUITE check ${CHECK_ONLY:+--only $CHECK_ONLY} \
    ${CHECK_PROBES:+--probes $CHECK_PROBES}
  cp build/probes/check.json "$LOG/check.json"
  step memcheck 120 python3 $SUITE check --only im2col upsample --sanitizer compute-sanitizer \
    --probes block_sched gmem_bytes tensorop_count warp_sched --results check-memcheck.json
  step memcheck-ws 90 python3 $SUITE check --only ws_softmax --sanitizer compute-sanitizer \
    --probes block_sched warp_sched --results check-memcheck-ws.json
  step extra 90 bash benchmarks/probes/extra_checks.sh check build/bin build/probe-extra
  export PROBE_SKIP_COMPILE=1
  step example 60 bash examples/probe/run.sh build/probe-example
  cp build/probe-example/block_sched.json "$LOG/zero-fill-block-sched.json" 2>/dev/null
  ;;
bench)
  step bench-light 300 python3 $SUITE bench --probes block_sched gmem_bytes tensorop_count \
    --repeat 200 --out-dir "$LOG"
  step bench-heavy 240 python3 $SUITE bench --probes warp_sched dmat program_progress \
    --warmup 10 --repeat 50 --name probes-heavy --out-dir "$LOG"
  ;;
*)
  echo "usage: gpu-session.sh check|bench LOG_DIR" >&2
  exit 2
  ;;
esac
exit $status
