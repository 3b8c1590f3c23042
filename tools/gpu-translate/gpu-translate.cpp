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
#include "mlir/Support/ToolUtilities.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
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
static cl::opt<Action>
    action(cl::desc("Translation to perform"), cl::Required,
           cl::values(clEnumValN(Action::ImportPTX, "import-ptx",
                                 "PTX files to one MLIR module of ptx.modules"),
                      clEnumValN(Action::ExportPTX, "export-ptx",
                                 "a ptx.module to PTX"),
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
static cl::opt<bool> splitInputFile(
    "split-input-file",
    cl::desc("Translate each '// -----' chunk of the input separately"));
static cl::opt<bool> verifyDiagnostics(
    "verify-diagnostics",
    cl::desc("Check diagnostics against expected-* comments in the input"));
static cl::opt<std::string> manifestFilename(
    "manifest",
    cl::desc("With --export-ptx/--export-cubin: also write the launch "
             "manifest (docs/manifest.md) of the exported module"),
    cl::value_desc("filename"));
static cl::list<std::string>
    ptxasOptions("ptxas-option", cl::desc("Extra option passed to ptxas"));

static bool isSameFile(llvm::StringRef a, llvm::StringRef b) {
  bool same = false;
  return a != "-" && b != "-" && !llvm::sys::fs::equivalent(a, b, same) && same;
}

/// Imports every buffer of `sourceMgr`, one ptx.module each.
static LogicalResult importBuffers(MLIRContext &context,
                                   llvm::SourceMgr &sourceMgr,
                                   llvm::raw_ostream &os) {
  OwningOpRef<ModuleOp> module(ModuleOp::create(UnknownLoc::get(&context)));
  std::vector<std::string> names;
  for (unsigned id = 1, e = sourceMgr.getNumBuffers(); id <= e; ++id) {
    names.push_back(gpuopt::ptxModuleNameForFile(
        sourceMgr.getMemoryBuffer(id)->getBufferIdentifier(), names));
    if (failed(gpuopt::importPTX(sourceMgr, id, *module, names.back())))
      return failure();
  }
  module->print(os);
  os << '\n';
  return success();
}

/// The manifest's `module.path`: the output file, relative to the manifest's
/// folder when both are in the same one.
static std::string getManifestModulePath() {
  llvm::SmallString<256> output(outputFilename), manifest(manifestFilename);
  llvm::sys::fs::make_absolute(output);
  llvm::sys::fs::make_absolute(manifest);
  if (llvm::sys::path::parent_path(output) ==
      llvm::sys::path::parent_path(manifest))
    return llvm::sys::path::filename(output).str();
  return std::string(output);
}

/// Set by exportBuffer when --manifest is given; written after the output.
static std::string manifestText;

/// Exports the ptx.module in the main buffer of `sourceMgr` as PTX or cubin.
static LogicalResult exportBuffer(MLIRContext &context,
                                  llvm::SourceMgr &sourceMgr,
                                  llvm::raw_ostream &os) {
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
  if (!manifestFilename.empty()) {
    FailureOr<llvm::json::Object> manifest = gpuopt::buildLaunchManifest(
        *module, getManifestModulePath(),
        action == Action::ExportPTX ? "ptx" : "cubin");
    if (failed(manifest))
      return failure();
    llvm::raw_string_ostream manifestStream(manifestText);
    manifestStream << llvm::formatv("{0:2}",
                                    llvm::json::Value(std::move(*manifest)));
    manifestStream << '\n';
  }
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
    return action == Action::ImportPTX ? importBuffers(context, sourceMgr, os)
                                       : exportBuffer(context, sourceMgr, os);
  };
  if (!verifyDiagnostics) {
    SourceMgrDiagnosticHandler handler(sourceMgr, &context);
    return run();
  }
  SourceMgrDiagnosticVerifierHandler handler(sourceMgr, &context);
  (void)run();
  return handler.verify();
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
  if (!manifestFilename.empty() &&
      (action == Action::ImportPTX || outputFilename == "-")) {
    llvm::errs() << "error: --manifest goes with --export-ptx or "
                    "--export-cubin and an output file (-o)\n";
    return 1;
  }
  if (inputFilenames.size() > 1 &&
      (action != Action::ImportPTX || splitInputFile)) {
    llvm::errs() << "error: only --import-ptx without --split-input-file "
                    "takes several input files\n";
    return 1;
  }

  DialectRegistry registry;
  gpuopt::registerAllDialects(registry);
  std::vector<std::unique_ptr<llvm::MemoryBuffer>> inputs;
  for (const std::string &file : inputFilenames) {
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
                                   splitInputFile ? kDefaultSplitMarker : "",
                                   kDefaultSplitMarker);
  } else {
    llvm::SourceMgr sourceMgr;
    for (auto &input : inputs)
      sourceMgr.AddNewSourceBuffer(std::move(input), llvm::SMLoc());
    status = translate(registry, sourceMgr, os);
  }
  if (failed(status))
    return 1;

  std::string errorMessage;
  std::unique_ptr<llvm::ToolOutputFile> output =
      openOutputFile(outputFilename, &errorMessage);
  if (!output) {
    llvm::errs() << "error: " << errorMessage << "\n";
    return 1;
  }
  std::unique_ptr<llvm::ToolOutputFile> manifest;
  if (!manifestFilename.empty()) {
    manifest = openOutputFile(manifestFilename, &errorMessage);
    if (!manifest) {
      llvm::errs() << "error: " << errorMessage << "\n";
      return 1;
    }
    manifest->os() << manifestText;
    manifest->keep();
  }
  output->os() << result;
  output->keep();
  return 0;
}
