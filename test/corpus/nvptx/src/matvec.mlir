// Matrix-vector product y = A x for row-major A[M, K]: one warp per row.
// Lanes stride over the row, then reduce with gpu.shuffle down; lane 0
// writes the row result.  Launched with blockDim = (32, 4).
gpu.module @matvec_kernels {
  gpu.func @matvec_warp_per_row(%A: memref<?x?xf32>, %x: memref<?xf32>, %y: memref<?xf32>) kernel {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %c32 = arith.constant 32 : index
    %zero = arith.constant 0.0 : f32
    %width = arith.constant 32 : i32
    %m = memref.dim %A, %c0 : memref<?x?xf32>
    %k = memref.dim %A, %c1 : memref<?x?xf32>
    %lane = gpu.thread_id x
    %wy = gpu.thread_id y
    %bid = gpu.block_id x
    %row0 = arith.muli %bid, %c4 : index
    %row = arith.addi %row0, %wy : index
    %in_range = arith.cmpi ult, %row, %m : index
    scf.if %in_range {
      %partial = scf.for %j = %lane to %k step %c32 iter_args(%s = %zero) -> (f32) {
        %a = memref.load %A[%row, %j] : memref<?x?xf32>
        %xv = memref.load %x[%j] : memref<?xf32>
        %s2 = math.fma %a, %xv, %s : f32
        scf.yield %s2 : f32
      }
      %o16 = arith.constant 16 : i32
      %o8 = arith.constant 8 : i32
      %o4 = arith.constant 4 : i32
      %o2 = arith.constant 2 : i32
      %o1 = arith.constant 1 : i32
      %t16, %v16 = gpu.shuffle down %partial, %o16, %width : f32
      %a16 = arith.addf %partial, %t16 : f32
      %t8, %v8 = gpu.shuffle down %a16, %o8, %width : f32
      %a8 = arith.addf %a16, %t8 : f32
      %t4, %v4 = gpu.shuffle down %a8, %o4, %width : f32
      %a4 = arith.addf %a8, %t4 : f32
      %t2, %v2 = gpu.shuffle down %a4, %o2, %width : f32
      %a2 = arith.addf %a4, %t2 : f32
      %t1, %v1 = gpu.shuffle down %a2, %o1, %width : f32
      %sum = arith.addf %a2, %t1 : f32
      %is_lane0 = arith.cmpi eq, %lane, %c0 : index
      scf.if %is_lane0 {
        memref.store %sum, %y[%row] : memref<?xf32>
      }
    }
    gpu.return
  }
}
