//===- Passes.td - gpu-opt's conversion passes -------------*- tablegen -*-===//
//
// Between MLIR's gpu dialect and the ptx dialect: `--gpu-to-ptx` captures
// gpu.func kernels by lowering them through NVVM and LLVM's NVPTX backend
// and importing the PTX; `--ptx-to-gpu-binary` gives the host code back a
// gpu.binary of the (fused, probed) kernels and launches them.
//
//===----------------------------------------------------------------------===//

#ifndef GPUOPT_CONVERSION_PASSES
#define GPUOPT_CONVERSION_PASSES

include "mlir/Pass/PassBase.td"

def GPUToPTX : Pass<"gpu-to-ptx", "mlir::ModuleOp"> {
  let summary = "Lower gpu.module kernels to PTX in-process and import it";
  let description = [{
    Lowers every top-level `gpu.module` that holds `gpu.func` kernels with
    MLIR's NVVM pipeline and LLVM's NVPTX backend, in this process, and
    replaces it by the `ptx.module` of the PTX, under the same name. When
    host code launches its kernels, a `gpu.binary` of the PTX takes the
    name instead, so that the launches stay valid, and the `ptx.module` is
    named `NAME_ptx`. Each
    kernel keeps its name and parameter order; its `ptx.entry` carries a
    `gpuopt.gpu_kernel` attribute (a `#gpuopt.gpu_kernel`) that maps each PTX
    parameter back to the `gpu.func` argument it passes (a memref of rank r
    becomes 3 + 2r parameters: MLIR's memref descriptor) and records the
    function's `known_block_size` and `known_grid_size`. A `known_block_size`
    becomes `.reqntid` (not `.maxntid`, which NVVM's lowering writes), so the
    kernel analysis and fusion know the block exactly.

    Math functions (`math.exp`, `math.fma`, ...) lower to calls into CUDA's
    libdevice, which is linked from the toolkit of `cuda-path=` (or the
    first of `$CUDA_ROOT`, `$CUDA_HOME`, `$CUDA_PATH`, ptxas's toolkit and
    `/usr/local/cuda` that has `nvvm/libdevice/libdevice.10.bc`); a kernel
    that needs it when there is none is refused, naming the functions.

    The target is `chip=` and `features=`, else the `#nvvm.target` the
    gpu.module carries, else `sm_90a`; without features, the lowest PTX ISA
    version the chip needs (`+ptx80` for `sm_90a`). Host code (`func.func`
    with `gpu.launch_func`) is left as it is: `--ptx-to-gpu-binary` gives it
    back a `gpu.binary` after fusion and probes.

    Before:
    ```mlir
    gpu.module @kernels {
      gpu.func @scale(%x: memref<?xf32>, %n: index) kernel
          attributes {known_block_size = array<i32: 128, 1, 1>} {...}
    }
    ```
    After `--gpu-to-ptx="chip=sm_90a"`:
    ```mlir
    ptx.module @kernels version "8.0" target ["sm_90a"] address_size 64 {
      ptx.entry ".visible .entry scale(.param .u64 .ptr .align 1 scale_param_0,
          ..., .param .u64 scale_param_5) .reqntid 128, 1, 1"
          attributes {gpuopt.gpu_kernel = #gpuopt.gpu_kernel<module = "kernels",
            func = "scale", param_args = [0, 0, 0, 0, 0, 1],
            param_fields = [0, 1, 2, 3, 4, 0], block = [128, 1, 1], grid = []>}
          {...}
    }
    ```
  }];
  let dependentDialects = ["gpuopt::GPUOptDialect", "gpuopt::ptx::PTXDialect",
                           "mlir::LLVM::LLVMDialect",
                           "mlir::NVVM::NVVMDialect"];
  let options = [
    Option<"chip", "chip", "std::string", /*default=*/"\"\"",
           "Target SM (default: the gpu.module's #nvvm.target, else sm_90a)">,
    Option<"features", "features", "std::string", /*default=*/"\"\"",
           "PTX ISA features, e.g. +ptx87 (default: the lowest the chip "
           "needs)">,
    Option<"optLevel", "opt-level", "int", /*default=*/"3",
           "LLVM optimization level (0-3)">,
    Option<"indexBitwidth", "index-bitwidth", "unsigned", /*default=*/"64",
           "Bit width of the index type in the lowered kernels">,
    Option<"cudaPath", "cuda-path", "std::string", /*default=*/"\"\"",
           "CUDA toolkit whose nvvm/libdevice provides math functions "
           "(default: $CUDA_ROOT, $CUDA_HOME, $CUDA_PATH, ptxas's toolkit, "
           "/usr/local/cuda)">,
  ];
  let statistics = [
    Statistic<"numKernels", "kernels", "gpu.func kernels lowered to PTX">,
  ];
}

def PTXToGPUBinary : Pass<"ptx-to-gpu-binary", "mlir::ModuleOp"> {
  let summary = "Give host code back a gpu.binary of the captured, fused "
                "kernels";
  let description = [{
    After `--gpu-to-ptx` captured the kernels that host code launches (the
    `gpu.module @B` became a `gpu.binary @B` and a `ptx.module @B_ptx`) and
    `--hfuse` fused some of them, rewrites the host code so that it launches
    what the ptx.modules now hold, and replaces those ptx.modules by
    `gpu.binary` ops that MLIR's `--gpu-to-llvm` lowers:

    * A `gpu.launch_func @B::@k` of a kernel still in `ptx.module @B_ptx`
      stays as it is; `gpu.binary @B` is regenerated from `@B_ptx`, which is
      erased.
    * The launches of the kernels that a fused `ptx.entry @F` was made of
      (its `gpuopt.fusion` parts) become one launch of `@F::@F` at the place
      of the last of them, with the fused grid, the fused entry's `.reqntid`
      as its block, the fused dynamic shared memory and the parts' operands
      in part order; the fused `ptx.module @F` becomes `gpu.binary @F`.
      Each part must be launched exactly once, in one block, synchronously,
      with the grid, block and dynamic shared memory it was fused for, as
      constants, with operands that make as many PTX parameters as its
      `arg_map` names (a memref of rank r makes 3 + 2r); nothing between the
      first and the last of the launches may touch memory other than by
      allocating it (it could read what an earlier kernel wrote).
    * A `gpu.binary` of captured kernels that no launch uses any more is
      erased. Launches of `gpu.module`s and of binaries that `--gpu-to-ptx`
      did not make are left alone, and so are ptx.modules that no host code
      launches.

    The pass refuses (an error on the launch, with what to change) what it
    cannot launch faithfully, and launches of probed kernels: the probe
    buffers are parameters that the host code does not pass; write the PTX
    or a cubin with its launch manifest (`--manifest`) and run it with
    gpu-run instead.

    Each binary holds one `#gpu.object` whose `#nvvm.target` names the
    ptx.module's `.target` and `.version` (`+ptx80` for 8.0): its PTX
    (`format=assembly`, which the CUDA driver compiles when it loads the
    module, at the `O` of its properties, as upstream's
    `gpu-module-to-binary` writes it), or the cubin that ptxas makes of it
    (`format=bin`).

    Before (after `--gpu-to-ptx --hfuse="strategy=thread"`):
    ```mlir
    gpu.binary @kernels [#gpu.object<...>]
    func.func @main(%x: memref<?xf32>, %n: index, %s: memref<?xf32>) {
      gpu.launch_func @kernels::@a blocks in (%c64, %c1, %c1)
          threads in (%c128, %c1, %c1) args(%x : memref<?xf32>, %n : index)
      gpu.launch_func @kernels::@b blocks in (%c32, %c1, %c1)
          threads in (%c256, %c1, %c1) args(%s : memref<?xf32>)
      return
    }
    ptx.module @a_b_fused version "8.0" target ["sm_90a"] address_size 64 {
      ptx.entry ".visible .entry a_b_fused(...) .reqntid 384, 1, 1"
          attributes {gpuopt.fusion = #gpuopt.fusion_info<strategy = thread,
            grid = [64, 1, 1], dynamic_smem = 0, parts = [
              <kernel = "a", module = "kernels_ptx", grid = [64, 1, 1], ...,
               arg_map = [0, 1, 2, 3, 4, 5]>,
              <kernel = "b", module = "kernels_ptx", grid = [32, 1, 1], ...,
               arg_map = [6, 7, 8, 9, 10]>]>} {...}
    }
    ```
    After `--ptx-to-gpu-binary`:
    ```mlir
    func.func @main(%x: memref<?xf32>, %n: index, %s: memref<?xf32>) {
      gpu.launch_func @a_b_fused::@a_b_fused blocks in (%c64, %c1, %c1)
          threads in (%c384, %c1, %c1)
          args(%x : memref<?xf32>, %n : index, %s : memref<?xf32>)
      return
    }
    gpu.binary @a_b_fused [#gpu.object<#nvvm.target<O = 3, chip = "sm_90a",
        features = "+ptx80">, properties = {O = 3 : i32}, assembly = "...">]
    ```
  }];
  let dependentDialects = ["mlir::arith::ArithDialect",
                           "mlir::gpu::GPUDialect",
                           "mlir::NVVM::NVVMDialect"];
  let options = [
    Option<"format", "format", "std::string", /*default=*/"\"assembly\"",
           "What the binaries hold: assembly (PTX, compiled by the driver "
           "when loaded) or bin (a cubin from ptxas)">,
    Option<"chip", "chip", "std::string", /*default=*/"\"\"",
           "format=bin: the chip ptxas compiles for (default: each "
           "module's .target)">,
    Option<"ptxas", "ptxas", "std::string", /*default=*/"\"\"",
           "format=bin: the ptxas to run (default: $PTXAS, PATH, then the "
           "CUDA toolkit's)">,
  ];
  let statistics = [
    Statistic<"numBinaries", "binaries", "gpu.binary ops written from "
              "ptx.modules">,
    Statistic<"numFusedLaunches", "fused-launches", "Launches of fused "
              "kernels made from their parts' launches">,
  ];
}

#endif // GPUOPT_CONVERSION_PASSES
