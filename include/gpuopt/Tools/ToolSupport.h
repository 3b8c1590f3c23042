//===- ToolSupport.h - Input and output files of the tools ------*- C++ -*-===//
//
// What gpu-opt and gpu-translate share: outputs are produced in memory and
// written only once everything succeeded, and never over an input; cubins
// are assembled with the same ptxas options.
//
//===----------------------------------------------------------------------===//

#ifndef GPUOPT_TOOLS_TOOLSUPPORT_H
#define GPUOPT_TOOLS_TOOLSUPPORT_H

#include "gpuopt/Target/PTX/ExportPTX.h"

#include "mlir/Support/FileUtilities.h"
#include "mlir/Support/LLVM.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"

#include <memory>
#include <utility>
#include <vector>

namespace gpuopt {

/// True if `a` and `b` name the same existing file ("-" is never a file).
inline bool isSameFile(llvm::StringRef a, llvm::StringRef b) {
  bool same = false;
  return a != "-" && b != "-" && !llvm::sys::fs::equivalent(a, b, same) && same;
}

/// Reports an error and returns true if one of `outputs` is one of `inputs`.
inline bool outputOverwritesInput(const std::vector<std::string> &inputs,
                                  llvm::ArrayRef<llvm::StringRef> outputs) {
  for (llvm::StringRef output : outputs) {
    for (const std::string &input : inputs) {
      if (isSameFile(input, output)) {
        llvm::errs() << "error: output file '" << output
                     << "' is also an input; refusing to overwrite it\n";
        return true;
      }
    }
  }
  return false;
}

/// Writes each (path, contents) pair; "-" is stdout. All files are opened
/// before any is written, so a path that cannot be opened leaves none.
inline mlir::LogicalResult writeOutputFiles(
    llvm::ArrayRef<std::pair<llvm::StringRef, llvm::StringRef>> files) {
  std::vector<std::unique_ptr<llvm::ToolOutputFile>> outputs;
  for (auto [path, contents] : files) {
    std::string errorMessage;
    outputs.push_back(mlir::openOutputFile(path, &errorMessage));
    if (!outputs.back()) {
      llvm::errs() << "error: " << errorMessage << "\n";
      return mlir::failure();
    }
  }
  for (auto [output, file] : llvm::zip_equal(outputs, files)) {
    output->os() << file.second;
    output->keep();
  }
  return mlir::success();
}

/// The command-line options for cubin output: --chip, --ptxas and
/// --ptxas-option. A tool declares one instance at namespace scope.
struct PtxasCLOptions {
  llvm::cl::opt<std::string> chip{
      "chip", llvm::cl::desc("With cubin output: the target SM (default: the "
                             "module's .target)")};
  llvm::cl::opt<std::string> ptxasPath{
      "ptxas", llvm::cl::desc("With cubin output: the ptxas to run (default: "
                              "$PTXAS, PATH, $CUDA_HOME/bin)")};
  llvm::cl::list<std::string> extraArgs{
      "ptxas-option", llvm::cl::desc("Extra option passed to ptxas")};

  bool anyGiven() const {
    return !chip.empty() || !ptxasPath.empty() || !extraArgs.empty();
  }
  PtxasOptions get() const {
    PtxasOptions options;
    options.ptxasPath = ptxasPath;
    options.chip = chip;
    options.extraArgs.assign(extraArgs.begin(), extraArgs.end());
    return options;
  }
};

} // namespace gpuopt

#endif // GPUOPT_TOOLS_TOOLSUPPORT_H
