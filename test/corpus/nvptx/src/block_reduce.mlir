// Sum reduction: each 256-thread block reduces a grid-strided slice of the
// input with warp shuffles (gpu.shuffle xor), combines the 8 warp partials
// through shared memory, and thread 0 atomically adds the block result.
gpu.module @reduce_kernels {
  gpu.func @block_reduce_sum(%n: index, %in: memref<?xf32>, %out: memref<1xf32>)
      workgroup(%partials: memref<8xf32, #gpu.address_space<workgroup>>)
      kernel attributes {known_block_size = array<i32: 256, 1, 1>} {
    %c0 = arith.constant 0 : index
    %c32 = arith.constant 32 : index
    %c256 = arith.constant 256 : index
    %zero = arith.constant 0.0 : f32
    %width = arith.constant 32 : i32
    %bid = gpu.block_id x
    %nblocks = gpu.grid_dim x
    %tid = gpu.thread_id x
    %start0 = arith.muli %bid, %c256 : index
    %start = arith.addi %start0, %tid : index
    %stride = arith.muli %nblocks, %c256 : index
    // Grid-stride accumulation.
    %acc = scf.for %i = %start to %n step %stride iter_args(%s = %zero) -> (f32) {
      %v = memref.load %in[%i] : memref<?xf32>
      %s2 = arith.addf %s, %v : f32
      scf.yield %s2 : f32
    }
    // Butterfly reduction within the warp.
    %o16 = arith.constant 16 : i32
    %o8 = arith.constant 8 : i32
    %o4 = arith.constant 4 : i32
    %o2 = arith.constant 2 : i32
    %o1 = arith.constant 1 : i32
    %s16, %v16 = gpu.shuffle xor %acc, %o16, %width : f32
    %a16 = arith.addf %acc, %s16 : f32
    %s8, %v8 = gpu.shuffle xor %a16, %o8, %width : f32
    %a8 = arith.addf %a16, %s8 : f32
    %s4, %v4 = gpu.shuffle xor %a8, %o4, %width : f32
    %a4 = arith.addf %a8, %s4 : f32
    %s2, %v2 = gpu.shuffle xor %a4, %o2, %width : f32
    %a2 = arith.addf %a4, %s2 : f32
    %s1, %v1 = gpu.shuffle xor %a2, %o1, %width : f32
    %warp_sum = arith.addf %a2, %s1 : f32
    %lane = arith.remui %tid, %c32 : index
    %warp = arith.divui %tid, %c32 : index
    %is_lane0 = arith.cmpi eq, %lane, %c0 : index
    scf.if %is_lane0 {
      memref.store %warp_sum, %partials[%warp] : memref<8xf32, #gpu.address_space<workgroup>>
    }
    gpu.barrier
    // First warp folds the 8 partials (lanes >= 8 contribute 0).
    %is_warp0 = arith.cmpi eq, %warp, %c0 : index
    scf.if %is_warp0 {
      %c8 = arith.constant 8 : index
      %has = arith.cmpi ult, %lane, %c8 : index
      %p = scf.if %has -> (f32) {
        %pv = memref.load %partials[%lane] : memref<8xf32, #gpu.address_space<workgroup>>
        scf.yield %pv : f32
      } else {
        scf.yield %zero : f32
      }
      %t4, %w4 = gpu.shuffle down %p, %o4, %width : f32
      %b4 = arith.addf %p, %t4 : f32
      %t2, %w2 = gpu.shuffle down %b4, %o2, %width : f32
      %b2 = arith.addf %b4, %t2 : f32
      %t1, %w1 = gpu.shuffle down %b2, %o1, %width : f32
      %total = arith.addf %b2, %t1 : f32
      scf.if %is_lane0 {
        %old = memref.atomic_rmw addf %total, %out[%c0] : (f32, memref<1xf32>) -> f32
      }
    }
    gpu.return
  }
}
