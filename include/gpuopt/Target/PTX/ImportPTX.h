//===- ImportPTX.h - .ptx files to the ptx dialect --------------*- C++ -*-===//

#ifndef GPUOPT_TARGET_PTX_IMPORTPTX_H
#define GPUOPT_TARGET_PTX_IMPORTPTX_H

#include "ptx/IR/PTX.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/SourceMgr.h"

namespace gpuopt {

/// Parses the PTX in buffer `bufferId` of `sourceMgr` into a new
/// `ptx.module` named `moduleName` at the end of `into`. Errors are reported
/// as `file:line:col: error: ...` through the context's diagnostic engine; on
/// failure nothing is added to `into`.
mlir::FailureOr<ptx::PTXModuleOp> importPTX(llvm::SourceMgr &sourceMgr,
                                            unsigned bufferId,
                                            mlir::ModuleOp into,
                                            llvm::StringRef moduleName);

/// Imports buffers `bufferIds` of `sourceMgr` (all of them when empty) in
/// order, one `ptx.module` each at the end of `into`, named after the
/// buffer's file and unique among the symbols already in `into`. Stops at the
/// first buffer that fails; the modules imported before it stay.
mlir::LogicalResult importPTXBuffers(llvm::SourceMgr &sourceMgr,
                                     mlir::ModuleOp into,
                                     llvm::ArrayRef<unsigned> bufferIds = {});

/// Parses the main buffer of `sourceMgr` into a new builtin module holding
/// one `ptx.module`.
mlir::OwningOpRef<mlir::ModuleOp> importPTX(llvm::SourceMgr &sourceMgr,
                                            mlir::MLIRContext *context);

/// True if `buffer` looks like PTX: its first token is a PTX directive.
bool looksLikePTX(llvm::StringRef buffer);

/// A module name for a PTX file: its stem, made unique against `taken`.
std::string ptxModuleNameForFile(llvm::StringRef path,
                                 llvm::ArrayRef<std::string> taken);

} // namespace gpuopt

#endif // GPUOPT_TARGET_PTX_IMPORTPTX_H
