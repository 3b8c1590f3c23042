//===- ExportPTX.h - The ptx dialect to .ptx text and cubins ----*- C++ -*-===//

#ifndef GPUOPT_TARGET_PTX_EXPORTPTX_H
#define GPUOPT_TARGET_PTX_EXPORTPTX_H

#include "ptx/IR/PTX.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/Timing.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <string>

namespace gpuopt {

/// Prints `module` as a .ptx file.
mlir::LogicalResult exportPTX(ptx::PTXModuleOp module, llvm::raw_ostream &os);

/// Finds the ptx.module to export under `root`: the one named `name`, or the
/// only one when `name` is empty. Reports an error on `root` otherwise.
mlir::FailureOr<ptx::PTXModuleOp> findPTXModule(mlir::Operation *root,
                                                llvm::StringRef name);

/// The launch manifest (docs/manifest.md) of `module` once written to
/// `modulePath` in `format` ("ptx" or "cubin"): each kernel's parameter
/// layout and launch bounds. Fails, with an error on the kernel, for a
/// parameter without a fixed layout.
mlir::FailureOr<llvm::json::Object>
buildLaunchManifest(ptx::PTXModuleOp module, llvm::StringRef modulePath,
                    llvm::StringRef format);

/// The launch manifest of `module` as the tools write it (JSON indented by
/// two, final newline), for a module written to `outputPath` in `format` and
/// a manifest written to `manifestPath`: `module.path` is the output's file
/// name when both are in the same folder, else its absolute path.
mlir::FailureOr<std::string> printLaunchManifest(ptx::PTXModuleOp module,
                                                 llvm::StringRef outputPath,
                                                 llvm::StringRef manifestPath,
                                                 llvm::StringRef format);

struct PtxasOptions {
  /// ptxas to run; empty: $PTXAS, then PATH, then $CUDA_HOME/bin.
  std::string ptxasPath;
  /// -arch value; empty: the module's `.target`.
  std::string chip;
  std::vector<std::string> extraArgs;
};

/// Assembles PTX text with ptxas and returns the cubin. Errors (ptxas missing
/// or failing, with its message) are reported at `loc`.
mlir::FailureOr<std::string> assembleWithPtxas(llvm::StringRef ptx,
                                               const PtxasOptions &options,
                                               mlir::Location loc);

/// Assembles `ptx`, the export of `module`, with ptxas; an empty
/// `options.chip` becomes the module's `.target`. Errors are reported on the
/// module.
mlir::FailureOr<std::string> assembleWithPtxas(ptx::PTXModuleOp module,
                                               llvm::StringRef ptx,
                                               PtxasOptions options);

/// How a tool writes one ptx.module: PTX text, or a cubin through ptxas,
/// with its launch manifest when `manifestPath` is set.
struct ModuleOutputOptions {
  bool cubin = false;
  PtxasOptions ptxas;
  /// Where the output and the manifest will be written (the manifest names
  /// the output relative to itself); no manifest when `manifestPath` is empty.
  std::string outputPath, manifestPath;
};

/// Exports `module` to `os` as PTX or a cubin, and prints its manifest into
/// `manifest`; `timing` gets the nested phases "export PTX" and "ptxas".
mlir::LogicalResult exportModule(ptx::PTXModuleOp module,
                                 const ModuleOutputOptions &options,
                                 llvm::raw_ostream &os, std::string &manifest,
                                 mlir::TimingScope &timing);

} // namespace gpuopt

#endif // GPUOPT_TARGET_PTX_EXPORTPTX_H
