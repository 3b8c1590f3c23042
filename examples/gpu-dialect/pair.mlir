// Two independent kernels of one step of a model, as an ML compiler hands
// them over: a gpu.module of gpu.func kernels (memref arguments, block and
// grid sizes known at compile time) and host code that launches them.
//
// Each kernel alone is small: 528 blocks of 256 threads, half of the 1056
// such blocks that an H100 (132 SMs, 8 blocks of 256 threads per SM) runs at
// once. Apart, each launch leaves half of the GPU idle. One kernel is
// compute-bound (logistic: 192 float operations per element loaded), the
// other memory-bound (blocksum), the pair that horizontal fusion is for.
// gpu-opt lowers the module to PTX, fuses and probes it:
//
//   gpu-opt --hfuse=min-gain=0.10 --probe=block_sched pair.mlir -o pair.cubin
//
// The fusion model (strategy=auto) chooses a thread split, each fused block
// of 512 threads running a block of each kernel; min-gain=0.10 accepts its
// estimate, which without a GPU measurement (measure=) only ranks, and a
// bare --hfuse leaves the kernels apart. run.sh beside this file times the
// kernels apart and fused.
//
// examples/gpu-dialect/pair.cu is the same pair in CUDA, with the same
// arithmetic, so that both builds write bit-identical outputs.
module attributes {gpu.container_module} {
  gpu.module @kernels {
    // x[i] = 64 steps of the logistic map v <- (r * v) * (1 - v) from x[i],
    // for i < n: per step a rounded subtract and two rounded multiplies (no
    // multiply feeds an add, so there is nothing to contract into an fma),
    // in registers between one load and one store. n is not a multiple of
    // 256: the threads of the last block past n return early.
    //
    // The steps are a loop of 4 over a loop of 16 rather than one loop of 64
    // because gpu-opt's fusion model classifies a kernel by the instruction
    // mix of its PTX (docs/fusion.md, "Choosing"): LLVM unrolls this nest
    // fully, so the PTX shows all 192 multiplies and subtracts, where a
    // loop of 64 is unrolled only partly and would look memory-bound.
    gpu.func @logistic(%r: f32, %x: memref<?xf32>, %n: index) kernel
        attributes {known_block_size = array<i32: 256, 1, 1>,
                    known_grid_size = array<i32: 528, 1, 1>} {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c4 = arith.constant 4 : index
      %c16 = arith.constant 16 : index
      %one = arith.constant 1.0 : f32
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
      %x0 = memref.load %x[%i] : memref<?xf32>
      %xn = scf.for %k = %c0 to %c4 step %c1 iter_args(%v = %x0) -> f32 {
        %w = scf.for %j = %c0 to %c16 step %c1 iter_args(%u = %v) -> f32 {
          %rest = arith.subf %one, %u : f32
          %ru = arith.mulf %r, %u : f32
          %next = arith.mulf %ru, %rest : f32
          scf.yield %next : f32
        }
        scf.yield %w : f32
      }
      memref.store %xn, %x[%i] : memref<?xf32>
      gpu.return
    }

    // sums[b] = the sum of in[256 b .. 256 b + 255]: each block loads its 256
    // values into workgroup memory, then halves them in a tree (128, 64, ...,
    // 1 adds per step, a barrier after each), and thread 0 writes the total.
    gpu.func @blocksum(%in: memref<?xf32>, %sums: memref<?xf32>)
        workgroup(%tile: memref<256xf32, #gpu.address_space<workgroup>>) kernel
        attributes {known_block_size = array<i32: 256, 1, 1>,
                    known_grid_size = array<i32: 528, 1, 1>} {
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

  // The host side, the function an ML framework calls with its own device
  // buffers (host/main.c is such a caller): x of n floats (n <= 528 * 256),
  // in of 528 * 256 floats, sums of 528. Both launches are synchronous and
  // at the sizes the kernels were compiled for, as mlir-runner runs them
  // with MLIR's CUDA runtime wrappers (host/mgpu.c has the ones needed).
  // llvm.emit_c_interface gives C the entry point _mlir_ciface_forward,
  // which takes each memref as a pointer to its descriptor.
  func.func @forward(%r: f32, %x: memref<?xf32>, %n: index,
                     %in: memref<?xf32>, %sums: memref<?xf32>)
      attributes {llvm.emit_c_interface} {
    %c1 = arith.constant 1 : index
    %c256 = arith.constant 256 : index
    %c528 = arith.constant 528 : index
    gpu.launch_func @kernels::@logistic blocks in (%c528, %c1, %c1)
        threads in (%c256, %c1, %c1)
        args(%r : f32, %x : memref<?xf32>, %n : index)
    gpu.launch_func @kernels::@blocksum blocks in (%c528, %c1, %c1)
        threads in (%c256, %c1, %c1)
        args(%in : memref<?xf32>, %sums : memref<?xf32>)
    return
  }
}
