//===- gpu-opt.cpp - The gpu-opt tool -------------------------------------===//
//
// mlir-opt for GPU kernels, from PTX to PTX or cubin in one process. The
// driver is a library (lib/Tools/gpu-opt/GpuOptMain.cpp), so that other
// programs run the same code; this main reaches it through the in-process
// API, which the self-contained build's libgpuopt.so exports.
//
//===----------------------------------------------------------------------===//

#include "gpuopt/API/Compiler.h"

int main(int argc, char **argv) { return gpuopt::api::runGpuOpt(argc, argv); }
