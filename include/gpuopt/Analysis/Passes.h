//===- Passes.h - gpu-opt's analysis passes ---------------------*- C++ -*-===//
//
// Declares the passes of Analysis/Passes.td.
//
//===----------------------------------------------------------------------===//

#ifndef GPUOPT_ANALYSIS_PASSES_H
#define GPUOPT_ANALYSIS_PASSES_H

#include "ptx/IR/PTX.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace gpuopt {

#define GEN_PASS_DECL
#include "gpuopt/Analysis/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "gpuopt/Analysis/Passes.h.inc"

} // namespace gpuopt

#endif // GPUOPT_ANALYSIS_PASSES_H
