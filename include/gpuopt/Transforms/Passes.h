//===- Passes.h - gpu-opt's transform passes --------------------*- C++ -*-===//
//
// Declares the passes of Passes.td and the `--hfuse` pipeline.
//
//===----------------------------------------------------------------------===//

#ifndef GPUOPT_TRANSFORMS_PASSES_H
#define GPUOPT_TRANSFORMS_PASSES_H

#include "gpuopt/Analysis/Passes.h"
#include "gpuopt/Conversion/Passes.h"
#include "gpuopt/Transforms/Probe/ProbePipeline.h"
#include "ptx/IR/PTX.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"
#include "llvm/Support/FormatVariadic.h"

namespace gpuopt {

#define GEN_PASS_DECL
#include "gpuopt/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "gpuopt/Transforms/Passes.h.inc"

/// Pass options have no source location: diagnostics about one are located
/// at `--PASS option 'NAME':1:COLUMN`, the column counting into the option's
/// value as given (`getPassOptionColumn` for a list option's item).
inline mlir::Location getPassOptionLoc(mlir::MLIRContext *context,
                                       llvm::StringRef passArgument,
                                       llvm::StringRef option,
                                       unsigned column = 1) {
  return mlir::FileLineColLoc::get(
      context, ("--" + passArgument + " option '" + option + "'").str(), 1,
      column);
}

/// The column of item `index` of a list option's value (items joined by
/// commas, as written).
template <typename Range>
unsigned getPassOptionColumn(const Range &values, size_t index) {
  unsigned column = 1;
  for (const auto &value :
       llvm::make_range(values.begin(), std::next(values.begin(), index)))
    column += llvm::formatv("{0}", value).str().size() + 1;
  return column;
}

/// Registers `--hfuse` (HFusePipeline.cpp).
void registerHFusePipeline();
/// Registers `--probe` (Probe/ProbePipeline.cpp).
void registerProbePipeline();

/// Registers every gpu-opt pass and pipeline.
inline void registerAllPasses() {
  registerGPUOptAnalysisPasses();
  registerGPUOptConversionPasses();
  registerGPUOptTransformsPasses();
  registerHFusePipeline();
  registerProbePipeline();
}

} // namespace gpuopt

#endif // GPUOPT_TRANSFORMS_PASSES_H
