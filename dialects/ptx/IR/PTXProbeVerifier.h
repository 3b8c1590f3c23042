//===- PTXProbeVerifier.h - Probe rules of ptx functions --------*- C++ -*-===//
//
// The check that function verifiers run on top of their own: that the
// kernel cannot observe the probes in its body (PTXProbeVerifier.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef GPUOPT_DIALECT_PTX_IR_PTXPROBEVERIFIER_H
#define GPUOPT_DIALECT_PTX_IR_PTXPROBEVERIFIER_H

#include "mlir/IR/Block.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/Support/LLVM.h"

namespace gpuopt::ptx {

/// Proves that the kernel cannot observe the probes in `body`, the body of
/// `function` whose parameters are `params`: probe code writes only the
/// probe's registers, stores only through addresses derived from its
/// buffers or to its own variables, and the kernel names nothing of the
/// probe's. Succeeds at once when `body` holds no ptx.probe.
mlir::LogicalResult verifyProbeIsolation(mlir::Operation *function,
                                         mlir::ArrayAttr params,
                                         mlir::Block &body);

} // namespace gpuopt::ptx

#endif // GPUOPT_DIALECT_PTX_IR_PTXPROBEVERIFIER_H
