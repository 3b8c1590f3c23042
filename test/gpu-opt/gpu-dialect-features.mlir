// What gpu.func kernels use survives capture, fusion and probes: subgroup
// shuffles, NVVM intrinsics, workgroup attributions, barriers and dynamic
// shared memory (each part of a fused kernel gets its own).
// RUN: gpu-opt --hfuse="strategy=thread smem=0,512" --probe=block_sched %s -o %t.ptx --manifest %t.json
// RUN: FileCheck %s < %t.ptx
// RUN: FileCheck %s --check-prefix=MANIFEST < %t.json
// RUN: %if ptxas %{ %ptxas -arch=sm_90a %t.ptx -o %t.cubin %}

// The fused kernel's dynamic shared memory, which the parts share out.
// CHECK: .extern .shared .align 1024 .b8 __hfuse_dynamic_smem[];
// CHECK: .visible .entry warpsum_stage_fused(
// CHECK: .reqntid 256, 1, 1
// First part: threads 0-127, the warp shuffle and the lane id as written.
// CHECK: bar.sync 0, 128;
// CHECK: shfl.sync.bfly.b32 {{.*}}, 16, 31, -1;
// CHECK: mov.u32 {{%r[0-9]+}}, %laneid;
// CHECK: $__hfuse_end_0:
// Second part: its dynamic shared memory starts after the first part's
// (none), its barrier is its own, its threads count from 0.
// CHECK: sub.u32 %__hf_local_tid, %__hf_local_tid, 128;
// CHECK: mov.b64 {{%rd[0-9]+}}, __hfuse_dynamic_smem;
// CHECK: bar.sync 1, 128;
// CHECK: $__hfuse_end_1:

// MANIFEST: "dynamic_smem": 0,
// MANIFEST: "kernel": "warpsum",
// MANIFEST: "dynamic_smem": 512,
// MANIFEST-NEXT: "dynamic_smem_offset": 0,
// MANIFEST: "kernel": "stage",
// The fused launch takes both parts' dynamic shared memory.
// MANIFEST: "dynamic_smem": 512,
// MANIFEST: "probe": "block_sched",

module {
  gpu.module @kernels {
    // out[b*4 + w] = per-warp sums of in, by butterfly shuffles; lane 0 of
    // each warp writes (NVVM's lane id intrinsic).
    gpu.func @warpsum(%in: memref<?xf32>, %out: memref<?xf32>)
        workgroup(%tile: memref<128xf32, #gpu.address_space<workgroup>>) kernel
        attributes {known_block_size = array<i32: 128, 1, 1>,
                    known_grid_size = array<i32: 4, 1, 1>} {
      %c32 = arith.constant 32 : i32
      %c16 = arith.constant 16 : i32
      %c0i = arith.constant 0 : i32
      %c4 = arith.constant 4 : index
      %c32i = arith.constant 32 : index
      %bid = gpu.block_id x
      %tid = gpu.thread_id x
      %bdim = gpu.block_dim x
      %base = arith.muli %bid, %bdim : index
      %i = arith.addi %base, %tid : index
      %v = memref.load %in[%i] : memref<?xf32>
      memref.store %v, %tile[%tid] : memref<128xf32, #gpu.address_space<workgroup>>
      gpu.barrier
      %w = memref.load %tile[%tid] : memref<128xf32, #gpu.address_space<workgroup>>
      %s, %ok = gpu.shuffle xor %w, %c16, %c32 : f32
      %t = arith.addf %w, %s : f32
      %lane = nvvm.read.ptx.sreg.laneid : i32
      %first = arith.cmpi eq, %lane, %c0i : i32
      scf.if %first {
        %warp = arith.divui %tid, %c32i : index
        %slot0 = arith.muli %bid, %c4 : index
        %slot = arith.addi %slot0, %warp : index
        memref.store %t, %out[%slot] : memref<?xf32>
      }
      gpu.return
    }
    // x[i] = x[i] staged through dynamic shared memory and back, after a
    // barrier.
    gpu.func @stage(%x: memref<?xf32>) kernel
        attributes {known_block_size = array<i32: 128, 1, 1>,
                    known_grid_size = array<i32: 4, 1, 1>} {
      %c0 = arith.constant 0 : index
      %bid = gpu.block_id x
      %tid = gpu.thread_id x
      %bdim = gpu.block_dim x
      %base = arith.muli %bid, %bdim : index
      %i = arith.addi %base, %tid : index
      %shmem = gpu.dynamic_shared_memory : memref<?xi8, #gpu.address_space<workgroup>>
      %view = memref.view %shmem[%c0][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<128xf32, #gpu.address_space<workgroup>>
      %v = memref.load %x[%i] : memref<?xf32>
      memref.store %v, %view[%tid] : memref<128xf32, #gpu.address_space<workgroup>>
      gpu.barrier
      %w = memref.load %view[%tid] : memref<128xf32, #gpu.address_space<workgroup>>
      memref.store %w, %x[%i] : memref<?xf32>
      gpu.return
    }
  }
}
