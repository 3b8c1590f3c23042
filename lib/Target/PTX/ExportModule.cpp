//===- ExportModule.cpp - One ptx.module to PTX or cubin, with manifest ---===//
//
// What gpu-opt and gpu-translate do with the module they export: print it as
// PTX, write its launch manifest, and assemble it with ptxas for a cubin.
//
//===----------------------------------------------------------------------===//

#include "gpuopt/Target/PTX/ExportPTX.h"

using namespace mlir;

LogicalResult gpuopt::exportModule(ptx::PTXModuleOp module,
                                   const ModuleOutputOptions &options,
                                   llvm::raw_ostream &os, std::string &manifest,
                                   TimingScope &timing) {
  TimingScope exportTiming = timing.nest("export PTX");
  std::string ptx;
  llvm::raw_string_ostream ptxStream(ptx);
  if (failed(exportPTX(module, ptxStream)))
    return failure();
  exportTiming.stop();
  if (!options.manifestPath.empty()) {
    FailureOr<std::string> text =
        printLaunchManifest(module, options.outputPath, options.manifestPath,
                            options.cubin ? "cubin" : "ptx");
    if (failed(text))
      return failure();
    manifest = std::move(*text);
  }
  if (!options.cubin) {
    os << ptx;
    return success();
  }
  TimingScope ptxasTiming = timing.nest("ptxas");
  FailureOr<std::string> cubin = assembleWithPtxas(module, ptx, options.ptxas);
  if (failed(cubin))
    return failure();
  os << *cubin;
  return success();
}
