// Tiled matrix transpose out = in^T through shared memory.
// 32x32 tiles, launched with 32x8 threads per block; each thread moves 4
// elements.  The tile is padded to 32x33 to avoid shared-memory bank
// conflicts, and gpu.barrier separates the load and store phases.
gpu.module @transpose_kernels {
  gpu.func @transpose_smem(%in: memref<?x?xf32>, %out: memref<?x?xf32>)
      workgroup(%tile: memref<32x33xf32, #gpu.address_space<workgroup>>) kernel {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c8 = arith.constant 8 : index
    %c32 = arith.constant 32 : index
    %rows = memref.dim %in, %c0 : memref<?x?xf32>
    %cols = memref.dim %in, %c1 : memref<?x?xf32>
    %bx = gpu.block_id x
    %by = gpu.block_id y
    %tx = gpu.thread_id x
    %ty = gpu.thread_id y
    %col0 = arith.muli %bx, %c32 : index
    %row0 = arith.muli %by, %c32 : index
    // Load phase: in[row0 + ty + j][col0 + tx] -> tile[ty + j][tx]
    %gc = arith.addi %col0, %tx : index
    %gc_ok = arith.cmpi ult, %gc, %cols : index
    scf.for %j = %c0 to %c32 step %c8 {
      %ly = arith.addi %ty, %j : index
      %gr = arith.addi %row0, %ly : index
      %gr_ok = arith.cmpi ult, %gr, %rows : index
      %ok = arith.andi %gr_ok, %gc_ok : i1
      scf.if %ok {
        %v = memref.load %in[%gr, %gc] : memref<?x?xf32>
        memref.store %v, %tile[%ly, %tx] : memref<32x33xf32, #gpu.address_space<workgroup>>
      }
    }
    gpu.barrier
    // Store phase: tile[tx][ty + j] -> out[col0 + ty + j][row0 + tx]
    %oc = arith.addi %row0, %tx : index
    %oc_ok = arith.cmpi ult, %oc, %rows : index
    scf.for %j = %c0 to %c32 step %c8 {
      %ly = arith.addi %ty, %j : index
      %or = arith.addi %col0, %ly : index
      %or_ok = arith.cmpi ult, %or, %cols : index
      %ok = arith.andi %or_ok, %oc_ok : i1
      scf.if %ok {
        %v = memref.load %tile[%tx, %ly] : memref<32x33xf32, #gpu.address_space<workgroup>>
        memref.store %v, %out[%or, %oc] : memref<?x?xf32>
      }
    }
    gpu.return
  }
}
