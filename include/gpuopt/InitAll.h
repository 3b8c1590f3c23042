//===- InitAll.h - Register gpu-opt's dialects and passes -------*- C++ -*-===//
//
// One place that every tool calls, so gpu-opt, gpu-translate and embedders
// see the same dialects and passes.
//
//===----------------------------------------------------------------------===//

#ifndef GPUOPT_INITALL_H
#define GPUOPT_INITALL_H

#include "gpuopt/Dialect/GPUOpt/GPUOptDialect.h"
#include "ptx/IR/PTX.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/DialectRegistry.h"

namespace gpuopt {

/// The project's dialects plus the upstream ones its inputs use (`gpu`
/// kernels and what they are written in).
inline void registerAllDialects(mlir::DialectRegistry &registry) {
  registry.insert<GPUOptDialect, ptx::PTXDialect, mlir::arith::ArithDialect,
                  mlir::cf::ControlFlowDialect, mlir::func::FuncDialect,
                  mlir::gpu::GPUDialect, mlir::LLVM::LLVMDialect,
                  mlir::NVVM::NVVMDialect, mlir::memref::MemRefDialect,
                  mlir::scf::SCFDialect>();
}

} // namespace gpuopt

#endif // GPUOPT_INITALL_H
