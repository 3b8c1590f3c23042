// embed-opt (examples/embed), built against the installed package, runs
// gpu-opt's capture and fusion of gpu.func kernels in its own pipeline, as a
// compiler embedding gpu-opt would after its own lowering to the gpu
// dialect.
// REQUIRES: embed-example
// RUN: %embed_opt %s --pipeline='gpu-to-ptx{chip=sm_90a},hfuse{strategy=thread},ptx-to-gpu-binary' | FileCheck %s

// CHECK: func.func @main
// CHECK: gpu.launch_func @first_second_fused::@first_second_fused
// CHECK-NOT: gpu.launch_func
// CHECK: gpu.binary @first_second_fused [#gpu.object<#nvvm.target<O = 3, chip = "sm_90a", features = "+ptx80">, properties = {O = 3 : i32}, assembly = "{{.*}}.reqntid 128, 1, 1

module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @first(%x: memref<?xf32>) kernel
        attributes {known_block_size = array<i32: 64, 1, 1>,
                    known_grid_size = array<i32: 2, 1, 1>} {
      %tid = gpu.thread_id x
      %v = memref.load %x[%tid] : memref<?xf32>
      %s = arith.addf %v, %v : f32
      memref.store %s, %x[%tid] : memref<?xf32>
      gpu.return
    }
    gpu.func @second(%y: memref<?xf32>) kernel
        attributes {known_block_size = array<i32: 64, 1, 1>,
                    known_grid_size = array<i32: 2, 1, 1>} {
      %tid = gpu.thread_id x
      %v = memref.load %y[%tid] : memref<?xf32>
      %s = arith.mulf %v, %v : f32
      memref.store %s, %y[%tid] : memref<?xf32>
      gpu.return
    }
  }
  func.func @main(%x: memref<?xf32>, %y: memref<?xf32>) {
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c64 = arith.constant 64 : index
    gpu.launch_func @kernels::@first blocks in (%c2, %c1, %c1) threads in (%c64, %c1, %c1) args(%x : memref<?xf32>)
    gpu.launch_func @kernels::@second blocks in (%c2, %c1, %c1) threads in (%c64, %c1, %c1) args(%y : memref<?xf32>)
    return
  }
}
