//===- ImportManifest.h - Launch manifests into the ptx dialect -*- C++ -*-===//
//
// A PTX file does not say which kernels were fused from which: the launch
// manifest written beside it does (`fused_from`). Reading it back restores
// the attributes the exporter wrote it from, so that a second gpu-opt call
// on the PTX file (probing a fused kernel) keeps what the first one knew.
//
//===----------------------------------------------------------------------===//

#ifndef GPUOPT_TARGET_PTX_IMPORTMANIFEST_H
#define GPUOPT_TARGET_PTX_IMPORTMANIFEST_H

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/MemoryBuffer.h"

namespace gpuopt {

/// Reads the launch manifest in `manifest` (its identifier the file name
/// errors name) and sets the `#gpuopt.fusion_info` of each fused kernel
/// from its `fused_from`, `fusion_strategy` and launch. The manifest applies
/// to the only ptx.module of `root`, or else to the one named after the
/// file in its `module.path`. It must describe that module: the same
/// kernels with the same parameters and, for a fused kernel, one top-level
/// scope per part; otherwise an error says what differs and nothing is
/// changed.
mlir::LogicalResult importLaunchManifest(mlir::ModuleOp root,
                                         const llvm::MemoryBuffer &manifest);

} // namespace gpuopt

#endif // GPUOPT_TARGET_PTX_IMPORTMANIFEST_H
