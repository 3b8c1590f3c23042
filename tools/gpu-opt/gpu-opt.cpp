//===- gpu-opt.cpp - The gpu-opt tool -------------------------------------===//
//
// mlir-opt for GPU kernels, from PTX to PTX or cubin in one process. The
// driver is a library (lib/Tools/gpu-opt/GpuOptMain.cpp), so that other
// programs run the same code.
//
//===----------------------------------------------------------------------===//

#include "gpuopt/Tools/gpu-opt/GpuOptMain.h"

#include "llvm/Support/InitLLVM.h"

int main(int argc, char **argv) {
  llvm::InitLLVM y(argc, argv);
  return gpuopt::gpuOptMain(argc, argv);
}
