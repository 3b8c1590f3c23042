// ptx.probe_save and #ptx.placeholder, the seam between --probe-insert and
// --probe-lower, print and parse back; the generic form shows their
// attributes.
// RUN: gpu-opt %s | gpu-opt | FileCheck %s
// RUN: gpu-opt %s --mlir-print-op-generic | FileCheck %s --check-prefix=GENERIC

// CHECK-LABEL: ptx.entry ".visible .entry k(
// CHECK:         ptx.probe "kernel.exit" {
// CHECK-NEXT:      ptx.inst "add.u32 %__pr_n, %__pr_n, {site}"
// CHECK-NEXT:      ptx.probe_save @hits [#ptx.reg<"%__pr_n">, #ptx.reg<"%__pr_t">]
// CHECK-NEXT:      ptx.probe_save @hits [#ptx.reg<"%__pr_n">, #ptx.reg<"%__pr_t">] if #ptx.reg<"%__pr_p">
// CHECK-NEXT:      ptx.probe_save @hits [#ptx.reg<"%__pr_n">, #ptx.reg<"%__pr_t">] if #ptx.not<#ptx.reg<"%__pr_p">>
// CHECK-NEXT:    }

// GENERIC-LABEL: "ptx.entry"
// GENERIC: ptx_operands = [#ptx.reg<"%__pr_n">, #ptx.reg<"%__pr_n">, #ptx.placeholder<site>]
// GENERIC: "ptx.probe_save"() <{map = @hits, values = [#ptx.reg<"%__pr_n">, #ptx.reg<"%__pr_t">]}>
// GENERIC: "ptx.probe_save"() <{guard = #ptx.reg<"%__pr_p">, map = @hits, values = [#ptx.reg<"%__pr_n">, #ptx.reg<"%__pr_t">]}>
// GENERIC: "ptx.probe_save"() <{guard = #ptx.not<#ptx.reg<"%__pr_p">>, map = @hits, values = [#ptx.reg<"%__pr_n">, #ptx.reg<"%__pr_t">]}>
ptx.module @m version "8.7" target ["sm_90a"] address_size 64 {
  ptx.entry ".visible .entry k(.param .u64 .ptr .global .align 8 __probe_hits)" {
    ptx.probe "kernel.entry" buffers ["__probe_hits"] {
      ptx.reg ".reg .u32 %__pr_n"
      ptx.reg ".reg .u32 %__pr_t"
      ptx.reg ".reg .pred %__pr_p"
    }
    ptx.probe "kernel.exit" {
      ptx.inst "add.u32 %__pr_n, %__pr_n, {site}"
      ptx.probe_save @hits [#ptx.reg<"%__pr_n">, #ptx.reg<"%__pr_t">]
      ptx.probe_save @hits [#ptx.reg<"%__pr_n">, #ptx.reg<"%__pr_t">] if #ptx.reg<"%__pr_p">
      ptx.probe_save @hits [#ptx.reg<"%__pr_n">, #ptx.reg<"%__pr_t">] if #ptx.not<#ptx.reg<"%__pr_p">>
    }
    ptx.inst "ret"
  }
}
