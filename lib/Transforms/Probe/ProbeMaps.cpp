//===- ProbeMaps.cpp - Probe record maps of one kernel --------------------===//
//
// Record layout (by the rules the runtime sizes buffers with), the buffer
// parameters (or the maps' places in the kernel's last parameter) and
// `gpuopt.probes`, fused parts and the kernel's probe plan.
//
//===----------------------------------------------------------------------===//

#include "gpuopt/Transforms/Probe/ProbeMaps.h"
#include "gpuopt/Dialect/GPUOpt/GPUOptAttributes.h"
#include "gpuopt/Runtime/ProbeRecordLayout.h"
#include "ptx/IR/PTX.h"

#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/STLExtras.h"

using namespace mlir;
using namespace gpuopt;
using namespace gpuopt::ptx;
using namespace gpuopt::probe;

FailureOr<FusedParts> probe::getFusedParts(EntryOp entry) {
  FusedParts parts;
  FusionInfoAttr fusion = getFusionInfo(entry);
  if (!fusion)
    return parts;
  for (Operation &op : entry.getBody().front())
    if (auto scope = dyn_cast<ScopeOp>(op))
      parts.scopes.push_back(scope);
  if (parts.scopes.size() != fusion.getParts().size())
    return entry.emitError()
           << "cannot attribute probe records to the parts of fused kernel '"
           << entry.getSymName() << "': expected one top-level scope per "
           << "part, as --hfuse-apply builds them";
  parts.threadSplit = fusion.getStrategy() == FusionStrategy::Thread;
  // A replicated part's copies run in one scope: each thread's copy is its
  // place in the part's threads, which the records then carry.
  for (FusionPartAttr part : fusion.getParts()) {
    ArrayRef<int64_t> threads = part.getThreads();
    int64_t replicas = part.getReplicas();
    FusedParts::Copies &copies = parts.copies.emplace_back();
    copies.first = threads[0];
    copies.threads = (threads[1] - threads[0]) / replicas;
    copies.replicas = replicas;
    parts.replicated |= replicas > 1;
  }
  if (parts.replicated && !parts.threadSplit)
    return entry.emitError()
           << "cannot attribute probe records to the parts of fused kernel '"
           << entry.getSymName()
           << "': only a thread split runs several blocks of a part "
              "(replicas) per fused block";
  return parts;
}

FailureOr<std::vector<MapLayout>>
probe::layoutMaps(EntryOp entry, ArrayRef<CheckedProbe> probes,
                  const FusedParts &parts, const ProbeNames &names) {
  std::vector<MapLayout> maps;
  for (const CheckedProbe &probe : probes)
    for (const MapSpec &spec : probe.spec.maps) {
      if (llvm::any_of(maps, [&](const MapLayout &m) {
            return m.spec->name == spec.name;
          }))
        return emitError(spec.loc)
               << "two probes have a map named '" << spec.name << "'";
      MapLayout &map = maps.emplace_back();
      map.spec = &spec;
      map.probeName = probe.spec.name;
      map.param = names.buffer(spec.name);
      map.partField = !parts.scopes.empty();
      map.copyField = map.partField && parts.replicated;
      map.partIsWholeBlock = parts.threadSplit && spec.level == Level::Block;
      for (const TypedName &field : spec.fields)
        for (auto [added, name] : {std::pair(map.partField, kPartField),
                                   std::pair(map.copyField, kCopyField)})
          if (added && field.name == name)
            return emitError(field.loc)
                   << "a probe of a fused kernel adds the field '" << name
                   << "' to its records: rename this one";
      std::vector<uint64_t> fieldBytes;
      for (const TypedName &field : spec.fields)
        fieldBytes.push_back(getTypeBytes(field.type));
      if (map.partField)
        fieldBytes.push_back(4);
      if (map.copyField)
        fieldBytes.push_back(4);
      RecordLayout layout = RecordLayout::get(fieldBytes);
      map.offsets.assign(layout.Offsets.begin(), layout.Offsets.end());
      map.recordBytes = layout.RecordBytes;
      for (auto [point, snippet] : llvm::zip(probe.spec.points, probe.points))
        for (const SnippetInst &inst : snippet)
          if (inst.syntax.opcode.getValue() == "save" &&
              cast<StringAttr>(inst.syntax.modifiers[0]).getValue() ==
                  spec.name)
            ++(point.kind == PointKind::KernelEntry  ? map.entrySaves
               : point.kind == PointKind::KernelExit ? map.exitSaves
                                                     : map.instSaves);
      map.dynamic = spec.dynamicCapacity;
      map.isStatic = !map.dynamic && map.instSaves == 0 &&
                     map.entrySaves + map.exitSaves <= spec.capacity;
      map.carried =
          map.isStatic && map.exitSaves > 0 && !probe.spec.carryInRegisters;
      map.atExit = map.isStatic && map.entrySaves == 0 && map.exitSaves > 0 &&
                   probe.spec.carryInRegisters;
      map.local = names.name("local_addr_" + spec.name);
      map.has = names.reg("has_" + spec.name);
      map.addr = names.reg("addr_" + spec.name);
      map.count = names.reg("count_" + spec.name);
      map.overflow = names.reg("overflow_" + spec.name);
      map.capParam = names.buffer(spec.name + "_capacity");
      map.capReg = names.reg("cap_" + spec.name);
      map.countAddr = names.reg("counts_" + spec.name);
    }
  // Once planned (the later passes): a map in the kernel's last parameter,
  // as --probe-plan placed it.
  for (ProbeMapAttr attr : getProbeMaps(entry)) {
    std::optional<int64_t> blockOffset = attr.getBlockOffset();
    if (!blockOffset)
      continue;
    auto map = llvm::find_if(maps, [&](const MapLayout &m) {
      return m.spec->name == attr.getName();
    });
    if (map == maps.end())
      continue;
    map->param =
        cast<ParamDeclAttr>(entry.getParams()[attr.getParam()]).getName().str();
    map->blockOffset = blockOffset;
  }
  return maps;
}

/// The threads of a block of `entry` at most: its `.reqntid`, else its
/// `.maxntid`; none when it fixes neither.
static std::optional<int64_t> getMostThreads(EntryOp entry) {
  std::optional<ArrayRef<int32_t>> dims = entry.getReqntid();
  if (!dims)
    dims = entry.getMaxntid();
  if (!dims)
    return std::nullopt;
  int64_t threads = 1;
  for (int32_t dim : *dims)
    threads *= dim;
  return threads;
}

static uint64_t alignTo(uint64_t value, uint64_t align) {
  return (value + align - 1) / align * align;
}

FailureOr<ProbeScratch>
probe::placeInLastParam(EntryOp entry, MutableArrayRef<MapLayout> maps) {
  StringRef kernel = entry.getSymName();
  ArrayRef<Attribute> params = entry.getParams().getValue();
  if (params.empty())
    return entry.emitError()
           << "kernel '" << kernel
           << "' has no parameters: buffer=last-param puts the probe buffers "
              "in the kernel's last parameter (Triton's profile scratch); "
              "probe it with buffer=new-params";
  auto last = cast<ParamDeclAttr>(params.back());
  if (last.getType() != ".u64" || last.getArraySize() != -1)
    return entry.emitError()
           << "kernel '" << kernel << "': its last parameter '"
           << last.getName() << "' is " << last.getType()
           << (last.getArraySize() != -1 ? " array" : "")
           << ", not a .u64 pointer: buffer=last-param puts the probe buffers "
              "in it (Triton's profile scratch, a .u64 that Triton's "
              "launcher allocates); probe kernels that end with one, or use "
              "buffer=new-params";
  if (getFusionInfo(entry))
    return entry.emitError()
           << "kernel '" << kernel
           << "' is fused: its last parameter is an argument of one of its "
              "parts, which no launcher sizes for the fused grid; probe a "
              "fused kernel with buffer=new-params";
  // The kernel's own code never sees the scratch: the probes' stores could
  // overwrite what it keeps there.
  WalkResult uses = entry.walk([&](InstOp inst) -> WalkResult {
    if (inst->getParentOfType<ProbeOp>())
      return WalkResult::advance();
    bool named = false;
    walkOperandLeaves(inst.getPtxOperandsAttr(), [&](Attribute leaf) {
      auto sym = dyn_cast<FlatSymbolRefAttr>(leaf);
      named |= sym && sym.getValue() == last.getName();
    });
    if (!named)
      return WalkResult::advance();
    inst.emitError() << "kernel '" << kernel << "' uses its last parameter '"
                     << last.getName()
                     << "', so buffer=last-param cannot put the probe "
                        "buffers in it; use buffer=new-params";
    return WalkResult::interrupt();
  });
  if (uses.wasInterrupted())
    return failure();
  ProbeScratch scratch;
  scratch.param = params.size() - 1;
  scratch.align = kBufferPartAlign;
  for (const MapLayout &map : maps)
    scratch.align = std::max<int64_t>(
        scratch.align, RecordLayout::bufferAlign(map.recordBytes));
  std::optional<int64_t> threads = getMostThreads(entry);
  for (MapLayout &map : maps) {
    const MapSpec &spec = *map.spec;
    if (map.dynamic)
      return emitError(spec.loc)
             << "map '" << spec.name
             << "' has a dynamic capacity, which the runtime chooses by a "
                "counting launch, but buffer=last-param sizes every buffer "
                "before the launch (kernel '"
             << kernel
             << "'): give the map a fixed capacity, or use "
                "buffer=new-params";
    int64_t units = 1;
    if (spec.level != Level::Block) {
      if (!threads)
        return entry.emitError()
               << "kernel '" << kernel << "' fixes no block size (no "
               << ".reqntid or .maxntid), but map '" << spec.name << "' has a "
               << (spec.level == Level::Thread ? "thread" : "warp")
               << "-level slot and buffer=last-param sizes its buffer per "
                  "block before the launch: give the kernel .reqntid (Triton "
                  "does), probe at block level, or use buffer=new-params";
      units = spec.level == Level::Thread ? *threads : (*threads + 31) / 32;
    }
    // The records of n blocks and the overflow counter after them fit in n
    // times this: alignTo8(n * R) + 8 <= n * (alignTo8(R) + 8).
    uint64_t records =
        uint64_t(units) * uint64_t(spec.capacity) * uint64_t(map.recordBytes);
    uint64_t bytes = alignTo(alignBufferPart(records) + kOverflowCounterBytes,
                             scratch.align);
    if (records / uint64_t(map.recordBytes) / uint64_t(units) !=
            uint64_t(spec.capacity) ||
        bytes > (uint64_t(1) << 32) ||
        scratch.bytesPerBlock + int64_t(bytes) > (int64_t(1) << 32))
      return emitError(spec.loc)
             << "map '" << spec.name << "' of kernel '" << kernel
             << "' needs more than 4 GiB of buffer per block; lower its "
                "capacity";
    map.param = last.getName().str();
    map.blockOffset = scratch.bytesPerBlock;
    scratch.bytesPerBlock += bytes;
  }
  return scratch;
}

void probe::attachProbeMaps(EntryOp entry, ArrayRef<MapLayout> maps,
                            std::optional<ProbeScratch> scratch) {
  MLIRContext *ctx = entry.getContext();
  SmallVector<Attribute> params(entry.getParams().begin(),
                                entry.getParams().end());
  SmallVector<ProbeMapAttr> mapAttrs;
  for (const MapLayout &map : maps) {
    const MapSpec &spec = *map.spec;
    int64_t paramIndex = scratch ? scratch->param : int64_t(params.size());
    if (!scratch)
      params.push_back(ParamDeclAttr::get(
          ctx, ".param", ".u64", map.param, /*align=*/0, ".global",
          /*ptrAlign=*/RecordLayout::bufferAlign(map.recordBytes),
          /*arraySize=*/-1, /*isPtr=*/true));
    if (map.dynamic)
      params.push_back(ParamDeclAttr::get(ctx, ".param", ".u32", map.capParam,
                                          /*align=*/0, "", /*ptrAlign=*/0,
                                          /*arraySize=*/-1, /*isPtr=*/false));
    SmallVector<ProbeFieldAttr> fields;
    for (auto [field, off] : llvm::zip(spec.fields, map.offsets))
      fields.push_back(ProbeFieldAttr::get(ctx, field.name, field.type, off));
    size_t added = spec.fields.size();
    if (map.partField)
      fields.push_back(
          ProbeFieldAttr::get(ctx, kPartField, "u32", map.offsets[added++]));
    if (map.copyField)
      fields.push_back(
          ProbeFieldAttr::get(ctx, kCopyField, "u32", map.offsets[added++]));
    std::optional<int64_t> capacityParam;
    if (map.dynamic)
      capacityParam = paramIndex + 1;
    mapAttrs.push_back(ProbeMapAttr::get(
        ctx, spec.name, map.probeName, paramIndex, spec.level,
        spec.dynamicCapacity ? 0 : spec.capacity, map.recordBytes, fields,
        capacityParam, map.blockOffset));
  }
  entry.setParamsAttr(ArrayAttr::get(ctx, params));
  if (scratch)
    setProbeScratch(entry, ProbeScratchAttr::get(ctx, scratch->param,
                                                 scratch->bytesPerBlock,
                                                 scratch->align));
  setProbeMaps(entry, mapAttrs);
}

//===----------------------------------------------------------------------===//
// The probe plan
//===----------------------------------------------------------------------===//

std::optional<ProbePlan> probe::getProbePlan(EntryOp entry) {
  ProbePlanAttr attr = getProbePlanAttr(entry);
  if (!attr)
    return std::nullopt;
  ProbePlan plan;
  for (StringAttr spec : attr.getSpecs())
    plan.specs.push_back(spec.getValue().str());
  plan.carryLocal = attr.getCarryLocal();
  plan.inlineExits = attr.getInlineExits();
  plan.params = attr.getParams();
  plan.exitFunction = attr.getExitFunction().str();
  plan.prefix = attr.getPrefix().str();
  plan.lastParam = attr.getLastParam();
  if (PtxasResourcesAttr before = attr.getPtxasBefore()) {
    KernelResources resources;
    resources.kernel = entry.getSymName().str();
    resources.isEntry = true;
    resources.registers = before.getRegisters();
    resources.sharedBytes = before.getSharedBytes();
    resources.localBytes = before.getLocalBytes();
    resources.spillStores = before.getSpillStores();
    resources.spillLoads = before.getSpillLoads();
    plan.before = resources;
  }
  return plan;
}

void probe::setProbePlan(EntryOp entry, const ProbePlan &plan) {
  MLIRContext *ctx = entry.getContext();
  SmallVector<StringAttr> specs;
  for (const std::string &spec : plan.specs)
    specs.push_back(StringAttr::get(ctx, spec));
  PtxasResourcesAttr before;
  if (plan.before)
    before = PtxasResourcesAttr::get(
        ctx, plan.before->registers, plan.before->sharedBytes,
        plan.before->localBytes, plan.before->spillStores,
        plan.before->spillLoads);
  setProbePlanAttr(entry, ProbePlanAttr::get(ctx, specs, plan.carryLocal,
                                             plan.inlineExits, plan.params,
                                             plan.exitFunction, plan.prefix,
                                             plan.lastParam, before));
}

void probe::removeProbePlan(EntryOp entry) { removeProbePlanAttr(entry); }
