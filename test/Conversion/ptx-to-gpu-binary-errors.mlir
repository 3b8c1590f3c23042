// --ptx-to-gpu-binary's refusals, on IR as --gpu-to-ptx and --hfuse leave
// it: a gpu.binary @kernels whose kernels were captured into
// ptx.module @kernels_ptx, and a fused kernel ka_kb made of its kernels ka
// (one f32 parameter) and kb (a memref<?xf32>, five parameters).
// RUN: gpu-opt %s --ptx-to-gpu-binary --split-input-file --verify-diagnostics --mlir-print-op-on-diagnostic=false

// A part launched with a grid that is not a constant.
module attributes {gpu.container_module} {
  gpu.binary @kernels [#gpu.object<#nvvm.target<chip = "sm_90a">, assembly = "">]
  ptx.module @ka_kb version "8.0" target ["sm_90a"] address_size 64 {
    ptx.entry ".visible .entry ka_kb(.param .f32 ka_param_0, .param .u64 kb_param_0, .param .u64 kb_param_1, .param .u64 kb_param_2, .param .u64 kb_param_3, .param .u64 kb_param_4) .reqntid 192, 1, 1" attributes {gpuopt.fusion = #gpuopt.fusion_info<strategy = thread, grid = [64, 1, 1], dynamic_smem = 0, parts = [<kernel = "ka", module = "kernels_ptx", threads = [0, 128], block = [128, 1, 1], grid = [64, 1, 1], dynamic_smem_offset = 0, dynamic_smem = 0, arg_map = [0]>, <kernel = "kb", module = "kernels_ptx", threads = [128, 192], block = [64, 1, 1], grid = [32, 1, 1], dynamic_smem_offset = 0, dynamic_smem = 0, arg_map = [1, 2, 3, 4, 5]>]>} {
      ptx.inst "ret"
    }
  }
  func.func @main(%a: f32, %x: memref<?xf32>, %g: index) {
    %c1 = arith.constant 1 : index
    %c32 = arith.constant 32 : index
    %c64 = arith.constant 64 : index
    %c128 = arith.constant 128 : index
    // expected-error @below {{cannot launch kernel 'ka' as part of 'ka_kb': it is launched with grid (?, 1, 1), block (128, 1, 1) and dynamic shared memory 0, but was fused for grid (64, 1, 1), block (128, 1, 1) and dynamic shared memory 0 ('?': not a constant); launch it with those constants, or fuse it for this launch: the gpu.func's known_grid_size and known_block_size, or --hfuse's grids= and blocks=}}
    gpu.launch_func @kernels::@ka blocks in (%g, %c1, %c1) threads in (%c128, %c1, %c1) args(%a : f32)
    gpu.launch_func @kernels::@kb blocks in (%c32, %c1, %c1) threads in (%c64, %c1, %c1) args(%x : memref<?xf32>)
    return
  }
}

// -----

// A part launched with another block and dynamic shared memory than it was
// fused for.
module attributes {gpu.container_module} {
  gpu.binary @kernels [#gpu.object<#nvvm.target<chip = "sm_90a">, assembly = "">]
  ptx.module @ka_kb version "8.0" target ["sm_90a"] address_size 64 {
    ptx.entry ".visible .entry ka_kb(.param .f32 ka_param_0, .param .u64 kb_param_0, .param .u64 kb_param_1, .param .u64 kb_param_2, .param .u64 kb_param_3, .param .u64 kb_param_4) .reqntid 192, 1, 1" attributes {gpuopt.fusion = #gpuopt.fusion_info<strategy = thread, grid = [64, 1, 1], dynamic_smem = 0, parts = [<kernel = "ka", module = "kernels_ptx", threads = [0, 128], block = [128, 1, 1], grid = [64, 1, 1], dynamic_smem_offset = 0, dynamic_smem = 0, arg_map = [0]>, <kernel = "kb", module = "kernels_ptx", threads = [128, 192], block = [64, 1, 1], grid = [32, 1, 1], dynamic_smem_offset = 0, dynamic_smem = 0, arg_map = [1, 2, 3, 4, 5]>]>} {
      ptx.inst "ret"
    }
  }
  func.func @main(%a: f32, %x: memref<?xf32>) {
    %c1 = arith.constant 1 : index
    %c32 = arith.constant 32 : index
    %c64 = arith.constant 64 : index
    %c128 = arith.constant 128 : index
    %c16 = arith.constant 16 : i32
    gpu.launch_func @kernels::@ka blocks in (%c64, %c1, %c1) threads in (%c128, %c1, %c1) args(%a : f32)
    // expected-error @below {{it is launched with grid (32, 1, 1), block (128, 1, 1) and dynamic shared memory 16, but was fused for grid (32, 1, 1), block (64, 1, 1) and dynamic shared memory 0}}
    gpu.launch_func @kernels::@kb blocks in (%c32, %c1, %c1) threads in (%c128, %c1, %c1) dynamic_shared_memory_size %c16 args(%x : memref<?xf32>)
    return
  }
}

// -----

// An op between the launches that touches memory: the second kernel would
// run before it.
module attributes {gpu.container_module} {
  gpu.binary @kernels [#gpu.object<#nvvm.target<chip = "sm_90a">, assembly = "">]
  ptx.module @ka_kb version "8.0" target ["sm_90a"] address_size 64 {
    ptx.entry ".visible .entry ka_kb(.param .f32 ka_param_0, .param .u64 kb_param_0, .param .u64 kb_param_1, .param .u64 kb_param_2, .param .u64 kb_param_3, .param .u64 kb_param_4) .reqntid 192, 1, 1" attributes {gpuopt.fusion = #gpuopt.fusion_info<strategy = thread, grid = [64, 1, 1], dynamic_smem = 0, parts = [<kernel = "ka", module = "kernels_ptx", threads = [0, 128], block = [128, 1, 1], grid = [64, 1, 1], dynamic_smem_offset = 0, dynamic_smem = 0, arg_map = [0]>, <kernel = "kb", module = "kernels_ptx", threads = [128, 192], block = [64, 1, 1], grid = [32, 1, 1], dynamic_smem_offset = 0, dynamic_smem = 0, arg_map = [1, 2, 3, 4, 5]>]>} {
      ptx.inst "ret"
    }
  }
  func.func @main(%a: f32, %x: memref<?xf32>) {
    %c1 = arith.constant 1 : index
    %c32 = arith.constant 32 : index
    %c64 = arith.constant 64 : index
    %c128 = arith.constant 128 : index
    %c0 = arith.constant 0 : index
    // expected-note @below {{first part launch here}}
    gpu.launch_func @kernels::@ka blocks in (%c64, %c1, %c1) threads in (%c128, %c1, %c1) args(%a : f32)
    // expected-error @below {{cannot launch 'ka_kb' in place of the launches of its parts: this op accesses memory between them, so it may read what the first kernel wrote or write what the last one reads; move it before the first or after the last launch}}
    %v = memref.load %x[%c0] : memref<?xf32>
    // expected-note @below {{last part launch here}}
    gpu.launch_func @kernels::@kb blocks in (%c32, %c1, %c1) threads in (%c64, %c1, %c1) args(%x : memref<?xf32>)
    return
  }
}

// -----

// A call between the launches: its effects are unknown.
module attributes {gpu.container_module} {
  gpu.binary @kernels [#gpu.object<#nvvm.target<chip = "sm_90a">, assembly = "">]
  ptx.module @ka_kb version "8.0" target ["sm_90a"] address_size 64 {
    ptx.entry ".visible .entry ka_kb(.param .f32 ka_param_0, .param .u64 kb_param_0, .param .u64 kb_param_1, .param .u64 kb_param_2, .param .u64 kb_param_3, .param .u64 kb_param_4) .reqntid 192, 1, 1" attributes {gpuopt.fusion = #gpuopt.fusion_info<strategy = thread, grid = [64, 1, 1], dynamic_smem = 0, parts = [<kernel = "ka", module = "kernels_ptx", threads = [0, 128], block = [128, 1, 1], grid = [64, 1, 1], dynamic_smem_offset = 0, dynamic_smem = 0, arg_map = [0]>, <kernel = "kb", module = "kernels_ptx", threads = [128, 192], block = [64, 1, 1], grid = [32, 1, 1], dynamic_smem_offset = 0, dynamic_smem = 0, arg_map = [1, 2, 3, 4, 5]>]>} {
      ptx.inst "ret"
    }
  }
  func.func private @host_work()
  func.func @main(%a: f32, %x: memref<?xf32>) {
    %c1 = arith.constant 1 : index
    %c32 = arith.constant 32 : index
    %c64 = arith.constant 64 : index
    %c128 = arith.constant 128 : index
    // expected-note @below {{first part launch here}}
    gpu.launch_func @kernels::@ka blocks in (%c64, %c1, %c1) threads in (%c128, %c1, %c1) args(%a : f32)
    // expected-error @below {{this op may access memory between them}}
    func.call @host_work() : () -> ()
    // expected-note @below {{last part launch here}}
    gpu.launch_func @kernels::@kb blocks in (%c32, %c1, %c1) threads in (%c64, %c1, %c1) args(%x : memref<?xf32>)
    return
  }
}

// -----

// Only one of the two parts is launched.
module attributes {gpu.container_module} {
  gpu.binary @kernels [#gpu.object<#nvvm.target<chip = "sm_90a">, assembly = "">]
  ptx.module @ka_kb version "8.0" target ["sm_90a"] address_size 64 {
    ptx.entry ".visible .entry ka_kb(.param .f32 ka_param_0, .param .u64 kb_param_0, .param .u64 kb_param_1, .param .u64 kb_param_2, .param .u64 kb_param_3, .param .u64 kb_param_4) .reqntid 192, 1, 1" attributes {gpuopt.fusion = #gpuopt.fusion_info<strategy = thread, grid = [64, 1, 1], dynamic_smem = 0, parts = [<kernel = "ka", module = "kernels_ptx", threads = [0, 128], block = [128, 1, 1], grid = [64, 1, 1], dynamic_smem_offset = 0, dynamic_smem = 0, arg_map = [0]>, <kernel = "kb", module = "kernels_ptx", threads = [128, 192], block = [64, 1, 1], grid = [32, 1, 1], dynamic_smem_offset = 0, dynamic_smem = 0, arg_map = [1, 2, 3, 4, 5]>]>} {
      ptx.inst "ret"
    }
  }
  func.func @main(%a: f32, %x: memref<?xf32>) {
    %c1 = arith.constant 1 : index
    %c32 = arith.constant 32 : index
    %c64 = arith.constant 64 : index
    %c128 = arith.constant 128 : index
    // expected-error @below {{cannot launch kernel 'ka' as part of 'ka_kb': its part 'kb' (of 'kernels_ptx') is not launched here, and the fused kernel runs every part; launch every kernel it was fused from, or fuse only kernels that are launched together (--hfuse kernels=)}}
    gpu.launch_func @kernels::@ka blocks in (%c64, %c1, %c1) threads in (%c128, %c1, %c1) args(%a : f32)
    return
  }
}

// -----

// A part launched twice.
module attributes {gpu.container_module} {
  gpu.binary @kernels [#gpu.object<#nvvm.target<chip = "sm_90a">, assembly = "">]
  ptx.module @ka_kb version "8.0" target ["sm_90a"] address_size 64 {
    ptx.entry ".visible .entry ka_kb(.param .f32 ka_param_0, .param .u64 kb_param_0, .param .u64 kb_param_1, .param .u64 kb_param_2, .param .u64 kb_param_3, .param .u64 kb_param_4) .reqntid 192, 1, 1" attributes {gpuopt.fusion = #gpuopt.fusion_info<strategy = thread, grid = [64, 1, 1], dynamic_smem = 0, parts = [<kernel = "ka", module = "kernels_ptx", threads = [0, 128], block = [128, 1, 1], grid = [64, 1, 1], dynamic_smem_offset = 0, dynamic_smem = 0, arg_map = [0]>, <kernel = "kb", module = "kernels_ptx", threads = [128, 192], block = [64, 1, 1], grid = [32, 1, 1], dynamic_smem_offset = 0, dynamic_smem = 0, arg_map = [1, 2, 3, 4, 5]>]>} {
      ptx.inst "ret"
    }
  }
  func.func @main(%a: f32, %x: memref<?xf32>) {
    %c1 = arith.constant 1 : index
    %c32 = arith.constant 32 : index
    %c64 = arith.constant 64 : index
    %c128 = arith.constant 128 : index
    // expected-note @below {{first launch here}}
    gpu.launch_func @kernels::@ka blocks in (%c64, %c1, %c1) threads in (%c128, %c1, %c1) args(%a : f32)
    gpu.launch_func @kernels::@kb blocks in (%c32, %c1, %c1) threads in (%c64, %c1, %c1) args(%x : memref<?xf32>)
    // expected-error @below {{kernel 'ka' is launched more than once, but it is fused into 'ka_kb', which runs it once}}
    gpu.launch_func @kernels::@ka blocks in (%c64, %c1, %c1) threads in (%c128, %c1, %c1) args(%a : f32)
    return
  }
}

// -----

// The parts launched in different blocks.
module attributes {gpu.container_module} {
  gpu.binary @kernels [#gpu.object<#nvvm.target<chip = "sm_90a">, assembly = "">]
  ptx.module @ka_kb version "8.0" target ["sm_90a"] address_size 64 {
    ptx.entry ".visible .entry ka_kb(.param .f32 ka_param_0, .param .u64 kb_param_0, .param .u64 kb_param_1, .param .u64 kb_param_2, .param .u64 kb_param_3, .param .u64 kb_param_4) .reqntid 192, 1, 1" attributes {gpuopt.fusion = #gpuopt.fusion_info<strategy = thread, grid = [64, 1, 1], dynamic_smem = 0, parts = [<kernel = "ka", module = "kernels_ptx", threads = [0, 128], block = [128, 1, 1], grid = [64, 1, 1], dynamic_smem_offset = 0, dynamic_smem = 0, arg_map = [0]>, <kernel = "kb", module = "kernels_ptx", threads = [128, 192], block = [64, 1, 1], grid = [32, 1, 1], dynamic_smem_offset = 0, dynamic_smem = 0, arg_map = [1, 2, 3, 4, 5]>]>} {
      ptx.inst "ret"
    }
  }
  func.func @main(%a: f32, %x: memref<?xf32>, %cond: i1) {
    %c1 = arith.constant 1 : index
    %c32 = arith.constant 32 : index
    %c64 = arith.constant 64 : index
    %c128 = arith.constant 128 : index
    // expected-note @below {{another part launched here}}
    gpu.launch_func @kernels::@ka blocks in (%c64, %c1, %c1) threads in (%c128, %c1, %c1) args(%a : f32)
    scf.if %cond {
      // expected-error @below {{the launches of its parts are in different blocks}}
      gpu.launch_func @kernels::@kb blocks in (%c32, %c1, %c1) threads in (%c64, %c1, %c1) args(%x : memref<?xf32>)
    }
    return
  }
}

// -----

// An asynchronous part launch.
module attributes {gpu.container_module} {
  gpu.binary @kernels [#gpu.object<#nvvm.target<chip = "sm_90a">, assembly = "">]
  ptx.module @ka_kb version "8.0" target ["sm_90a"] address_size 64 {
    ptx.entry ".visible .entry ka_kb(.param .f32 ka_param_0, .param .u64 kb_param_0, .param .u64 kb_param_1, .param .u64 kb_param_2, .param .u64 kb_param_3, .param .u64 kb_param_4) .reqntid 192, 1, 1" attributes {gpuopt.fusion = #gpuopt.fusion_info<strategy = thread, grid = [64, 1, 1], dynamic_smem = 0, parts = [<kernel = "ka", module = "kernels_ptx", threads = [0, 128], block = [128, 1, 1], grid = [64, 1, 1], dynamic_smem_offset = 0, dynamic_smem = 0, arg_map = [0]>, <kernel = "kb", module = "kernels_ptx", threads = [128, 192], block = [64, 1, 1], grid = [32, 1, 1], dynamic_smem_offset = 0, dynamic_smem = 0, arg_map = [1, 2, 3, 4, 5]>]>} {
      ptx.inst "ret"
    }
  }
  func.func @main(%a: f32, %x: memref<?xf32>) {
    %c1 = arith.constant 1 : index
    %c32 = arith.constant 32 : index
    %c64 = arith.constant 64 : index
    %c128 = arith.constant 128 : index
    gpu.launch_func @kernels::@ka blocks in (%c64, %c1, %c1) threads in (%c128, %c1, %c1) args(%a : f32)
    %t = gpu.wait async
    // expected-error @below {{cannot launch kernel 'kb' as part of 'ka_kb': the launch is asynchronous}}
    %done = gpu.launch_func async [%t] @kernels::@kb blocks in (%c32, %c1, %c1) threads in (%c64, %c1, %c1) args(%x : memref<?xf32>)
    gpu.wait [%done]
    return
  }
}

// -----

// Operands that make other PTX parameters than the part has.
module attributes {gpu.container_module} {
  gpu.binary @kernels [#gpu.object<#nvvm.target<chip = "sm_90a">, assembly = "">]
  ptx.module @ka_kb version "8.0" target ["sm_90a"] address_size 64 {
    ptx.entry ".visible .entry ka_kb(.param .f32 ka_param_0, .param .u64 kb_param_0, .param .u64 kb_param_1, .param .u64 kb_param_2, .param .u64 kb_param_3, .param .u64 kb_param_4) .reqntid 192, 1, 1" attributes {gpuopt.fusion = #gpuopt.fusion_info<strategy = thread, grid = [64, 1, 1], dynamic_smem = 0, parts = [<kernel = "ka", module = "kernels_ptx", threads = [0, 128], block = [128, 1, 1], grid = [64, 1, 1], dynamic_smem_offset = 0, dynamic_smem = 0, arg_map = [0]>, <kernel = "kb", module = "kernels_ptx", threads = [128, 192], block = [64, 1, 1], grid = [32, 1, 1], dynamic_smem_offset = 0, dynamic_smem = 0, arg_map = [1, 2, 3, 4, 5]>]>} {
      ptx.inst "ret"
    }
  }
  func.func @main(%a: f32, %x: memref<?x?xf32>) {
    %c1 = arith.constant 1 : index
    %c32 = arith.constant 32 : index
    %c64 = arith.constant 64 : index
    %c128 = arith.constant 128 : index
    gpu.launch_func @kernels::@ka blocks in (%c64, %c1, %c1) threads in (%c128, %c1, %c1) args(%a : f32)
    // expected-error @below {{cannot launch kernel 'kb' as part of 'ka_kb': its operands make 7 PTX parameters (a memref of rank r makes 3 + 2r), but the part takes 5}}
    gpu.launch_func @kernels::@kb blocks in (%c32, %c1, %c1) threads in (%c64, %c1, %c1) args(%x : memref<?x?xf32>)
    return
  }
}

// -----

// A probed fused kernel: its probe buffer is a parameter the host code does
// not pass.
module attributes {gpu.container_module} {
  gpu.binary @kernels [#gpu.object<#nvvm.target<chip = "sm_90a">, assembly = "">]
  ptx.module @ka_kb version "8.0" target ["sm_90a"] address_size 64 {
    ptx.entry ".visible .entry ka_kb(.param .f32 ka_param_0, .param .u64 kb_param_0, .param .u64 kb_param_1, .param .u64 kb_param_2, .param .u64 kb_param_3, .param .u64 kb_param_4, .param .u64 .ptr .global .align 8 __probe_block_sched) .reqntid 192, 1, 1" attributes {gpuopt.fusion = #gpuopt.fusion_info<strategy = thread, grid = [64, 1, 1], dynamic_smem = 0, parts = [<kernel = "ka", module = "kernels_ptx", threads = [0, 128], block = [128, 1, 1], grid = [64, 1, 1], dynamic_smem_offset = 0, dynamic_smem = 0, arg_map = [0]>, <kernel = "kb", module = "kernels_ptx", threads = [128, 192], block = [64, 1, 1], grid = [32, 1, 1], dynamic_smem_offset = 0, dynamic_smem = 0, arg_map = [1, 2, 3, 4, 5]>]>, gpuopt.probes = [#gpuopt.probe_map<name = "block_sched", probe = "block_sched", param = 6, level = warp, capacity = 1, record_bytes = 24, fields = [<name = "gend", type = "u64", offset = 0>, <name = "start", type = "u32", offset = 8>, <name = "end", type = "u32", offset = 12>, <name = "sm", type = "u32", offset = 16>, <name = "part", type = "u32", offset = 20>]>]} {
      ptx.inst "ret"
    }
  }
  func.func @main(%a: f32, %x: memref<?xf32>) {
    %c1 = arith.constant 1 : index
    %c32 = arith.constant 32 : index
    %c64 = arith.constant 64 : index
    %c128 = arith.constant 128 : index
    // expected-error @below {{cannot launch kernel 'ka' as part of 'ka_kb': 'ka_kb' is probed; the probe buffers are parameters that the host code does not pass: write the PTX or a cubin with its launch manifest (--manifest) and run it with gpu-run instead}}
    gpu.launch_func @kernels::@ka blocks in (%c64, %c1, %c1) threads in (%c128, %c1, %c1) args(%a : f32)
    gpu.launch_func @kernels::@kb blocks in (%c32, %c1, %c1) threads in (%c64, %c1, %c1) args(%x : memref<?xf32>)
    return
  }
}

// -----

// A probed kernel that was not fused.
module attributes {gpu.container_module} {
  gpu.binary @kernels [#gpu.object<#nvvm.target<chip = "sm_90a">, assembly = "">]
  ptx.module @kernels_ptx version "8.0" target ["sm_90a"] address_size 64 {
    ptx.entry ".visible .entry ka(.param .f32 ka_param_0, .param .u64 .ptr .global .align 8 __probe_block_sched) .reqntid 128, 1, 1" attributes {gpuopt.probes = [#gpuopt.probe_map<name = "block_sched", probe = "block_sched", param = 1, level = warp, capacity = 1, record_bytes = 24, fields = [<name = "gend", type = "u64", offset = 0>, <name = "start", type = "u32", offset = 8>, <name = "end", type = "u32", offset = 12>, <name = "sm", type = "u32", offset = 16>, <name = "part", type = "u32", offset = 20>]>]} {
      ptx.inst "ret"
    }
  }
  func.func @main(%a: f32) {
    %c1 = arith.constant 1 : index
    %c32 = arith.constant 32 : index
    %c64 = arith.constant 64 : index
    %c128 = arith.constant 128 : index
    // expected-error @below {{cannot launch kernel 'ka' from a gpu.binary: it is probed; the probe buffers are parameters}}
    gpu.launch_func @kernels::@ka blocks in (%c64, %c1, %c1) threads in (%c128, %c1, %c1) args(%a : f32)
    return
  }
}

// -----

// A captured kernel that is neither in its ptx.module nor fused.
module attributes {gpu.container_module} {
  gpu.binary @kernels [#gpu.object<#nvvm.target<chip = "sm_90a">, assembly = "">]
  ptx.module @kernels_ptx version "8.0" target ["sm_90a"] address_size 64 {
    ptx.entry ".visible .entry ka(.param .f32 ka_param_0) .reqntid 128, 1, 1" {
      ptx.inst "ret"
    }
  }
  func.func @main(%a: f32) {
    %c1 = arith.constant 1 : index
    %c32 = arith.constant 32 : index
    %c64 = arith.constant 64 : index
    %c128 = arith.constant 128 : index
    // expected-error @below {{cannot launch kernel 'kc': gpu-opt captured gpu.module 'kernels' into ptx.module 'kernels_ptx', which no longer holds it, and no fused kernel was made of it}}
    gpu.launch_func @kernels::@kc blocks in (%c64, %c1, %c1) threads in (%c128, %c1, %c1) args(%a : f32)
    return
  }
}

// -----

// Both parts take the same buffer: fused, they run at the same time.
module attributes {gpu.container_module} {
  gpu.binary @kernels [#gpu.object<#nvvm.target<chip = "sm_90a">, assembly = "">]
  ptx.module @kc_kd version "8.0" target ["sm_90a"] address_size 64 {
    ptx.entry ".visible .entry kc_kd(.param .u64 kc_param_0, .param .u64 kc_param_1, .param .u64 kc_param_2, .param .u64 kc_param_3, .param .u64 kc_param_4, .param .u64 kd_param_0, .param .u64 kd_param_1, .param .u64 kd_param_2, .param .u64 kd_param_3, .param .u64 kd_param_4) .reqntid 192, 1, 1" attributes {gpuopt.fusion = #gpuopt.fusion_info<strategy = thread, grid = [64, 1, 1], dynamic_smem = 0, parts = [<kernel = "kc", module = "kernels_ptx", threads = [0, 128], block = [128, 1, 1], grid = [64, 1, 1], dynamic_smem_offset = 0, dynamic_smem = 0, arg_map = [0, 1, 2, 3, 4]>, <kernel = "kd", module = "kernels_ptx", threads = [128, 192], block = [64, 1, 1], grid = [32, 1, 1], dynamic_smem_offset = 0, dynamic_smem = 0, arg_map = [5, 6, 7, 8, 9]>]>} {
      ptx.inst "ret"
    }
  }
  func.func @main(%x: memref<?xf32>) {
    %c1 = arith.constant 1 : index
    %c32 = arith.constant 32 : index
    %c64 = arith.constant 64 : index
    %c128 = arith.constant 128 : index
    // expected-note @below {{part 'kc' launched here}}
    gpu.launch_func @kernels::@kc blocks in (%c64, %c1, %c1) threads in (%c128, %c1, %c1) args(%x : memref<?xf32>)
    // expected-error @below {{cannot launch 'kc_kd' in place of the launches of its parts: parts 'kc' and 'kd' both take the same buffer, and fused they run at the same time, so one may read what the other writes; fuse only kernels whose launches take distinct buffers}}
    gpu.launch_func @kernels::@kd blocks in (%c32, %c1, %c1) threads in (%c64, %c1, %c1) args(%x : memref<?xf32>)
    return
  }
}
