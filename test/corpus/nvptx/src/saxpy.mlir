// SAXPY, y[i] = a * x[i] + y[i]: one thread per element, bounds-checked.
// Dynamic memrefs are passed as expanded memref descriptors (MLIR's default ABI).
gpu.module @saxpy_kernels {
  gpu.func @saxpy(%n: i32, %a: f32, %x: memref<?xf32>, %y: memref<?xf32>) kernel {
    %bid = gpu.block_id x
    %bdim = gpu.block_dim x
    %tid = gpu.thread_id x
    %base = arith.muli %bid, %bdim : index
    %i = arith.addi %base, %tid : index
    %ni = arith.index_cast %n : i32 to index
    %inb = arith.cmpi ult, %i, %ni : index
    scf.if %inb {
      %xv = memref.load %x[%i] : memref<?xf32>
      %yv = memref.load %y[%i] : memref<?xf32>
      %r = math.fma %a, %xv, %yv : f32
      memref.store %r, %y[%i] : memref<?xf32>
    }
    gpu.return
  }
}
