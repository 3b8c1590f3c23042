// A probe snippet's `{bytes}`, `{addr}` and `{site}` parse as
// #ptx.placeholder operands and print back as written; any other braced
// operand, a one-element one included, stays a vector.
// RUN: gpu-opt %s | gpu-opt | FileCheck %s
// RUN: gpu-opt %s --mlir-print-op-generic | FileCheck %s --check-prefix=GENERIC

// CHECK-LABEL: ptx.entry ".visible .entry k(
// CHECK:         ptx.probe "before ld.global.u32" {
// CHECK-NEXT:      ptx.reg ".reg .b64 %__pr_a"
// CHECK-NEXT:      ptx.inst "add.u64 %__pr_a, %__pr_a, {bytes}"
// CHECK-NEXT:      ptx.inst "mov.u64 %__pr_a, {addr}"
// CHECK-NEXT:      ptx.inst "add.u64 %__pr_a, %__pr_a, {site}"
// CHECK-NEXT:    }
// CHECK:         ptx.inst "mov.b64 %rd2, {%r1, %r2}"
// CHECK-NEXT:    ptx.inst "mov.b32 {%r1}, %r2"

// GENERIC-LABEL: "ptx.entry"
// GENERIC: ptx_operands = [#ptx.reg<"%__pr_a">, #ptx.reg<"%__pr_a">, #ptx.placeholder<bytes>]
// GENERIC: ptx_operands = [#ptx.reg<"%__pr_a">, #ptx.placeholder<addr>]
// GENERIC: ptx_operands = [#ptx.reg<"%__pr_a">, #ptx.reg<"%__pr_a">, #ptx.placeholder<site>]
// GENERIC: ptx_operands = [#ptx.reg<"%rd2">, #ptx.vec<[#ptx.reg<"%r1">, #ptx.reg<"%r2">]>]
// GENERIC: ptx_operands = [#ptx.vec<[#ptx.reg<"%r1">]>, #ptx.reg<"%r2">]
ptx.module @m version "8.7" target ["sm_90a"] address_size 64 {
  ptx.entry ".visible .entry k(.param .u64 in, .param .u64 .ptr .global .align 8 __probe_t)" {
    ptx.reg ".reg .b64 %rd<3>"
    ptx.reg ".reg .b32 %r<3>"
    ptx.inst "ld.param.u64 %rd1, [in]"
    ptx.probe "before ld.global.u32" {
      ptx.reg ".reg .b64 %__pr_a"
      ptx.inst "add.u64 %__pr_a, %__pr_a, {bytes}"
      ptx.inst "mov.u64 %__pr_a, {addr}"
      ptx.inst "add.u64 %__pr_a, %__pr_a, {site}"
    }
    ptx.inst "ld.global.u32 %r1, [%rd1]"
    ptx.inst "mov.b64 %rd2, {%r1, %r2}"
    ptx.inst "mov.b32 {%r1}, %r2"
    ptx.inst "ret"
  }
}
