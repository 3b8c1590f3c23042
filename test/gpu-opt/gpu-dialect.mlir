// The user's command on what an ML compiler hands over: a gpu.module of two
// gpu.func kernels (one returns early, one reduces in workgroup memory with
// barriers) and host code that launches them. gpu-opt lowers the kernels to
// PTX in-process (--gpu-to-ptx), fuses and probes them, and writes PTX, or
// MLIR whose host code launches the fused kernel from a gpu.binary.
// RUN: rm -rf %t && mkdir -p %t
// RUN: gpu-opt --hfuse=strategy=thread --probe=block_sched %s -o %t/pair.ptx --manifest %t/pair.json
// RUN: FileCheck %s --check-prefix=PTX < %t/pair.ptx
// RUN: FileCheck %s --check-prefix=MANIFEST < %t/pair.json
//
// MLIR output keeps the host code, launching the fused kernel (probes add a
// buffer the host code does not pass, so only fusion here).
// RUN: gpu-opt --hfuse=strategy=thread %s -o %t/pair.mlir
// RUN: FileCheck %s --check-prefix=HOST < %t/pair.mlir
// The same through the one-process path (bytecode output).
// RUN: gpu-opt --hfuse=strategy=thread %s -o %t/pair.mlirbc
// RUN: gpu-opt %t/pair.mlirbc | FileCheck %s --check-prefix=HOST
// Without gpu-opt's PTX passes, an MLIR input is left to MLIR's passes.
// RUN: gpu-opt --canonicalize %s | FileCheck %s --check-prefix=UNTOUCHED
//
// Without fusion, the kernels' manifest has the grid of known_grid_size.
// RUN: gpu-opt %s -o %t/apart.ptx --manifest %t/apart.json
// RUN: FileCheck %s --check-prefix=APART < %t/apart.json
//
// Mixed inputs: a PTX kernel and a gpu.func fuse.
// RUN: gpu-opt %S/Inputs/add-one.ptx %s --hfuse="strategy=interleave kernels=add_one,blocksum grids=4,4" -o %t/mixed.ptx --manifest %t/mixed.json
// RUN: FileCheck %s --check-prefix=MIXED < %t/mixed.json
//
// --chip chooses the target of the lowered kernels; refused with PTX input
// and PTX output.
// RUN: gpu-opt --hfuse=strategy=thread %s --chip=sm_100a -o %t/sm100.ptx
// RUN: FileCheck %s --check-prefix=CHIP < %t/sm100.ptx
// RUN: not gpu-opt %S/Inputs/add-one.ptx --chip=sm_100a -o %t/none.ptx 2>&1 | FileCheck %s --check-prefix=CHIP-PTX

// PTX: .target sm_90a
// PTX: .visible .entry early_blocksum_fused(
// 12 parameters of `early` (two memrefs, a scalar, and the f32), 10 of
// `blocksum`, then the probe buffer.
// PTX-COUNT-22: .param
// PTX: .param .u64 {{.*}}block_sched
// PTX: .reqntid 384, 1, 1
// The early return is a branch to the end of its part; the reduction's
// barriers wait for its 256 threads only.
// PTX: $L__BB0_1:
// PTX-NEXT: bra $__hfuse_end_0;
// PTX-NEXT: }
// PTX-NEXT: $__hfuse_end_0:
// PTX-NOT: ret;
// PTX: .shared .align 4 .b8 __wg_blocksum_0[1024];
// PTX-NOT: ret;
// PTX: bar.sync 0, 256;
// PTX-NOT: bar.sync 0;
// PTX: $__hfuse_end_1:

// MANIFEST: "fused_from": [
// MANIFEST: "grid": [
// MANIFEST-NEXT: 8,
// MANIFEST: "kernel": "early",
// MANIFEST-NEXT: "module": "kernels_ptx",
// MANIFEST: "grid": [
// MANIFEST-NEXT: 4,
// MANIFEST: "kernel": "blocksum",
// MANIFEST: "name": "early_blocksum_fused",
// MANIFEST: "probe": "block_sched",

// HOST-LABEL: module attributes {gpu.container_module}
// HOST-NOT: ptx.module
// HOST-NOT: gpu.module
// HOST: func.func @main(%[[A:.*]]: f32, %[[X:.*]]: memref<?xf32>, %[[Y:.*]]: memref<?xf32>, %[[N:.*]]: index, %[[IN:.*]]: memref<?xf32>, %[[SUMS:.*]]: memref<?xf32>)
// The fused launch's sizes are new constants after the original ones.
// HOST: arith.constant 256 : index
// HOST-NEXT: %[[C8:.*]] = arith.constant 8 : index
// HOST-NEXT: %[[C1:.*]] = arith.constant 1 : index
// HOST-NEXT: %[[C384:.*]] = arith.constant 384 : index
// HOST: gpu.launch_func @early_blocksum_fused::@early_blocksum_fused blocks in (%[[C8]], %[[C1]], %[[C1]]) threads in (%[[C384]], %[[C1]], %[[C1]]) args(%[[A]] : f32, %[[X]] : memref<?xf32>, %[[Y]] : memref<?xf32>, %[[N]] : index, %[[IN]] : memref<?xf32>, %[[SUMS]] : memref<?xf32>)
// HOST-NOT: gpu.launch_func
// HOST: gpu.binary @early_blocksum_fused [#gpu.object<#nvvm.target<O = 3, chip = "sm_90a", features = "+ptx80">, properties = {O = 3 : i32}, assembly = "{{.*}}.entry early_blocksum_fused(
// HOST-NOT: gpu.binary
// HOST-NOT: ptx.module

// APART: "grid": [
// APART-NEXT: 8,
// APART: "name": "early",
// APART: "grid": [
// APART-NEXT: 4,
// APART: "name": "blocksum",

// UNTOUCHED: gpu.module @kernels
// UNTOUCHED: gpu.launch_func @kernels::@early

// MIXED: "kernel": "add_one",
// MIXED: "module": "add-one",
// MIXED: "kernel": "blocksum",
// MIXED: "module": "kernels_ptx",
// MIXED: "fusion_strategy": "interleave",

// CHIP: .target sm_100a
// CHIP-PTX: error: --chip, --ptxas and --ptxas-option go with cubin output

module attributes {gpu.container_module} {
  gpu.module @kernels {
    // y[i] = a * x[i] + y[i] for i < n; the threads past n return early.
    gpu.func @early(%a: f32, %x: memref<?xf32>, %y: memref<?xf32>, %n: index) kernel
        attributes {known_block_size = array<i32: 128, 1, 1>,
                    known_grid_size = array<i32: 8, 1, 1>} {
      %bid = gpu.block_id x
      %bdim = gpu.block_dim x
      %tid = gpu.thread_id x
      %base = arith.muli %bid, %bdim : index
      %i = arith.addi %base, %tid : index
      %past = arith.cmpi uge, %i, %n : index
      cf.cond_br %past, ^exit, ^body
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
    // sums[b] = the sum of in[256 b .. 256 b + 255], a tree in workgroup
    // memory with a barrier after each step.
    gpu.func @blocksum(%in: memref<?xf32>, %sums: memref<?xf32>)
        workgroup(%tile: memref<256xf32, #gpu.address_space<workgroup>>) kernel
        attributes {known_block_size = array<i32: 256, 1, 1>,
                    known_grid_size = array<i32: 4, 1, 1>} {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c128 = arith.constant 128 : index
      %bid = gpu.block_id x
      %bdim = gpu.block_dim x
      %tid = gpu.thread_id x
      %base = arith.muli %bid, %bdim : index
      %i = arith.addi %base, %tid : index
      %v = memref.load %in[%i] : memref<?xf32>
      memref.store %v, %tile[%tid] : memref<256xf32, #gpu.address_space<workgroup>>
      gpu.barrier
      %last = scf.while (%s = %c128) : (index) -> index {
        %more = arith.cmpi ugt, %s, %c0 : index
        scf.condition(%more) %s : index
      } do {
      ^bb0(%s: index):
        %low = arith.cmpi ult, %tid, %s : index
        scf.if %low {
          %j = arith.addi %tid, %s : index
          %l = memref.load %tile[%tid] : memref<256xf32, #gpu.address_space<workgroup>>
          %r = memref.load %tile[%j] : memref<256xf32, #gpu.address_space<workgroup>>
          %t = arith.addf %l, %r : f32
          memref.store %t, %tile[%tid] : memref<256xf32, #gpu.address_space<workgroup>>
        }
        gpu.barrier
        %half = arith.shrui %s, %c1 : index
        scf.yield %half : index
      }
      %first = arith.cmpi eq, %tid, %c0 : index
      scf.if %first {
        %t = memref.load %tile[%c0] : memref<256xf32, #gpu.address_space<workgroup>>
        memref.store %t, %sums[%bid] : memref<?xf32>
      }
      gpu.return
    }
  }
  func.func @main(%a: f32, %x: memref<?xf32>, %y: memref<?xf32>, %n: index,
                  %in: memref<?xf32>, %sums: memref<?xf32>) {
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %c8 = arith.constant 8 : index
    %c128 = arith.constant 128 : index
    %c256 = arith.constant 256 : index
    gpu.launch_func @kernels::@early blocks in (%c8, %c1, %c1)
        threads in (%c128, %c1, %c1)
        args(%a : f32, %x : memref<?xf32>, %y : memref<?xf32>, %n : index)
    gpu.launch_func @kernels::@blocksum blocks in (%c4, %c1, %c1)
        threads in (%c256, %c1, %c1)
        args(%in : memref<?xf32>, %sums : memref<?xf32>)
    return
  }
}
