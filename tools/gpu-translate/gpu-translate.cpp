//===- gpu-translate.cpp - Translate between PTX, MLIR and cubin ----------===//
//
//   gpu-translate --import-ptx a.ptx [b.ptx ...] -o out.mlir
//   gpu-translate --export-ptx in.mlir -o out.ptx
//   gpu-translate --export-cubin --chip=sm_90a in.mlir -o out.cubin
//
// Importing several files puts one ptx.module per file side by side in one
// builtin module; each is its own symbol table, so clashing names stay apart.
// Output files are written only when the whole translation succeeded.
//
//===----------------------------------------------------------------------===//

#include "gpuopt/InitAll.h"
#include "gpuopt/Target/PTX/ExportPTX.h"
#include "gpuopt/Target/PTX/ImportPTX.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"

using namespace mlir;
namespace cl = llvm::cl;

namespace {
enum class Action { ImportPTX, ExportPTX, ExportCubin };
} // namespace

static cl::list<std::string> inputFilenames(cl::Positional,
                                            cl::desc("<input files>"));
static cl::opt<std::string> outputFilename("o", cl::desc("Output filename"),
                                           cl::value_desc("filename"),
                                           cl::init("-"));
static cl::opt<Action> action(
    cl::desc("Translation to perform"), cl::Required,
    cl::values(
        clEnumValN(Action::ImportPTX, "import-ptx",
                   "PTX files to one MLIR module of ptx.modules"),
        clEnumValN(Action::ExportPTX, "export-ptx", "a ptx.module to PTX"),
        clEnumValN(Action::ExportCubin, "export-cubin",
                   "a ptx.module to a cubin, through ptxas")));
static cl::opt<std::string>
    moduleName("module", cl::desc("The ptx.module to export when the input "
                                  "holds several"));
static cl::opt<std::string>
    chip("chip", cl::desc("Target SM for --export-cubin (default: the "
                          "module's .target)"));
static cl::opt<std::string> ptxasPath("ptxas",
                                      cl::desc("ptxas executable to use"));
static cl::list<std::string>
    ptxasOptions("ptxas-option", cl::desc("Extra option passed to ptxas"));

static bool isSameFile(llvm::StringRef a, llvm::StringRef b) {
  bool same = false;
  return a != "-" && b != "-" && !llvm::sys::fs::equivalent(a, b, same) &&
         same;
}

static LogicalResult importFiles(MLIRContext &context,
                                 llvm::SourceMgr &sourceMgr,
                                 llvm::raw_ostream &os) {
  OwningOpRef<ModuleOp> module(ModuleOp::create(UnknownLoc::get(&context)));
  std::vector<std::string> names;
  for (const std::string &file : inputFilenames) {
    std::string errorMessage;
    std::unique_ptr<llvm::MemoryBuffer> buffer =
        openInputFile(file, &errorMessage);
    if (!buffer) {
      llvm::errs() << "error: " << errorMessage << "\n";
      return failure();
    }
    unsigned id = sourceMgr.AddNewSourceBuffer(std::move(buffer), {});
    names.push_back(gpuopt::ptxModuleNameForFile(file, names));
    if (failed(gpuopt::importPTX(sourceMgr, id, *module, names.back())))
      return failure();
  }
  module->print(os);
  os << '\n';
  return success();
}

static LogicalResult exportFile(MLIRContext &context,
                                llvm::SourceMgr &sourceMgr,
                                llvm::raw_ostream &os) {
  if (inputFilenames.size() != 1) {
    llvm::errs() << "error: export takes exactly one input file\n";
    return failure();
  }
  std::string errorMessage;
  std::unique_ptr<llvm::MemoryBuffer> buffer =
      openInputFile(inputFilenames.front(), &errorMessage);
  if (!buffer) {
    llvm::errs() << "error: " << errorMessage << "\n";
    return failure();
  }
  sourceMgr.AddNewSourceBuffer(std::move(buffer), {});
  OwningOpRef<Operation *> root =
      parseSourceFile(sourceMgr, ParserConfig(&context));
  if (!root)
    return failure();
  FailureOr<gpuopt::ptx::PTXModuleOp> module =
      gpuopt::findPTXModule(root.get(), moduleName);
  if (failed(module))
    return failure();
  std::string ptx;
  llvm::raw_string_ostream ptxStream(ptx);
  if (failed(gpuopt::exportPTX(*module, ptxStream)))
    return failure();
  if (action == Action::ExportPTX) {
    os << ptx;
    return success();
  }
  gpuopt::PtxasOptions options;
  options.ptxasPath = ptxasPath;
  options.chip = chip.empty() ? module->getChip().str() : chip.getValue();
  options.extraArgs.assign(ptxasOptions.begin(), ptxasOptions.end());
  if (options.chip.empty())
    return module->emitError("no target chip: the module has no .target; "
                             "pass --chip=sm_XX"),
           failure();
  FailureOr<std::string> cubin =
      gpuopt::assembleWithPtxas(ptx, options, module->getLoc());
  if (failed(cubin))
    return failure();
  os << *cubin;
  return success();
}

int main(int argc, char **argv) {
  llvm::InitLLVM y(argc, argv);
  registerAsmPrinterCLOptions();
  registerMLIRContextCLOptions();
  cl::ParseCommandLineOptions(argc, argv,
                              "gpu-translate: PTX <-> MLIR <-> cubin\n");
  if (inputFilenames.empty())
    inputFilenames.push_back("-");
  for (const std::string &input : inputFilenames) {
    if (isSameFile(input, outputFilename)) {
      llvm::errs() << "error: output file '" << outputFilename
                   << "' is also an input; refusing to overwrite it\n";
      return 1;
    }
  }

  DialectRegistry registry;
  gpuopt::registerAllDialects(registry);
  MLIRContext context(registry);
  context.loadDialect<gpuopt::ptx::PTXDialect>();
  llvm::SourceMgr sourceMgr;
  SourceMgrDiagnosticHandler handler(sourceMgr, &context);

  // Translate into memory first: a failed run leaves no output file.
  std::string result;
  llvm::raw_string_ostream os(result);
  LogicalResult status = action == Action::ImportPTX
                             ? importFiles(context, sourceMgr, os)
                             : exportFile(context, sourceMgr, os);
  if (failed(status))
    return 1;

  std::string errorMessage;
  std::unique_ptr<llvm::ToolOutputFile> output =
      openOutputFile(outputFilename, &errorMessage);
  if (!output) {
    llvm::errs() << "error: " << errorMessage << "\n";
    return 1;
  }
  output->os() << result;
  output->keep();
  return 0;
}
