//===- gpu-translate.cpp - Translate between PTX, MLIR and cubin ----------===//
//
//   gpu-translate --import-ptx a.ptx [b.ptx ...] -o out.mlir
//   gpu-translate --export-ptx in.mlir -o out.ptx
//   gpu-translate --export-cubin --chip=sm_90a in.mlir -o out.cubin
//
// The driver is a library (lib/Tools/gpu-translate/GpuTranslateMain.cpp);
// this main reaches it through the in-process API, as gpu-opt's does.
//
//===----------------------------------------------------------------------===//

#include "gpuopt/API/Compiler.h"

int main(int argc, char **argv) {
  return gpuopt::api::runGpuTranslate(argc, argv);
}
