//===- FusionPlan.cpp - Fusion plans as attributes, and their checks ------===//
//
// The plan in the form the decide pass builds it, converted to and from the
// `#gpuopt.hfuse_plan` the transform reads; the thread layout of a split;
// and the checks that refuse a plan that cannot be built safely, with the
// reason and what to change.
//
//===----------------------------------------------------------------------===//

#include "gpuopt/Transforms/HFuse/FusionPlan.h"
#include "gpuopt/Analysis/KernelLookup.h"
#include "gpuopt/Dialect/GPUOpt/GPUOptDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/Diagnostics.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace gpuopt;
using namespace gpuopt::hfuse;
using namespace gpuopt::ptx;

bool PartPlan::operator==(const PartPlan &other) const {
  return std::tie(module, kernel, block, grid, ratio, dynamicSmem) ==
         std::tie(other.module, other.kernel, other.block, other.grid,
                  other.ratio, other.dynamicSmem);
}

bool FusionPlan::operator==(const FusionPlan &other) const {
  return std::tie(name, strategy, maxnreg, parts) ==
         std::tie(other.name, other.strategy, other.maxnreg, other.parts);
}

HFusePlanAttr FusionPlan::toAttr(MLIRContext *ctx) const {
  SmallVector<HFusePartAttr> partAttrs;
  for (const PartPlan &part : parts)
    partAttrs.push_back(HFusePartAttr::get(
        ctx, part.kernel, part.module, part.block, part.grid, part.ratio,
        part.dynamicSmem >= 0 ? std::optional<int64_t>(part.dynamicSmem)
                              : std::nullopt));
  return HFusePlanAttr::get(ctx, name, strategy, maxnreg, partAttrs);
}

FusionPlan FusionPlan::fromAttr(HFusePlanAttr attr) {
  FusionPlan plan;
  plan.name = attr.getName().str();
  plan.strategy = attr.getStrategy();
  plan.maxnreg = attr.getMaxnreg();
  for (HFusePartAttr partAttr : attr.getParts()) {
    PartPlan &part = plan.parts.emplace_back();
    part.module = partAttr.getModule().str();
    part.kernel = partAttr.getKernel().str();
    llvm::copy(partAttr.getBlock(), part.block.begin());
    llvm::copy(partAttr.getGrid(), part.grid.begin());
    part.ratio = partAttr.getRatio();
    part.dynamicSmem = partAttr.getDynamicSmem().value_or(-1);
  }
  return plan;
}

ThreadLayout hfuse::layoutThreads(const FusionPlan &plan,
                                  ArrayRef<const KernelAnalysis *> analyses) {
  ThreadLayout layout;
  int64_t end = 0;
  for (auto [part, analysis] : llvm::zip(plan.parts, analyses)) {
    if (plan.strategy != FusionStrategy::Thread) {
      layout.lo.push_back(0);
      end = std::max(end, part.getThreads());
      continue;
    }
    // Warpgroup instructions (wgmma, setmaxnreg) work on four consecutive
    // warps starting at a multiple of four.
    int64_t align = analysis->usesWarpgroupInstructions() ? 128 : 32;
    int64_t lo = llvm::alignTo(end, align);
    layout.lo.push_back(lo);
    end = lo + part.getThreads();
  }
  layout.blockThreads = end;
  return layout;
}

FailureOr<EntryOp> hfuse::findPartKernel(ModuleOp root, const PartPlan &part,
                                         Location loc) {
  return lookupKernel(root, part.module, part.kernel, loc);
}

static std::string formatDims(const Dim3 &d) {
  std::string s = std::to_string(d[0]);
  if (d[1] != 1 || d[2] != 1)
    s += "x" + std::to_string(d[1]);
  if (d[2] != 1)
    s += "x" + std::to_string(d[2]);
  return s;
}

LogicalResult hfuse::checkFusionPlan(ModuleOp root, const FusionPlan &plan,
                                     Location loc) {
  if (plan.parts.size() < 2)
    return emitError(loc) << "horizontal fusion needs at least two kernels, "
                             "got "
                          << plan.parts.size();
  std::vector<KernelAnalysis> analyses;
  SmallVector<const KernelAnalysis *> analysisPtrs;
  StringRef chip;
  int64_t barrierIds = 0;
  uint64_t staticSmem = 0;
  for (const PartPlan &part : plan.parts) {
    FailureOr<EntryOp> entry = findPartKernel(root, part, loc);
    if (failed(entry))
      return failure();
    analyses.emplace_back(*entry);
  }
  for (auto [part, analysis] : llvm::zip(plan.parts, analyses)) {
    analysisPtrs.push_back(&analysis);
    EntryOp entry = analysis.getEntry();
    auto refuse = [&](const Twine &why) {
      InFlightDiagnostic diag = emitError(entry.getLoc())
                                << "cannot fuse kernel '" << part.kernel
                                << "': " << why;
      diag.attachNote(loc) << "while fusing into '" << plan.name << "'";
      return failure();
    };
    std::string hazard = analysis.getFusionHazard();
    if (!hazard.empty())
      return refuse(hazard);
    // Its probe buffers would lose their manifest entry and the fused
    // kernel's records their part; probes go on the fused kernel.
    if (isProbed(entry))
      return refuse("it is probed already; give --probe after --hfuse, so "
                    "that the fused kernel is probed and its records name "
                    "their part");
    StringRef moduleChip = analysis.getModule().getChip();
    if (chip.empty())
      chip = moduleChip;
    else if (moduleChip != chip)
      return refuse("it targets " + moduleChip + " and another kernel " + chip +
                    "; fuse kernels compiled for one chip");
    if (part.block[0] <= 0)
      return refuse("its block shape is unknown: it has no .reqntid; give "
                    "it (blocks= option, or block: in the config)");
    if (part.getBlocks() <= 0)
      return refuse("its grid is unknown; give it (grids= option, grid: in "
                    "the config, or known_grid_size on its gpu.func)");
    if (auto req = analysis.getRequiredBlock(); req && *req != part.block)
      return refuse("its .reqntid is " + formatDims(*req) +
                    " but the plan gives the block " + formatDims(part.block));
    // `.maxntid` bounds the number of threads, not each dimension: nvcc
    // writes `__launch_bounds__(256)` as `.maxntid 256, 1, 1` for kernels
    // launched with 16x16 blocks.
    if (auto max = analysis.getMaxBlock()) {
      int64_t maxThreads = (*max)[0] * (*max)[1] * (*max)[2];
      if (part.getThreads() > maxThreads)
        return refuse("its .maxntid allows at most " + Twine(maxThreads) +
                      " threads per block, fewer than the " +
                      Twine(part.getThreads()) + " of the block " +
                      formatDims(part.block) +
                      "; give the block it is launched with (blocks= option, "
                      "or block: in the config)");
    }
    if (part.getThreads() > 1024)
      return refuse("its block has " + Twine(part.getThreads()) +
                    " threads, more than 1024");
    if (part.ratio < 1)
      return refuse("its ratio must be at least 1");
    if (!analysis.getDynamicShared().empty() && part.dynamicSmem < 0)
      return refuse("it declares dynamic shared memory (.extern .shared "
                    "array): give the bytes it is launched with (smem= "
                    "option, or dynamic_smem: in the config)");
    if (plan.maxnreg && !analysis.getSetmaxnreg().empty())
      return refuse("it changes its register budget with setmaxnreg, "
                    "which a register cap on the fused kernel would break");
    staticSmem += analysis.getStaticSharedBytes();
    if (plan.strategy == FusionStrategy::Thread) {
      if (part.getThreads() % 32)
        return refuse("its block of " + Twine(part.getThreads()) +
                      " threads is not a multiple of 32, so its warps would "
                      "share lanes with another kernel's");
      if (!analysis.getSetmaxnreg().empty() && part.getThreads() % 128)
        return refuse("it uses setmaxnreg, which all four warps of a "
                      "warpgroup execute, but its " +
                      Twine(part.getThreads()) +
                      " threads leave a warpgroup shared with another kernel");
      barrierIds += analysis.getMaxBarrierId() + 1;
    }
  }
  ThreadLayout layout = layoutThreads(plan, analysisPtrs);
  if (layout.blockThreads > 1024)
    return emitError(loc) << "cannot fuse into '" << plan.name
                          << "': the fused block would have "
                          << layout.blockThreads
                          << " threads (more than 1024); use "
                             "strategy=interleave or dynamic, or smaller "
                             "splits for resizable kernels";
  if (barrierIds > 16)
    return emitError(loc) << "cannot fuse into '" << plan.name
                          << "' by thread split: the kernels need "
                          << barrierIds
                          << " named barriers, more than the 16 a block has; "
                             "use strategy=interleave or dynamic";
  // Block-level strategies run a smaller kernel's block with idle threads:
  // their warps must not be split.
  if (plan.strategy != FusionStrategy::Thread)
    for (auto [part, analysis] : llvm::zip(plan.parts, analyses))
      if (part.getThreads() < layout.blockThreads && part.getThreads() % 32)
        return emitError(analysis.getEntry().getLoc())
               << "cannot fuse kernel '" << part.kernel << "': its block of "
               << part.getThreads()
               << " threads is not a multiple of 32 and smaller than the "
                  "fused block";
  // Dynamic shared memory: stacked for a split, shared for block-level.
  uint64_t dynamicSmem = 0;
  for (const PartPlan &part : plan.parts) {
    uint64_t bytes = std::max<int64_t>(part.dynamicSmem, 0);
    dynamicSmem = plan.strategy == FusionStrategy::Thread
                      ? llvm::alignTo(dynamicSmem, 1024) + bytes
                      : std::max(dynamicSmem, bytes);
  }
  if (staticSmem + dynamicSmem > 227 * 1024)
    return emitError(loc) << "cannot fuse into '" << plan.name
                          << "': the fused kernel would need "
                          << staticSmem + dynamicSmem
                          << " bytes of shared memory per block, more than "
                             "the 232448 an sm_90 block can have";
  int64_t blocks = 0;
  for (const PartPlan &part : plan.parts)
    blocks = plan.strategy == FusionStrategy::Thread
                 ? std::max(blocks, part.getBlocks())
                 : blocks + part.getBlocks();
  if (blocks > INT32_MAX)
    return emitError(loc) << "cannot fuse into '" << plan.name
                          << "': the fused grid would have " << blocks
                          << " blocks";
  if (plan.maxnreg && (plan.maxnreg < 16 || plan.maxnreg > 255))
    return emitError(loc) << "register cap " << plan.maxnreg
                          << " is outside 16..255";
  return success();
}
