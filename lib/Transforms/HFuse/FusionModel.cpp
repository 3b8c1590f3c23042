//===- FusionModel.cpp - Predict which fusion wins ------------------------===//
//
// Builds each candidate on a copy of the input, asks ptxas for its
// resources, and predicts its time from each kernel alone:
//
//  - t_i(k): kernel i's time with k of its blocks resident per SM. The
//    profile gives it at the kernel's own occupancy and, from
//    `gpu-run --occupancy-sweep`, at fewer blocks per SM; in between it is
//    interpolated. Without a sweep, a kernel keeps its speed down to half
//    its blocks and then slows with the square root of its share.
//  - A thread split gives every part occ_f (the fused occupancy) of its
//    blocks per SM, but a fused block lives as long as its slowest part:
//    the parts' block durations at occ_f add up per fused block.
//  - The block-level strategies share occ_f slots per SM. By Little's law
//    part i holds a share of them proportional to ratio_i times its block
//    duration; the parts run together until the first one ends, then the
//    rest get every slot.
//  - The parts contend for what both use: T is at least
//    max_i t_i + gamma * (sum_i t_i - max_i t_i), with gamma by the kernels'
//    kinds (memory, compute, tensor).
//  - Spills add their bytes over 256 as a fraction; a ticket per block
//    costs dynamic dispatch 1%.
//
//===----------------------------------------------------------------------===//

#include "gpuopt/Transforms/HFuse/FusionModel.h"

#include "gpuopt/Target/PTX/ExportPTX.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/ToolOutputFile.h"

#include <cmath>

using namespace mlir;
using namespace gpuopt;
using namespace gpuopt::hfuse;
using namespace gpuopt::ptx;

int64_t DeviceLimits::occupancy(int64_t threads, int64_t registers,
                                int64_t sharedBytes) const {
  if (threads <= 0)
    return 0;
  int64_t warps = llvm::divideCeil(threads, 32);
  // Registers are allocated per warp in units of 256, from one of the SM's
  // four sub-partitions: a warp's registers never straddle two (CUDA's
  // occupancy calculator, cuda_occupancy.h). 104 registers give 4 warps a
  // sub-partition, 16 an SM, not 65536 / 3328 = 19.
  int64_t perWarp = llvm::alignTo(std::max<int64_t>(registers, 1) * 32, 256);
  if (registers > maxRegistersPerThread(threads))
    return 0;
  int64_t warpsByRegisters =
      registersPerSM / subPartitions / perWarp * subPartitions;
  int64_t byRegisters = warpsByRegisters / warps;
  int64_t byThreads = threadsPerSM / (warps * 32);
  int64_t byShared = sharedPerSM / (sharedBytes + sharedReservedPerBlock);
  return std::max<int64_t>(
      0, std::min({byRegisters, byThreads, byShared, blocksPerSM}));
}

int64_t DeviceLimits::maxRegistersPerThread(int64_t threads) const {
  int64_t warps = std::max<int64_t>(llvm::divideCeil(threads, 32), 1);
  // The hardware checks a block's registers as if its warps filled every
  // sub-partition alike (warps rounded up to a multiple of four), and a
  // warp's registers come in units of 256, 8 per thread: 576 threads may
  // have 96, as ptxas caps them, not 65536 / 18 warps = 112.
  int64_t perWarp =
      registersPerSM / llvm::alignTo(warps, subPartitions) / 256 * 256;
  return std::min<int64_t>(255, perWarp / 32);
}

std::string Candidate::describe() const {
  std::string text;
  llvm::raw_string_ostream os(text);
  switch (plan.strategy) {
  case FusionStrategy::Thread:
    os << "thread split ";
    llvm::interleave(
        plan.parts, os, [&](const PartPlan &p) { os << p.getThreads(); }, "+");
    break;
  case FusionStrategy::Interleave:
  case FusionStrategy::Dynamic:
    os << stringifyFusionStrategy(plan.strategy) << " ";
    llvm::interleave(
        plan.parts, os, [&](const PartPlan &p) { os << p.ratio; }, ":");
    break;
  }
  if (plan.maxnreg)
    os << ", maxnreg " << plan.maxnreg;
  return text;
}

std::string Candidate::options() const {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << "strategy=" << stringifyFusionStrategy(plan.strategy);
  if (plan.strategy == FusionStrategy::Thread) {
    os << " threads=";
    llvm::interleave(
        plan.parts, os, [&](const PartPlan &p) { os << p.getThreads(); }, ",");
  } else {
    os << " ratio=";
    llvm::interleave(
        plan.parts, os, [&](const PartPlan &p) { os << p.ratio; }, ",");
  }
  os << " maxnreg=" << plan.maxnreg;
  if (llvm::is_contained(resized, true)) {
    os << " resizable=";
    llvm::interleave(
        resized, os, [&](bool r) { os << (r ? "true" : "false"); }, ",");
  }
  return text;
}

namespace {
/// What kind of throughput a kernel is limited by, from its instruction mix.
enum class KernelKind { Memory, Compute, Tensor };

KernelKind classify(const KernelAnalysis &analysis) {
  if (analysis.getTensorInstructionCount())
    return KernelKind::Tensor;
  double memory = double(analysis.getGlobalMemoryInstructionCount()) /
                  std::max(1u, analysis.getInstructionCount());
  // Hash and ALU kernels have under 1% global accesses among their
  // instructions, the suite's memory-bound kernels from 2.6% up.
  return memory >= 0.02 ? KernelKind::Memory : KernelKind::Compute;
}

StringRef stringifyKind(KernelKind kind) {
  switch (kind) {
  case KernelKind::Memory:
    return "memory";
  case KernelKind::Compute:
    return "compute";
  case KernelKind::Tensor:
    return "tensor";
  }
  llvm_unreachable("unknown kind");
}

/// How much of the shorter part's time is not hidden behind the longer one.
/// The tensor-core kernels seen so far stream their tiles from global
/// memory, so they hide nothing of a memory-bound partner.
double overlapPenalty(ArrayRef<KernelKind> kinds) {
  bool memory = llvm::is_contained(kinds, KernelKind::Memory);
  bool compute = llvm::is_contained(kinds, KernelKind::Compute);
  bool tensor = llvm::is_contained(kinds, KernelKind::Tensor);
  if (memory && tensor)
    return 1.0;
  if (memory && compute)
    return 0.2;
  if (compute && tensor)
    return 0.5;
  return 0.85;
}

/// Kernel i alone as the model sees it.
struct AloneKernel {
  double timeMs;
  /// Blocks per SM alone.
  int64_t blocksPerSM;
  int64_t blocks;
  /// (blocks per SM, ms) below blocksPerSM, scaled to timeMs.
  SmallVector<std::pair<double, double>> sweep;

  /// The time with `k` blocks resident per SM.
  double timeAt(double k) const {
    if (k >= double(blocksPerSM))
      return timeMs;
    if (sweep.empty())
      return timeMs / std::sqrt(std::min(2.0 * k / double(blocksPerSM), 1.0));
    // Below the lowest point, time grows as blocks shrink.
    if (k <= sweep.front().first)
      return sweep.front().second * sweep.front().first / std::max(k, 1e-3);
    std::pair<double, double> upper = {double(blocksPerSM), timeMs};
    for (size_t i = 0; i < sweep.size(); ++i) {
      std::pair<double, double> lo = sweep[i];
      std::pair<double, double> hi =
          i + 1 < sweep.size() ? sweep[i + 1] : upper;
      if (k <= hi.first)
        return lo.second +
               (hi.second - lo.second) * (k - lo.first) / (hi.first - lo.first);
    }
    return timeMs;
  }

  /// How long one block takes alone: the time over the number of waves.
  double blockMs(int64_t multiprocessors) const {
    double waves = double(blocks) / double(blocksPerSM * multiprocessors);
    return waves > 1 ? timeMs / waves : timeMs;
  }
};

/// A thread split: every fused block holds one block of each part that
/// has one at that index, and lasts as long as the slowest of them.
double predictThreadSplit(ArrayRef<AloneKernel> parts, int64_t occupancy,
                          int64_t multiprocessors) {
  double slots = double(occupancy * multiprocessors);
  SmallVector<double> blockMs;
  double longest = 0;
  for (const AloneKernel &part : parts) {
    double t = part.timeAt(double(occupancy));
    longest = std::max(longest, t);
    blockMs.push_back(t * slots / std::max(double(part.blocks), slots));
  }
  // Fused blocks [previous grid, next grid) hold the parts with more blocks.
  SmallVector<int64_t> grids;
  for (const AloneKernel &part : parts)
    grids.push_back(part.blocks);
  llvm::sort(grids);
  double total = 0;
  int64_t start = 0;
  for (int64_t end : grids) {
    if (end <= start)
      continue;
    double slowest = 0;
    for (auto [part, ms] : llvm::zip(parts, blockMs))
      if (part.blocks >= end)
        slowest = std::max(slowest, ms);
    total += double(end - start) * slowest;
    start = end;
  }
  return std::max(total / slots, longest);
}

/// The block-level strategies: the parts share the fused slots in
/// proportion to ratio x block duration until one ends; then the others
/// share all of them.
double predictBlockLevel(ArrayRef<AloneKernel> parts, ArrayRef<int64_t> ratio,
                         int64_t occupancy, int64_t multiprocessors) {
  SmallVector<double> left(parts.size(), 1.0);
  double elapsed = 0;
  for (size_t round = 0; round < parts.size(); ++round) {
    double weight = 0;
    for (auto [i, part] : llvm::enumerate(parts))
      if (left[i] > 0)
        weight += double(ratio[i]) * part.blockMs(multiprocessors);
    if (weight <= 0)
      break;
    // Each running part's whole time at its share of the slots.
    SmallVector<double> full(parts.size(), 0);
    double step = INFINITY;
    for (auto [i, part] : llvm::enumerate(parts)) {
      if (left[i] <= 0)
        continue;
      double share = double(occupancy) * double(ratio[i]) *
                     part.blockMs(multiprocessors) / weight;
      full[i] = part.timeAt(share);
      step = std::min(step, left[i] * full[i]);
    }
    elapsed += step;
    for (size_t i = 0; i < parts.size(); ++i)
      if (left[i] > 0)
        left[i] = std::max(0.0, left[i] - step / full[i]);
  }
  return elapsed;
}

struct Resources {
  int64_t registers = 32, sharedBytes = 0, spillBytes = 0;
  bool known = false;
};

/// Why ptxas may reject a fused kernel that it accepts in parts: one block
/// must fit in an SM's registers, so a larger fused block (or a register cap)
/// leaves each thread fewer registers than a part needs alone. Names the
/// parts over the limit, and the limit; empty when none is.
/// The most registers a thread of the fused block may have: what the block
/// leaves per thread, or the plan's register cap when lower.
int64_t getRegisterCap(const FusionPlan &plan, int64_t blockThreads) {
  int64_t blockCap = DeviceLimits().maxRegistersPerThread(blockThreads);
  return plan.maxnreg ? std::min(blockCap, plan.maxnreg) : blockCap;
}

std::string describeRegisterShortfall(const FusionPlan &plan,
                                      ArrayRef<int64_t> aloneRegisters,
                                      int64_t blockThreads) {
  DeviceLimits limits;
  int64_t blockCap = limits.maxRegistersPerThread(blockThreads);
  int64_t cap = getRegisterCap(plan, blockThreads);
  std::string text;
  llvm::raw_string_ostream os(text);
  for (auto [part, registers] : llvm::zip(plan.parts, aloneRegisters)) {
    if (registers <= cap)
      continue;
    os << (text.empty() ? "" : ", ") << "kernel '" << part.kernel << "' needs "
       << registers << " registers per thread alone";
  }
  if (text.empty())
    return text;
  if (cap < blockCap)
    os << ", more than the register cap of " << cap << " (maxnreg)";
  else
    os << ", and a block of " << blockThreads << " threads can have at most "
       << cap << " per thread (" << limits.registersPerSM
       << " registers per SM, allocated per warp, a block's warps counted in fours)";
  return text;
}

/// What to change when the fused kernel needs more registers than it may
/// have.
std::string suggestFewerRegisters(const FusionPlan &plan) {
  if (plan.maxnreg)
    return "raise or drop the register cap (maxnreg=)";
  if (plan.strategy == FusionStrategy::Thread)
    return "give the parts fewer threads (threads= for resizable kernels), "
           "or use strategy=interleave or dynamic, whose block is the "
           "largest part's";
  return "fuse the kernel with one whose block is no larger than its own, "
         "or run them apart";
}

/// ptxas's report for `entryName` in `module`; unknown when ptxas fails.
Resources queryResources(PTXModuleOp module, StringRef entryName,
                         const ModelOptions &options, std::string &error) {
  Resources result;
  PtxasOptions ptxasOptions;
  ptxasOptions.ptxasPath = options.ptxas;
  ptxasOptions.chip = options.chip;
  // ptxas's messages are the caller's business: collect them.
  ScopedDiagnosticHandler handler(module.getContext(), [&](Diagnostic &diag) {
    if (error.empty())
      error = diag.str();
    return success();
  });
  FailureOr<SmallVector<KernelResources>> report =
      getPtxasResources(module, ptxasOptions);
  if (failed(report))
    return result;
  for (const KernelResources &kernel : *report)
    if (kernel.kernel == entryName) {
      result.registers = kernel.registers;
      result.sharedBytes = kernel.sharedBytes;
      result.spillBytes = kernel.spillStores + kernel.spillLoads;
      result.known = true;
    }
  return result;
}
} // namespace

FailureOr<std::vector<Candidate>>
hfuse::evaluateCandidates(ModuleOp root, const FusionPlan &base,
                          ArrayRef<bool> resizable,
                          ArrayRef<KernelProfile> profiles, int64_t cap,
                          const ModelOptions &options) {
  DeviceLimits limits;
  MLIRContext *ctx = root.getContext();
  Location loc = options.loc.value_or(root.getLoc());

  // Each kernel alone.
  std::vector<KernelAnalysis> analyses;
  for (const PartPlan &part : base.parts) {
    FailureOr<EntryOp> entry = findPartKernel(root, part, loc);
    if (failed(entry))
      return failure();
    analyses.emplace_back(*entry);
  }
  SmallVector<KernelKind> kinds;
  SmallVector<AloneKernel> alone;
  SmallVector<int64_t> aloneRegisters;
  std::string ptxasError;
  for (auto [part, analysis, profile] :
       llvm::zip(base.parts, analyses, profiles)) {
    Resources res =
        queryResources(analysis.getModule(), part.kernel, options, ptxasError);
    if (!res.known)
      return emitError(loc) << "hfuse: strategy=auto needs ptxas's resource "
                               "report of '"
                            << part.kernel << "': " << ptxasError,
             failure();
    aloneRegisters.push_back(res.registers);
    int64_t smem = res.sharedBytes + std::max<int64_t>(part.dynamicSmem, 0);
    AloneKernel &kernel = alone.emplace_back();
    kernel.blocksPerSM =
        profile.blocksPerSM > 0
            ? profile.blocksPerSM
            : std::max<int64_t>(
                  limits.occupancy(part.getThreads(), res.registers, smem), 1);
    kernel.blocks = std::max<int64_t>(part.getBlocks(), 1);
    double waves =
        std::ceil(double(kernel.blocks) /
                  double(kernel.blocksPerSM * limits.multiprocessors));
    kernel.timeMs = profile.timeMs > 0 ? profile.timeMs : waves;
    // The sweep relative to the time alone, so that it applies to this
    // profile's time even when measured in another run.
    if (profile.timeMs > 0)
      for (auto [blocks, ms] : profile.sweep)
        if (blocks < kernel.blocksPerSM)
          kernel.sweep.push_back({double(blocks), ms});
    kinds.push_back(classify(analysis));
  }
  // Times and waves do not mix: the caller gives every kernel a time or none.
  bool timed = llvm::all_of(
      profiles, [](const KernelProfile &p) { return p.timeMs > 0; });
  double gamma = overlapPenalty(kinds);
  double baseline = 0, longestAlone = 0;
  for (const AloneKernel &kernel : alone) {
    baseline += kernel.timeMs;
    longestAlone = std::max(longestAlone, kernel.timeMs);
  }
  double contention = longestAlone + gamma * (baseline - longestAlone);

  // The candidates.
  std::vector<FusionPlan> plans;
  auto addPlan = [&](FusionPlan plan) {
    for (const FusionPlan &p : plans)
      if (p == plan)
        return;
    plans.push_back(plan);
  };
  // Thread splits: the given blocks, and for resizable kernels 64..512.
  std::vector<FusionPlan> splits = {base};
  for (auto [i, canResize] : llvm::enumerate(resizable)) {
    if (!canResize)
      continue;
    std::vector<FusionPlan> more;
    for (const FusionPlan &plan : splits)
      for (int64_t threads : {64, 128, 256, 512}) {
        FusionPlan copy = plan;
        copy.parts[i].block = {threads, 1, 1};
        more.push_back(copy);
      }
    splits.insert(splits.end(), more.begin(), more.end());
  }
  for (FusionPlan plan : splits) {
    plan.strategy = FusionStrategy::Thread;
    plan.maxnreg = std::max<int64_t>(cap, 0);
    addPlan(plan);
  }
  for (FusionStrategy strategy :
       {FusionStrategy::Interleave, FusionStrategy::Dynamic}) {
    FusionPlan plan = base;
    plan.strategy = strategy;
    plan.maxnreg = std::max<int64_t>(cap, 0);
    addPlan(plan);
    for (PartPlan &part : plan.parts)
      part.ratio = 1;
    addPlan(plan);
  }

  std::vector<Candidate> candidates;
  auto evaluate = [&](const FusionPlan &plan) -> Candidate {
    Candidate candidate;
    candidate.plan = plan;
    for (auto [part, basePart] : llvm::zip(plan.parts, base.parts))
      candidate.resized.push_back(part.getThreads() != basePart.getThreads());
    candidate.baselineMs = baseline;
    candidate.unit = timed ? "ms" : "waves";
    // Build it on a copy; refusals become the candidate's reason.
    OwningOpRef<ModuleOp> copy = root.clone();
    std::string refusal;
    FailureOr<PTXModuleOp> fused;
    {
      ScopedDiagnosticHandler handler(ctx, [&](Diagnostic &diag) {
        if (refusal.empty())
          refusal = diag.str();
        return success();
      });
      if (succeeded(checkFusionPlan(*copy, plan, loc)))
        fused = buildFusedKernel(*copy, plan);
      else
        fused = failure();
    }
    if (failed(fused)) {
      candidate.feasible = false;
      candidate.reason = refusal;
      return candidate;
    }
    ThreadLayout layout;
    {
      SmallVector<const KernelAnalysis *> ptrs;
      for (KernelAnalysis &a : analyses)
        ptrs.push_back(&a);
      layout = layoutThreads(plan, ptrs);
    }
    std::string error;
    Resources res = queryResources(*fused, plan.name, options, error);
    if (!res.known) {
      candidate.feasible = false;
      std::string shortfall =
          describeRegisterShortfall(plan, aloneRegisters, layout.blockThreads);
      candidate.reason =
          (shortfall.empty() ? "" : shortfall + "; ") + "ptxas: " + error;
      return candidate;
    }
    int64_t dynamicSmem = 0;
    for (const PartPlan &part : plan.parts) {
      int64_t bytes = std::max<int64_t>(part.dynamicSmem, 0);
      dynamicSmem = plan.strategy == FusionStrategy::Thread
                        ? (int64_t)llvm::alignTo(dynamicSmem, 1024) + bytes
                        : std::max(dynamicSmem, bytes);
    }
    candidate.registers = res.registers;
    candidate.sharedBytes = res.sharedBytes + dynamicSmem;
    candidate.spillBytes = res.spillBytes;
    candidate.occupancy = limits.occupancy(layout.blockThreads, res.registers,
                                           candidate.sharedBytes);
    if (candidate.occupancy == 0) {
      candidate.feasible = false;
      candidate.reason = "a fused block does not fit on an SM";
      return candidate;
    }
    // The parts as planned (a resized part has more or fewer blocks).
    SmallVector<AloneKernel> parts(alone);
    SmallVector<int64_t> ratio;
    for (auto [i, part] : llvm::enumerate(plan.parts)) {
      ratio.push_back(std::max<int64_t>(part.ratio, 1));
      if (part.getThreads() != base.parts[i].getThreads()) {
        // A resized grid-stride kernel does the same work in blocks of
        // another size: per SM it has as many threads as before.
        double scale = double(base.parts[i].getThreads()) / part.getThreads();
        parts[i].blocks = std::max<int64_t>(part.getBlocks(), 1);
        parts[i].blocksPerSM =
            std::max<int64_t>(int64_t(double(parts[i].blocksPerSM) * scale), 1);
        for (auto &point : parts[i].sweep)
          point.first *= scale;
      }
    }
    double slotModel =
        plan.strategy == FusionStrategy::Thread
            ? predictThreadSplit(parts, candidate.occupancy,
                                 limits.multiprocessors)
            : predictBlockLevel(parts, ratio, candidate.occupancy,
                                limits.multiprocessors);
    double predicted = std::max(slotModel, contention);
    std::string shares;
    llvm::raw_string_ostream os(shares);
    for (auto [i, part] : llvm::enumerate(parts))
      os << (i ? ", " : "")
         << llvm::formatv("{0:f3}", part.timeAt(double(candidate.occupancy)));
    if (plan.strategy == FusionStrategy::Dynamic)
      predicted *= 1.01; // a ticket per block
    predicted *= 1.0 + double(candidate.spillBytes) / 256.0;
    candidate.predictedMs = predicted;
    candidate.explanation =
        llvm::formatv(
            "kernels are {0}; fused block {1} threads, {2} "
            "registers, {3} blocks/SM; each alone at {3} blocks/SM "
            "{4}; slot model {5:f3}, contention bound {6:f3}",
            [&] {
              std::string k;
              for (auto [i, kind] : llvm::enumerate(kinds))
                k += (i ? "+" : "") + stringifyKind(kind).str();
              return k;
            }(),
            layout.blockThreads, candidate.registers, candidate.occupancy,
            shares, slotModel, contention)
            .str();
    return candidate;
  };
  for (const FusionPlan &plan : plans) {
    Candidate candidate = evaluate(plan);
    candidates.push_back(candidate);
    // Register caps that raise the occupancy of a feasible thread split.
    if (!candidate.feasible || cap >= 0 ||
        plan.strategy != FusionStrategy::Thread)
      continue;
    int64_t blockWarps = 0;
    for (const PartPlan &part : plan.parts)
      blockWarps += llvm::divideCeil(part.getThreads(), 32);
    for (int64_t blocks = candidate.occupancy + 1, added = 0;
         added < 3 && blocks <= limits.blocksPerSM; ++blocks) {
      int64_t regs =
          (limits.registersPerSM / (blocks * blockWarps) / 256) * 256 / 32;
      regs = regs / 8 * 8;
      if (regs < 24 || regs >= candidate.registers)
        continue;
      FusionPlan capped = plan;
      capped.maxnreg = std::min<int64_t>(regs, 255);
      candidates.push_back(evaluate(capped));
      ++added;
    }
  }
  llvm::stable_sort(candidates, [](const Candidate &a, const Candidate &b) {
    if (a.feasible != b.feasible)
      return a.feasible;
    return a.predictedMs < b.predictedMs;
  });
  return candidates;
}

FailureOr<bool> hfuse::checkPlanWithPtxas(ModuleOp root, const FusionPlan &plan,
                                          const ModelOptions &options,
                                          Location loc) {
  PtxasOptions ptxasOptions;
  ptxasOptions.ptxasPath = options.ptxas;
  ptxasOptions.chip = options.chip;
  if (!findPtxas(ptxasOptions))
    return false;
  std::vector<KernelAnalysis> analyses;
  SmallVector<const KernelAnalysis *> analysisPtrs;
  for (const PartPlan &part : plan.parts) {
    FailureOr<EntryOp> entry = findPartKernel(root, part, loc);
    if (failed(entry))
      return failure();
    analyses.emplace_back(*entry);
  }
  for (const KernelAnalysis &analysis : analyses)
    analysisPtrs.push_back(&analysis);
  int64_t blockThreads = layoutThreads(plan, analysisPtrs).blockThreads;
  OwningOpRef<ModuleOp> copy = root.clone();
  FailureOr<PTXModuleOp> fused = buildFusedKernel(*copy, plan);
  if (failed(fused))
    return failure();
  std::string error;
  Resources fusedResources = queryResources(*fused, plan.name, options, error);
  if (fusedResources.known && fusedResources.spillBytes == 0)
    return true;

  // Spills or a refusal: compare with each kernel alone.
  SmallVector<Resources> alone;
  for (auto [part, analysis] : llvm::zip(plan.parts, analyses)) {
    std::string partError;
    alone.push_back(
        queryResources(analysis.getModule(), part.kernel, options, partError));
    if (!fusedResources.known && !alone.back().known) {
      emitWarning(loc) << "hfuse: ptxas rejects kernel '" << part.kernel
                       << "' alone, so the fused kernel '" << plan.name
                       << "' was not checked: " << partError;
      return false;
    }
  }

  if (fusedResources.known) {
    // ptxas fits the fused kernel by spilling: say so, unless the kernels
    // spill as much alone.
    int64_t aloneSpills = 0;
    for (const Resources &res : alone)
      aloneSpills += res.spillBytes;
    if (fusedResources.spillBytes > aloneSpills)
      emitWarning(loc) << "hfuse: the fused kernel '" << plan.name
                       << "' spills " << fusedResources.spillBytes
                       << " bytes to local memory (the kernels alone: "
                       << aloneSpills << "): it has "
                       << fusedResources.registers
                       << " registers per thread, at most "
                       << getRegisterCap(plan, blockThreads)
                       << " for a block of " << blockThreads
                       << " threads; it computes the same results, slower; "
                       << suggestFewerRegisters(plan);
    return true;
  }

  // ptxas rejects the fused kernel but accepts the kernels alone: the fusion
  // is to blame; say by how many registers.
  SmallVector<int64_t> aloneRegisters;
  for (const Resources &res : alone)
    aloneRegisters.push_back(res.registers);
  std::string shortfall =
      describeRegisterShortfall(plan, aloneRegisters, blockThreads);
  InFlightDiagnostic diag = emitError(loc)
                            << "cannot fuse into '" << plan.name << "' by "
                            << stringifyFusionStrategy(plan.strategy)
                            << " strategy: ptxas rejects the fused kernel";
  if (shortfall.empty())
    diag << ", although it accepts each kernel alone";
  else
    diag << ": " << shortfall << "; " << suggestFewerRegisters(plan);
  diag.attachNote() << error;
  return failure();
}

LogicalResult hfuse::writeCandidates(ArrayRef<Candidate> candidates,
                                     StringRef path, Location loc) {
  llvm::json::Array array;
  for (const Candidate &c : candidates) {
    llvm::json::Array threads, ratio;
    for (const PartPlan &p : c.plan.parts) {
      threads.push_back(p.getThreads());
      ratio.push_back(p.ratio);
    }
    llvm::json::Object object{
        {"description", c.describe()},
        {"options", c.options()},
        {"strategy", stringifyFusionStrategy(c.plan.strategy).str()},
        {"threads", std::move(threads)},
        {"ratio", std::move(ratio)},
        {"maxnreg", c.plan.maxnreg},
        {"feasible", c.feasible}};
    if (c.feasible) {
      object["predicted"] = c.predictedMs;
      object["apart"] = c.baselineMs;
      object["unit"] = c.unit;
      object["registers"] = c.registers;
      object["spill_bytes"] = c.spillBytes;
      object["shared_bytes"] = c.sharedBytes;
      object["blocks_per_sm"] = c.occupancy;
      object["explanation"] = c.explanation;
    } else {
      object["reason"] = c.reason;
    }
    array.push_back(std::move(object));
  }
  std::string error;
  auto file = mlir::openOutputFile(path, &error);
  if (!file)
    return emitError(loc) << "cannot write '" << path << "': " << error;
  file->os() << llvm::formatv("{0:2}", llvm::json::Value(std::move(array)))
             << "\n";
  file->keep();
  return success();
}
