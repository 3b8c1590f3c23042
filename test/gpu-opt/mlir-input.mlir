// An MLIR input with MLIR output goes through MlirOptMain as in mlir-opt,
// --split-input-file and --verify-diagnostics included; with PTX output it
// is exported in the same process.
// RUN: gpu-opt %s --split-input-file --verify-diagnostics | FileCheck %s
// RUN: not gpu-opt %s --split-input-file --emit=ptx 2>&1 | FileCheck %s --check-prefix=SPLIT
// RUN: rm -rf %t && mkdir -p %t
// RUN: head -n 19 %s > %t/k.mlir
// RUN: gpu-opt %t/k.mlir -o %t/k.ptx
// RUN: FileCheck %s --check-prefix=PTX < %t/k.ptx

ptx.module @k version "8.7" target ["sm_90a"] address_size 64 {
  ptx.entry ".visible .entry k()" {
    ptx.reg ".reg .b32 %r<2>"
    ptx.inst "mov.u32 %r1, %tid.x"
    ptx.inst "ret"
  }
}

// -----

ptx.module @bad version "8.7" target ["sm_90a"] {
  ptx.entry ".entry k()" {
    // expected-error@+1 {{uses undeclared register '%r1'}}
    ptx.inst "mov.u32 %r1, 0"
  }
}

// CHECK: ptx.module @k
// CHECK: // -----
// SPLIT: error: --split-input-file takes one MLIR input with MLIR output

// PTX:      .version 8.7
// PTX:      .visible .entry k()
// PTX-NEXT: {
// PTX-NEXT:   .reg .b32 %r<2>;
// PTX-NEXT:   mov.u32 %r1, %tid.x;
