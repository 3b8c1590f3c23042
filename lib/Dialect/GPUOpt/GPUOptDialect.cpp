//===- GPUOptDialect.cpp - The gpuopt dialect and its attribute names -----===//
//
// Registers the dialect and checks, for every op attribute whose name is the
// dialect's, that it is the attribute that name is for, on the op it belongs
// on; and the typed accessors that passes attach and read decisions with.
//
//===----------------------------------------------------------------------===//

#include "gpuopt/Dialect/GPUOpt/GPUOptDialect.h"
#include "ptx/IR/PTX.h"

#include "mlir/IR/Builders.h"

using namespace mlir;
using namespace gpuopt;

#include "gpuopt/Dialect/GPUOpt/GPUOptDialect.cpp.inc"

void GPUOptDialect::initialize() { registerAttributes(); }

/// A parameter index that a decision on `op` (a ptx.entry) names must be
/// one of its parameters.
static LogicalResult checkParamIndex(Operation *op, StringRef name,
                                     StringRef what, int64_t index) {
  int64_t params = cast<ptx::EntryOp>(op).getParams().size();
  if (index >= params)
    return op->emitOpError()
           << "'" << name << "' " << what << " is parameter " << index
           << ", but the kernel has " << params << " parameters";
  return success();
}

LogicalResult GPUOptDialect::verifyOperationAttribute(Operation *op,
                                                      NamedAttribute attr) {
  StringRef name = attr.getName().getValue();
  Attribute value = attr.getValue();
  // Which op each name belongs on, and which attribute it holds.
  auto expect = [&](bool onRightOp, StringRef opName, bool isRightAttr,
                    StringRef attrName) -> LogicalResult {
    if (!onRightOp)
      return op->emitOpError()
             << "'" << name << "' belongs on a '" << opName << "'";
    if (!isRightAttr)
      return op->emitOpError()
             << "'" << name << "' must be " << attrName << ", not " << value;
    return success();
  };
  if (name == HfuseAttrHelper::getNameStr())
    return expect(isa<ModuleOp>(op), ModuleOp::getOperationName(),
                  isa<HFusePlanAttr>(value), "a #gpuopt.hfuse_plan");

  if (name == FusionAttrHelper::getNameStr()) {
    if (failed(expect(isa<ptx::EntryOp>(op), ptx::EntryOp::getOperationName(),
                      isa<FusionInfoAttr>(value), "a #gpuopt.fusion_info")))
      return failure();
    for (FusionPartAttr part : cast<FusionInfoAttr>(value).getParts())
      for (int64_t index : part.getArgMap())
        if (failed(checkParamIndex(
                op, name,
                ("an argument of part '" + part.getKernel() + "'").str(),
                index)))
          return failure();
    return success();
  }

  if (name == ProbesAttrHelper::getNameStr()) {
    auto maps = dyn_cast<ArrayAttr>(value);
    bool typed = maps && llvm::all_of(maps, llvm::IsaPred<ProbeMapAttr>);
    if (failed(expect(isa<ptx::EntryOp>(op), ptx::EntryOp::getOperationName(),
                      typed, "an array of #gpuopt.probe_map")))
      return failure();
    for (auto map : maps.getAsRange<ProbeMapAttr>()) {
      std::string what = ("the buffer of map '" + map.getName() + "'").str();
      if (failed(checkParamIndex(op, name, what, map.getParam())))
        return failure();
      if (std::optional<int64_t> capacity = map.getCapacityParam())
        if (failed(checkParamIndex(
                op, name, ("the capacity of map '" + map.getName() + "'").str(),
                *capacity)))
          return failure();
      // A map in the last parameter is one of the scratch's.
      if (!map.getBlockOffset())
        continue;
      auto scratch = op->getAttrOfType<ProbeScratchAttr>(
          ProbeScratchAttrHelper::getNameStr());
      if (!scratch || scratch.getParam() != map.getParam())
        return op->emitOpError()
               << "'" << name << "' map '" << map.getName()
               << "' has a 'block_offset', so its buffer is the parameter of "
                  "'"
               << ProbeScratchAttrHelper::getNameStr() << "', but the kernel "
               << (scratch ? "has it in parameter " +
                                 std::to_string(scratch.getParam())
                           : std::string("has none"));
      if (*map.getBlockOffset() >= scratch.getBytesPerBlock())
        return op->emitOpError()
               << "'" << name << "' map '" << map.getName()
               << "' starts at byte " << *map.getBlockOffset()
               << " of a block's scratch, past its "
               << scratch.getBytesPerBlock() << " bytes per block";
    }
    return success();
  }

  if (name == ProbeScratchAttrHelper::getNameStr()) {
    if (failed(expect(isa<ptx::EntryOp>(op), ptx::EntryOp::getOperationName(),
                      isa<ProbeScratchAttr>(value), "a #gpuopt.probe_scratch")))
      return failure();
    return checkParamIndex(op, name, "the probes' scratch",
                           cast<ProbeScratchAttr>(value).getParam());
  }

  if (name == ProbeOccupancyAttrHelper::getNameStr())
    return expect(isa<ptx::EntryOp>(op), ptx::EntryOp::getOperationName(),
                  isa<ProbeOccupancyAttr>(value), "a #gpuopt.probe_occupancy");

  if (name == ProbePlanAttrHelper::getNameStr()) {
    if (failed(expect(isa<ptx::EntryOp>(op), ptx::EntryOp::getOperationName(),
                      isa<ProbePlanAttr>(value), "a #gpuopt.probe_plan")))
      return failure();
    int64_t params = cast<ProbePlanAttr>(value).getParams();
    int64_t kernelParams = cast<ptx::EntryOp>(op).getParams().size();
    if (params > kernelParams)
      return op->emitOpError()
             << "'" << name << "' counts " << params
             << " parameters before the probe buffers, but the kernel has "
             << kernelParams;
    return success();
  }

  if (name == GpuKernelAttrHelper::getNameStr()) {
    if (failed(expect(isa<ptx::EntryOp>(op), ptx::EntryOp::getOperationName(),
                      isa<GPUKernelAttr>(value), "a #gpuopt.gpu_kernel")))
      return failure();
    // Probes append parameters; the gpu.func's come first.
    size_t params = cast<GPUKernelAttr>(value).getNumParams();
    size_t kernelParams = cast<ptx::EntryOp>(op).getParams().size();
    if (params > kernelParams)
      return op->emitOpError()
             << "'" << name << "' maps " << params
             << " parameters to the gpu.func's arguments, but the kernel has "
             << kernelParams;
    return success();
  }

  return op->emitOpError() << "'" << name
                           << "' is not an attribute of the gpuopt dialect "
                              "(gpuopt.hfuse, gpuopt.fusion, gpuopt.probes, "
                              "gpuopt.probe_scratch, gpuopt.probe_occupancy, "
                              "gpuopt.probe_plan, "
                              "gpuopt.gpu_kernel)";
}

//===----------------------------------------------------------------------===//
// Accessors
//===----------------------------------------------------------------------===//

static GPUOptDialect *getDialect(Operation *op) {
  auto *dialect = op->getContext()->getLoadedDialect<GPUOptDialect>();
  assert(dialect && "the gpuopt dialect must be loaded (a dependent dialect "
                    "of the pass)");
  return dialect;
}

HFusePlanAttr gpuopt::getHFusePlan(ModuleOp module) {
  return module->getAttrOfType<HFusePlanAttr>(
      GPUOptDialect::HfuseAttrHelper::getNameStr());
}

void gpuopt::setHFusePlan(ModuleOp module, HFusePlanAttr plan) {
  getDialect(module)->getHfuseAttrHelper().setAttr(module, plan);
}

void gpuopt::removeHFusePlan(ModuleOp module) {
  module->removeAttr(GPUOptDialect::HfuseAttrHelper::getNameStr());
}

FusionInfoAttr gpuopt::getFusionInfo(ptx::EntryOp entry) {
  return entry->getAttrOfType<FusionInfoAttr>(
      GPUOptDialect::FusionAttrHelper::getNameStr());
}

void gpuopt::setFusionInfo(ptx::EntryOp entry, FusionInfoAttr info) {
  getDialect(entry)->getFusionAttrHelper().setAttr(entry, info);
}

SmallVector<ProbeMapAttr> gpuopt::getProbeMaps(ptx::EntryOp entry) {
  SmallVector<ProbeMapAttr> maps;
  if (auto array = entry->getAttrOfType<ArrayAttr>(
          GPUOptDialect::ProbesAttrHelper::getNameStr()))
    for (Attribute map : array)
      if (auto typed = dyn_cast<ProbeMapAttr>(map))
        maps.push_back(typed);
  return maps;
}

bool gpuopt::isProbed(ptx::EntryOp entry) {
  return entry->hasAttr(GPUOptDialect::ProbesAttrHelper::getNameStr());
}

void gpuopt::setProbeMaps(ptx::EntryOp entry, ArrayRef<ProbeMapAttr> maps) {
  SmallVector<Attribute> attrs(maps.begin(), maps.end());
  getDialect(entry)->getProbesAttrHelper().setAttr(
      entry, ArrayAttr::get(entry.getContext(), attrs));
}

ProbeScratchAttr gpuopt::getProbeScratch(ptx::EntryOp entry) {
  return entry->getAttrOfType<ProbeScratchAttr>(
      GPUOptDialect::ProbeScratchAttrHelper::getNameStr());
}

void gpuopt::setProbeScratch(ptx::EntryOp entry, ProbeScratchAttr scratch) {
  getDialect(entry)->getProbeScratchAttrHelper().setAttr(entry, scratch);
}

void gpuopt::removeProbeScratch(ptx::EntryOp entry) {
  entry->removeAttr(GPUOptDialect::ProbeScratchAttrHelper::getNameStr());
}

ProbeOccupancyAttr gpuopt::getProbeOccupancy(ptx::EntryOp entry) {
  return entry->getAttrOfType<ProbeOccupancyAttr>(
      GPUOptDialect::ProbeOccupancyAttrHelper::getNameStr());
}

void gpuopt::setProbeOccupancy(ptx::EntryOp entry,
                               ProbeOccupancyAttr occupancy) {
  getDialect(entry)->getProbeOccupancyAttrHelper().setAttr(entry, occupancy);
}

ProbePlanAttr gpuopt::getProbePlanAttr(ptx::EntryOp entry) {
  return entry->getAttrOfType<ProbePlanAttr>(
      GPUOptDialect::ProbePlanAttrHelper::getNameStr());
}

void gpuopt::setProbePlanAttr(ptx::EntryOp entry, ProbePlanAttr plan) {
  getDialect(entry)->getProbePlanAttrHelper().setAttr(entry, plan);
}

void gpuopt::removeProbePlanAttr(ptx::EntryOp entry) {
  entry->removeAttr(GPUOptDialect::ProbePlanAttrHelper::getNameStr());
}

GPUKernelAttr gpuopt::getGPUKernel(ptx::EntryOp entry) {
  return entry->getAttrOfType<GPUKernelAttr>(
      GPUOptDialect::GpuKernelAttrHelper::getNameStr());
}

void gpuopt::setGPUKernel(ptx::EntryOp entry, GPUKernelAttr kernel) {
  getDialect(entry)->getGpuKernelAttrHelper().setAttr(entry, kernel);
}
