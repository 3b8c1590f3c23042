//===- embed-opt.cpp - A compiler that embeds gpu-opt ---------------------===//
//
// An out-of-tree tool built against the installed gpu-opt package
// (find_package(GpuOpt)), as another compiler would use it: it registers
// gpu-opt's dialects and passes beside upstream's transforms, parses an MLIR
// file and runs a pass pipeline that mixes both on the top-level module.
//
//   embed-opt kernels.mlir --pipeline=print-kernel-analysis,symbol-dce
//
//===----------------------------------------------------------------------===//

#include "gpuopt/InitAll.h"
#include "gpuopt/Transforms/Passes.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;

static llvm::cl::opt<std::string> inputFilename(llvm::cl::Positional,
                                                llvm::cl::desc("<input>"),
                                                llvm::cl::init("-"));
static llvm::cl::opt<std::string>
    pipeline("pipeline", llvm::cl::desc("Passes to run on the module"),
             llvm::cl::init("print-kernel-analysis"));

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  llvm::cl::ParseCommandLineOptions(argc, argv, "gpu-opt in another tool\n");

  // The one call for each that a compiler embedding gpu-opt makes.
  DialectRegistry registry;
  gpuopt::registerAllDialects(registry);
  gpuopt::registerAllPasses();
  registerTransformsPasses();

  MLIRContext context(registry);
  llvm::SourceMgr sourceMgr;
  SourceMgrDiagnosticHandler diagnostics(sourceMgr, &context);
  OwningOpRef<ModuleOp> module =
      parseSourceFile<ModuleOp>(inputFilename, sourceMgr, &context);
  if (!module)
    return 1;

  PassManager pm = PassManager::on<ModuleOp>(&context);
  if (failed(parsePassPipeline(pipeline, pm, llvm::errs())) ||
      failed(pm.run(*module)))
    return 1;
  module->print(llvm::outs());
  return 0;
}
