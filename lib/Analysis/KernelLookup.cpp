//===- KernelLookup.cpp - Find a kernel by the name a user gives ----------===//

#include "gpuopt/Analysis/KernelLookup.h"

#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Demangle/Demangle.h"

#include <cstdlib>

using namespace mlir;
using namespace gpuopt;
using namespace gpuopt::ptx;

namespace {
/// The two names a mangled symbol can be given by: the function name with
/// namespaces and template arguments, and the bare base name.
struct DemangledNames {
  std::string function, base;
};
} // namespace

static DemangledNames demangle(StringRef symbol) {
  DemangledNames names{symbol.str(), symbol.str()};
  if (!symbol.starts_with("_Z"))
    return names;
  llvm::ItaniumPartialDemangler demangler;
  std::string mangled = symbol.str();
  if (demangler.partialDemangle(mangled.c_str()) || !demangler.isFunction())
    return names;
  auto take = [](char *buf, std::string &into) {
    if (buf)
      into = buf;
    std::free(buf);
  };
  take(demangler.getFunctionName(nullptr, nullptr), names.function);
  take(demangler.getFunctionBaseName(nullptr, nullptr), names.base);
  return names;
}

std::string gpuopt::getDemangledKernelName(StringRef symbol) {
  return demangle(symbol).function;
}

/// "_Z3fooPf (foo(float*))" for a mangled symbol, the symbol alone
/// otherwise: the parameters tell overloads apart.
static std::string describe(EntryOp entry, bool withModule) {
  std::string text;
  if (withModule)
    text = (entry->getParentOfType<PTXModuleOp>().getSymName() + "::").str();
  StringRef symbol = entry.getSymName();
  text += symbol.str();
  std::string demangled = llvm::demangle(symbol);
  if (demangled != symbol)
    text += " (" + demangled + ")";
  return text;
}

FailureOr<EntryOp> gpuopt::lookupKernel(ModuleOp root, StringRef moduleName,
                                        StringRef name, Location loc) {
  // Matches by tier: the symbol, the function name, the bare base name. The
  // first tier with a match decides, so that `scale` names `::scale` even
  // when `ops::scale` exists.
  SmallVector<EntryOp> all, exact, function, base;
  unsigned modules = 0, allModules = 0;
  for (auto module : root.getBody()->getOps<PTXModuleOp>()) {
    ++allModules;
    if (!moduleName.empty() && module.getSymName() != moduleName)
      continue;
    ++modules;
    for (auto entry : module.getBodyBlock()->getOps<EntryOp>()) {
      if (!entry.hasBody())
        continue;
      all.push_back(entry);
      if (entry.getSymName() == name) {
        exact.push_back(entry);
        continue;
      }
      DemangledNames names = demangle(entry.getSymName());
      if (names.function == name)
        function.push_back(entry);
      else if (names.base == name)
        base.push_back(entry);
    }
  }
  SmallVector<EntryOp> &matches = !exact.empty()      ? exact
                                  : !function.empty() ? function
                                                      : base;
  if (matches.size() == 1)
    return matches.front();

  bool withModule = moduleName.empty() && allModules > 1;
  std::string where = moduleName.empty()
                          ? std::string()
                          : " in module '" + moduleName.str() + "'";
  if (!moduleName.empty() && modules == 0) {
    SmallVector<StringRef> names;
    for (auto module : root.getBody()->getOps<PTXModuleOp>())
      names.push_back(module.getSymName());
    return emitError(loc) << "no module '" << moduleName
                          << "'; the modules are: " << llvm::join(names, ", ")
                          << " (a PTX file's module is named after the file)";
  }
  if (matches.empty()) {
    InFlightDiagnostic diag = emitError(loc)
                              << "no kernel '" << name << "'" << where;
    if (all.empty())
      return diag << " (no module holds a kernel with a body)";
    diag << "; the kernels are: ";
    constexpr size_t kListed = 20;
    llvm::interleaveComma(
        ArrayRef(all).take_front(kListed), diag,
        [&](EntryOp entry) { diag << describe(entry, withModule); });
    if (all.size() > kListed)
      diag << " and " << all.size() - kListed << " more";
    return diag << "; name one by its symbol or its function name";
  }
  InFlightDiagnostic diag = emitError(loc)
                            << "kernel name '" << name << "'" << where
                            << " matches " << matches.size() << " kernels: ";
  llvm::interleaveComma(matches, diag, [&](EntryOp entry) {
    diag << describe(entry, /*withModule=*/!exact.empty() || withModule);
  });
  if (!exact.empty())
    return diag << "; name the module (module: in the config, or "
                   "module::kernel)";
  return diag << "; name one by its symbol or by its function name with "
                 "namespaces and template arguments";
}

std::pair<StringRef, StringRef> gpuopt::splitModuleName(ModuleOp root,
                                                        StringRef name) {
  // `module::kernel`, unless what precedes `::` is no module: then it is a
  // demangled name's namespace (`ops::scale`).
  auto [prefix, rest] = name.split("::");
  bool isModule =
      !rest.empty() && llvm::any_of(root.getBody()->getOps<PTXModuleOp>(),
                                    [&](PTXModuleOp module) {
                                      return module.getSymName() == prefix;
                                    });
  if (isModule)
    return {prefix, rest};
  return {StringRef(), name};
}
