//===- Tools.cpp - The command-line tools as functions --------------------===//
//
// gpu-opt's and gpu-translate's mains, as the in-process API exports them:
// the tools of the self-contained build are small executables that call
// these in libgpuopt.so.
//
//===----------------------------------------------------------------------===//

#include "gpuopt/API/Compiler.h"
#include "gpuopt/Tools/gpu-opt/GpuOptMain.h"
#include "gpuopt/Tools/gpu-translate/GpuTranslateMain.h"

#include "llvm/Config/llvm-config.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/raw_ostream.h"

/// --version: the tool's version and the LLVM and MLIR it was built with.
static void printVersion(llvm::raw_ostream &os) {
  os << "gpu-opt " << gpuopt::api::getVersion() << "\n  LLVM and MLIR "
     << LLVM_VERSION_STRING << ", targets NVPTX\n";
}

int gpuopt::api::runGpuOpt(int argc, char **argv) {
  llvm::InitLLVM y(argc, argv);
  llvm::cl::SetVersionPrinter(printVersion);
  return gpuOptMain(argc, argv);
}

int gpuopt::api::runGpuTranslate(int argc, char **argv) {
  llvm::InitLLVM y(argc, argv);
  llvm::cl::SetVersionPrinter(printVersion);
  return gpuTranslateMain(argc, argv);
}
