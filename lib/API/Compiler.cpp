//===- Compiler.cpp - gpu-opt's compiler in process -----------------------===//
//
// The in-process API of include/gpuopt/API/Compiler.h over the project's
// libraries: import, pass pipelines, export, the launch manifest.
// Diagnostics are collected per call; a failing call throws them all and
// leaves its Module unchanged, a succeeding one keeps them.
//
//===----------------------------------------------------------------------===//

#include "gpuopt/API/Compiler.h"
#include "gpuopt/InitAll.h"
#include "gpuopt/Runtime/ManifestWriter.h"
#include "gpuopt/Target/PTX/ExportPTX.h"
#include "gpuopt/Target/PTX/ImportPTX.h"
#include "gpuopt/Transforms/Passes.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <mutex>
#include <optional>

#include <fcntl.h>
#include <unistd.h>

using namespace mlir;
namespace api = gpuopt::api;

//===----------------------------------------------------------------------===//
// Diagnostics
//===----------------------------------------------------------------------===//

gpuopt::api::Error::Error(std::vector<api::Diagnostic> diagnostics)
    : diagnostics(std::move(diagnostics)) {
  for (const api::Diagnostic &diagnostic : this->diagnostics)
    if (diagnostic.severity == "error") {
      message = diagnostic.message;
      break;
    }
  if (message.empty())
    message = "gpu-opt failed";
}

gpuopt::api::Error::~Error() = default;

const char *gpuopt::api::Error::what() const noexcept {
  return message.c_str();
}

/// The first file position in `loc`: PTX input positions and YAML spec
/// positions are FileLineColLocs, maybe under a name or inside a fusion.
static std::optional<FileLineColLoc> findFileLoc(Location loc) {
  if (auto file = dyn_cast<FileLineColLoc>(loc))
    return file;
  if (auto name = dyn_cast<NameLoc>(loc))
    return findFileLoc(name.getChildLoc());
  if (auto callSite = dyn_cast<CallSiteLoc>(loc))
    return findFileLoc(callSite.getCallee());
  if (auto fused = dyn_cast<FusedLoc>(loc))
    for (Location inner : fused.getLocations())
      if (std::optional<FileLineColLoc> file = findFileLoc(inner))
        return file;
  return std::nullopt;
}

static const char *getSeverityName(DiagnosticSeverity severity) {
  switch (severity) {
  case DiagnosticSeverity::Error:
    return "error";
  case DiagnosticSeverity::Warning:
    return "warning";
  case DiagnosticSeverity::Remark:
    return "remark";
  case DiagnosticSeverity::Note:
    return "note";
  }
  return "error";
}

static api::Diagnostic toDiagnostic(const mlir::Diagnostic &diagnostic) {
  api::Diagnostic result;
  result.severity = getSeverityName(diagnostic.getSeverity());
  if (std::optional<FileLineColLoc> loc =
          findFileLoc(diagnostic.getLocation())) {
    result.file = loc->getFilename().str();
    result.line = loc->getLine();
    result.col = loc->getColumn();
  }
  result.message = diagnostic.str();
  return result;
}

static api::Diagnostic makeError(std::string message) {
  api::Diagnostic error;
  error.severity = "error";
  error.message = std::move(message);
  return error;
}

namespace {
/// Collects the diagnostics reported in `context` while it lives, notes
/// after the diagnostic they belong to.
class DiagnosticCollector {
public:
  explicit DiagnosticCollector(MLIRContext &context)
      : handler(&context, [this](mlir::Diagnostic &diagnostic) {
          diagnostics.push_back(toDiagnostic(diagnostic));
          for (const mlir::Diagnostic &note : diagnostic.getNotes())
            diagnostics.push_back(toDiagnostic(note));
          return success();
        }) {}

  /// An error with `message` and no position, for failures reported outside
  /// the diagnostic engine (a pipeline that does not parse).
  void addError(std::string message) {
    diagnostics.push_back(makeError(std::move(message)));
  }

  /// The failure of the call: every diagnostic, and `what` as an error when
  /// none was one.
  [[noreturn]] void fail(const char *what) {
    if (llvm::none_of(diagnostics, [](const api::Diagnostic &diagnostic) {
          return diagnostic.severity == "error";
        }))
      addError(what);
    throw gpuopt::api::Error(std::move(diagnostics));
  }

  std::vector<api::Diagnostic> diagnostics;

private:
  ScopedDiagnosticHandler handler;
};

/// What llvm::errs() receives while `fn` runs: pass option parsers report
/// there rather than to the stream they are given. Empty if standard error
/// cannot be redirected.
template <typename Fn>
std::string captureStandardError(Fn fn) {
  llvm::SmallString<128> path;
  int tempFd = -1;
  int savedFd = -1;
  if (!llvm::sys::fs::createTemporaryFile("gpu-opt", "log", tempFd, path))
    savedFd = ::dup(STDERR_FILENO);
  if (savedFd < 0) {
    if (tempFd >= 0)
      ::close(tempFd);
    fn();
    return {};
  }
  llvm::errs().flush();
  ::dup2(tempFd, STDERR_FILENO);
  fn();
  llvm::errs().flush();
  ::dup2(savedFd, STDERR_FILENO);
  ::close(savedFd);
  ::close(tempFd);
  std::string text;
  if (auto buffer = llvm::MemoryBuffer::getFile(path))
    text = (*buffer)->getBuffer().trim().str();
  llvm::sys::fs::remove(path);
  return text;
}
} // namespace

//===----------------------------------------------------------------------===//
// Module
//===----------------------------------------------------------------------===//

namespace gpuopt::api {
/// The context of an imported module and of every module derived from it.
struct Context {
  static DialectRegistry makeRegistry() {
    DialectRegistry registry;
    gpuopt::registerAllDialects(registry);
    return registry;
  }

  Context() : context(makeRegistry(), MLIRContext::Threading::DISABLED) {
    // Diagnostics point at PTX lines; the op around them adds little.
    context.printOpOnDiagnostic(false);
  }

  MLIRContext context;
  std::mutex mutex;
};

class Module::Impl {
public:
  Impl(std::shared_ptr<Context> shared, OwningOpRef<ModuleOp> op,
       std::vector<api::Diagnostic> diagnostics)
      : shared(std::move(shared)), op(std::move(op)),
        diagnostics(std::move(diagnostics)) {}
  ~Impl() {
    std::lock_guard<std::mutex> lock(shared->mutex);
    op = nullptr;
  }

  /// One ptx.module (`moduleName`, the only one, or all of them linked into
  /// `linked`, as gpu-opt exports them) and its PTX text; throws with the
  /// collected diagnostics when there is none to export.
  std::pair<ptx::PTXModuleOp, std::string>
  exportText(const std::string &moduleName, DiagnosticCollector &collector,
             OwningOpRef<ptx::PTXModuleOp> &linked) {
    std::string ptx;
    llvm::raw_string_ostream os(ptx);
    FailureOr<ptx::PTXModuleOp> module =
        getPTXModuleToExport(*op, moduleName, linked);
    if (failed(module) || failed(exportPTX(*module, os)))
      collector.fail("cannot export PTX");
    return {*module, ptx};
  }

  std::shared_ptr<Context> shared;
  OwningOpRef<ModuleOp> op;
  std::vector<api::Diagnostic> diagnostics;
};
} // namespace gpuopt::api

using gpuopt::api::Context;
using gpuopt::api::Module;

Module::Module(std::unique_ptr<Impl> impl) : impl(std::move(impl)) {}

Module::~Module() = default;

const std::vector<api::Diagnostic> &Module::getDiagnostics() const {
  return impl->diagnostics;
}

std::unique_ptr<Module>
Module::importPTX(const std::vector<std::string> &texts,
                  const std::vector<std::string> &files) {
  auto shared = std::make_shared<Context>();
  MLIRContext &context = shared->context;
  std::lock_guard<std::mutex> lock(shared->mutex);
  DiagnosticCollector collector(context);
  if (texts.empty() || texts.size() != files.size()) {
    collector.addError("import_ptx takes one file name per PTX text");
    collector.fail("bad arguments");
  }
  llvm::SourceMgr sourceMgr;
  for (size_t i = 0; i < texts.size(); ++i) {
    if (!looksLikePTX(texts[i])) {
      api::Diagnostic error =
          makeError("not PTX: it must start with a PTX directive (.version)");
      error.file = files[i];
      error.line = error.col = 1;
      collector.diagnostics.push_back(std::move(error));
    }
    sourceMgr.AddNewSourceBuffer(
        llvm::MemoryBuffer::getMemBufferCopy(texts[i], files[i]),
        llvm::SMLoc());
  }
  if (!collector.diagnostics.empty())
    collector.fail("not PTX");
  // One file: the module is located in it, as gpu-opt does.
  Location loc =
      texts.size() == 1
          ? Location(FileLineColLoc::get(&context, files.front(), 0, 0))
          : Location(UnknownLoc::get(&context));
  OwningOpRef<ModuleOp> module(ModuleOp::create(loc));
  if (failed(importPTXBuffers(sourceMgr, *module)))
    collector.fail("cannot import PTX");
  return std::make_unique<Module>(std::make_unique<Impl>(
      shared, std::move(module), std::move(collector.diagnostics)));
}

std::unique_ptr<Module> Module::parseMLIR(const std::string &text,
                                          const std::string &file) {
  auto shared = std::make_shared<Context>();
  std::lock_guard<std::mutex> lock(shared->mutex);
  DiagnosticCollector collector(shared->context);
  ParserConfig config(&shared->context);
  OwningOpRef<ModuleOp> module =
      parseSourceString<ModuleOp>(text, config, file);
  if (!module)
    collector.fail("cannot parse MLIR");
  return std::make_unique<Module>(std::make_unique<Impl>(
      shared, std::move(module), std::move(collector.diagnostics)));
}

std::unique_ptr<Module> Module::runPasses(const std::string &pipeline) {
  std::lock_guard<std::mutex> lock(impl->shared->mutex);
  MLIRContext &context = impl->shared->context;
  DiagnosticCollector collector(context);
  llvm::StringRef text = llvm::StringRef(pipeline).trim();
  if (text.consume_front("builtin.module(")) {
    if (!text.consume_back(")"))
      collector.addError("pipeline '" + pipeline + "': missing ')'");
    text = text.trim();
  }
  PassManager pm(&context, ModuleOp::getOperationName(),
                 PassManager::Nesting::Implicit);
  if (collector.diagnostics.empty() &&
      failed(parsePassPipeline(text, pm, llvm::nulls()))) {
    // Parsed again, with standard error captured, only when it failed: the
    // option parser's own words ("no such option foo") come first, then
    // the pipeline parser's ("failed to add `hfuse` with options").
    std::string parseErrors;
    llvm::raw_string_ostream errorStream(parseErrors);
    PassManager scratch(&context, ModuleOp::getOperationName(),
                        PassManager::Nesting::Implicit);
    std::string optionErrors = captureStandardError(
        [&] { (void)parsePassPipeline(text, scratch, errorStream); });
    // LLVM's option errors start with the program's name, empty here.
    std::string message;
    llvm::SmallVector<llvm::StringRef> lines;
    llvm::StringRef(optionErrors).trim().split(lines, '\n');
    for (llvm::StringRef line : lines) {
      line.consume_front(": ");
      message += (message.empty() ? "" : "\n") + line.str();
    }
    llvm::StringRef rest = llvm::StringRef(parseErrors).trim();
    if (!rest.empty())
      message += (message.empty() ? "" : "\n") + rest.str();
    collector.addError(message.empty() ? "invalid pass pipeline" : message);
  }
  if (!collector.diagnostics.empty())
    collector.fail("invalid pass pipeline");

  OwningOpRef<ModuleOp> result(impl->op->clone());
  if (failed(pm.run(*result)))
    collector.fail("the pass pipeline failed");
  return std::make_unique<Module>(std::make_unique<Impl>(
      impl->shared, std::move(result), std::move(collector.diagnostics)));
}

std::string Module::toPTX(const std::string &moduleName) const {
  std::lock_guard<std::mutex> lock(impl->shared->mutex);
  DiagnosticCollector collector(impl->shared->context);
  OwningOpRef<ptx::PTXModuleOp> linked;
  return impl->exportText(moduleName, collector, linked).second;
}

std::string
Module::toCubin(const std::string &chip, const std::string &moduleName,
                const std::string &ptxas,
                const std::vector<std::string> &ptxasOptions) const {
  std::lock_guard<std::mutex> lock(impl->shared->mutex);
  DiagnosticCollector collector(impl->shared->context);
  OwningOpRef<ptx::PTXModuleOp> linked;
  auto [module, ptx] = impl->exportText(moduleName, collector, linked);
  PtxasOptions options;
  options.chip = chip;
  options.ptxasPath = ptxas;
  options.extraArgs = ptxasOptions;
  FailureOr<std::string> cubin = assembleWithPtxas(module, ptx, options);
  if (failed(cubin))
    collector.fail("ptxas failed");
  return std::move(*cubin);
}

std::string Module::manifest(const std::string &moduleName,
                             const std::string &modulePath,
                             const std::string &format) const {
  std::lock_guard<std::mutex> lock(impl->shared->mutex);
  DiagnosticCollector collector(impl->shared->context);
  if (format != "ptx" && format != "cubin")
    collector.addError("manifest format must be 'ptx' or 'cubin', not '" +
                       format + "'");
  FailureOr<ptx::PTXModuleOp> module = failure();
  OwningOpRef<ptx::PTXModuleOp> linked;
  if (collector.diagnostics.empty())
    module = getPTXModuleToExport(*impl->op, moduleName, linked);
  if (failed(module))
    collector.fail("no ptx.module to describe");
  std::string path = modulePath.empty()
                         ? module->getSymName().str() + "." + format
                         : modulePath;
  FailureOr<runtime::Manifest> built =
      buildLaunchManifest(*module, path, format);
  if (failed(built))
    collector.fail("cannot build the launch manifest");
  return runtime::writeManifest(
      *built, {runtime::oldestVersionFor(*built), /*SortKeys=*/true});
}

std::vector<std::string> Module::moduleNames() const {
  std::lock_guard<std::mutex> lock(impl->shared->mutex);
  std::vector<std::string> names;
  for (auto module : impl->op->getBody()->getOps<ptx::PTXModuleOp>())
    names.push_back(module.getSymName().str());
  return names;
}

std::vector<std::string> Module::kernels() const {
  std::lock_guard<std::mutex> lock(impl->shared->mutex);
  std::vector<std::string> names;
  impl->op->walk(
      [&](ptx::EntryOp entry) { names.push_back(entry.getSymName().str()); });
  return names;
}

std::string Module::str() const {
  std::lock_guard<std::mutex> lock(impl->shared->mutex);
  std::string text;
  llvm::raw_string_ostream os(text);
  impl->op->print(os);
  return text;
}

void gpuopt::api::registerPasses() {
  static std::once_flag once;
  std::call_once(once, [] {
    gpuopt::registerAllPasses();
    mlir::registerTransformsPasses();
  });
}

std::string gpuopt::api::findPtxas() {
  std::optional<std::string> ptxas = gpuopt::findPtxas(PtxasOptions());
  return ptxas ? *ptxas : std::string();
}

const char *gpuopt::api::getVersion() { return GPUOPT_VERSION; }
