//===- ImportManifest.cpp - Launch manifests back into the ptx dialect ----===//
//
// The inverse of the `fused_from` part of ExportManifest.cpp: a fused
// kernel's `#gpuopt.fusion_info` from its manifest entry. The manifest is
// read with the runtime's reader (gpuopt/Runtime/ManifestReader.h), as
// gpu-run reads it, then checked against the PTX it is given with
// (kernels, parameters, parts), since a manifest of another build would
// attribute records to the wrong parts and launch the kernel with the wrong
// arguments.
//
//===----------------------------------------------------------------------===//

#include "gpuopt/Target/PTX/ImportManifest.h"
#include "gpuopt/Dialect/GPUOpt/GPUOptDialect.h"
#include "gpuopt/Runtime/ManifestReader.h"
#include "ptx/IR/PTX.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Regex.h"

using namespace mlir;
using namespace gpuopt;
using namespace gpuopt::ptx;
namespace rt = gpuopt::runtime;

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
  LogicalResult reportReadError(StringRef message);
  FailureOr<PTXModuleOp> findModule(const rt::Manifest &manifest);
  LogicalResult checkParams(EntryOp entry, const rt::KernelInfo &kernel);
  FailureOr<FusionInfoAttr> readFusion(EntryOp entry,
                                       const rt::KernelInfo &kernel,
                                       const std::string &path);

  ModuleOp root;
  Builder builder;
  StringRef text;
  StringRef file;
};
} // namespace

/// The runtime reader's "FILE: PATH: WHAT", or for text that is not JSON
/// "FILE: invalid JSON: parse error at line L, column C: WHAT", as a
/// diagnostic (at line L, column C).
LogicalResult ManifestImporter::reportReadError(StringRef message) {
  message.consume_front((file + ": ").str());
  SmallVector<StringRef> groups;
  if (llvm::Regex("^invalid JSON: parse error at line ([0-9]+), column "
                  "([0-9]+): (.*)$")
          .match(message, &groups)) {
    unsigned line = 1, column = 1;
    (void)llvm::to_integer(groups[1], line);
    (void)llvm::to_integer(groups[2], column);
    return emitError(FileLineColLoc::get(builder.getContext(), file, line,
                                         std::max(column, 1u)))
               << "launch manifest '" << file << "' is not JSON: " << groups[3],
           failure();
  }
  return emitError(locate()) << "launch manifest '" << file << "', " << message,
         failure();
}

FailureOr<PTXModuleOp>
ManifestImporter::findModule(const rt::Manifest &manifest) {
  SmallVector<PTXModuleOp> modules(root.getBody()->getOps<PTXModuleOp>());
  if (modules.empty())
    return emitError(locate()) << "launch manifest '" << file
                               << "' given, but there is no PTX input",
           failure();
  if (modules.size() == 1)
    return modules.front();
  // The manifest names the file it describes; the importer names each
  // module after its file.
  StringRef path = manifest.Module.Path;
  StringRef stem = llvm::sys::path::stem(path);
  for (PTXModuleOp candidate : modules)
    if (candidate.getSymName() == stem)
      return candidate;
  SmallVector<StringRef> names;
  for (PTXModuleOp candidate : modules)
    names.push_back(candidate.getSymName());
  return emitError(locate())
             << "launch manifest '" << file << "' describes '" << path
             << "', which is none of the PTX inputs (modules: "
             << llvm::join(names, ", ")
             << "): give the PTX file it was written with",
         failure();
}

LogicalResult ManifestImporter::checkParams(EntryOp entry,
                                            const rt::KernelInfo &kernel) {
  StringRef name = entry.getSymName();
  ArrayRef<Attribute> own = entry.getParams().getValue();
  if (own.size() != kernel.Params.size())
    return entry.emitError()
           << "kernel '" << name << "' has " << own.size()
           << " parameters, but launch manifest '" << file << "' gives it "
           << kernel.Params.size()
           << ": the manifest was written with another build of this PTX; "
              "give the one written with it";
  for (auto [index, attr, info] : llvm::enumerate(own, kernel.Params)) {
    auto param = cast<ParamDeclAttr>(attr);
    if (info.Name != param.getName() ||
        info.Type != param.getType().drop_front())
      return entry.emitError()
             << "kernel '" << name << "' parameter #" << index << " is '"
             << param.getName() << "' (" << param.getType()
             << "), but launch manifest '" << file << "' has '" << info.Name
             << "' (." << info.Type
             << "): the manifest was written with another build of this PTX; "
                "give the one written with it";
  }
  return success();
}

static SmallVector<int64_t> getDims(const rt::Dim3 &dims) {
  return {int64_t(dims.X), int64_t(dims.Y), int64_t(dims.Z)};
}

FailureOr<FusionInfoAttr>
ManifestImporter::readFusion(EntryOp entry, const rt::KernelInfo &kernel,
                             const std::string &path) {
  StringRef name = entry.getSymName();
  // The reader sets the strategy of every fused kernel (version 1: thread).
  std::optional<FusionStrategy> strategy =
      symbolizeFusionStrategy(rt::toString(*kernel.Strategy));
  const rt::LaunchInfo &launch = kernel.Launch;
  // A launch-agnostic kernel (shape_params) keeps its parts' defaults.
  bool agnostic = !kernel.ShapeParams.empty();
  if (!strategy || (!agnostic && (!launch.Grid || !launch.DynamicSmem)))
    return error(path + ".launch", name)
               << "a fused kernel's launch has a fixed \"grid\" and "
                  "\"dynamic_smem\"",
           failure();
  SmallVector<int64_t> grid;
  int64_t dynamicSmem = 0;
  SmallVector<int64_t> shapeParams;
  if (agnostic) {
    shapeParams.assign(4 * kernel.FusedFrom.size(), -1);
    for (const rt::ShapeParam &param : kernel.ShapeParams)
      shapeParams[4 * param.Part + unsigned(param.Field)] =
          int64_t(param.Param);
    // The defaults' launch, where every part has one.
    std::vector<std::optional<rt::Dim3>> noGrids;
    std::vector<std::optional<uint64_t>> noSmem;
    rt::Expected<rt::FusedLaunch> defaults =
        rt::computeFusedLaunch(kernel, noGrids, noSmem);
    if (defaults) {
      grid = getDims(defaults->Grid);
      dynamicSmem = int64_t(defaults->DynamicSmem);
    } else if (launch.DynamicSmem) {
      dynamicSmem = int64_t(*launch.DynamicSmem);
    }
  } else {
    grid = getDims(*launch.Grid);
    dynamicSmem = int64_t(*launch.DynamicSmem);
  }

  SmallVector<FusionPartAttr> partAttrs;
  for (auto [index, part] : llvm::enumerate(kernel.FusedFrom)) {
    std::string partPath = path + ".fused_from[" + std::to_string(index) + "]";
    // What the exporter writes and the probes read: fixed shapes and sizes.
    if (!part.Block)
      return error(partPath + ".block", name) << "expected an array of 3 "
                                                 "integers",
             failure();
    if (!part.Grid && !agnostic)
      return error(partPath + ".grid", name) << "expected an array of 3 "
                                                "integers",
             failure();
    if (!part.DynamicSmem && !agnostic)
      return error(partPath + ".dynamic_smem", name) << "expected an integer",
             failure();
    SmallVector<int64_t> threads = {int64_t(part.ThreadsLo),
                                    int64_t(part.ThreadsHi)};
    SmallVector<int64_t> block = getDims(*part.Block);
    std::optional<rt::Dim3> defaultGrid =
        part.Grid ? part.Grid : part.DefaultGrid;
    SmallVector<int64_t> partGrid;
    if (defaultGrid)
      partGrid = getDims(*defaultGrid);
    SmallVector<int64_t> argMap(part.ArgMap.begin(), part.ArgMap.end());
    std::optional<int64_t> ratio;
    if (part.Ratio)
      ratio = int64_t(*part.Ratio);
    int64_t offset = int64_t(part.DynamicSmemOffset);
    int64_t partSmem =
        int64_t(part.DynamicSmem.value_or(part.DefaultDynamicSmem.value_or(0)));
    // The checks the attribute makes (positive shapes, a thread range),
    // reported at the manifest.
    auto emitPartError = [&] { return error(partPath, name); };
    if (failed(FusionPartAttr::verifyInvariants(
            emitPartError, part.Kernel, part.Module, threads, block, partGrid,
            offset, partSmem, argMap, ratio, int64_t(part.Replicas),
            int64_t(part.Setmaxnreg))))
      return failure();
    partAttrs.push_back(FusionPartAttr::get(
        builder.getContext(), part.Kernel, part.Module, threads, block,
        partGrid, offset, partSmem, argMap, ratio, int64_t(part.Replicas),
        int64_t(part.Setmaxnreg)));
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
  auto emitLaunchError = [&] { return error(path + ".launch", name); };
  if (failed(FusionInfoAttr::verifyInvariants(emitLaunchError, *strategy, grid,
                                              dynamicSmem, partAttrs,
                                              shapeParams)))
    return failure();
  return FusionInfoAttr::get(builder.getContext(), *strategy, grid, dynamicSmem,
                             partAttrs, shapeParams);
}

LogicalResult ManifestImporter::run() {
  rt::Expected<rt::Manifest> parsed = rt::parseManifest(text, file.str());
  if (!parsed)
    return reportReadError(parsed.status().message());
  FailureOr<PTXModuleOp> module = findModule(*parsed);
  if (failed(module))
    return failure();

  llvm::StringMap<EntryOp> entries;
  for (auto entry : module->getBodyBlock()->getOps<EntryOp>())
    if (entry.hasBody())
      entries[entry.getSymName()] = entry;
  // Everything is checked before anything is set.
  SmallVector<std::pair<EntryOp, FusionInfoAttr>> fusions;
  llvm::StringSet<> described;
  for (auto [index, kernel] : llvm::enumerate(parsed->Kernels)) {
    std::string path = "kernels[" + std::to_string(index) + "]";
    StringRef name = kernel.Name;
    EntryOp entry = entries.lookup(name);
    if (!entry)
      return error(path, name)
                 << "kernel '" << name << "' is not in '"
                 << module->getSymName()
                 << "': the manifest was written with another PTX file; give "
                    "the one written with it",
             failure();
    described.insert(name);
    if (failed(checkParams(entry, kernel)))
      return failure();
    // An empty fused_from is no fusion, as for the runtime.
    if (kernel.FusedFrom.empty())
      continue;
    FailureOr<FusionInfoAttr> fusion = readFusion(entry, kernel, path);
    if (failed(fusion))
      return failure();
    if (FusionInfoAttr own = getFusionInfo(entry); own && own != *fusion)
      return entry.emitError()
                 << "kernel '" << name
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
    setFusionInfo(entry, fusion);
  return success();
}

LogicalResult gpuopt::importLaunchManifest(ModuleOp root,
                                           const llvm::MemoryBuffer &manifest) {
  root.getContext()->getOrLoadDialect<GPUOptDialect>();
  return ManifestImporter(root, manifest).run();
}
