//===- ExportManifest.cpp - Launch manifests from the ptx dialect ---------===//
//
// The launch manifest (docs/manifest.md) of an exported ptx.module from its
// ops' attributes: each kernel's parameter layout as the driver packs it,
// its launch shape from the performance directives, and what fusion and
// probes recorded. It fills the runtime's Manifest struct and writes it with
// the runtime's writer, so that the compiler writes what the runtime reads.
//
//===----------------------------------------------------------------------===//

#include "gpuopt/Analysis/KernelAnalysis.h"
#include "gpuopt/Dialect/GPUOpt/GPUOptDialect.h"
#include "gpuopt/Runtime/ManifestWriter.h"
#include "gpuopt/Target/PTX/ExportPTX.h"
#include "ptx/IR/PTXParser.h"

#include "llvm/ADT/Sequence.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/Path.h"

using namespace mlir;
using namespace gpuopt;
using namespace gpuopt::ptx;
namespace rt = gpuopt::runtime;

/// A shape of up to three dimensions, the missing ones 1.
template <typename T> static rt::Dim3 getDim3(ArrayRef<T> dims) {
  uint64_t d[3] = {1, 1, 1};
  for (unsigned i = 0; i < 3 && i < dims.size(); ++i)
    d[i] = uint64_t(dims[i]);
  return {d[0], d[1], d[2]};
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

/// The parameters in the driver's layout: each at the next multiple of its
/// alignment.
static FailureOr<std::vector<rt::ParamInfo>> getParams(EntryOp entry) {
  std::vector<rt::ParamInfo> params;
  uint64_t offset = 0;
  for (auto [index, attr] : llvm::enumerate(entry.getParams())) {
    auto param = cast<ParamDeclAttr>(attr);
    uint64_t typeSize = getTypeSize(param.getType());
    if (!typeSize || param.getArraySize() == 0)
      return entry.emitError("parameter #")
                 << index << " ('" << param.getName()
                 << "') has no fixed layout: type " << param.getType()
                 << (param.getArraySize() == 0 ? " with an unsized array" : ""),
             failure();
    bool isArray = param.getArraySize() > 0;
    rt::ParamInfo info;
    info.Name = param.getName().str();
    info.Type = param.getType().drop_front().str();
    info.Size = isArray ? typeSize * param.getArraySize() : typeSize;
    info.Align = param.getAlign() ? param.getAlign() : typeSize;
    info.Offset = offset = llvm::alignTo(offset, info.Align);
    if (param.getIsPtr()) {
      info.Kind = rt::ParamKind::Pointer;
      if (!param.getPtrSpace().empty())
        info.Space = param.getPtrSpace().drop_front().str();
      info.PointeeAlign = param.getPtrAlign();
    } else {
      info.Kind = isArray ? rt::ParamKind::Bytes : rt::ParamKind::Scalar;
    }
    offset += info.Size;
    params.push_back(std::move(info));
  }
  return params;
}

/// A fused kernel's (--hfuse-apply) fixed launch, strategy and parts.
static void addFusion(rt::KernelInfo &kernel, FusionInfoAttr fusion,
                      const KernelAnalysis &analysis) {
  rt::LaunchInfo &launch = kernel.Launch;
  // A launch-agnostic kernel's grid, and its dynamic shared memory when a
  // part's is given at launch, are computed from its parts' launches.
  ArrayRef<int64_t> shapeParams = fusion.getShapeParams();
  auto isRuntimeSmem = [&](size_t part) {
    return !shapeParams.empty() && shapeParams[4 * part + 3] >= 0;
  };
  bool runtimeSmem = llvm::any_of(
      llvm::seq<size_t>(0, fusion.getParts().size()), isRuntimeSmem);
  if (shapeParams.empty())
    launch.Grid = getDim3(fusion.getGrid());
  if (!runtimeSmem)
    launch.DynamicSmem = uint64_t(fusion.getDynamicSmem());
  // Past 48 KiB of static and dynamic shared memory together the launcher
  // must opt in, also when the dynamic part alone fits: the dynamic
  // strategy's ticket makes 1 KiB of static memory (the dynamic array after
  // it is 1024-aligned). A size chosen at launch is the launcher's to check.
  launch.SmemOptin =
      !runtimeSmem && fusion.getDynamicSmem() > 0 &&
      estimateStaticShared(analysis) + fusion.getDynamicSmem() > 48 * 1024;
  switch (fusion.getStrategy()) {
  case FusionStrategy::Thread:
    kernel.Strategy = rt::FusionStrategy::Thread;
    break;
  case FusionStrategy::Interleave:
    kernel.Strategy = rt::FusionStrategy::Interleave;
    break;
  case FusionStrategy::Dynamic:
    kernel.Strategy = rt::FusionStrategy::Dynamic;
    break;
  case FusionStrategy::SMAware:
    kernel.Strategy = rt::FusionStrategy::SMAware;
    break;
  }
  for (auto [index, part] : llvm::enumerate(fusion.getParts())) {
    rt::FusedPart info;
    info.Kernel = part.getKernel().str();
    info.Module = part.getModule().str();
    info.ThreadsLo = uint64_t(part.getThreads()[0]);
    info.ThreadsHi = uint64_t(part.getThreads()[1]);
    if (std::optional<int64_t> ratio = part.getRatio())
      info.Ratio = uint64_t(*ratio);
    info.Replicas = uint64_t(part.getReplicas());
    info.Setmaxnreg = uint64_t(part.getSetmaxnreg());
    info.Block = getDim3(part.getBlock());
    // Launch-agnostic: the plan's shapes are defaults.
    if (shapeParams.empty())
      info.Grid = getDim3(part.getGrid());
    else if (!part.getGrid().empty())
      info.DefaultGrid = getDim3(part.getGrid());
    info.DynamicSmemOffset = uint64_t(part.getDynamicSmemOffset());
    // A size taken at launch: the plan's smem= as its default, where that
    // was given and not 0 (0 also stands for none given, and a launcher
    // that forgets the size must be told, not launch with none).
    if (isRuntimeSmem(index)) {
      if (part.getDynamicSmem() > 0)
        info.DefaultDynamicSmem = uint64_t(part.getDynamicSmem());
    } else
      info.DynamicSmem = uint64_t(part.getDynamicSmem());
    for (int64_t arg : part.getArgMap())
      info.ArgMap.push_back(uint64_t(arg));
    kernel.FusedFrom.push_back(std::move(info));
  }
  const rt::ShapeField fields[] = {rt::ShapeField::GridX, rt::ShapeField::GridY,
                                   rt::ShapeField::GridZ,
                                   rt::ShapeField::DynamicSmem};
  for (auto [i, param] : llvm::enumerate(shapeParams))
    if (param >= 0)
      kernel.ShapeParams.push_back(
          {uint64_t(param), uint64_t(i / 4), fields[i % 4]});
}

/// A probed kernel's (--probe) record buffers, each with an overflow
/// counter, where they lie when in its last parameter, and what keeping its
/// registers cost in occupancy.
static void addProbes(rt::KernelInfo &kernel, EntryOp entry) {
  for (ProbeMapAttr map : getProbeMaps(entry)) {
    rt::ProbeBuffer buffer;
    buffer.Name = map.getName().str();
    buffer.Probe = map.getProbe().str();
    buffer.Param = uint64_t(map.getParam());
    buffer.Level = map.getLevel() == ProbeLevel::Thread ? rt::ProbeLevel::Thread
                   : map.getLevel() == ProbeLevel::Warp ? rt::ProbeLevel::Warp
                                                        : rt::ProbeLevel::Block;
    buffer.Capacity = uint64_t(map.getCapacity());
    buffer.RecordBytes = uint64_t(map.getRecordBytes());
    buffer.OverflowCounter = true;
    // `capacity: dynamic`: the runtime sizes it by a counting launch.
    if (std::optional<int64_t> capacityParam = map.getCapacityParam()) {
      buffer.DynamicCapacity = true;
      buffer.CapacityParam = uint64_t(*capacityParam);
      buffer.SlotCounts = true;
    }
    for (ProbeFieldAttr field : map.getFields())
      buffer.Fields.push_back({field.getName().str(), field.getType().str(),
                               uint64_t(field.getOffset())});
    if (std::optional<int64_t> blockOffset = map.getBlockOffset())
      buffer.BlockOffset = uint64_t(*blockOffset);
    kernel.Probes.push_back(std::move(buffer));
  }
  // The buffers lie in the kernel's last parameter, per block of the grid.
  if (ProbeScratchAttr scratch = getProbeScratch(entry))
    kernel.Scratch = rt::ProbeScratch{uint64_t(scratch.getParam()),
                                      uint64_t(scratch.getBytesPerBlock()),
                                      uint64_t(scratch.getAlign())};
  // Keeping the occupancy would have made ptxas spill.
  if (ProbeOccupancyAttr drop = getProbeOccupancy(entry))
    kernel.Occupancy = rt::ProbeOccupancy{
        uint64_t(drop.getBefore()),         uint64_t(drop.getAfter()),
        uint64_t(drop.getBlockThreads()),   uint64_t(drop.getRegistersBefore()),
        uint64_t(drop.getRegistersAfter()), uint64_t(drop.getCapSpillBytes())};
}

FailureOr<rt::Manifest> gpuopt::buildLaunchManifest(PTXModuleOp module,
                                                    StringRef modulePath,
                                                    StringRef format) {
  rt::Manifest manifest;
  manifest.Module = {modulePath.str(), format.str(), module.getChip().str()};
  for (auto entry : module.getBodyBlock()->getOps<EntryOp>()) {
    if (!entry.hasBody())
      continue;
    rt::KernelInfo kernel;
    kernel.Name = entry.getSymName().str();
    FailureOr<std::vector<rt::ParamInfo>> params = getParams(entry);
    if (failed(params))
      return failure();
    kernel.Params = std::move(*params);
    // A kernel that names an `.extern .shared` array (itself or through a
    // callee) needs a dynamic size that only its launcher knows; the other
    // kernels of the module need none. The grid is the launcher's, unless
    // the gpu.func the kernel was lowered from states it.
    KernelAnalysis analysis(entry);
    if (auto reqntid = entry.getReqntid())
      kernel.Launch.Block = getDim3(*reqntid);
    if (GPUKernelAttr gpuKernel = getGPUKernel(entry);
        gpuKernel && !gpuKernel.getGrid().empty())
      kernel.Launch.Grid = getDim3(gpuKernel.getGrid());
    if (analysis.getDynamicShared().empty())
      kernel.Launch.DynamicSmem = 0;
    if (auto maxntid = entry.getMaxntid())
      kernel.Launch.MaxThreads = getDim3(*maxntid);
    if (FusionInfoAttr fusion = getFusionInfo(entry))
      addFusion(kernel, fusion, analysis);
    if (isProbed(entry))
      addProbes(kernel, entry);
    manifest.Kernels.push_back(std::move(kernel));
  }
  return manifest;
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
  FailureOr<rt::Manifest> built =
      buildLaunchManifest(module, modulePath, format);
  if (failed(built))
    return failure();
  // The oldest version that describes the module, so that older readers
  // read what needs nothing newer; keys sorted, as the compiler has always
  // written them.
  return rt::writeManifest(*built, {rt::oldestVersionFor(*built),
                                    /*SortKeys=*/true});
}
