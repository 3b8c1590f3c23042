//===- GpuTranslateMain.cpp - The gpu-translate driver --------------------===//
//
//   gpu-translate --import-ptx a.ptx [b.ptx ...] -o out.mlir
//   gpu-translate --export-ptx in.mlir -o out.ptx
//   gpu-translate --export-cubin --chip=sm_90a in.mlir -o out.cubin
//
// An MLIR input's gpu.module kernels are lowered to PTX first (--gpu-to-ptx,
// for --chip), so gpu dialect modules export as PTX or cubin too.
// Importing several files puts one ptx.module per file side by side in one
// builtin module; each is its own symbol table, so clashing names stay apart.
// Output files are written only when the whole translation succeeded.
//
//===----------------------------------------------------------------------===//

#include "gpuopt/Tools/gpu-translate/GpuTranslateMain.h"
#include "gpuopt/Conversion/Passes.h"
#include "gpuopt/InitAll.h"
#include "gpuopt/Target/PTX/ExportPTX.h"
#include "gpuopt/Target/PTX/ImportPTX.h"
#include "gpuopt/Tools/ToolSupport.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Support/ToolUtilities.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/ManagedStatic.h"
#include "llvm/Support/SourceMgr.h"

using namespace mlir;
namespace cl = llvm::cl;

namespace {
enum class Action { ImportPTX, ExportPTX, ExportCubin };
} // namespace

namespace {
/// gpu-translate's command-line options, registered when gpuTranslateMain
/// first runs (as gpu-opt's are), so that both tools' options, some of the
/// same names, can live in one shared library.
struct GpuTranslateCLOptions {
  cl::list<std::string> inputFilenames{cl::Positional,
                                       cl::desc("<input files>")};
  cl::opt<std::string> outputFilename{"o", cl::desc("Output filename"),
                                      cl::value_desc("filename"),
                                      cl::init("-")};
  cl::opt<Action> action{
      cl::desc("Translation to perform"), cl::Required,
      cl::values(clEnumValN(Action::ImportPTX, "import-ptx",
                            "PTX files to one MLIR module of ptx.modules"),
                 clEnumValN(Action::ExportPTX, "export-ptx",
                            "a ptx.module (or gpu.module) to PTX"),
                 clEnumValN(Action::ExportCubin, "export-cubin",
                            "a ptx.module (or gpu.module) to a cubin, "
                            "through ptxas"))};
  cl::opt<std::string> moduleName{
      "module", cl::desc("The ptx.module to export when the input holds "
                         "several")};
  cl::opt<bool> splitInputFile{
      "split-input-file",
      cl::desc("Translate each '// -----' chunk of the input separately")};
  cl::opt<bool> verifyDiagnostics{
      "verify-diagnostics",
      cl::desc("Check diagnostics against expected-* comments in the input")};
  cl::opt<std::string> manifestFilename{
      "manifest",
      cl::desc("With --export-ptx/--export-cubin: also write the launch "
               "manifest (docs/manifest.md) of the exported module"),
      cl::value_desc("filename")};
  gpuopt::PtxasCLOptions ptxasOptions;
};
} // namespace

static llvm::ManagedStatic<GpuTranslateCLOptions> clOptions;

/// Imports every buffer of `sourceMgr`, one ptx.module each.
static LogicalResult importBuffers(MLIRContext &context,
                                   llvm::SourceMgr &sourceMgr,
                                   llvm::raw_ostream &os) {
  OwningOpRef<ModuleOp> module(ModuleOp::create(UnknownLoc::get(&context)));
  if (failed(gpuopt::importPTXBuffers(sourceMgr, *module)))
    return failure();
  module->print(os);
  os << '\n';
  return success();
}

/// Set by exportBuffer when --manifest is given; written after the output.
static std::string manifestText;

/// Exports the ptx.module in the main buffer of `sourceMgr` as PTX or cubin.
static LogicalResult exportBuffer(MLIRContext &context,
                                  llvm::SourceMgr &sourceMgr,
                                  llvm::raw_ostream &os) {
  // Top-level ops other than a builtin module (a gpu.module) are wrapped
  // in one, as mlir-opt does.
  OwningOpRef<ModuleOp> root =
      parseSourceFile<ModuleOp>(sourceMgr, ParserConfig(&context));
  if (!root)
    return failure();
  // gpu.module kernels are lowered to PTX first, for --chip.
  if (gpuopt::hasGPUKernels(*root)) {
    PassManager pm(&context);
    gpuopt::GPUToPTXOptions captureOptions;
    captureOptions.chip = clOptions->ptxasOptions.chip;
    pm.addPass(gpuopt::createGPUToPTX(captureOptions));
    if (failed(pm.run(*root)))
      return failure();
  }
  OwningOpRef<gpuopt::ptx::PTXModuleOp> linked;
  FailureOr<gpuopt::ptx::PTXModuleOp> module =
      gpuopt::getPTXModuleToExport(root.get(), clOptions->moduleName, linked);
  if (failed(module))
    return failure();
  gpuopt::ModuleOutputOptions options;
  options.cubin = clOptions->action == Action::ExportCubin;
  options.ptxas = clOptions->ptxasOptions.get();
  options.outputPath = clOptions->outputFilename;
  options.manifestPath = clOptions->manifestFilename;
  TimingScope noTiming;
  return gpuopt::exportModule(*module, options, os, manifestText, noTiming);
}

/// Translates the buffers in `sourceMgr`, reporting (or, with
/// --verify-diagnostics, checking) diagnostics against their text.
static LogicalResult translate(const DialectRegistry &registry,
                               llvm::SourceMgr &sourceMgr,
                               llvm::raw_ostream &os) {
  MLIRContext context(registry);
  context.loadDialect<gpuopt::ptx::PTXDialect>();
  // Diagnostics point at PTX lines; a dump of the generic op adds nothing.
  context.printOpOnDiagnostic(false);
  // Translation runs on one thread; single-threaded attribute uniquing is
  // about 20% faster (docs/performance.md).
  context.disableMultithreading();
  auto run = [&] {
    return clOptions->action == Action::ImportPTX ? importBuffers(context, sourceMgr, os)
                                       : exportBuffer(context, sourceMgr, os);
  };
  if (!clOptions->verifyDiagnostics) {
    SourceMgrDiagnosticHandler handler(sourceMgr, &context);
    return run();
  }
  SourceMgrDiagnosticVerifierHandler handler(sourceMgr, &context);
  (void)run();
  return handler.verify();
}

int gpuopt::gpuTranslateMain(int argc, char **argv) {
  (void)*clOptions;
  registerAsmPrinterCLOptions();
  registerMLIRContextCLOptions();
  cl::ParseCommandLineOptions(argc, argv,
                              "gpu-translate: PTX <-> MLIR <-> cubin\n");
  if (clOptions->inputFilenames.empty())
    clOptions->inputFilenames.push_back("-");
  if (gpuopt::outputOverwritesInput(clOptions->inputFilenames,
                                    {clOptions->outputFilename, clOptions->manifestFilename}))
    return 1;
  if (!clOptions->manifestFilename.empty() &&
      (clOptions->action == Action::ImportPTX || clOptions->outputFilename == "-")) {
    llvm::errs() << "error: --manifest goes with --export-ptx or "
                    "--export-cubin and an output file (-o)\n";
    return 1;
  }
  if (clOptions->inputFilenames.size() > 1 &&
      (clOptions->action != Action::ImportPTX || clOptions->splitInputFile)) {
    llvm::errs() << "error: only --import-ptx without --split-input-file "
                    "takes several input files\n";
    return 1;
  }

  DialectRegistry registry;
  gpuopt::registerAllDialects(registry);
  std::vector<std::unique_ptr<llvm::MemoryBuffer>> inputs;
  for (const std::string &file : clOptions->inputFilenames) {
    std::string errorMessage;
    inputs.push_back(openInputFile(file, &errorMessage));
    if (!inputs.back()) {
      llvm::errs() << "error: " << errorMessage << "\n";
      return 1;
    }
  }

  // Translate into memory first: a failed run leaves no output file.
  std::string result;
  llvm::raw_string_ostream os(result);
  LogicalResult status = failure();
  if (inputs.size() == 1) {
    auto processChunk = [&](std::unique_ptr<llvm::MemoryBuffer> chunk,
                            llvm::raw_ostream &chunkOs) {
      llvm::SourceMgr sourceMgr;
      sourceMgr.AddNewSourceBuffer(std::move(chunk), llvm::SMLoc());
      return translate(registry, sourceMgr, chunkOs);
    };
    status = splitAndProcessBuffer(std::move(inputs.front()), processChunk, os,
                                   clOptions->splitInputFile ? kDefaultSplitMarker : "",
                                   kDefaultSplitMarker);
  } else {
    llvm::SourceMgr sourceMgr;
    for (auto &input : inputs)
      sourceMgr.AddNewSourceBuffer(std::move(input), llvm::SMLoc());
    status = translate(registry, sourceMgr, os);
  }
  if (failed(status))
    return 1;

  std::vector<std::pair<llvm::StringRef, llvm::StringRef>> files = {
      {clOptions->outputFilename, result}};
  if (!clOptions->manifestFilename.empty())
    files.emplace_back(clOptions->manifestFilename, manifestText);
  return failed(gpuopt::writeOutputFiles(files)) ? 1 : 0;
}
