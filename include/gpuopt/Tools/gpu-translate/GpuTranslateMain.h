//===- GpuTranslateMain.h - The gpu-translate driver ------------*- C++ -*-===//
//
// gpu-translate's command line and driver as a library function, as
// GpuOptMain.h is gpu-opt's: tools/gpu-translate is a main that calls it.
//
//===----------------------------------------------------------------------===//

#ifndef GPUOPT_TOOLS_GPU_TRANSLATE_GPUTRANSLATEMAIN_H
#define GPUOPT_TOOLS_GPU_TRANSLATE_GPUTRANSLATEMAIN_H

namespace gpuopt {

/// Parses the command line, translates PTX to MLIR or MLIR to PTX or cubin,
/// and writes the result (and the launch manifest). Returns the process's
/// exit code. The caller sets up LLVM (llvm::InitLLVM) first.
int gpuTranslateMain(int argc, char **argv);

} // namespace gpuopt

#endif // GPUOPT_TOOLS_GPU_TRANSLATE_GPUTRANSLATEMAIN_H
