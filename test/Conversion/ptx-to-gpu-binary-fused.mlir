// --ptx-to-gpu-binary on IR as --gpu-to-ptx and --hfuse leave it, written
// by hand: gpu.binary @kernels, captured into ptx.module @kernels_ptx, and
// kernels fused from ka (one f32 parameter) and kb (a memref<?xf32>, five
// parameters).
// RUN: gpu-opt %s --ptx-to-gpu-binary --split-input-file | FileCheck %s --enable-var-scope

// The parts launched in the other order, with an allocation between them:
// the fused launch takes the place of the last one, its operands in part
// order, and the fused dynamic shared memory.
// gpu.binary @kernels, whose kernels are all fused, is gone.
// CHECK-LABEL: module attributes {gpu.container_module} {
// CHECK-NEXT:    gpu.binary @ka_kb [#gpu.object<#nvvm.target<O = 3, chip = "sm_90a", features = "+ptx87">, properties = {O = 3 : i32}, assembly = "{{.*}}.version 8.7\0A.target sm_90a{{.*}}.visible .entry ka_kb(\0A\09.param .f32 ka_param_0,{{.*}}.reqntid 192, 1, 1\0A{{.*}}">]
// CHECK-NEXT:    func.func @reversed(
// CHECK-SAME:        %[[A:[^:]+]]: f32, %[[X:[^:]+]]: memref<?xf32>)
// CHECK:           arith.constant 1024 : i32
// CHECK-NEXT:      %[[TMP:.*]] = memref.alloc()
// CHECK-NEXT:      %[[GRID:.*]] = arith.constant 64 : index
// CHECK-NEXT:      %[[ONE:.*]] = arith.constant 1 : index
// CHECK-NEXT:      %[[BLOCK:.*]] = arith.constant 192 : index
// CHECK-NEXT:      %[[SMEM:.*]] = arith.constant 1024 : i32
// CHECK-NEXT:      gpu.launch_func @ka_kb::@ka_kb blocks in (%[[GRID]], %[[ONE]], %[[ONE]]) threads in (%[[BLOCK]], %[[ONE]], %[[ONE]]) dynamic_shared_memory_size %[[SMEM]] args(%[[A]] : f32, %[[X]] : memref<?xf32>)
// CHECK-NEXT:      memref.dealloc %[[TMP]]
// CHECK-NEXT:      return
// CHECK-NEXT:    }
// CHECK-NEXT:  }
module attributes {gpu.container_module} {
  gpu.binary @kernels [#gpu.object<#nvvm.target<chip = "sm_90a">, assembly = "">]
  ptx.module @ka_kb version "8.7" target ["sm_90a"] address_size 64 {
    ptx.entry ".visible .entry ka_kb(.param .f32 ka_param_0, .param .u64 kb_param_0, .param .u64 kb_param_1, .param .u64 kb_param_2, .param .u64 kb_param_3, .param .u64 kb_param_4) .reqntid 192, 1, 1" attributes {gpuopt.fusion = #gpuopt.fusion_info<strategy = thread, grid = [64, 1, 1], dynamic_smem = 1024, parts = [<kernel = "ka", module = "kernels_ptx", threads = [0, 128], block = [128, 1, 1], grid = [64, 1, 1], dynamic_smem_offset = 0, dynamic_smem = 0, arg_map = [0]>, <kernel = "kb", module = "kernels_ptx", threads = [128, 192], block = [64, 1, 1], grid = [32, 1, 1], dynamic_smem_offset = 0, dynamic_smem = 1024, arg_map = [1, 2, 3, 4, 5]>]>} {
      ptx.inst "ret"
    }
  }
  func.func @reversed(%a: f32, %x: memref<?xf32>) {
    %c1 = arith.constant 1 : index
    %c32 = arith.constant 32 : index
    %c64 = arith.constant 64 : index
    %c128 = arith.constant 128 : index
    %smem = arith.constant 1024 : i32
    gpu.launch_func @kernels::@kb blocks in (%c32, %c1, %c1) threads in (%c64, %c1, %c1) dynamic_shared_memory_size %smem args(%x : memref<?xf32>)
    %tmp = memref.alloc() : memref<4xf32>
    gpu.launch_func @kernels::@ka blocks in (%c64, %c1, %c1) threads in (%c128, %c1, %c1) args(%a : f32)
    memref.dealloc %tmp : memref<4xf32>
    return
  }
}

// -----

// The parts launched in a loop body: the fused launch stays in it. The
// fused kernel is in the captured module, beside kc, which is launched
// unfused: both are launched from the regenerated gpu.binary @kernels.
// CHECK-LABEL: gpu.binary @kernels [#gpu.object<#nvvm.target<O = 3, chip = "sm_90a", features = "+ptx80">, properties = {O = 3 : i32}, assembly = "{{.*}}.visible .entry kc(\0A\09.param .f32 kc_param_0\0A){{.*}}.visible .entry ka_kb(
// CHECK-LABEL: func.func @loop(
// CHECK:         scf.for
// CHECK-NEXT:      gpu.launch_func @kernels::@kc
// CHECK-NEXT:      %[[GRID:.*]] = arith.constant 64 : index
// CHECK-NEXT:      %[[ONE:.*]] = arith.constant 1 : index
// CHECK-NEXT:      %[[BLOCK:.*]] = arith.constant 192 : index
// CHECK-NEXT:      gpu.launch_func @kernels::@ka_kb blocks in (%[[GRID]], %[[ONE]], %[[ONE]]) threads in (%[[BLOCK]], %[[ONE]], %[[ONE]]) args(
// CHECK-NEXT:    }
// CHECK-NOT:   ptx.module
module attributes {gpu.container_module} {
  gpu.binary @kernels [#gpu.object<#nvvm.target<chip = "sm_90a">, assembly = "">]
  ptx.module @kernels_ptx version "8.0" target ["sm_90a"] address_size 64 {
    ptx.entry ".visible .entry kc(.param .f32 kc_param_0)" {
      ptx.inst "ret"
    }
    ptx.entry ".visible .entry ka_kb(.param .f32 ka_param_0, .param .u64 kb_param_0, .param .u64 kb_param_1, .param .u64 kb_param_2, .param .u64 kb_param_3, .param .u64 kb_param_4) .reqntid 192, 1, 1" attributes {gpuopt.fusion = #gpuopt.fusion_info<strategy = thread, grid = [64, 1, 1], dynamic_smem = 0, parts = [<kernel = "ka", module = "kernels_ptx", threads = [0, 128], block = [128, 1, 1], grid = [64, 1, 1], dynamic_smem_offset = 0, dynamic_smem = 0, arg_map = [0]>, <kernel = "kb", module = "kernels_ptx", threads = [128, 192], block = [64, 1, 1], grid = [32, 1, 1], dynamic_smem_offset = 0, dynamic_smem = 0, arg_map = [1, 2, 3, 4, 5]>]>} {
      ptx.inst "ret"
    }
  }
  func.func @loop(%a: f32, %x: memref<?xf32>, %steps: index) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c32 = arith.constant 32 : index
    %c64 = arith.constant 64 : index
    %c128 = arith.constant 128 : index
    scf.for %i = %c0 to %steps step %c1 {
      gpu.launch_func @kernels::@kc blocks in (%c1, %c1, %c1) threads in (%c32, %c1, %c1) args(%a : f32)
      gpu.launch_func @kernels::@ka blocks in (%c64, %c1, %c1) threads in (%c128, %c1, %c1) args(%a : f32)
      gpu.launch_func @kernels::@kb blocks in (%c32, %c1, %c1) threads in (%c64, %c1, %c1) args(%x : memref<?xf32>)
    }
    return
  }
}
