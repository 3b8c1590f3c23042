//===- ExportManifest.cpp - Launch manifests from the ptx dialect ---------===//
//
// Writes the launch manifest (docs/manifest.md) of an exported ptx.module
// from its ops' attributes: each kernel's parameter layout as the driver
// packs it, and its launch shape from the performance directives. The
// runtime reads it without any MLIR.
//
//===----------------------------------------------------------------------===//

#include "gpuopt/Analysis/KernelAnalysis.h"
#include "gpuopt/Target/PTX/ExportPTX.h"
#include "ptx/IR/PTXSyntax.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/Path.h"

using namespace mlir;
using namespace gpuopt;
using namespace gpuopt::ptx;
namespace json = llvm::json;

static json::Array getDims(ArrayRef<int32_t> dims) {
  json::Array result;
  for (unsigned i = 0; i < 3; ++i)
    result.push_back(i < dims.size() ? int64_t(dims[i]) : int64_t(1));
  return result;
}

/// The static shared memory ptxas gives the kernel, as far as the PTX says:
/// its `.shared` arrays, each padded to its alignment (at most), then the
/// padding that aligns the dynamic array after them (ptxas counts it as
/// static). An estimate from above: ptxas may place or drop arrays
/// otherwise, and the opt-in is decided by it.
static uint64_t estimateStaticShared(const KernelAnalysis &analysis) {
  uint64_t bytes = analysis.getStaticSharedBytes();
  for (GlobalOp global : analysis.getStaticShared())
    bytes += std::max<uint64_t>(1, global.getAlign().value_or(1)) - 1;
  if (!analysis.getDynamicShared().empty())
    bytes = llvm::alignTo(bytes, analysis.getDynamicSharedAlign());
  return bytes;
}

FailureOr<json::Object> gpuopt::buildLaunchManifest(PTXModuleOp module,
                                                    StringRef modulePath,
                                                    StringRef format) {
  json::Array kernels;
  bool hasFusion = false, hasProbes = false, hasDynamicProbes = false;
  bool hasSmemOptin = false;
  // A probed kernel that keeps its registers at a cost in occupancy.
  bool hasProbeOccupancy = false;
  for (auto entry : module.getBodyBlock()->getOps<EntryOp>()) {
    if (!entry.hasBody())
      continue;
    json::Array params;
    uint64_t offset = 0;
    for (auto [index, attr] : llvm::enumerate(entry.getParams())) {
      auto param = cast<ParamDeclAttr>(attr);
      uint64_t typeSize = getTypeSize(param.getType());
      if (!typeSize || param.getArraySize() == 0)
        return entry.emitError("parameter #")
                   << index << " ('" << param.getName()
                   << "') has no fixed layout: type " << param.getType()
                   << (param.getArraySize() == 0 ? " with an unsized array"
                                                 : ""),
               failure();
      bool isArray = param.getArraySize() > 0;
      uint64_t size = isArray ? typeSize * param.getArraySize() : typeSize;
      uint64_t align = param.getAlign() ? param.getAlign() : typeSize;
      offset = llvm::alignTo(offset, align);
      json::Object json{{"name", param.getName().str()},
                        {"type", param.getType().drop_front().str()},
                        {"size", size},
                        {"align", align},
                        {"offset", offset}};
      if (param.getIsPtr()) {
        json["kind"] = "pointer";
        if (!param.getPtrSpace().empty())
          json["space"] = param.getPtrSpace().drop_front().str();
        if (param.getPtrAlign())
          json["pointee_align"] = param.getPtrAlign();
      } else {
        json["kind"] = isArray ? "bytes" : "scalar";
      }
      params.push_back(std::move(json));
      offset += size;
    }
    json::Object launch;
    auto fusion = entry->getAttrOfType<DictionaryAttr>("gpuopt.fusion");
    // A kernel that names an `.extern .shared` array (itself or through a
    // callee) needs a dynamic size that only its launcher knows; the other
    // kernels of the module need none.
    KernelAnalysis analysis(entry);
    if (auto reqntid = entry.getReqntid())
      launch["block"] = getDims(*reqntid);
    else
      launch["block"] = "runtime";
    launch["grid"] = "runtime";
    if (!analysis.getDynamicShared().empty())
      launch["dynamic_smem"] = "runtime";
    else
      launch["dynamic_smem"] = 0;
    if (auto maxntid = entry.getMaxntid())
      launch["max_threads"] = getDims(*maxntid);
    json::Object kernel{{"name", entry.getSymName().str()},
                        {"params", std::move(params)}};
    // A fused kernel (--hfuse-apply): its fixed launch and its parts.
    if (fusion) {
      hasFusion = true;
      auto dims = [](Attribute attr) {
        json::Array result;
        if (auto array = dyn_cast_or_null<DenseI64ArrayAttr>(attr))
          for (int64_t d : array.asArrayRef())
            result.push_back(d);
        return result;
      };
      auto integer = [&](DictionaryAttr dict, StringRef name) -> int64_t {
        auto attr = dict.getAs<IntegerAttr>(name);
        return attr ? attr.getInt() : 0;
      };
      launch["grid"] = dims(fusion.get("grid"));
      int64_t dynamicSmem = integer(fusion, "dynamic_smem");
      launch["dynamic_smem"] = dynamicSmem;
      // Past 48 KiB of static and dynamic shared memory together the
      // launcher must opt in, also when the dynamic part alone fits: the
      // dynamic strategy's ticket makes 1 KiB of static memory (the dynamic
      // array after it is 1024-aligned).
      if (dynamicSmem > 0 &&
          estimateStaticShared(analysis) + dynamicSmem > 48 * 1024) {
        launch["smem_optin"] = true;
        hasSmemOptin = true;
      }
      kernel["fusion_strategy"] =
          fusion.getAs<StringAttr>("strategy").getValue().str();
      json::Array parts;
      for (Attribute partAttr : fusion.getAs<ArrayAttr>("parts")) {
        auto part = cast<DictionaryAttr>(partAttr);
        json::Object object{
            {"kernel", part.getAs<StringAttr>("kernel").getValue().str()},
            {"module", part.getAs<StringAttr>("module").getValue().str()},
            {"threads", dims(part.get("threads"))},
            {"block", dims(part.get("block"))},
            {"grid", dims(part.get("grid"))},
            {"dynamic_smem_offset", integer(part, "dynamic_smem_offset")},
            {"dynamic_smem", integer(part, "dynamic_smem")},
            {"arg_map", dims(part.get("arg_map"))}};
        if (part.get("ratio"))
          object["ratio"] = integer(part, "ratio");
        parts.push_back(std::move(object));
      }
      kernel["fused_from"] = std::move(parts);
    }
    // A probed kernel (--probe): its record buffers.
    if (auto probes = entry->getAttrOfType<ArrayAttr>("gpuopt.probes")) {
      hasProbes = true;
      json::Array maps;
      for (Attribute mapAttr : probes) {
        auto map = cast<DictionaryAttr>(mapAttr);
        auto str = [&](DictionaryAttr dict, StringRef name) {
          return dict.getAs<StringAttr>(name).getValue().str();
        };
        auto integer = [&](DictionaryAttr dict, StringRef name) {
          return dict.getAs<IntegerAttr>(name).getInt();
        };
        json::Array fields;
        for (Attribute fieldAttr : map.getAs<ArrayAttr>("fields")) {
          auto field = cast<DictionaryAttr>(fieldAttr);
          fields.push_back(json::Object{{"name", str(field, "name")},
                                        {"type", str(field, "type")},
                                        {"offset", integer(field, "offset")}});
        }
        json::Object object{{"name", str(map, "name")},
                            {"probe", str(map, "probe")},
                            {"param", integer(map, "param")},
                            {"level", str(map, "level")},
                            {"capacity", integer(map, "capacity")},
                            {"record_bytes", integer(map, "record_bytes")},
                            {"overflow_counter", true},
                            {"fields", std::move(fields)}};
        // `capacity: dynamic`: the runtime sizes it by a counting launch.
        if (map.get("capacity_param")) {
          hasDynamicProbes = true;
          object["capacity"] = "dynamic";
          object["capacity_param"] = integer(map, "capacity_param");
          object["slot_counts"] = true;
        }
        maps.push_back(std::move(object));
      }
      kernel["probes"] = std::move(maps);
      // Keeping the occupancy would have made ptxas spill (--probe).
      if (auto drop =
              entry->getAttrOfType<DictionaryAttr>("gpuopt.probe_occupancy")) {
        hasProbeOccupancy = true;
        json::Object object;
        for (NamedAttribute field : drop)
          if (auto value = dyn_cast<IntegerAttr>(field.getValue()))
            object[field.getName().str()] = value.getInt();
        kernel["probe_occupancy"] = std::move(object);
      }
    }
    kernel["launch"] = std::move(launch);
    kernels.push_back(std::move(kernel));
  }
  // json::Value does not own a StringRef: copy every string.
  json::Object moduleInfo{{"path", modulePath.str()}, {"format", format.str()}};
  if (!module.getChip().empty())
    moduleInfo["target"] = module.getChip().str();
  // Version 2 added fusion_strategy and ratio, version 3 the probes'
  // overflow counter and probe name, version 4 dynamic capacities, version 5
  // smem_optin and probe_occupancy (docs/manifest.md).
  bool hasVersion5 = hasSmemOptin || hasProbeOccupancy;
  return json::Object{{"manifest_version", hasVersion5        ? 5
                                           : hasDynamicProbes ? 4
                                           : hasProbes        ? 3
                                           : hasFusion        ? 2
                                                              : 1},
                      {"module", std::move(moduleInfo)},
                      {"kernels", std::move(kernels)}};
}

FailureOr<std::string> gpuopt::printLaunchManifest(PTXModuleOp module,
                                                   StringRef outputPath,
                                                   StringRef manifestPath,
                                                   StringRef format) {
  llvm::SmallString<256> output(outputPath), manifest(manifestPath);
  llvm::sys::fs::make_absolute(output);
  llvm::sys::fs::make_absolute(manifest);
  // A relative path keeps the pair movable together.
  std::string modulePath = llvm::sys::path::parent_path(output) ==
                                   llvm::sys::path::parent_path(manifest)
                               ? llvm::sys::path::filename(output).str()
                               : std::string(output);
  FailureOr<json::Object> json =
      buildLaunchManifest(module, modulePath, format);
  if (failed(json))
    return failure();
  return llvm::formatv("{0:2}\n", json::Value(std::move(*json))).str();
}
