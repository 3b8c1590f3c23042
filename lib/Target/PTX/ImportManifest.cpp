//===- ImportManifest.cpp - Launch manifests back into the ptx dialect ----===//
//
// The inverse of the `fused_from` part of ExportManifest.cpp: a fused
// kernel's `gpuopt.fusion` attribute from its manifest entry. The manifest
// is checked against the PTX it is given with (kernels, parameters, parts),
// since a manifest of another build would attribute records to the wrong
// parts and launch the kernel with the wrong arguments.
//
//===----------------------------------------------------------------------===//

#include "gpuopt/Target/PTX/ImportManifest.h"
#include "ptx/IR/PTX.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Regex.h"

using namespace mlir;
using namespace gpuopt;
using namespace gpuopt::ptx;
namespace json = llvm::json;

namespace {
/// Reads one manifest; every error names the file and the JSON path.
class ManifestImporter {
public:
  ManifestImporter(ModuleOp root, const llvm::MemoryBuffer &buffer)
      : root(root), builder(root.getContext()), text(buffer.getBuffer()),
        file(buffer.getBufferIdentifier()) {}

  LogicalResult run();

private:
  /// The manifest at the line and column of the first occurrence of
  /// `quoted` in its text (a kernel's name), else at its start.
  Location locate(StringRef quoted = {}) {
    size_t offset = quoted.empty() ? 0 : text.find(quoted);
    if (offset == StringRef::npos)
      offset = 0;
    StringRef before = text.take_front(offset);
    unsigned line = before.count('\n') + 1;
    size_t lineStart = before.rfind('\n');
    unsigned column =
        offset - (lineStart == StringRef::npos ? 0 : lineStart + 1) + 1;
    return FileLineColLoc::get(builder.getContext(), file, line, column);
  }
  InFlightDiagnostic error(const Twine &path, StringRef kernel = {}) {
    return emitError(locate(kernel.empty() ? "" : "\"" + kernel.str() + "\""))
           << "launch manifest '" << file << "', " << path << ": ";
  }
  FailureOr<PTXModuleOp> findModule(const json::Object &manifest);
  LogicalResult checkParams(EntryOp entry, const json::Array &params,
                            const std::string &path);
  FailureOr<DictionaryAttr> readFusion(EntryOp entry,
                                       const json::Object &kernel,
                                       const std::string &path);
  FailureOr<Attribute> convert(const json::Value &value,
                               const std::string &path, StringRef kernel);

  ModuleOp root;
  Builder builder;
  StringRef text;
  StringRef file;
};
} // namespace

FailureOr<PTXModuleOp>
ManifestImporter::findModule(const json::Object &manifest) {
  SmallVector<PTXModuleOp> modules(root.getBody()->getOps<PTXModuleOp>());
  if (modules.empty())
    return emitError(locate()) << "launch manifest '" << file
                               << "' given, but there is no PTX input",
           failure();
  if (modules.size() == 1)
    return modules.front();
  // The manifest names the file it describes; the importer names each
  // module after its file.
  const json::Object *module = manifest.getObject("module");
  std::optional<StringRef> path =
      module ? module->getString("path") : std::nullopt;
  StringRef stem = path ? llvm::sys::path::stem(*path) : StringRef();
  for (PTXModuleOp candidate : modules)
    if (candidate.getSymName() == stem)
      return candidate;
  SmallVector<StringRef> names;
  for (PTXModuleOp candidate : modules)
    names.push_back(candidate.getSymName());
  return emitError(locate()) << "launch manifest '" << file << "' describes '"
                             << (path ? *path : StringRef("?"))
                             << "', which is none of the PTX inputs (modules: "
                             << llvm::join(names, ", ")
                             << "): give the PTX file it was written with",
         failure();
}

LogicalResult ManifestImporter::checkParams(EntryOp entry,
                                            const json::Array &params,
                                            const std::string &path) {
  StringRef name = entry.getSymName();
  ArrayRef<Attribute> own = entry.getParams().getValue();
  if (own.size() != params.size())
    return entry.emitError()
           << "kernel '" << name << "' has " << own.size()
           << " parameters, but launch manifest '" << file << "' gives it "
           << params.size()
           << ": the manifest was written with another build of this PTX; "
              "give the one written with it";
  for (auto [index, attr, json] : llvm::enumerate(own, params)) {
    auto param = cast<ParamDeclAttr>(attr);
    const json::Object *object = json.getAsObject();
    std::optional<StringRef> jsonName =
        object ? object->getString("name") : std::nullopt;
    std::optional<StringRef> jsonType =
        object ? object->getString("type") : std::nullopt;
    if (!jsonName || !jsonType)
      return error(path + ".params[" + Twine(index) + "]", name)
                 << "expected an object with a \"name\" and a \"type\"",
             failure();
    if (*jsonName != param.getName() ||
        *jsonType != param.getType().drop_front())
      return entry.emitError()
             << "kernel '" << name << "' parameter #" << index << " is '"
             << param.getName() << "' (" << param.getType()
             << "), but launch manifest '" << file << "' has '" << *jsonName
             << "' (." << *jsonType
             << "): the manifest was written with another build of this PTX; "
                "give the one written with it";
  }
  return success();
}

/// Strings, integers, booleans and arrays of integers: what the exporter
/// writes a fused kernel's parts from.
FailureOr<Attribute> ManifestImporter::convert(const json::Value &value,
                                               const std::string &path,
                                               StringRef kernel) {
  if (std::optional<StringRef> s = value.getAsString())
    return Attribute(builder.getStringAttr(*s));
  if (std::optional<bool> b = value.getAsBoolean())
    return Attribute(builder.getBoolAttr(*b));
  if (std::optional<int64_t> i = value.getAsInteger())
    return Attribute(builder.getI64IntegerAttr(*i));
  if (const json::Array *array = value.getAsArray()) {
    SmallVector<int64_t> values;
    for (const json::Value &element : *array) {
      std::optional<int64_t> i = element.getAsInteger();
      if (!i)
        return error(path, kernel) << "expected an array of integers",
               failure();
      values.push_back(*i);
    }
    return Attribute(builder.getDenseI64ArrayAttr(values));
  }
  return error(path, kernel)
             << "expected a string, an integer or an array of integers",
         failure();
}

FailureOr<DictionaryAttr>
ManifestImporter::readFusion(EntryOp entry, const json::Object &kernel,
                             const std::string &path) {
  StringRef name = entry.getSymName();
  const json::Array *parts = kernel.getArray("fused_from");
  if (!parts)
    return error(path + ".fused_from", name) << "expected an array", failure();
  // Manifests before version 2 have thread splits only.
  StringRef strategy = kernel.getString("fusion_strategy").value_or("thread");
  if (strategy != "thread" && strategy != "interleave" && strategy != "dynamic")
    return error(path + ".fusion_strategy", name)
               << "'" << strategy
               << "' is not a fusion strategy (thread, interleave or dynamic)",
           failure();
  const json::Object *launch = kernel.getObject("launch");
  const json::Array *grid = launch ? launch->getArray("grid") : nullptr;
  std::optional<int64_t> dynamicSmem =
      launch ? launch->getInteger("dynamic_smem") : std::nullopt;
  if (!grid || !dynamicSmem)
    return error(path + ".launch", name)
               << "a fused kernel's launch has a fixed \"grid\" and "
                  "\"dynamic_smem\"",
           failure();
  FailureOr<Attribute> gridAttr =
      convert(json::Value(json::Array(*grid)), path + ".launch.grid", name);
  if (failed(gridAttr))
    return failure();

  int64_t numParams = entry.getParams().size();
  SmallVector<Attribute> partAttrs;
  for (auto [index, value] : llvm::enumerate(*parts)) {
    std::string partPath = path + ".fused_from[" + std::to_string(index) + "]";
    const json::Object *part = value.getAsObject();
    if (!part)
      return error(partPath, name) << "expected an object", failure();
    SmallVector<NamedAttribute> fields;
    for (const auto &[key, field] : *part) {
      FailureOr<Attribute> attr =
          convert(field, partPath + "." + key.str(), name);
      if (failed(attr))
        return failure();
      fields.push_back(builder.getNamedAttr(key.str(), *attr));
    }
    DictionaryAttr dict = builder.getDictionaryAttr(fields);
    // What the exporter and the probes read.
    for (StringRef key : {"kernel", "module"})
      if (!dict.getAs<StringAttr>(key))
        return error(partPath + "." + key, name) << "expected a string",
               failure();
    static const std::pair<StringRef, size_t> dimsKeys[] = {
        {"threads", 2}, {"block", 3}, {"grid", 3}};
    for (auto [key, size] : dimsKeys) {
      auto dims = dict.getAs<DenseI64ArrayAttr>(key);
      if (!dims || dims.size() != size)
        return error(partPath + "." + key, name)
                   << "expected an array of " << size << " integers",
               failure();
    }
    for (StringRef key : {"dynamic_smem", "dynamic_smem_offset"})
      if (!dict.getAs<IntegerAttr>(key))
        return error(partPath + "." + key, name) << "expected an integer",
               failure();
    auto argMap = dict.getAs<DenseI64ArrayAttr>("arg_map");
    if (!argMap)
      return error(partPath + ".arg_map", name)
                 << "expected an array of parameter indices",
             failure();
    for (int64_t arg : argMap.asArrayRef())
      if (arg < 0 || arg >= numParams)
        return error(partPath + ".arg_map", name)
                   << "parameter " << arg << " does not exist: kernel '" << name
                   << "' has " << numParams << " parameters",
               failure();
    partAttrs.push_back(dict);
  }
  // --hfuse-apply builds one top-level scope per part.
  size_t scopes = llvm::count_if(
      entry.getBody().front(), [](Operation &op) { return isa<ScopeOp>(op); });
  if (scopes != partAttrs.size())
    return entry.emitError()
               << "kernel '" << name << "' has " << scopes
               << " top-level scopes, but launch manifest '" << file
               << "' fuses it from " << partAttrs.size()
               << " kernels (one scope each): the manifest was written with "
                  "another build of this PTX; give the one written with it",
           failure();
  return builder.getDictionaryAttr(
      {builder.getNamedAttr("strategy", builder.getStringAttr(strategy)),
       builder.getNamedAttr("grid", *gridAttr),
       builder.getNamedAttr("dynamic_smem",
                            builder.getI64IntegerAttr(*dynamicSmem)),
       builder.getNamedAttr("parts", builder.getArrayAttr(partAttrs))});
}

LogicalResult ManifestImporter::run() {
  llvm::Expected<json::Value> parsed = json::parse(text);
  if (!parsed) {
    std::string message = llvm::toString(parsed.takeError());
    // "[line:column, byte=N]: message"; the column counts from 0 but the
    // parser has read the offending character: it is that one's from 1.
    SmallVector<StringRef> groups;
    Location loc = locate();
    if (llvm::Regex("^\\[([0-9]+):([0-9]+), byte=[0-9]+\\]: (.*)$")
            .match(message, &groups)) {
      unsigned line = 1, column = 0;
      (void)llvm::to_integer(groups[1], line);
      (void)llvm::to_integer(groups[2], column);
      loc = FileLineColLoc::get(builder.getContext(), file, line,
                                std::max(column, 1u));
      message = groups[3].str();
    }
    return emitError(loc) << "launch manifest '" << file
                          << "' is not JSON: " << message,
           failure();
  }
  const json::Object *manifest = parsed->getAsObject();
  const json::Array *kernels =
      manifest ? manifest->getArray("kernels") : nullptr;
  if (!kernels)
    return error("kernels") << "expected an array of kernels (is this a "
                               "launch manifest, written by --manifest?)",
           failure();
  FailureOr<PTXModuleOp> module = findModule(*manifest);
  if (failed(module))
    return failure();

  llvm::StringMap<EntryOp> entries;
  for (auto entry : module->getBodyBlock()->getOps<EntryOp>())
    if (entry.hasBody())
      entries[entry.getSymName()] = entry;
  // Everything is checked before anything is set.
  SmallVector<std::pair<EntryOp, DictionaryAttr>> fusions;
  llvm::StringSet<> described;
  for (auto [index, value] : llvm::enumerate(*kernels)) {
    std::string path = "kernels[" + std::to_string(index) + "]";
    const json::Object *kernel = value.getAsObject();
    std::optional<StringRef> name =
        kernel ? kernel->getString("name") : std::nullopt;
    const json::Array *params = kernel ? kernel->getArray("params") : nullptr;
    if (!name || !params)
      return error(path) << "expected an object with a \"name\" and "
                            "\"params\"",
             failure();
    EntryOp entry = entries.lookup(*name);
    if (!entry)
      return error(path, *name)
                 << "kernel '" << *name << "' is not in '"
                 << module->getSymName()
                 << "': the manifest was written with another PTX file; give "
                    "the one written with it",
             failure();
    described.insert(*name);
    if (failed(checkParams(entry, *params, path)))
      return failure();
    // An empty fused_from is no fusion, as for the runtime.
    const json::Value *fusedFrom = kernel->get("fused_from");
    if (!fusedFrom ||
        (fusedFrom->getAsArray() && fusedFrom->getAsArray()->empty()))
      continue;
    FailureOr<DictionaryAttr> fusion = readFusion(entry, *kernel, path);
    if (failed(fusion))
      return failure();
    if (Attribute own = entry->getAttr("gpuopt.fusion"); own && own != *fusion)
      return entry.emitError()
                 << "kernel '" << *name
                 << "' already has fusion information that launch manifest '"
                 << file << "' contradicts",
             failure();
    fusions.push_back({entry, *fusion});
  }
  for (auto entry : module->getBodyBlock()->getOps<EntryOp>())
    if (entry.hasBody() && !described.contains(entry.getSymName()))
      return entry.emitError()
                 << "kernel '" << entry.getSymName()
                 << "' is not in launch manifest '" << file
                 << "': the manifest was written with another PTX file; give "
                    "the one written with it",
             failure();
  for (auto [entry, fusion] : fusions)
    entry->setAttr("gpuopt.fusion", fusion);
  return success();
}

LogicalResult gpuopt::importLaunchManifest(ModuleOp root,
                                           const llvm::MemoryBuffer &manifest) {
  return ManifestImporter(root, manifest).run();
}
