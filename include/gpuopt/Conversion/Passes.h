//===- Passes.h - gpu-opt's conversion passes -------------------*- C++ -*-===//
//
// Declares the passes of Passes.td.
//
//===----------------------------------------------------------------------===//

#ifndef GPUOPT_CONVERSION_PASSES_H
#define GPUOPT_CONVERSION_PASSES_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace gpuopt {

#define GEN_PASS_DECL
#include "gpuopt/Conversion/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "gpuopt/Conversion/Passes.h.inc"

/// True if `module` holds a gpu.module with gpu.func kernels, which
/// gpu-opt's passes on PTX see only once `--gpu-to-ptx` has lowered them.
bool hasGPUKernels(mlir::ModuleOp module);

/// The name of the ptx.module that `--gpu-to-ptx` imports the kernels of
/// gpu.module `gpuModule` into when host code launches them: the gpu.binary
/// that takes the gpu.module's place keeps its name, so that the launches
/// stay valid, and `--ptx-to-gpu-binary` finds the kernels here.
inline std::string getCapturedModuleName(llvm::StringRef gpuModule) {
  return (gpuModule + "_ptx").str();
}

} // namespace gpuopt

#endif // GPUOPT_CONVERSION_PASSES_H
