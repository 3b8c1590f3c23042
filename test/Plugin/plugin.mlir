// gpu-opt as a plugin of upstream's mlir-opt: the dialect plugin makes the
// ptx and gpuopt dialects known, the pass plugin adds gpu-opt's passes, named
// in --pass-pipeline (they are registered after the command line is read).
// REQUIRES: mlir-opt-22
// RUN: mlir-opt-22 %s --load-dialect-plugin=%gpuopt_plugin --load-pass-plugin=%gpuopt_plugin --pass-pipeline="builtin.module(print-kernel-analysis)" -o /dev/null | FileCheck %s
// RUN: mlir-opt-22 %s --load-dialect-plugin=%gpuopt_plugin | FileCheck %s --check-prefix=ROUNDTRIP
// A registered pipeline with options, and the gpuopt dialect's attributes.
// RUN: mlir-opt-22 %s --load-dialect-plugin=%gpuopt_plugin --load-pass-plugin=%gpuopt_plugin --pass-pipeline="builtin.module(probe{specs=block_sched keep-occupancy=false})" | FileCheck %s --check-prefix=PROBE
// Given twice, the pass plugin registers its pipelines once.
// RUN: mlir-opt-22 %s --load-dialect-plugin=%gpuopt_plugin --load-pass-plugin=%gpuopt_plugin --load-pass-plugin=%gpuopt_plugin --pass-pipeline="builtin.module(print-kernel-analysis)" -o /dev/null | FileCheck %s
// Without the plugins mlir-opt knows neither the dialects nor the passes.
// RUN: not mlir-opt-22 %s 2>&1 | FileCheck %s --check-prefix=NO-DIALECT
// RUN: not mlir-opt-22 %s --load-dialect-plugin=%gpuopt_plugin --pass-pipeline="builtin.module(print-kernel-analysis)" 2>&1 | FileCheck %s --check-prefix=NO-PASS

// CHECK-LABEL: kernel scale (module scale)
// CHECK-NEXT:  block: reqntid 128x1x1
// CHECK-NEXT:  special registers: tid.x
// CHECK-NEXT:  barriers: bar.sync id 0, all threads
// CHECK:       exits: ret x2
// CHECK:       resizable: no: its .reqntid fixes the block at 128x1x1

// ROUNDTRIP: ptx.module @scale version "8.7" target ["sm_90a"] address_size 64 {
// ROUNDTRIP-NEXT: ptx.entry ".visible .entry scale(.param .u64 out, .param .u32 n) .reqntid 128, 1, 1" {
// ROUNDTRIP: ptx.inst "bar.sync 0"

// PROBE: ptx.entry ".visible .entry scale(.param .u64 out, .param .u32 n, .param .u64 .ptr .global .align 8 __probe_block_sched) .reqntid 128, 1, 1" attributes {gpuopt.probes = [#gpuopt.probe_map<name = "block_sched", probe = "block_sched", param = 2

// NO-DIALECT: error: Dialect `ptx' not found for custom op 'ptx.module'

// NO-PASS: 'print-kernel-analysis' does not refer to a registered pass or pass pipeline

module {
  ptx.module @scale version "8.7" target ["sm_90a"] address_size 64 {
    ptx.entry ".visible .entry scale(.param .u64 out, .param .u32 n) .reqntid 128, 1, 1" {
      ptx.reg ".reg .pred %p<2>"
      ptx.reg ".reg .b32 %r<4>"
      ptx.inst "mov.u32 %r1, %tid.x"
      ptx.inst "setp.ge.u32 %p1, %r1, 64"
      ptx.inst "@%p1 ret"
      ptx.inst "bar.sync 0"
      ptx.inst "ret"
    }
  }
}
