//===- Passes.td - gpu-opt's analysis passes ---------------*- tablegen -*-===//
//
// Passes that print what an analysis found, for tests and for users who want
// to know what fusion and probes will see in a kernel.
//
//===----------------------------------------------------------------------===//

#ifndef GPUOPT_ANALYSIS_PASSES
#define GPUOPT_ANALYSIS_PASSES

include "mlir/Pass/PassBase.td"

def PrintKernelAnalysis : Pass<"print-kernel-analysis", "mlir::ModuleOp"> {
  let summary = "Print the kernel analysis of every .entry";
  let description = [{
    Runs the kernel analysis that horizontal fusion and probes share over each
    `.entry` with a body (and the device functions it calls) and prints what
    it found to stdout: launch contract, special registers, barriers by form,
    mbarrier objects, exits, shared memory, calls, launch-level features,
    instruction counts and the first reason the kernel cannot be fused, if
    any. The IR is left as it is.

    Input:
    ```
    .visible .entry scale(.param .u64 out, .param .u32 n) .reqntid 128, 1, 1
    { ... mov.u32 %r2, %tid.x; ... @%p1 ret; ... bar.sync 0; ... ret; }
    ```
    Output of `--print-kernel-analysis`:
    ```
    kernel scale (module scale)
      block: reqntid 128x1x1
      special registers: tid.x
      barriers: bar.sync id 0, all threads
      exits: ret, ret
      ...
    ```
  }];
  let dependentDialects = ["gpuopt::ptx::PTXDialect"];
}

#endif // GPUOPT_ANALYSIS_PASSES
