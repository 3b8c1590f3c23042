//===- GpuOptModule.cpp - gpuopt._core: the compiler in process -----------===//
//
// What gpu-opt does, for Python, without a process per kernel: PTX (or MLIR)
// in, a pass pipeline, PTX, cubin and the launch manifest out. A thin layer
// over the in-process API (gpuopt/API/Compiler.h), which names no MLIR or
// LLVM type: in the self-contained wheel this extension links only
// libgpuopt.so. Wrapped by gpuopt/api.py, which builds the pipelines of
// Module.fuse and Module.probe and turns the errors raised here into
// gpuopt.Error.
//
// Every call into the compiler runs without the GIL: a module's context has
// a mutex, and a thread that waits for it must not hold the GIL that the
// thread inside it needs to return.
//
//===----------------------------------------------------------------------===//

#include "gpuopt/API/Compiler.h"

#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/unique_ptr.h>
#include <nanobind/stl/vector.h>

#include <memory>
#include <string>
#include <tuple>
#include <vector>

namespace nb = nanobind;
using gpuopt::api::Diagnostic;

namespace {

/// One diagnostic as Python sees it: (severity, file, line, col, message),
/// the file empty and line and column 0 when it has no source position.
using PyDiagnostic =
    std::tuple<std::string, std::string, unsigned, unsigned, std::string>;

std::vector<PyDiagnostic>
toPython(const std::vector<Diagnostic> &diagnostics) {
  std::vector<PyDiagnostic> result;
  for (const Diagnostic &d : diagnostics)
    result.emplace_back(d.severity, d.file, d.line, d.col, d.message);
  return result;
}

/// A gpuopt::api::Module whose calls release the GIL.
class PyModule {
public:
  explicit PyModule(std::unique_ptr<gpuopt::api::Module> module)
      : module(std::move(module)) {}
  ~PyModule() {
    nb::gil_scoped_release release;
    module.reset();
  }

  std::unique_ptr<PyModule> runPasses(const std::string &pipeline) {
    std::unique_ptr<gpuopt::api::Module> result;
    {
      nb::gil_scoped_release release;
      result = module->runPasses(pipeline);
    }
    return std::make_unique<PyModule>(std::move(result));
  }

  std::string toPTX(const std::string &moduleName) {
    nb::gil_scoped_release release;
    return module->toPTX(moduleName);
  }

  nb::bytes toCubin(const std::string &chip, const std::string &moduleName,
                    const std::string &ptxas,
                    const std::vector<std::string> &ptxasOptions) {
    std::string cubin;
    {
      nb::gil_scoped_release release;
      cubin = module->toCubin(chip, moduleName, ptxas, ptxasOptions);
    }
    return nb::bytes(cubin.data(), cubin.size());
  }

  std::string manifest(const std::string &moduleName,
                       const std::string &modulePath,
                       const std::string &format) {
    nb::gil_scoped_release release;
    return module->manifest(moduleName, modulePath, format);
  }

  std::vector<std::string> moduleNames() {
    nb::gil_scoped_release release;
    return module->moduleNames();
  }

  std::vector<std::string> kernels() {
    nb::gil_scoped_release release;
    return module->kernels();
  }

  std::string str() {
    nb::gil_scoped_release release;
    return module->str();
  }

  std::vector<PyDiagnostic> diagnostics() {
    return toPython(module->getDiagnostics());
  }

private:
  std::unique_ptr<gpuopt::api::Module> module;
};

std::unique_ptr<PyModule> importPTX(const std::vector<std::string> &texts,
                                    const std::vector<std::string> &files) {
  std::unique_ptr<gpuopt::api::Module> module;
  {
    nb::gil_scoped_release release;
    module = gpuopt::api::Module::importPTX(texts, files);
  }
  return std::make_unique<PyModule>(std::move(module));
}

std::unique_ptr<PyModule> parseMLIR(const std::string &text,
                                    const std::string &file) {
  std::unique_ptr<gpuopt::api::Module> module;
  {
    nb::gil_scoped_release release;
    module = gpuopt::api::Module::parseMLIR(text, file);
  }
  return std::make_unique<PyModule>(std::move(module));
}

} // namespace

NB_MODULE(_core, m) {
  m.doc() = "gpu-opt's compiler in process (wrapped by gpuopt.api)";
  gpuopt::api::registerPasses();

  // gpuopt::api::Error becomes gpuopt.api.Error, built from its diagnostics.
  nb::register_exception_translator([](const std::exception_ptr &p, void *) {
    try {
      std::rethrow_exception(p);
    } catch (const gpuopt::api::Error &error) {
      nb::object cls = nb::module_::import_("gpuopt.api").attr("Error");
      nb::object exc =
          cls.attr("from_diagnostics")(nb::cast(toPython(error.diagnostics)));
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
      .def_prop_ro("diagnostics", &PyModule::diagnostics)
      .def("__str__", &PyModule::str);

  m.def("import_ptx", &importPTX, nb::arg("texts"), nb::arg("files"));
  m.def("parse_mlir", &parseMLIR, nb::arg("text"), nb::arg("file"));
  m.def("find_ptxas", [] {
    nb::gil_scoped_release release;
    return gpuopt::api::findPtxas();
  });
  m.def("version", &gpuopt::api::getVersion);
}
