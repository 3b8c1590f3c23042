//===- GpuOptPlugin.cpp - gpu-opt as a plugin of MLIR's tools -------------===//
//
// Loads gpu-opt's dialects and passes into a tool built on MlirOptMain, such
// as upstream's mlir-opt:
//
//   mlir-opt --load-dialect-plugin=GpuOptPlugin.so \
//            --load-pass-plugin=GpuOptPlugin.so \
//            --pass-pipeline='builtin.module(print-kernel-analysis)' in.mlir
//
// The dialect entry point registers the dialects into the tool's registry,
// the pass entry point the passes and pipelines into the global pass
// registry, each once: loaded as both plugins, the library registers nothing
// twice. Passes are loaded after the tool has read its command line, so they
// are named in --pass-pipeline rather than as flags of their own.
//
//===----------------------------------------------------------------------===//

#include "gpuopt/InitAll.h"
#include "gpuopt/Transforms/Passes.h"

#include "mlir/Tools/Plugins/DialectPlugin.h"
#include "mlir/Tools/Plugins/PassPlugin.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/Support/Compiler.h"

using namespace mlir;

extern "C" LLVM_ATTRIBUTE_WEAK DialectPluginLibraryInfo
mlirGetDialectPluginInfo() {
  return {MLIR_PLUGIN_API_VERSION, "GpuOpt", LLVM_VERSION_STRING,
          [](DialectRegistry *registry) {
            gpuopt::registerAllDialects(*registry);
          }};
}

extern "C" LLVM_ATTRIBUTE_WEAK PassPluginLibraryInfo mlirGetPassPluginInfo() {
  return {MLIR_PLUGIN_API_VERSION, "GpuOpt", LLVM_VERSION_STRING, [] {
            // Pipelines may be registered only once per process; the tool
            // calls this again when given the library twice.
            static bool registered = (gpuopt::registerAllPasses(), true);
            (void)registered;
          }};
}
