//===- GpuOptMain.h - The gpu-opt driver ------------------------*- C++ -*-===//
//
// gpu-opt's command line and driver as a library function, as upstream's
// MlirOptMain is mlir-opt's: tools/gpu-opt is a main that calls it.
//
//===----------------------------------------------------------------------===//

#ifndef GPUOPT_TOOLS_GPU_OPT_GPUOPTMAIN_H
#define GPUOPT_TOOLS_GPU_OPT_GPUOPTMAIN_H

namespace gpuopt {

/// Registers the project's dialects and passes and mlir-opt's options, parses
/// the command line, reads the PTX and MLIR inputs, runs the pass pipeline
/// and writes the result (MLIR, bytecode, PTX or cubin, and the launch
/// manifest). Returns the process's exit code. The caller sets up LLVM
/// (llvm::InitLLVM) first.
int gpuOptMain(int argc, char **argv);

} // namespace gpuopt

#endif // GPUOPT_TOOLS_GPU_OPT_GPUOPTMAIN_H
