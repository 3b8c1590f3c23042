//===- GpuOptModule.cpp - gpuopt._core: the compiler in process -----------===//
//
// What gpu-opt does, for Python, without a process per kernel: PTX (or MLIR)
// in, a pass pipeline, PTX, cubin and the launch manifest out. Wrapped by
// gpuopt/api.py, which builds the pipelines of Module.fuse and Module.probe
// and turns the errors raised here into gpuopt.Error.
//
// Every Module holds a module op in a context it shares with the modules
// derived from it (run_passes works on a clone); a mutex per context keeps
// two Python threads out of it at once. Diagnostics are collected per call:
// a failing call raises them all and leaves its Module unchanged, a
// succeeding one keeps them as the result's `diagnostics`.
//
//===----------------------------------------------------------------------===//

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
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/unique_ptr.h>
#include <nanobind/stl/vector.h>

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

namespace nb = nanobind;
using namespace mlir;

namespace {

/// One diagnostic as Python sees it: (severity, file, line, col, message),
/// the file empty and line and column 0 when it has no source position.
using PyDiagnostic =
    std::tuple<std::string, std::string, unsigned, unsigned, std::string>;

/// A call that failed, with every diagnostic it reported.
struct CompileError : std::exception {
  explicit CompileError(std::vector<PyDiagnostic> diagnostics)
      : diagnostics(std::move(diagnostics)) {}
  const char *what() const noexcept override { return "gpu-opt failed"; }
  std::vector<PyDiagnostic> diagnostics;
};

/// The first file position in `loc`: PTX input positions and YAML spec
/// positions are FileLineColLocs, maybe under a name or inside a fusion.
std::optional<FileLineColLoc> findFileLoc(Location loc) {
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

const char *severityName(DiagnosticSeverity severity) {
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

PyDiagnostic toPyDiagnostic(const Diagnostic &diagnostic) {
  std::string file;
  unsigned line = 0, col = 0;
  if (std::optional<FileLineColLoc> loc =
          findFileLoc(diagnostic.getLocation())) {
    file = loc->getFilename().str();
    line = loc->getLine();
    col = loc->getColumn();
  }
  return {severityName(diagnostic.getSeverity()), file, line, col,
          diagnostic.str()};
}

/// The context of an imported module and of every module derived from it.
struct SharedContext {
  static DialectRegistry makeRegistry() {
    DialectRegistry registry;
    gpuopt::registerAllDialects(registry);
    return registry;
  }

  SharedContext() : context(makeRegistry(), MLIRContext::Threading::DISABLED) {
    // Diagnostics point at PTX lines; the op around them adds little.
    context.printOpOnDiagnostic(false);
  }

  /// Locks the context. A thread that waits for it does not hold the GIL,
  /// which the holder, running passes without it, takes back when done.
  std::unique_lock<std::mutex> lock() {
    std::unique_lock<std::mutex> lock(mutex, std::try_to_lock);
    if (!lock.owns_lock()) {
      nb::gil_scoped_release release;
      lock.lock();
    }
    return lock;
  }

  MLIRContext context;
  std::mutex mutex;
};

/// Collects the diagnostics reported in `context` while it lives, notes
/// after the diagnostic they belong to.
class DiagnosticCollector {
public:
  explicit DiagnosticCollector(MLIRContext &context)
      : handler(&context, [this](Diagnostic &diagnostic) {
          diagnostics.push_back(toPyDiagnostic(diagnostic));
          for (const Diagnostic &note : diagnostic.getNotes())
            diagnostics.push_back(toPyDiagnostic(note));
          return success();
        }) {}

  /// An error with `message` and no position, for failures reported outside
  /// the diagnostic engine (a pipeline that does not parse).
  void addError(std::string message) {
    diagnostics.emplace_back("error", "", 0, 0, std::move(message));
  }

  /// The failure of the call: every diagnostic, and a generic error when
  /// none was an error.
  [[noreturn]] void fail(const char *what) {
    bool anyError = false;
    for (const PyDiagnostic &diagnostic : diagnostics)
      anyError |= std::get<0>(diagnostic) == "error";
    if (!anyError)
      addError(what);
    throw CompileError(std::move(diagnostics));
  }

  std::vector<PyDiagnostic> diagnostics;

private:
  ScopedDiagnosticHandler handler;
};

/// A builtin module of ptx.modules (or any MLIR) and its context.
class PyModule {
public:
  PyModule(std::shared_ptr<SharedContext> shared, OwningOpRef<ModuleOp> op,
           std::vector<PyDiagnostic> diagnostics)
      : shared(std::move(shared)), op(std::move(op)),
        diagnostics(std::move(diagnostics)) {}
  ~PyModule() {
    std::unique_lock<std::mutex> lock = shared->lock();
    op = nullptr;
  }

  /// Runs `pipeline` (passes as --pass-pipeline takes them, with or without
  /// the builtin.module(...) around them) on a clone and returns it.
  std::unique_ptr<PyModule> runPasses(std::string pipeline) {
    std::unique_lock<std::mutex> lock = shared->lock();
    MLIRContext &context = shared->context;
    DiagnosticCollector collector(context);
    llvm::StringRef text = llvm::StringRef(pipeline).trim();
    if (text.consume_front("builtin.module(")) {
      if (!text.consume_back(")"))
        collector.addError("pipeline '" + pipeline + "': missing ')'");
      text = text.trim();
    }
    PassManager pm(&context, ModuleOp::getOperationName(),
                   PassManager::Nesting::Implicit);
    std::string parseErrors;
    llvm::raw_string_ostream errorStream(parseErrors);
    if (collector.diagnostics.empty() &&
        failed(parsePassPipeline(text, pm, errorStream)))
      collector.addError(llvm::StringRef(parseErrors).trim().str());
    if (!collector.diagnostics.empty())
      collector.fail("invalid pass pipeline");

    OwningOpRef<ModuleOp> result(op->clone());
    LogicalResult ran = success();
    {
      nb::gil_scoped_release release;
      ran = pm.run(*result);
    }
    diagnostics = collector.diagnostics;
    if (failed(ran))
      collector.fail("the pass pipeline failed");
    return std::make_unique<PyModule>(shared, std::move(result),
                                      std::move(collector.diagnostics));
  }

  /// One ptx.module (`moduleName`, or the only one) and its PTX text;
  /// raises with the collected diagnostics when there is none to export.
  std::pair<gpuopt::ptx::PTXModuleOp, std::string>
  exportText(const std::string &moduleName, DiagnosticCollector &collector) {
    std::string ptx;
    llvm::raw_string_ostream os(ptx);
    FailureOr<gpuopt::ptx::PTXModuleOp> module =
        gpuopt::findPTXModule(*op, moduleName);
    if (failed(module) || failed(gpuopt::exportPTX(*module, os)))
      collector.fail("cannot export PTX");
    return {*module, ptx};
  }

  std::string toPTX(const std::string &moduleName) {
    std::unique_lock<std::mutex> lock = shared->lock();
    DiagnosticCollector collector(shared->context);
    return exportText(moduleName, collector).second;
  }

  nb::bytes toCubin(const std::string &chip, const std::string &moduleName,
                    const std::string &ptxas,
                    const std::vector<std::string> &ptxasOptions) {
    std::unique_lock<std::mutex> lock = shared->lock();
    DiagnosticCollector collector(shared->context);
    auto [module, ptx] = exportText(moduleName, collector);
    gpuopt::PtxasOptions options;
    options.chip = chip;
    options.ptxasPath = ptxas;
    options.extraArgs = ptxasOptions;
    FailureOr<std::string> cubin = failure();
    {
      nb::gil_scoped_release release;
      cubin = gpuopt::assembleWithPtxas(module, ptx, options);
    }
    if (failed(cubin))
      collector.fail("ptxas failed");
    return nb::bytes(cubin->data(), cubin->size());
  }

  /// The launch manifest of one ptx.module as gpu-opt --manifest writes it,
  /// for the module written to `modulePath` (default: NAME.ptx or
  /// NAME.cubin beside the manifest) in `format`.
  std::string manifest(const std::string &moduleName,
                       const std::string &modulePath,
                       const std::string &format) {
    std::unique_lock<std::mutex> lock = shared->lock();
    DiagnosticCollector collector(shared->context);
    if (format != "ptx" && format != "cubin")
      collector.addError("manifest format must be 'ptx' or 'cubin', not '" +
                         format + "'");
    FailureOr<gpuopt::ptx::PTXModuleOp> module = failure();
    if (collector.diagnostics.empty())
      module = gpuopt::findPTXModule(*op, moduleName);
    if (failed(module))
      collector.fail("no ptx.module to describe");
    std::string path = modulePath.empty()
                           ? module->getSymName().str() + "." + format
                           : modulePath;
    FailureOr<gpuopt::runtime::Manifest> built =
        gpuopt::buildLaunchManifest(*module, path, format);
    if (failed(built))
      collector.fail("cannot build the launch manifest");
    return gpuopt::runtime::writeManifest(
        *built, {gpuopt::runtime::oldestVersionFor(*built), /*SortKeys=*/true});
  }

  /// The ptx.modules' names, in order.
  std::vector<std::string> moduleNames() {
    std::unique_lock<std::mutex> lock = shared->lock();
    std::vector<std::string> names;
    for (auto module : op->getBody()->getOps<gpuopt::ptx::PTXModuleOp>())
      names.push_back(module.getSymName().str());
    return names;
  }

  /// Every .entry of every ptx.module, in order.
  std::vector<std::string> kernels() {
    std::unique_lock<std::mutex> lock = shared->lock();
    std::vector<std::string> names;
    op->walk([&](gpuopt::ptx::EntryOp entry) {
      names.push_back(entry.getSymName().str());
    });
    return names;
  }

  std::string str() {
    std::unique_lock<std::mutex> lock = shared->lock();
    std::string text;
    llvm::raw_string_ostream os(text);
    op->print(os);
    return text;
  }

  std::shared_ptr<SharedContext> shared;
  OwningOpRef<ModuleOp> op;
  /// What the call that made this module, or its last pass run, reported.
  std::vector<PyDiagnostic> diagnostics;
};

/// PTX texts, one ptx.module each (named after its file), in one module.
std::unique_ptr<PyModule> importPTX(const std::vector<std::string> &texts,
                                    const std::vector<std::string> &files) {
  auto shared = std::make_shared<SharedContext>();
  MLIRContext &context = shared->context;
  std::unique_lock<std::mutex> lock = shared->lock();
  DiagnosticCollector collector(context);
  if (texts.empty() || texts.size() != files.size()) {
    collector.addError("import_ptx takes one file name per PTX text");
    collector.fail("bad arguments");
  }
  llvm::SourceMgr sourceMgr;
  for (size_t i = 0; i < texts.size(); ++i) {
    if (!gpuopt::looksLikePTX(texts[i]))
      collector.diagnostics.emplace_back(
          "error", files[i], 1, 1,
          "not PTX: it must start with a PTX directive (.version)");
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
  LogicalResult imported = success();
  {
    nb::gil_scoped_release release;
    imported = gpuopt::importPTXBuffers(sourceMgr, *module);
  }
  if (failed(imported))
    collector.fail("cannot import PTX");
  return std::make_unique<PyModule>(shared, std::move(module),
                                    std::move(collector.diagnostics));
}

/// MLIR text (a builtin module of ptx.modules, as gpu-opt writes it).
std::unique_ptr<PyModule> parseMLIR(const std::string &text,
                                    const std::string &file) {
  auto shared = std::make_shared<SharedContext>();
  std::unique_lock<std::mutex> lock = shared->lock();
  DiagnosticCollector collector(shared->context);
  ParserConfig config(&shared->context);
  OwningOpRef<ModuleOp> module =
      parseSourceString<ModuleOp>(text, config, file);
  if (!module)
    collector.fail("cannot parse MLIR");
  return std::make_unique<PyModule>(shared, std::move(module),
                                    std::move(collector.diagnostics));
}

} // namespace

NB_MODULE(_core, m) {
  m.doc() = "gpu-opt's compiler in process (wrapped by gpuopt.api)";
  gpuopt::registerAllPasses();
  registerTransformsPasses();

  // CompileError becomes gpuopt.api.Error, built from its diagnostics.
  nb::register_exception_translator([](const std::exception_ptr &p, void *) {
    try {
      std::rethrow_exception(p);
    } catch (const CompileError &error) {
      nb::object cls = nb::module_::import_("gpuopt.api").attr("Error");
      nb::object exc =
          cls.attr("from_diagnostics")(nb::cast(error.diagnostics));
      PyErr_SetObject(cls.ptr(), exc.ptr());
    }
  });

  nb::class_<PyModule>(m, "Module")
      .def("run_passes", &PyModule::runPasses, nb::arg("pipeline"))
      .def("to_ptx", &PyModule::toPTX, nb::arg("module") = "")
      .def("to_cubin", &PyModule::toCubin, nb::arg("chip") = "",
           nb::arg("module") = "", nb::arg("ptxas") = "",
           nb::arg("ptxas_options") = std::vector<std::string>())
      .def("manifest", &PyModule::manifest, nb::arg("module") = "",
           nb::arg("module_path") = "", nb::arg("format") = "ptx")
      .def_prop_ro("modules", &PyModule::moduleNames)
      .def_prop_ro("kernels", &PyModule::kernels)
      .def_ro("diagnostics", &PyModule::diagnostics)
      .def("__str__", &PyModule::str);

  m.def("import_ptx", &importPTX, nb::arg("texts"), nb::arg("files"));
  m.def("parse_mlir", &parseMLIR, nb::arg("text"), nb::arg("file"));
}
