//===- gpu-opt.cpp - The gpu-opt driver -----------------------------------===//
//
// mlir-opt for GPU kernels: every MLIR pass-manager option, the project's
// dialects and passes, and .ptx input, which is imported before the passes
// run (with its PTX source locations).
//
//===----------------------------------------------------------------------===//

#include "gpuopt/InitAll.h"
#include "gpuopt/Target/PTX/ImportPTX.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"

using namespace mlir;

/// Imports PTX into MLIR text that keeps the PTX file's locations, so the
/// passes' diagnostics point at PTX lines.
static std::unique_ptr<llvm::MemoryBuffer>
importPTXToMLIRText(std::unique_ptr<llvm::MemoryBuffer> ptx,
                    const DialectRegistry &registry) {
  std::string name = ptx->getBufferIdentifier().str();
  MLIRContext context(registry);
  context.disableMultithreading();
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(std::move(ptx), llvm::SMLoc());
  SourceMgrDiagnosticHandler handler(sourceMgr, &context);
  OwningOpRef<ModuleOp> module = gpuopt::importPTX(sourceMgr, &context);
  if (!module)
    return nullptr;
  std::string text;
  llvm::raw_string_ostream os(text);
  module->print(os, OpPrintingFlags().enableDebugInfo());
  return llvm::MemoryBuffer::getMemBufferCopy(text, name);
}

int main(int argc, char **argv) {
  llvm::InitLLVM y(argc, argv);
  DialectRegistry registry;
  gpuopt::registerAllDialects(registry);
  registerTransformsPasses();

  auto [inputFilename, outputFilename] =
      registerAndParseCLIOptions(argc, argv,
                                 "gpu-opt: optimizer for GPU "
                                 "kernels in MLIR or PTX",
                                 registry);
  MlirOptMainConfig config = MlirOptMainConfig::createFromCLOptions();

  std::string errorMessage;
  std::unique_ptr<llvm::MemoryBuffer> input =
      openInputFile(inputFilename, &errorMessage);
  if (!input) {
    llvm::errs() << errorMessage << "\n";
    return 1;
  }
  if (gpuopt::looksLikePTX(input->getBuffer())) {
    if (!config.inputSplitMarker().empty()) {
      llvm::errs() << "error: --split-input-file does not apply to PTX input\n";
      return 1;
    }
    input = importPTXToMLIRText(std::move(input), registry);
    if (!input)
      return 1;
  }
  std::unique_ptr<llvm::ToolOutputFile> output =
      openOutputFile(outputFilename, &errorMessage);
  if (!output) {
    llvm::errs() << errorMessage << "\n";
    return 1;
  }
  if (failed(MlirOptMain(output->os(), std::move(input), registry, config)))
    return 1;
  output->keep();
  return 0;
}
