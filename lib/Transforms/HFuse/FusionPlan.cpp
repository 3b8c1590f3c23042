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
#include "gpuopt/Transforms/HFuse/FusionModel.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/Diagnostics.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace gpuopt;
using namespace gpuopt::hfuse;
using namespace gpuopt::ptx;

bool PartPlan::operator==(const PartPlan &other) const {
  return std::tie(module, kernel, block, grid, ratio, dynamicSmem, replicas,
                  setmaxnreg) == std::tie(other.module, other.kernel,
                                          other.block, other.grid, other.ratio,
                                          other.dynamicSmem, other.replicas,
                                          other.setmaxnreg);
}

bool FusionPlan::operator==(const FusionPlan &other) const {
  return std::tie(name, strategy, maxnreg, parts, runtimeShapes, units) ==
         std::tie(other.name, other.strategy, other.maxnreg, other.parts,
                  other.runtimeShapes, other.units);
}

HFusePlanAttr FusionPlan::toAttr(MLIRContext *ctx) const {
  SmallVector<HFusePartAttr> partAttrs;
  for (const PartPlan &part : parts)
    partAttrs.push_back(HFusePartAttr::get(
        ctx, part.kernel, part.module, part.block,
        // An unknown grid (runtime shapes) is written [].
        part.getBlocks() > 0 ? ArrayRef<int64_t>(part.grid)
                             : ArrayRef<int64_t>(),
        part.ratio,
        part.dynamicSmem >= 0 ? std::optional<int64_t>(part.dynamicSmem)
                              : std::nullopt,
        part.replicas, part.setmaxnreg));
  return HFusePlanAttr::get(ctx, name, strategy, maxnreg, partAttrs,
                            runtimeShapes, units);
}

FusionPlan FusionPlan::fromAttr(HFusePlanAttr attr) {
  FusionPlan plan;
  plan.name = attr.getName().str();
  plan.strategy = attr.getStrategy();
  plan.maxnreg = attr.getMaxnreg();
  plan.runtimeShapes = attr.getRuntimeShapes();
  plan.units = attr.getUnits();
  for (HFusePartAttr partAttr : attr.getParts()) {
    PartPlan &part = plan.parts.emplace_back();
    part.module = partAttr.getModule().str();
    part.kernel = partAttr.getKernel().str();
    llvm::copy(partAttr.getBlock(), part.block.begin());
    llvm::copy(partAttr.getGrid(), part.grid.begin());
    part.ratio = partAttr.getRatio();
    part.dynamicSmem = partAttr.getDynamicSmem().value_or(-1);
    part.replicas = partAttr.getReplicas();
    part.setmaxnreg = partAttr.getSetmaxnreg();
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
    // warps starting at a multiple of four; a part after one that takes a
    // register budget starts a warpgroup of its own.
    bool afterBudget =
        !layout.lo.empty() && plan.parts[layout.lo.size() - 1].setmaxnreg > 0;
    int64_t align = analysis->usesWarpgroupInstructions() ||
                            part.setmaxnreg > 0 || afterBudget
                        ? 128
                        : 32;
    int64_t lo = llvm::alignTo(end, align);
    layout.lo.push_back(lo);
    end = lo + part.replicas * part.getThreads();
  }
  layout.blockThreads = end;
  return layout;
}

SmallVector<bool>
hfuse::getRuntimeSmemParts(const FusionPlan &plan,
                           ArrayRef<const KernelAnalysis *> analyses) {
  SmallVector<bool> runtime(plan.parts.size(), false);
  if (!plan.runtimeShapes)
    return runtime;
  for (auto [i, analysis] : llvm::enumerate(analyses))
    runtime[i] = !analysis->getDynamicShared().empty();
  if (plan.strategy == FusionStrategy::Thread) {
    // Only the last: its size places no other part.
    bool seen = false;
    for (bool &r : llvm::reverse(runtime)) {
      r = r && !seen;
      seen |= r;
    }
  }
  return runtime;
}

int64_t hfuse::getFusedGridBlocks(const FusionPlan &plan) {
  int64_t blocks = 0;
  for (const PartPlan &part : plan.parts) {
    switch (plan.strategy) {
    case FusionStrategy::Thread:
      blocks = std::max<int64_t>(
          blocks, llvm::divideCeil(part.getBlocks(), part.replicas));
      break;
    case FusionStrategy::Interleave:
    case FusionStrategy::Dynamic:
      blocks += part.getBlocks();
      break;
    case FusionStrategy::SMAware:
      blocks += llvm::divideCeil(part.getBlocks(), plan.units);
      break;
    }
  }
  if (plan.strategy == FusionStrategy::Dynamic)
    blocks = llvm::divideCeil(blocks, plan.units);
  return blocks;
}

int64_t hfuse::getLaunchRegisters(const FusionPlan &plan) {
  if (plan.maxnreg || plan.strategy != FusionStrategy::Thread)
    return plan.maxnreg;
  // Parts without a budget keep the launch count, so it must be at least the
  // thread-weighted mean of the budgets.
  int64_t threads = 0, registers = 0;
  for (const PartPlan &part : plan.parts) {
    if (!part.setmaxnreg)
      continue;
    threads += part.replicas * part.getThreads();
    registers += part.replicas * part.getThreads() * part.setmaxnreg;
  }
  if (!threads)
    return 0;
  return llvm::alignTo(llvm::divideCeil(registers, threads), 8);
}

int64_t hfuse::getFusedRegisterCap(const FusionPlan &plan, int64_t blockThreads,
                                   ArrayRef<KernelAnalysis> analyses) {
  if (llvm::any_of(plan.parts,
                   [](const PartPlan &part) { return part.setmaxnreg; }))
    return getLaunchRegisters(plan);
  if (llvm::any_of(analyses, [](const KernelAnalysis &analysis) {
        return !analysis.getSetmaxnreg().empty();
      }))
    return plan.maxnreg;
  DeviceLimits limits;
  int64_t blockCap = limits.maxRegistersPerThread(blockThreads);
  if (plan.maxnreg)
    return std::min(plan.maxnreg, blockCap);
  // ptxas's own ceiling needs no cap.
  return blockCap < limits.maxRegistersPerThread(1) ? blockCap : 0;
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

/// The checks of sm_aware dispatch and of `units`: what the dispatch keeps
/// in the entry's registers, and what running several units in one block
/// needs of each part.
static LogicalResult checkCounterDispatch(const FusionPlan &plan,
                                          ArrayRef<KernelAnalysis> analyses,
                                          Location loc) {
  bool smAware = plan.strategy == FusionStrategy::SMAware;
  if (plan.units < 1)
    return emitError(loc) << "units must be at least 1, got " << plan.units;
  if (plan.units > 1 && plan.strategy != FusionStrategy::Dynamic && !smAware)
    return emitError(loc)
           << "cannot fuse into '" << plan.name << "': units=" << plan.units
           << " applies to strategy dynamic or sm_aware, whose blocks take "
              "their work from a counter, not "
           << stringifyFusionStrategy(plan.strategy);
  // Runtime shapes are refused with either at the start of checkFusionPlan.
  if (!smAware && plan.units == 1)
    return success();
  // A part's counter grows by `units` for every block that finds the part
  // done, at most once per fused block: it must not wrap around to a block
  // index that was handed out.
  if (smAware) {
    int64_t most = 0;
    for (const PartPlan &part : plan.parts)
      most = std::max(most, part.getBlocks());
    if (most + getFusedGridBlocks(plan) * plan.units > UINT32_MAX)
      return emitError(loc) << "cannot fuse into '" << plan.name
                            << "' by sm_aware dispatch: its 32-bit counters "
                               "could wrap around; fewer blocks or units";
  }
  for (auto [part, analysis] : llvm::zip(plan.parts, analyses)) {
    auto refuse = [&, &part = part, &analysis = analysis](const Twine &why) {
      InFlightDiagnostic diag = emitError(analysis.getEntry().getLoc())
                                << "cannot fuse kernel '" << part.kernel
                                << "' with units=" << plan.units << ": " << why;
      diag.attachNote(loc) << "while fusing into '" << plan.name << "'";
      return failure();
    };
    if (plan.units == 1)
      continue;
    // A device function learns its part's block index from the entry's
    // shared ticket slot, which holds only the block's first unit.
    for (FuncOp callee : analysis.getCallees()) {
      if (!callee.hasBody())
        continue;
      for (const auto &sreg : analysis.getSpecialRegistersOf(callee))
        if (sreg.getKey().starts_with("ctaid."))
          return refuse("its device function '" + callee.getSymName() +
                        "' reads %" + sreg.getKey() +
                        ", which changes from unit to unit in registers "
                        "of the entry that device functions cannot read; "
                        "use units=1");
    }
    // Between units every thread waits at a barrier: a thread that left
    // the part early would wait there instead of ending, and its part's
    // barrier, which counts every thread of the block, would never fill.
    if (const std::optional<EarlyExit> &early = analysis.getEarlyExit())
      return refuse(early->describe() +
                    ", and the barrier without a thread count would then "
                    "wait for them; use units=1");
    if (analysis.getMaxBarrierId() >= 15)
      return refuse("it uses barrier 15, which the fused kernel needs "
                    "between units; use units=1");
  }
  return success();
}

/// Whether a chip runs `setmaxnreg`: the architecture-specific (`a`) and
/// family (`f`) targets from sm_90a on, as ptxas accepts them.
static bool supportsSetmaxnreg(StringRef chip) {
  unsigned version = 0;
  if (!chip.consume_front("sm_") || chip.empty() ||
      (!chip.ends_with("a") && !chip.ends_with("f")))
    return false;
  return !chip.drop_back().getAsInteger(10, version) && version >= 90;
}

/// The checks of a part's `replicas` and `setmaxnreg`.
static LogicalResult
checkPartResources(const FusionPlan &plan, const PartPlan &part,
                   const KernelAnalysis &analysis,
                   function_ref<LogicalResult(const Twine &)> refuse) {
  if (part.replicas < 1)
    return refuse("its replicas must be at least 1, got " +
                  Twine(part.replicas));
  if (part.replicas == 1 && !part.setmaxnreg)
    return success();
  if (plan.strategy != FusionStrategy::Thread)
    return refuse(Twine(part.replicas > 1 ? "replicas" : "setmaxnreg") +
                  " apply to the thread split, where a fused block holds "
                  "every kernel's threads, not to strategy " +
                  stringifyFusionStrategy(plan.strategy) +
                  "; use strategy=thread or drop them");
  if (part.replicas > 1) {
    if (analysis.usesWarpgroupInstructions() && part.getThreads() % 128)
      return refuse("it uses warpgroup instructions, so each of its " +
                    Twine(part.replicas) +
                    " copies must start a warpgroup, but its block of " +
                    Twine(part.getThreads()) +
                    " threads is not a multiple of 128");
  }
  if (!part.setmaxnreg)
    return success();
  StringRef chip = analysis.getModule().getChip();
  if (!supportsSetmaxnreg(chip))
    return refuse("setmaxnreg=" + Twine(part.setmaxnreg) +
                  " needs a target "
                  "with setmaxnreg (sm_90a, sm_100a and later "
                  "architecture-specific targets), but it targets " +
                  chip + "; compile it for sm_90a, or drop setmaxnreg");
  if (part.setmaxnreg < 24 || part.setmaxnreg > 256 || part.setmaxnreg % 8)
    return refuse("setmaxnreg=" + Twine(part.setmaxnreg) +
                  " is not a multiple of 8 within 24..256");
  if (!analysis.getSetmaxnreg().empty())
    return refuse("it changes its register budget with setmaxnreg itself, "
                  "which a budget given to it would contradict; drop "
                  "setmaxnreg for it");
  int64_t threads = part.replicas * part.getThreads();
  if (threads % 128)
    return refuse("setmaxnreg is executed by whole warpgroups (128 threads), "
                  "but its " +
                  (part.replicas > 1 ? Twine(part.replicas) + " copies of " +
                                           Twine(part.getThreads())
                                     : Twine(part.getThreads())) +
                  " threads are not a multiple of 128; change its replicas or "
                  "threads, or drop setmaxnreg");
  return success();
}

/// With per-part `setmaxnreg` budgets, the launch count's pool must hold
/// every budget at once: `setmaxnreg.inc` waits until the block's pool has
/// the registers, so budgets that do not fit would wait forever.
static LogicalResult checkRegisterPool(const FusionPlan &plan, Location loc) {
  if (llvm::none_of(plan.parts,
                    [](const PartPlan &p) { return p.setmaxnreg > 0; }))
    return success();
  int64_t launch = getLaunchRegisters(plan);
  int64_t threads = 0, pool = 0, need = 0;
  for (const PartPlan &part : plan.parts) {
    int64_t t = part.replicas * part.getThreads();
    threads += t;
    need += t * (part.setmaxnreg ? part.setmaxnreg : launch);
  }
  pool = threads * launch;
  if (launch % 8 || launch > 248)
    return emitError(loc)
           << "cannot fuse into '" << plan.name << "': with setmaxnreg the "
           << "fused kernel is launched with " << launch
           << " registers per thread, which must be a multiple of 8 and at "
              "most 248 (ptxas's .maxnreg is at most 255); "
           << (plan.maxnreg ? "give maxnreg a multiple of 8, or 0"
                            : "lower the budgets");
  if (need > pool)
    return emitError(loc)
           << "cannot fuse into '" << plan.name << "': the parts' setmaxnreg "
           << "budgets need " << need << " registers, more than the " << pool
           << " the fused block is launched with (" << launch
           << " per thread x " << threads
           << " threads), so setmaxnreg.inc would wait forever; raise "
              "maxnreg to "
           << llvm::alignTo(llvm::divideCeil(need, threads), 8)
           << " or leave it 0, or lower the budgets";
  if (launch * llvm::alignTo(threads, 128) > 65536)
    return emitError(loc)
           << "cannot fuse into '" << plan.name << "': its block of " << threads
           << " threads at the launch count of " << launch
           << " registers needs " << launch * llvm::alignTo(threads, 128)
           << " registers, more than the 65536 of an SM; lower the budgets "
              "or the replicas";
  return success();
}

LogicalResult hfuse::checkFusionPlan(ModuleOp root, const FusionPlan &plan,
                                     Location loc) {
  if (plan.parts.size() < 2)
    return emitError(loc) << "horizontal fusion needs at least two kernels, "
                             "got "
                          << plan.parts.size();
  // What a launch-agnostic kernel cannot compute from its parts' grids yet.
  if (plan.runtimeShapes) {
    std::string unsupported;
    if (plan.strategy == FusionStrategy::SMAware)
      unsupported = "strategy sm_aware (its dispatch is sized by the grids "
                    "at compile time)";
    else if (plan.units > 1)
      unsupported = "units=" + std::to_string(plan.units) +
                    " (several blocks per ticket)";
    for (const PartPlan &part : plan.parts)
      if (unsupported.empty() && part.replicas > 1)
        unsupported = "replicas=" + std::to_string(part.replicas) +
                      " for kernel '" + part.kernel + "'";
    if (!unsupported.empty())
      return emitError(loc) << "cannot fuse into '" << plan.name
                            << "' with runtime shapes: " << unsupported
                            << " is not supported with them yet; drop "
                               "runtime-shapes, or that option";
  }
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
  SmallVector<const KernelAnalysis *> allAnalyses;
  for (const KernelAnalysis &analysis : analyses)
    allAnalyses.push_back(&analysis);
  SmallVector<bool> runtimeSmem = getRuntimeSmemParts(plan, allAnalyses);
  for (auto [index, part, analysis] : llvm::enumerate(plan.parts, analyses)) {
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
    if (part.getBlocks() <= 0 && !plan.runtimeShapes)
      return refuse("its grid is unknown; give it (grids= option, grid: in "
                    "the config, or known_grid_size on its gpu.func), or "
                    "take the grids at launch (runtime-shapes=true)");
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
    if (!analysis.getDynamicShared().empty() && part.dynamicSmem < 0 &&
        !runtimeSmem[index])
      return refuse(
          Twine("it declares dynamic shared memory (.extern .shared "
                "array): give the bytes it is launched with (smem= "
                "option, or dynamic_smem: in the config)") +
          (plan.runtimeShapes
               ? "; with runtime shapes a thread split takes only the last "
                 "such kernel's size at launch, because each kernel's "
                 "size places the kernels after it in the fused block's "
                 "dynamic shared memory"
               : ""));
    // A launch-agnostic kernel's part reads its grid (and its dynamic shared
    // memory) from kernel parameters, which device functions cannot read.
    if (plan.runtimeShapes)
      for (FuncOp callee : analysis.getCallees()) {
        if (!callee.hasBody())
          continue;
        for (const auto &sreg : analysis.getSpecialRegistersOf(callee)) {
          StringRef name = sreg.getKey();
          if (name.starts_with("ctaid.") || name.starts_with("nctaid.") ||
              (name == "dynamic_smem_size" && runtimeSmem[index]))
            return refuse("its device function '" + callee.getSymName() +
                          "' reads %" + name +
                          ", which a launch-agnostic fused kernel computes "
                          "from kernel parameters that device functions "
                          "cannot read; fuse it with compile-time shapes "
                          "(without runtime-shapes)");
        }
      }
    if (plan.maxnreg && !analysis.getSetmaxnreg().empty())
      return refuse("it changes its register budget with setmaxnreg, "
                    "which a register cap on the fused kernel would break");
    if (getLaunchRegisters(plan) && !analysis.getSetmaxnreg().empty())
      return refuse("it changes its register budget with setmaxnreg, which "
                    "the budgets given to the other kernels (setmaxnreg=) "
                    "would break; drop them");
    if (failed(checkPartResources(plan, part, analysis, refuse)))
      return failure();
    staticSmem += part.replicas * analysis.getStaticSharedBytes();
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
      barrierIds += part.replicas * (analysis.getMaxBarrierId() + 1);
    }
  }
  if (failed(checkRegisterPool(plan, loc)))
    return failure();
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
                          << barrierIds << " named barriers"
                          << (llvm::any_of(plan.parts,
                                           [](const PartPlan &p) {
                                             return p.replicas > 1;
                                           })
                                  ? " (each copy of a replicated kernel its "
                                    "own)"
                                  : "")
                          << ", more than the 16 a block has; use "
                             "strategy=interleave or dynamic, or fewer "
                             "replicas";
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
    // Each copy of a replicated part starts 1024-aligned.
    if (part.replicas > 1 && bytes)
      bytes = (part.replicas - 1) * llvm::alignTo(bytes, 1024) + bytes;
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
  if (failed(checkCounterDispatch(plan, analyses, loc)))
    return failure();
  if (plan.maxnreg && (plan.maxnreg < 16 || plan.maxnreg > 255))
    return emitError(loc) << "register cap " << plan.maxnreg
                          << " is outside 16..255";
  return success();
}
