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

#include "llvm/Support/InitLLVM.h"

int gpuopt::api::runGpuOpt(int argc, char **argv) {
  llvm::InitLLVM y(argc, argv);
  return gpuOptMain(argc, argv);
}

int gpuopt::api::runGpuTranslate(int argc, char **argv) {
  llvm::InitLLVM y(argc, argv);
  return gpuTranslateMain(argc, argv);
}
