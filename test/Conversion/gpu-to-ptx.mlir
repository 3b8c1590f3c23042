// RUN: gpu-opt %s --split-input-file --gpu-to-ptx | FileCheck %s
// RUN: gpu-opt %s --split-input-file --gpu-to-ptx="chip=sm_100a features=+ptx87" | FileCheck %s --check-prefix=CHIP
// RUN: not gpu-opt %s --split-input-file --gpu-to-ptx="opt-level=4" 2>&1 | FileCheck %s --check-prefix=OPT
// Without a CUDA toolkit (none where MLIR's serializer looks for libdevice,
// none in cuda-path=), kernels that call no libdevice function lower with no
// diagnostic: the serializer's report of the missing libdevice is dropped.
// RUN: env CUDA_ROOT=%t.none gpu-opt %s --split-input-file --gpu-to-ptx="cuda-path=%t.none" 2>&1 | FileCheck %s --check-prefix=NOTOOLKIT --implicit-check-not=error

// Two kernels as an ML compiler hands them over: an elementwise kernel with
// an early return, a workgroup reduction with barriers, a subgroup shuffle,
// dynamic shared memory and an NVVM intrinsic.

// CHECK-LABEL: ptx.module @kernels version "8.0" target ["sm_90a"]
// CHIP-LABEL: ptx.module @kernels version "8.7" target ["sm_100a"]
// OPT: --gpu-to-ptx option 'opt-level':1:1: error: expected 0 to 3, got 4
// NOTOOLKIT-LABEL: ptx.module @kernels version "8.0" target ["sm_90a"]

// Dynamic shared memory is an .extern .shared array, as CUDA writes it (the
// NVPTX backend would make it a one-byte .shared variable of the kernel).
// CHECK: ptx.global ".extern .shared .align 16 .b8 __dynamic_shmem__0[]"

// A memref<?xf32> is five parameters (allocated and aligned pointers,
// offset, size, stride), a scalar one; .reqntid from known_block_size,
// never .maxntid.
// CHECK: ptx.entry ".visible .entry saxpy(.param .f32 saxpy_param_0,
// CHECK-SAME: .param .u64 saxpy_param_11) .reqntid 128, 1, 1"
// CHECK-SAME: gpuopt.gpu_kernel = #gpuopt.gpu_kernel<module = "kernels", func = "saxpy",
// CHECK-SAME: param_args = [0, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 3],
// CHECK-SAME: param_fields = [0, 0, 1, 2, 3, 4, 0, 1, 2, 3, 4, 0],
// CHECK-SAME: block = [128, 1, 1], grid = [64, 1, 1]>
// CHECK-NOT: maxntid
// The early return and the normal end both reach the one `ret`.
// CHECK: ptx.inst "@%p1 bra [[BODY:\$L__BB0_[0-9]+]]"
// CHECK-NEXT: ptx.inst "bra.uni [[EXIT:\$L__BB0_[0-9]+]]"
// CHECK-NEXT: ptx.label "[[BODY]]:"
// CHECK: ptx.inst "mul.rn.f32
// CHECK: ptx.inst "add.rn.f32
// CHECK: ptx.label "[[EXIT]]:"
// CHECK-NEXT: ptx.inst "ret"
// CHECK-NEXT: }

// The workgroup attribution is a .shared array of the kernel, the barriers
// bar.sync; a 2-D memref is seven parameters.
// CHECK: ptx.entry ".visible .entry blocksum(
// CHECK-SAME: .reqntid 256, 1, 1"
// CHECK-SAME: param_args = [0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1]
// CHECK-SAME: param_fields = [0, 1, 2, 3, 4, 5, 6, 0, 1, 2, 3, 4]
// CHECK-SAME: block = [256, 1, 1], grid = []>
// CHECK: ptx.var ".shared .align 4 .b8 __wg_blocksum_0[1024]"
// CHECK: ptx.inst "bar.sync 0"
// CHECK: ptx.inst "shfl.sync.bfly.b32
// CHECK: ptx.inst "mov.u32 {{%r[0-9]+}}, %laneid"
// CHECK: ptx.inst "ret"
// Without known_block_size, no .reqntid.
// CHECK: ptx.entry ".visible .entry dyn(
// CHECK-SAME: dyn_param_4)"
// CHECK-SAME: gpuopt.gpu_kernel = #gpuopt.gpu_kernel<module = "kernels", func = "dyn", param_args = [0, 0, 0, 0, 0], param_fields = [0, 1, 2, 3, 4], block = [], grid = []>
// CHECK-NOT: ptx.var ".shared .align 16 .b8 __dynamic_shmem__0"
// CHECK: ptx.inst "mov.b64 %rd5, __dynamic_shmem__0"
module {
  gpu.module @kernels {
    gpu.func @saxpy(%a: f32, %x: memref<?xf32>, %y: memref<?xf32>, %n: index) kernel
        attributes {known_block_size = array<i32: 128, 1, 1>,
                    known_grid_size = array<i32: 64, 1, 1>} {
      %bid = gpu.block_id x
      %bdim = gpu.block_dim x
      %tid = gpu.thread_id x
      %base = arith.muli %bid, %bdim : index
      %i = arith.addi %base, %tid : index
      %out = arith.cmpi uge, %i, %n : index
      cf.cond_br %out, ^exit, ^body
    ^exit:
      gpu.return
    ^body:
      %xv = memref.load %x[%i] : memref<?xf32>
      %yv = memref.load %y[%i] : memref<?xf32>
      %p = arith.mulf %a, %xv : f32
      %s = arith.addf %p, %yv : f32
      memref.store %s, %y[%i] : memref<?xf32>
      gpu.return
    }
    gpu.func @blocksum(%in: memref<?x?xf32>, %sums: memref<?xf32>)
        workgroup(%tile: memref<256xf32, #gpu.address_space<workgroup>>) kernel
        attributes {known_block_size = array<i32: 256, 1, 1>} {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c32 = arith.constant 32 : i32
      %c16 = arith.constant 16 : i32
      %bid = gpu.block_id x
      %tid = gpu.thread_id x
      %v = memref.load %in[%bid, %tid] : memref<?x?xf32>
      memref.store %v, %tile[%tid] : memref<256xf32, #gpu.address_space<workgroup>>
      gpu.barrier
      %w = memref.load %tile[%tid] : memref<256xf32, #gpu.address_space<workgroup>>
      %s, %ok = gpu.shuffle xor %w, %c16, %c32 : f32
      %t = arith.addf %w, %s : f32
      gpu.barrier
      %lane = nvvm.read.ptx.sreg.laneid : i32
      %c0i = arith.constant 0 : i32
      %first = arith.cmpi eq, %lane, %c0i : i32
      scf.if %first {
        memref.store %t, %sums[%bid] : memref<?xf32>
      }
      gpu.return
    }
    gpu.func @dyn(%x: memref<?xf32>) kernel {
      %tid = gpu.thread_id x
      %shmem = gpu.dynamic_shared_memory : memref<?xi8, #gpu.address_space<workgroup>>
      %c0 = arith.constant 0 : index
      %view = memref.view %shmem[%c0][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<128xf32, #gpu.address_space<workgroup>>
      %v = memref.load %x[%tid] : memref<?xf32>
      memref.store %v, %view[%tid] : memref<128xf32, #gpu.address_space<workgroup>>
      gpu.barrier
      %w = memref.load %view[%tid] : memref<128xf32, #gpu.address_space<workgroup>>
      memref.store %w, %x[%tid] : memref<?xf32>
      gpu.return
    }
  }
}

// -----

// Host code that launches a kernel keeps a gpu.binary of the same name (the
// PTX as it was captured); the kernels are in @kernels_ptx. Without chip=,
// the gpu.module's #nvvm.target chooses the chip; chip= wins over it.
// CHECK-LABEL: module attributes {gpu.container_module}
// CHECK: gpu.binary @kernels [#gpu.object<#nvvm.target<O = 3, chip = "sm_80">, properties = {O = 3 : i32}, assembly = "{{.*}}.visible .entry scale(
// CHECK: ptx.module @kernels_ptx version "7.0" target ["sm_80"]
// CHECK: ptx.entry ".visible .entry scale(
// CHECK: gpu.launch_func @kernels::@scale
// CHIP-LABEL: module attributes {gpu.container_module}
// CHIP: gpu.binary @kernels [#gpu.object<#nvvm.target<O = 3, chip = "sm_100a", features = "+ptx87">
module attributes {gpu.container_module} {
  gpu.module @kernels [#nvvm.target<chip = "sm_80">] {
    gpu.func @scale(%x: memref<?xf32>) kernel {
      %tid = gpu.thread_id x
      %v = memref.load %x[%tid] : memref<?xf32>
      %s = arith.addf %v, %v : f32
      memref.store %s, %x[%tid] : memref<?xf32>
      gpu.return
    }
  }
  func.func @main(%x: memref<?xf32>) {
    %c1 = arith.constant 1 : index
    gpu.launch_func @kernels::@scale blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%x : memref<?xf32>)
    return
  }
}

// -----

// A gpu.module without kernels (device functions only) stays as it is.
// CHECK-LABEL: gpu.module @library
// CHECK: gpu.func @helper
gpu.module @library {
  gpu.func @helper(%x: f32) -> f32 {
    gpu.return %x : f32
  }
}
