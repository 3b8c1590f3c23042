//===- Passes.h - gpu-opt's transform passes --------------------*- C++ -*-===//
//
// Declares the passes of Passes.td and the `--hfuse` pipeline.
//
//===----------------------------------------------------------------------===//

#ifndef GPUOPT_TRANSFORMS_PASSES_H
#define GPUOPT_TRANSFORMS_PASSES_H

#include "gpuopt/Analysis/Passes.h"
#include "ptx/IR/PTX.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace gpuopt {

#define GEN_PASS_DECL
#include "gpuopt/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "gpuopt/Transforms/Passes.h.inc"

/// Registers every gpu-opt pass and pipeline.
inline void registerAllPasses() {
  registerGPUOptAnalysisPasses();
  registerGPUOptTransformsPasses();
}

} // namespace gpuopt

#endif // GPUOPT_TRANSFORMS_PASSES_H
