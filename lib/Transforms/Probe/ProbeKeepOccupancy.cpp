//===- ProbeKeepOccupancy.cpp - Keep probed kernels' occupancy ------------===//
//
// `--probe-keep-occupancy`: what probing costs a kernel is known only from
// ptxas's report of the final, lowered kernel, so this runs last. Where the
// first placement costs spills or more than 4 registers, the kernel is
// probed again another way (the exit code inline; for a setmaxnreg kernel
// also the probes' state in local memory) and the better of the two kept.
// Then each kernel whose probes cost it blocks per SM is capped with
// `.maxnreg` at the most registers that keep the original's occupancy,
// unless that makes ptxas spill more than the original did: then it keeps
// its registers, with a warning and `gpuopt.probe_occupancy` for the
// manifest. The original's report comes from --probe-plan.
//
//===----------------------------------------------------------------------===//

#include "ProbeLowering.h"

#include "gpuopt/Analysis/KernelAnalysis.h"
#include "gpuopt/Dialect/GPUOpt/GPUOptAttributes.h"
#include "gpuopt/Dialect/GPUOpt/GPUOptDialect.h"
#include "gpuopt/Target/PTX/ChipLimits.h"
#include "gpuopt/Target/PTX/ExportPTX.h"
#include "gpuopt/Transforms/HFuse/DeviceLimits.h"
#include "gpuopt/Transforms/Passes.h"

#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/FormatVariadic.h"

namespace gpuopt {
#define GEN_PASS_DEF_PROBEKEEPOCCUPANCY
#include "gpuopt/Transforms/Passes.h.inc"
} // namespace gpuopt

using namespace mlir;
using namespace gpuopt;
using namespace gpuopt::ptx;
using namespace gpuopt::probe;

/// A kernel that sets its warpgroups' registers with setmaxnreg: its launch
/// register count is fixed by the setmaxnreg immediates and launch bounds,
/// and ptxas keeps each region within its budget by spilling. It is never
/// capped (a .maxnreg below the consumers' budget would leave their
/// setmaxnreg.inc waiting for registers forever, and without launch bounds
/// it would turn on setmaxnreg that ptxas ignored); new spills are reported.
/// Fails for such a kernel, so that the caller leaves it alone.
static LogicalResult checkWarpSpecialized(EntryOp entry,
                                          const KernelResources &before,
                                          const KernelResources &after) {
  KernelAnalysis analysis(entry);
  if (analysis.getSetmaxnreg().empty())
    return success();
  uint64_t spillsBefore = before.spillStores + before.spillLoads;
  uint64_t spillsAfter = after.spillStores + after.spillLoads;
  if (spillsAfter > spillsBefore) {
    int64_t smallest = 0;
    for (InstOp inst : analysis.getSetmaxnreg()) {
      ArrayAttr operands = inst.getPtxOperands();
      auto imm =
          operands.empty() ? IntImmAttr() : dyn_cast<IntImmAttr>(operands[0]);
      if (imm)
        smallest =
            smallest ? std::min(smallest, imm.getValue()) : imm.getValue();
    }
    entry.emitWarning() << "probe: '" << entry.getSymName() << "' spills "
                        << spillsAfter - spillsBefore
                        << " more bytes once probed: the probes' state does "
                           "not fit a warpgroup's setmaxnreg budget (the "
                           "smallest is "
                        << smallest
                        << " registers); fewer probes at once, or `carry: "
                           "local` in their specs, keep it out of registers";
  }
  return failure();
}

namespace {
/// Blocks per SM before and after probing, at the block size where probing
/// costs the largest share of them (the larger on a tie); `fixed` when the
/// kernel's `.reqntid` fixes that size.
struct OccupancyDrop {
  int64_t threads, before, after;
  bool fixed;
};
} // namespace

/// The block sizes a kernel may be launched with: its `.reqntid`, else each
/// multiple of 32 up to its `.maxntid` or 1024 (a partial warp takes a
/// whole warp's registers).
static SmallVector<int64_t> getLaunchThreads(EntryOp entry) {
  auto product = [](ArrayRef<int32_t> dims) {
    int64_t n = 1;
    for (int32_t d : dims)
      n *= d;
    return n;
  };
  if (auto reqntid = entry.getReqntid())
    return {product(*reqntid)};
  int64_t most = 1024;
  if (auto maxntid = entry.getMaxntid())
    most = std::clamp<int64_t>(product(*maxntid), 1, 1024);
  SmallVector<int64_t> threads;
  for (int64_t t = 32; t < most; t += 32)
    threads.push_back(t);
  threads.push_back(most);
  return threads;
}

/// Shared memory per block: ptxas's static count and, in a fused kernel, the
/// dynamic shared memory fusion gave it. Other kernels' dynamic shared
/// memory is chosen at launch; counting none is the safe side (more shared
/// memory per block only leaves registers more room).
static int64_t getSharedBytes(EntryOp entry, const KernelResources &before) {
  int64_t shared = before.sharedBytes;
  if (FusionInfoAttr fusion = getFusionInfo(entry))
    shared += fusion.getDynamicSmem();
  return shared;
}

/// The most registers per thread (up to ptxas's 255) with which the kernel
/// keeps, for every block size in `threads`, the blocks per SM it has with
/// `registers`.
static unsigned getOccupancyRegisters(const hfuse::DeviceLimits &limits,
                                      ArrayRef<int64_t> threads, int64_t shared,
                                      unsigned registers) {
  unsigned most = std::max(registers, 1u);
  auto keeps = [&](unsigned r) {
    return llvm::all_of(threads, [&](int64_t t) {
      return limits.occupancy(t, r, shared) ==
             limits.occupancy(t, registers, shared);
    });
  };
  while (most < 255 && keeps(most + 1))
    ++most;
  return most;
}

/// The most registers per thread (up to `wanted`) with which every block
/// size in `threads` that fits an SM with `registers` still fits one, and
/// the largest size that would not fit with `wanted` (0 if none).
static std::pair<unsigned, int64_t>
getLaunchableRegisters(const hfuse::DeviceLimits &limits,
                       ArrayRef<int64_t> threads, int64_t shared,
                       unsigned registers, unsigned wanted) {
  unsigned most = std::max(registers, 1u);
  auto fits = [&](unsigned r, int64_t t) {
    return limits.occupancy(t, r, shared) > 0 ||
           limits.occupancy(t, registers, shared) == 0;
  };
  while (most < wanted &&
         llvm::all_of(threads, [&](int64_t t) { return fits(most + 1, t); }))
    ++most;
  int64_t tooLarge = 0;
  for (int64_t t : threads)
    if (!fits(wanted, t))
      tooLarge = std::max(tooLarge, t);
  return {most, tooLarge};
}

/// Where `after` registers cost the largest share of the blocks per SM that
/// `before` registers have; none when they cost none at any block size.
static std::optional<OccupancyDrop>
getWorstDrop(const hfuse::DeviceLimits &limits, ArrayRef<int64_t> threads,
             int64_t shared, unsigned before, unsigned after) {
  std::optional<OccupancyDrop> worst;
  bool fixed = threads.size() == 1;
  for (int64_t t : threads) {
    int64_t had = limits.occupancy(t, before, shared);
    int64_t has = limits.occupancy(t, after, shared);
    // Compares has/had against the worst's after/before.
    if (has < had && (!worst || has * worst->before <= worst->after * had))
      worst = OccupancyDrop{t, had, has, false};
  }
  if (worst)
    worst->fixed = fixed;
  return worst;
}

/// ptxas's reports of `modules`, by module and kernel name.
using ModuleResources =
    llvm::DenseMap<Operation *, llvm::StringMap<KernelResources>>;
static FailureOr<ModuleResources>
getModuleResources(ArrayRef<PTXModuleOp> modules, const PtxasOptions &options) {
  ModuleResources reports;
  for (PTXModuleOp module : modules) {
    FailureOr<llvm::StringMap<KernelResources>> r =
        getPtxasEntryResources(module, options);
    if (failed(r))
      return failure();
    reports[module] = std::move(*r);
  }
  return reports;
}

namespace {
struct ProbeKeepOccupancyPass
    : public gpuopt::impl::ProbeKeepOccupancyBase<ProbeKeepOccupancyPass> {
  using ProbeKeepOccupancyBase::ProbeKeepOccupancyBase;

  /// A probed kernel: its entry, the exit function it calls (if any) and
  /// what ptxas reports for it before and after probing.
  struct ProbedKernel {
    EntryOp entry;
    FuncOp exitFunction;
    KernelResources before, resources;
  };

  void runOnOperation() override {
    SmallVector<ProbedKernel> kernels;
    getOperation().walk([&](EntryOp entry) {
      std::optional<ProbePlan> plan = getProbePlan(entry);
      if (!plan || !plan->before)
        return;
      FuncOp exitFunction;
      if (!plan->exitFunction.empty())
        exitFunction = dyn_cast_or_null<FuncOp>(SymbolTable::lookupSymbolIn(
            entry->getParentOfType<PTXModuleOp>(), plan->exitFunction));
      kernels.push_back({entry, exitFunction, *plan->before, {}});
    });
    PtxasOptions ptxasOptions;
    ptxasOptions.ptxasPath = ptxas;
    ptxasOptions.chip = chip;
    LogicalResult result = success();
    if (!kernels.empty())
      result = succeeded(choosePlacements(kernels, ptxasOptions)) &&
                       succeeded(capRegisters(kernels, ptxasOptions))
                   ? success()
                   : failure();
    getOperation().walk([](EntryOp entry) { removeProbePlan(entry); });
    if (failed(result))
      signalPassFailure();
  }

  /// Asks ptxas for the probed kernels' resources; where the first placement
  /// costs spills or more than 4 registers, probes the kernel again another
  /// way and keeps the better of the two (fewer spilled bytes, then fewer
  /// registers): with the exit code inline instead of in an exit function
  /// (whose call has a register floor of its own, about 20), and for a
  /// setmaxnreg kernel also with the probes' state in local memory (a
  /// warpgroup held to 24 registers has no room for it).
  LogicalResult choosePlacements(MutableArrayRef<ProbedKernel> kernels,
                                 const PtxasOptions &ptxasOptions) {
    llvm::DenseMap<Operation *, llvm::StringMap<KernelResources>> reports;
    for (ProbedKernel &kernel : kernels) {
      auto module = kernel.entry->getParentOfType<PTXModuleOp>();
      if (!reports.count(module)) {
        FailureOr<llvm::StringMap<KernelResources>> r =
            getPtxasEntryResources(module, ptxasOptions);
        if (failed(r))
          return failure();
        reports[module] = std::move(*r);
      }
      kernel.resources = reports[module].lookup(kernel.entry.getSymName());
    }
    auto spills = [](const KernelResources &k) {
      return k.spillStores + k.spillLoads;
    };
    // Second placements: the exit code inline, or also the probes' state
    // in local memory. Each lowers its kernels with labels of its own.
    ProbeCache cache;
    ProbeInserter inlineInserter, localInserter;
    ProbeLowering inlineLowering, localLowering;
    // Second placements, detached first ones.
    struct Retry {
      ProbedKernel *kernel;
      OwningOpRef<EntryOp> firstEntry;
      OwningOpRef<FuncOp> firstFunction;
      KernelResources first;
      bool local;
    };
    SmallVector<Retry> retries;
    SmallVector<PTXModuleOp> retried;
    for (ProbedKernel &kernel : kernels) {
      const KernelResources &before = kernel.before;
      const KernelResources &after = kernel.resources;
      bool warpSpecialized =
          !KernelAnalysis(kernel.entry).getSetmaxnreg().empty();
      bool costly =
          spills(after) > spills(before) ||
          (!warpSpecialized && after.registers > before.registers + 4);
      ProbePlan plan = *getProbePlan(kernel.entry);
      FailureOr<ArrayRef<CheckedProbe>> probes = cache.get(plan, &getContext());
      if (failed(probes))
        return failure();
      bool alreadyLocal = llvm::none_of(*probes, [](const CheckedProbe &p) {
        return p.spec.carryInRegisters;
      });
      if (!costly || (warpSpecialized ? alreadyLocal : !kernel.exitFunction))
        continue;
      EntryOp first = kernel.entry;
      EntryOp fresh = cast<EntryOp>(first->clone());
      removeProbes(fresh);
      first->getBlock()->getOperations().insert(Block::iterator(first),
                                                fresh.getOperation());
      Retry retry{&kernel, OwningOpRef<EntryOp>(first),
                  OwningOpRef<FuncOp>(kernel.exitFunction), after,
                  warpSpecialized};
      first->remove();
      if (kernel.exitFunction)
        kernel.exitFunction->remove();
      kernel.entry = fresh;
      kernel.exitFunction = {};
      plan.inlineExits = true;
      plan.carryLocal = warpSpecialized;
      FailureOr<ArrayRef<CheckedProbe>> second = cache.get(plan, &getContext());
      if (failed(second) || failed(planKernel(fresh, *second, plan)) ||
          failed((warpSpecialized ? localInserter : inlineInserter)
                     .insert(fresh, *second)) ||
          failed((warpSpecialized ? localLowering : inlineLowering)
                     .lower(fresh, *second, /*allowExitFunction=*/false)))
        return failure();
      retries.push_back(std::move(retry));
      auto module = fresh->getParentOfType<PTXModuleOp>();
      if (!llvm::is_contained(retried, module))
        retried.push_back(module);
    }
    FailureOr<ModuleResources> retriedReports =
        getModuleResources(retried, ptxasOptions);
    if (failed(retriedReports))
      return failure();
    for (auto &[module, report] : *retriedReports)
      reports[module] = std::move(report);
    for (Retry &retry : retries) {
      ProbedKernel &kernel = *retry.kernel;
      auto module = kernel.entry->getParentOfType<PTXModuleOp>();
      KernelResources second =
          reports[module].lookup(kernel.entry.getSymName());
      bool better = std::make_pair(spills(second), second.registers) <
                    std::make_pair(spills(retry.first), retry.first.registers);
      if (better) {
        kernel.resources = second;
        kernel.entry.emitRemark()
            << "probe: '" << kernel.entry.getSymName()
            << "': probe code placed inline"
            << (retry.local ? ", its state in local memory" : "") << " ("
            << second.registers << " registers, " << spills(second)
            << " bytes spilled; as first placed: " << retry.first.registers
            << ", " << spills(retry.first) << ")";
        continue;
      }
      // Back to the first placement.
      EntryOp firstEntry = retry.firstEntry.release();
      Block *block = kernel.entry->getBlock();
      block->getOperations().insert(Block::iterator(kernel.entry),
                                    firstEntry.getOperation());
      if (FuncOp func = retry.firstFunction.release())
        block->getOperations().insert(Block::iterator(firstEntry),
                                      func.getOperation());
      kernel.entry->erase();
      kernel.entry = firstEntry;
      kernel.resources = retry.first;
    }
    return success();
  }

  /// Caps each probed kernel whose probes cost it blocks per SM at the most
  /// registers that keep the original's occupancy, unless that makes ptxas
  /// spill more than the original did: then the kernel keeps its registers,
  /// with a warning and a `gpuopt.probe_occupancy` record for the manifest.
  LogicalResult capRegisters(MutableArrayRef<ProbedKernel> kernels,
                             const PtxasOptions &ptxasOptions) {
    struct Cap {
      ProbedKernel *kernel;
      unsigned registers;
      OccupancyDrop drop;
      /// The block sizes and shared memory the cap was chosen for, on the
      /// SMs of the chip the kernel targets.
      SmallVector<int64_t> threads;
      int64_t shared;
      hfuse::DeviceLimits limits;
      /// The kernel's own `.maxnreg` (a fused kernel's block cap), which
      /// any cap stays under and a withdrawn cap goes back to.
      std::optional<unsigned> original;
    };
    SmallVector<Cap> caps;
    SmallVector<PTXModuleOp> capped;
    for (ProbedKernel &kernel : kernels) {
      EntryOp entry = kernel.entry;
      const KernelResources &before = kernel.before;
      const KernelResources &after = kernel.resources;
      if (failed(checkWarpSpecialized(entry, before, after)))
        continue;
      std::optional<unsigned> original;
      if (auto maxnreg = entry.getMaxnreg())
        original = *maxnreg;
      // Blocks per SM of the chip it targets (the chip table); without its
      // limits no cap is known to keep anything.
      auto module = entry->getParentOfType<PTXModuleOp>();
      StringRef chip = ptxasOptions.chip;
      if (chip.empty())
        chip = module.getChip();
      std::optional<hfuse::DeviceLimits> limits =
          hfuse::lookupDeviceLimits(chip);
      if (!limits) {
        entry.emitWarning()
            << "probe: '" << entry.getSymName()
            << "' is not capped to keep its occupancy: the chip table has "
               "no row for '"
            << chip << "' (it knows " << getKnownChipNames()
            << "); give chip= the chip it will run on";
        continue;
      }
      SmallVector<int64_t> threads = getLaunchThreads(entry);
      int64_t shared = getSharedBytes(entry, before);
      unsigned keep =
          getOccupancyRegisters(*limits, threads, shared, before.registers);
      if (after.registers <= keep || (original && *original <= keep))
        continue;
      std::optional<OccupancyDrop> drop = getWorstDrop(
          *limits, threads, shared, before.registers, after.registers);
      if (!drop)
        continue;
      entry.setMaxnreg(keep);
      caps.push_back({&kernel, keep, *drop, std::move(threads), shared,
                      *limits, original});
      if (!llvm::is_contained(capped, module))
        capped.push_back(module);
    }
    // ptxas again, to see whether the caps cost spills.
    FailureOr<ModuleResources> reports =
        getModuleResources(capped, ptxasOptions);
    if (failed(reports))
      return failure();
    auto spills = [](const KernelResources &k) {
      return k.spillStores + k.spillLoads;
    };
    for (Cap &cap : caps) {
      EntryOp entry = cap.kernel->entry;
      StringRef name = entry.getSymName();
      const KernelResources &before = cap.kernel->before;
      const KernelResources &after = cap.kernel->resources;
      KernelResources withCap =
          (*reports)[entry->getParentOfType<PTXModuleOp>()].lookup(name);
      auto describe = [](const OccupancyDrop &drop) {
        return llvm::formatv("from {0} to {1} blocks per SM for blocks of {2} "
                             "threads{3}",
                             drop.before, drop.after, drop.threads,
                             drop.fixed ? ""
                                        : ", the size that loses most without "
                                          "a .reqntid")
            .str();
      };
      if (spills(withCap) <= spills(before)) {
        ++numCapped;
        entry.emitRemark() << "probe: capped '" << name << "' at .maxnreg "
                           << cap.registers << " (it had " << before.registers
                           << " registers; instrumented, ptxas used "
                           << after.registers
                           << ", which would lower its occupancy "
                           << describe(cap.drop) << ")";
        continue;
      }
      // Never trade the kernel's speed for spills it did not have, but keep
      // every block size it could launch with launchable: one that does not
      // fit an SM at all fails to launch.
      ArrayRef<int64_t> threads = cap.threads;
      int64_t shared = cap.shared;
      const hfuse::DeviceLimits &limits = cap.limits;
      auto [fit, tooLarge] = getLaunchableRegisters(
          limits, threads, shared, before.registers, after.registers);
      if (cap.original)
        fit = std::min<unsigned>(fit, *cap.original);
      unsigned registers = std::min(after.registers, fit);
      if (registers < after.registers)
        entry.setMaxnreg(fit);
      else
        entry.setMaxnreg(cap.original);
      std::optional<OccupancyDrop> drop =
          getWorstDrop(limits, threads, shared, before.registers, registers);
      if (drop)
        setProbeOccupancy(entry,
                          ProbeOccupancyAttr::get(entry.getContext(),
                                                  drop->threads, drop->before,
                                                  drop->after, before.registers,
                                                  registers, spills(withCap)));
      std::string spilled = llvm::formatv("ptxas spills {0} bytes (the kernel "
                                          "spilled {1})",
                                          spills(withCap), spills(before))
                                .str();
      InFlightDiagnostic warning = entry.emitWarning();
      if (registers == after.registers) {
        warning << "probe: '" << name << "' keeps the " << after.registers
                << " registers its probes need (it had " << before.registers
                << "): capped at .maxnreg " << cap.registers
                << " to keep its occupancy, " << spilled
                << ", so its occupancy drops " << describe(*drop);
      } else {
        warning << "probe: '" << name << "' needs " << after.registers
                << " registers once probed (it had " << before.registers
                << "), too many for blocks of " << tooLarge
                << " threads to fit an SM: capped at .maxnreg " << fit
                << " so that they still launch";
        if (fit == cap.registers)
          warning << ", which keeps its occupancy, but " << spilled;
        else
          warning << ", where ptxas may spill (at .maxnreg " << cap.registers
                  << ", which keeps its occupancy, " << spilled
                  << "); its occupancy drops " << describe(*drop);
      }
      warning << "; fewer probes at once, or `carry: local` in their specs, "
                 "need fewer registers";
      if (drop)
        warning << " (the manifest's probe_occupancy records the drop)";
    }
    return success();
  }
};
} // namespace
