// embed-opt (examples/embed), built against the installed package, runs
// gpu-opt's --print-kernel-analysis and upstream's --symbol-dce in one
// pipeline. utils/run-tests.sh installs gpu-opt and builds it.
// REQUIRES: embed-example
// RUN: %embed_opt %s --pipeline=print-kernel-analysis,symbol-dce | FileCheck %s
// RUN: not %embed_opt %s --pipeline=no-such-pass 2>&1 | FileCheck %s --check-prefix=UNKNOWN

// CHECK-LABEL: kernel scale (module scale)
// CHECK-NEXT:  block: reqntid 128x1x1
// CHECK-NEXT:  special registers: tid.x
// CHECK-NEXT:  barriers: bar.sync id 0, all threads
// CHECK:       module {
// CHECK-NEXT:  ptx.module @scale version "8.7" target ["sm_90a"] address_size 64 {
// CHECK-NOT:   func.func private @unused

// UNKNOWN: 'no-such-pass' does not refer to a registered pass or pass pipeline

module {
  ptx.module @scale version "8.7" target ["sm_90a"] address_size 64 {
    ptx.entry ".visible .entry scale(.param .u64 out, .param .u32 n) .reqntid 128, 1, 1" {
      ptx.reg ".reg .b32 %r<4>"
      ptx.inst "mov.u32 %r1, %tid.x"
      ptx.inst "bar.sync 0"
      ptx.inst "ret"
    }
  }
  func.func private @unused()
}
