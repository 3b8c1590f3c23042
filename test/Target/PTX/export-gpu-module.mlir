// gpu-translate exports gpu dialect kernels too: --gpu-to-ptx lowers them
// first, for --chip.
// RUN: gpu-translate --export-ptx %s | FileCheck %s
// RUN: gpu-translate --export-ptx --chip=sm_100a %s | FileCheck %s --check-prefix=CHIP
// RUN: %if ptxas %{ gpu-translate --export-cubin --chip=sm_90a %s -o %t.cubin && od -An -c -N4 %t.cubin | FileCheck %s --check-prefix=ELF %}

// CHECK: .target sm_90a
// CHECK: .visible .entry twice(
// CHECK: .param .u64 twice_param_4
// CHECK: .reqntid 64, 1, 1
// CHECK: add.rn.f32
// CHIP: .target sm_100a
// ELF: 177   E   L   F

gpu.module @kernels {
  gpu.func @twice(%x: memref<?xf32>) kernel
      attributes {known_block_size = array<i32: 64, 1, 1>} {
    %tid = gpu.thread_id x
    %v = memref.load %x[%tid] : memref<?xf32>
    %s = arith.addf %v, %v : f32
    memref.store %s, %x[%tid] : memref<?xf32>
    gpu.return
  }
}
