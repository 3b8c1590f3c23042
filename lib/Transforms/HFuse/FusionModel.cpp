//===- FusionModel.cpp - Predict which fusion wins ------------------------===//
//
// Builds each candidate on a copy of the input, asks ptxas for its
// resources, and predicts its time from each kernel alone:
//
//  - t_i(k): kernel i's time with k of its blocks resident per SM. The
//    profile gives it at the kernel's own occupancy and, from
//    `gpu-run --occupancy-sweep`, at fewer blocks per SM; in between it is
//    interpolated. Without a sweep, a kernel slows as a power of its share
//    of its own blocks per SM, the power by its kind.
//  - A thread split gives every part occ_f (the fused occupancy) of its
//    blocks per SM, but a fused block lives as long as its slowest part:
//    the parts' block durations at occ_f add up per fused block.
//  - The block-level strategies share occ_f slots per SM. By Little's law
//    part i holds a share of them proportional to ratio_i times its block
//    duration, never more than it has blocks; the parts run together until
//    the first one ends, then the rest get every slot.
//  - The parts contend for what both use: T is at least
//    max_i t_i + gamma * (sum_i t_i - max_i t_i), with gamma by the kernels'
//    kinds (memory, compute, tensor); for a thread split with each part's
//    time at the fused occupancy.
//  - Spills add their bytes over 256 as a fraction; a dynamic or sm_aware
//    ticket adds its latency to every fused block.
//  - Apart, a first kernel with less than a wave of blocks leaves its free
//    slots to the second (two streams, a CUDA graph).
//
// The constants, and what they were fitted on, are in FusionModel.h
// (namespace model).
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
#include <functional>

using namespace mlir;
using namespace gpuopt;
using namespace gpuopt::hfuse;
using namespace gpuopt::ptx;

std::string Candidate::describe() const {
  std::string text;
  llvm::raw_string_ostream os(text);
  switch (plan.strategy) {
  case FusionStrategy::Thread:
    os << "thread split ";
    llvm::interleave(
        plan.parts, os,
        [&](const PartPlan &p) {
          if (p.replicas > 1)
            os << p.replicas << "x";
          os << p.getThreads();
          if (p.setmaxnreg)
            os << "@" << p.setmaxnreg << "r";
        },
        "+");
    break;
  case FusionStrategy::Interleave:
  case FusionStrategy::Dynamic:
  case FusionStrategy::SMAware:
    os << stringifyFusionStrategy(plan.strategy) << " ";
    llvm::interleave(
        plan.parts, os, [&](const PartPlan &p) { os << p.ratio; }, ":");
    break;
  }
  if (plan.units > 1)
    os << ", units " << plan.units;
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
  if (plan.units > 1)
    os << " units=" << plan.units;
  auto perPart = [&](StringRef key, auto get, int64_t none) {
    if (llvm::all_of(plan.parts,
                     [&](const PartPlan &p) { return get(p) == none; }))
      return;
    os << " " << key << "=";
    llvm::interleave(
        plan.parts, os, [&](const PartPlan &p) { os << get(p); }, ",");
  };
  perPart("replicas", [](const PartPlan &p) { return p.replicas; }, 1);
  perPart("setmaxnreg", [](const PartPlan &p) { return p.setmaxnreg; }, 0);
  if (llvm::is_contained(resized, true)) {
    os << " resizable=";
    llvm::interleave(
        resized, os, [&](bool r) { os << (r ? "true" : "false"); }, ",");
  }
  return text;
}

StringRef hfuse::stringifyKernelKind(KernelKind kind) {
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

KernelKind hfuse::classifyKernel(const KernelAnalysis &analysis, double timeMs,
                                 double bytes) {
  if (analysis.getTensorInstructionCount())
    return KernelKind::Tensor;
  // What it moves per time, where the profile says: a loop of arithmetic
  // around a few loads looks memory-bound in the static mix.
  if (timeMs > 0 && bytes >= 0)
    return bytes / (timeMs * 1e6) >= model::MemoryBoundGBs
               ? KernelKind::Memory
               : KernelKind::Compute;
  double memory = double(analysis.getGlobalMemoryInstructionCount()) /
                  std::max(1u, analysis.getInstructionCount());
  // Hash and ALU kernels have under 1% global accesses among their
  // instructions, the suite's memory-bound kernels from 2.6% up.
  return memory >= 0.02 ? KernelKind::Memory : KernelKind::Compute;
}

double hfuse::getOverlapPenalty(ArrayRef<KernelKind> kinds) {
  bool memory = llvm::is_contained(kinds, KernelKind::Memory);
  bool compute = llvm::is_contained(kinds, KernelKind::Compute);
  bool tensor = llvm::is_contained(kinds, KernelKind::Tensor);
  if (memory && compute)
    return model::GammaMemoryCompute;
  if (tensor && (memory || compute))
    return model::GammaTensor;
  if (memory)
    return model::GammaMemoryMemory;
  return model::GammaSameKind;
}

double KernelTimes::timeAt(double k) const {
  k = std::max(k, 1e-3);
  double allResident = allResidentPerSM > 0
                           ? allResidentPerSM
                           : double(blocks) / double(multiprocessors);
  double fullSpeed = fullSpeedPerSM > 0 ? fullSpeedPerSM : double(blocksPerSM);
  if (k >= fullSpeed || k >= allResident)
    return timeMs;
  if (sweep.empty()) {
    double p = kind == KernelKind::Memory    ? model::SlowdownMemory
               : kind == KernelKind::Compute ? model::SlowdownCompute
                                             : model::SlowdownTensor;
    return timeMs * std::pow(fullSpeed / k, p);
  }
  // Below the lowest point, time grows as blocks shrink.
  if (k <= sweep.front().first)
    return sweep.front().second * sweep.front().first / k;
  std::pair<double, double> upper = {fullSpeed, timeMs};
  for (size_t i = 0; i < sweep.size(); ++i) {
    std::pair<double, double> lo = sweep[i];
    std::pair<double, double> hi = i + 1 < sweep.size() ? sweep[i + 1] : upper;
    if (k <= hi.first)
      return lo.second +
             (hi.second - lo.second) * (k - lo.first) / (hi.first - lo.first);
  }
  return timeMs;
}

double KernelTimes::blockMs(int64_t multiprocessors) const {
  double fullSpeed = fullSpeedPerSM > 0 ? fullSpeedPerSM : double(blocksPerSM);
  double waves = double(blocks) / (fullSpeed * double(multiprocessors));
  return waves > 1 ? timeMs / waves : timeMs;
}

KernelTimes KernelTimes::resized(int64_t ownThreads, int64_t threads,
                                 int64_t newBlocks) const {
  KernelTimes copy = *this;
  if (threads == ownThreads || threads <= 0)
    return copy;
  double scale = double(ownThreads) / double(threads);
  copy.allResidentPerSM =
      (allResidentPerSM > 0 ? allResidentPerSM
                            : double(blocks) / double(multiprocessors)) *
      scale;
  copy.fullSpeedPerSM =
      (fullSpeedPerSM > 0 ? fullSpeedPerSM : double(blocksPerSM)) * scale;
  copy.blocks = std::max<int64_t>(newBlocks, 1);
  // k blocks of `threads` are k / scale of its own: the same speed needs
  // scale times as many blocks. The fractional count stays exact in the
  // sweep; blocksPerSM rounds down (at least one).
  copy.blocksPerSM =
      std::max<int64_t>(int64_t(double(blocksPerSM) * scale + 1e-9), 1);
  for (auto &point : copy.sweep)
    point.first *= scale;
  llvm::erase_if(copy.sweep, [&](const std::pair<double, double> &point) {
    return point.first >= copy.fullSpeedPerSM;
  });
  return copy;
}

double hfuse::predictThreadSplit(ArrayRef<KernelTimes> parts, int64_t occupancy,
                                 int64_t multiprocessors) {
  double slots = double(occupancy * multiprocessors);
  SmallVector<double> blockMs;
  double longest = 0;
  for (const KernelTimes &part : parts) {
    double t = part.timeAt(double(occupancy));
    longest = std::max(longest, t);
    blockMs.push_back(t * slots / std::max(double(part.blocks), slots));
  }
  // Fused blocks [previous grid, next grid) hold the parts with more blocks.
  SmallVector<int64_t> grids;
  for (const KernelTimes &part : parts)
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

double hfuse::predictBlockLevel(ArrayRef<KernelTimes> parts,
                                ArrayRef<int64_t> ratio, int64_t occupancy,
                                int64_t multiprocessors) {
  SmallVector<double> left(parts.size(), 1.0);
  double elapsed = 0;
  for (size_t round = 0; round < parts.size(); ++round) {
    // Shares of the slots by ratio x block duration; a part with fewer
    // blocks per SM than its share holds only those, and the others share
    // the rest.
    SmallVector<double> share(parts.size(), 0);
    SmallVector<bool> capped(parts.size(), false);
    double free = double(occupancy);
    for (size_t pass = 0; pass < parts.size(); ++pass) {
      double weight = 0;
      for (auto [i, part] : llvm::enumerate(parts))
        if (left[i] > 0 && !capped[i])
          weight += double(ratio[i]) * part.blockMs(multiprocessors);
      if (weight <= 0)
        break;
      bool changed = false;
      for (auto [i, part] : llvm::enumerate(parts)) {
        if (left[i] <= 0 || capped[i])
          continue;
        share[i] =
            free * double(ratio[i]) * part.blockMs(multiprocessors) / weight;
        double most = double(part.blocks) / double(multiprocessors);
        if (share[i] > most) {
          share[i] = most;
          capped[i] = true;
          free -= most;
          changed = true;
        }
      }
      if (!changed)
        break;
    }
    // Each running part's whole time at its share of the slots.
    SmallVector<double> full(parts.size(), 0);
    double step = INFINITY;
    for (auto [i, part] : llvm::enumerate(parts)) {
      if (left[i] <= 0)
        continue;
      full[i] = part.timeAt(share[i]);
      step = std::min(step, left[i] * full[i]);
    }
    if (!std::isfinite(step))
      break;
    elapsed += step;
    for (size_t i = 0; i < parts.size(); ++i)
      if (left[i] > 0)
        left[i] = std::max(0.0, left[i] - step / full[i]);
  }
  return elapsed;
}

double hfuse::predictApart(ArrayRef<KernelTimes> kernels,
                           int64_t multiprocessors, bool timed) {
  double serial = 0;
  for (const KernelTimes &kernel : kernels)
    serial += kernel.timeMs;
  if (kernels.size() < 2 || !timed)
    return serial;
  const KernelTimes &first = kernels[0], &second = kernels[1];
  double slots = double(first.blocksPerSM * multiprocessors);
  if (double(first.blocks) >= slots)
    return serial;
  // While the first runs, the second gets the slots it leaves free.
  double freeShare = 1.0 - double(first.blocks) / slots;
  double shared = second.timeAt(freeShare * double(second.blocksPerSM));
  double window = first.timeMs - model::LaunchGapMs;
  if (window <= 0)
    return serial;
  double done = window / shared;
  double both = done >= 1 ? std::max(first.timeMs, model::LaunchGapMs + shared)
                          : first.timeMs + (1 - done) * second.timeMs;
  return std::min(serial, serial - first.timeMs - second.timeMs + both);
}

double hfuse::getDispatchCost(const FusionPlan &plan, int64_t occupancy,
                              int64_t multiprocessors, bool timed) {
  double perTicket;
  if (plan.strategy == FusionStrategy::Dynamic)
    perTicket = model::TicketMs;
  else if (plan.strategy == FusionStrategy::SMAware)
    perTicket = model::SMAwareTicketMs;
  else
    return 0;
  // Every fused block waits for its ticket once per `units` work units.
  double rounds =
      std::ceil(double(getFusedGridBlocks(plan)) /
                double(std::max<int64_t>(occupancy, 1) * multiprocessors));
  double cost = rounds * perTicket;
  return timed ? cost : cost / model::AssumedWaveMs;
}

SmallVector<int64_t> hfuse::balanceThreadSplit(ArrayRef<KernelTimes> parts,
                                               ArrayRef<int64_t> threads,
                                               ArrayRef<bool> resizable,
                                               int64_t registers,
                                               int64_t sharedBytes,
                                               const DeviceLimits &limits) {
  constexpr int64_t maxThreads = 1024;
  SmallVector<int64_t> best, current(threads.begin(), threads.end());
  double bestMs = INFINITY, bestSpread = INFINITY;
  int64_t bestChange = 0;
  std::function<void(size_t, int64_t)> visit = [&](size_t i, int64_t used) {
    if (i == parts.size()) {
      int64_t occupancy = limits.occupancy(used, registers, sharedBytes);
      if (occupancy == 0)
        return;
      SmallVector<KernelTimes> sized;
      double lo = INFINITY, hi = 0;
      for (auto [part, own, n] : llvm::zip(parts, threads, current)) {
        sized.push_back(part.resized(own, n, part.blocks));
        double t = sized.back().timeAt(double(occupancy));
        lo = std::min(lo, t);
        hi = std::max(hi, t);
      }
      double ms = predictThreadSplit(sized, occupancy, limits.multiprocessors);
      // Ties (within 0.1%) go to the split whose parts finish closest, then
      // to the one closest to the kernels' own blocks.
      int64_t change = 0;
      for (auto [own, n] : llvm::zip(threads, current))
        change += std::abs(n - own);
      double spread = hi - lo;
      bool tie = ms <= bestMs * 1.001 && ms >= bestMs * 0.999;
      if (ms < bestMs * 0.999 ||
          (tie && (spread < bestSpread * 0.999 ||
                   (spread <= bestSpread * 1.001 && change < bestChange)))) {
        bestMs = std::min(ms, bestMs);
        bestSpread = spread;
        bestChange = change;
        best = current;
      }
      return;
    }
    if (!resizable[i]) {
      current[i] = threads[i];
      visit(i + 1, used + llvm::alignTo(threads[i], 32));
      return;
    }
    for (int64_t n = 32; used + n <= maxThreads; n += 32) {
      current[i] = n;
      visit(i + 1, used + n);
    }
    current[i] = threads[i];
  };
  visit(0, 0);
  return best;
}

namespace {

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
int64_t getRegisterCap(const FusionPlan &plan, int64_t blockThreads,
                       const DeviceLimits &limits) {
  int64_t blockCap = limits.maxRegistersPerThread(blockThreads);
  return plan.maxnreg ? std::min(blockCap, plan.maxnreg) : blockCap;
}

std::string describeRegisterShortfall(const FusionPlan &plan,
                                      ArrayRef<int64_t> aloneRegisters,
                                      int64_t blockThreads,
                                      const DeviceLimits &limits) {
  int64_t blockCap = limits.maxRegistersPerThread(blockThreads);
  int64_t cap = getRegisterCap(plan, blockThreads, limits);
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
       << " registers per SM, allocated per warp, a block's warps counted in "
          "fours)";
  return text;
}

/// What to change when the fused kernel needs more registers than it may
/// have, `needed` per thread (the most a part takes alone): only what gives
/// it that many. A cap below what the fused block allows can be raised, no
/// further than the block allows; the block allows more with fewer threads
/// (a thread split's parts, or a block-level strategy, whose block is the
/// largest part's), but never more than a block of that size can have.
std::string suggestFewerRegisters(const FusionPlan &plan, int64_t blockThreads,
                                  const DeviceLimits &limits, int64_t needed) {
  int64_t blockCap = limits.maxRegistersPerThread(blockThreads);
  std::vector<std::string> fixes;
  if (plan.maxnreg && plan.maxnreg < blockCap)
    fixes.push_back(
        needed <= blockCap
            ? llvm::formatv("raise the register cap to {0} (maxnreg={0}; "
                            "maxnreg=0 gives the {1} a block of {2} threads "
                            "allows)",
                            needed, blockCap, blockThreads)
                  .str()
            : llvm::formatv("drop the register cap (maxnreg=0: the {0} a "
                            "block of {1} threads allows)",
                            blockCap, blockThreads)
                  .str());
  // The largest block whose threads may have `needed` registers.
  int64_t fitThreads = 0;
  for (int64_t t = 1024; t >= 32 && !fitThreads; t -= 32)
    if (limits.maxRegistersPerThread(t) >= needed)
      fitThreads = t;
  int64_t largest = 0;
  bool replicated = false;
  for (const PartPlan &part : plan.parts) {
    largest = std::max(largest, part.getThreads());
    replicated |= part.replicas > 1;
  }
  if (needed > blockCap && fitThreads >= largest) {
    if (plan.strategy == FusionStrategy::Thread) {
      fixes.push_back(llvm::formatv("give the parts at most {0} threads in "
                                    "all (threads= for kernels that may be "
                                    "resized{1})",
                                    fitThreads,
                                    replicated ? ", fewer replicas=" : "")
                          .str());
      fixes.push_back(llvm::formatv("use strategy=interleave or dynamic, "
                                    "whose block is the largest part's ({0} "
                                    "threads, up to {1} registers each)",
                                    largest,
                                    limits.maxRegistersPerThread(largest))
                          .str());
    }
  }
  if (needed > blockCap && fitThreads < largest)
    fixes.push_back(llvm::formatv("fuse the kernel that needs them with "
                                  "kernels whose blocks are at most {0} "
                                  "threads, or run them apart",
                                  fitThreads)
                        .str());
  if (fixes.empty())
    return llvm::formatv("no register setting gives it more: each kernel "
                         "alone needs at most {0} registers per thread, "
                         "which the fused block allows, so the fused code "
                         "itself needs more; run the kernels apart, or "
                         "accept the spills",
                         needed)
        .str();
  std::string text;
  for (auto [i, fix] : llvm::enumerate(fixes))
    text += (i == 0 ? "" : i + 1 == fixes.size() ? ", or " : ", ") + fix;
  return text;
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
  // The SMs the model counts with: the GPU's (measure=), else the chip's
  // row of the chip table. Without any chip ptxas refuses, below.
  DeviceLimits limits;
  if (options.limits) {
    limits = *options.limits;
  } else {
    StringRef chip = options.chip, from = "chip=";
    if (chip.empty() && !analyses.empty()) {
      chip = analyses.front().getModule().getChip();
      from = "the kernels' .target";
    }
    if (!chip.empty()) {
      FailureOr<DeviceLimits> chipLimits = getDeviceLimits(chip, from, loc);
      if (failed(chipLimits))
        return failure();
      limits = *chipLimits;
    }
  }
  SmallVector<KernelKind> kinds;
  SmallVector<KernelTimes> alone;
  SmallVector<int64_t> aloneRegisters;
  int64_t aloneSharedBytes = 0;
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
    aloneSharedBytes = llvm::alignTo(aloneSharedBytes, 1024) + smem;
    KernelTimes &kernel = alone.emplace_back();
    kernel.blocksPerSM =
        profile.blocksPerSM > 0
            ? profile.blocksPerSM
            : std::max<int64_t>(
                  limits.occupancy(part.getThreads(), res.registers, smem), 1);
    kernel.blocks = std::max<int64_t>(part.getBlocks(), 1);
    kernel.multiprocessors = limits.multiprocessors;
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
    kernel.kind = classifyKernel(analysis, profile.timeMs, profile.bytes);
    kinds.push_back(kernel.kind);
  }
  // Times and waves do not mix: the caller gives every kernel a time or none.
  bool timed = llvm::all_of(
      profiles, [](const KernelProfile &p) { return p.timeMs > 0; });
  double gamma = getOverlapPenalty(kinds);
  double baseline = predictApart(alone, limits.multiprocessors, timed);
  // The parts contend for what both use: at least the longest part plus
  // gamma of the others, each at the blocks per SM it gets.
  auto contentionBound = [&](ArrayRef<double> times) {
    double sum = 0, longest = 0;
    for (double t : times) {
      sum += t;
      longest = std::max(longest, t);
    }
    return longest + gamma * (sum - longest);
  };
  SmallVector<double> aloneTimes;
  for (const KernelTimes &kernel : alone)
    aloneTimes.push_back(kernel.timeMs);
  double aloneContention = contentionBound(aloneTimes);

  // The candidates, each with where it comes from when that is worth saying.
  std::vector<std::pair<FusionPlan, std::string>> plans;
  auto addPlan = [&](FusionPlan plan, std::string origin = "") {
    for (const auto &p : plans)
      if (p.first == plan)
        return;
    plans.push_back({plan, origin});
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
    plan.units = 1;
    addPlan(plan);
  }
  // The balanced split: resizable parts get thread counts that make the
  // parts finish together, at the occupancy the kernels' registers allow.
  if (llvm::is_contained(resizable, true)) {
    SmallVector<int64_t> ownThreads;
    for (const PartPlan &part : base.parts)
      ownThreads.push_back(part.getThreads());
    int64_t registers = *llvm::max_element(aloneRegisters);
    if (cap > 0)
      registers = std::min(registers, cap);
    SmallVector<int64_t> balanced = balanceThreadSplit(
        alone, ownThreads, resizable, registers, aloneSharedBytes, limits);
    if (!balanced.empty()) {
      FusionPlan plan = base;
      plan.strategy = FusionStrategy::Thread;
      plan.maxnreg = std::max<int64_t>(cap, 0);
      plan.units = 1;
      for (auto [part, threads, own] :
           llvm::zip(plan.parts, balanced, ownThreads))
        if (threads != own)
          part.block = {threads, 1, 1};
      addPlan(plan, "balanced split");
    }
  }
  // Replicas: r copies of one part's block in each fused block give that
  // part r resident blocks per fused one (a part of short blocks beside a
  // long one); the model sees the copies as one block of r x its threads
  // over 1 / r of its grid.
  constexpr int64_t maxBlockThreads = 1024;
  int64_t baseThreads = 0;
  for (const PartPlan &part : base.parts)
    baseThreads += part.replicas * part.getThreads();
  for (auto [i, part] : llvm::enumerate(base.parts)) {
    if (part.replicas != 1)
      continue;
    for (int64_t copies : {2, 4}) {
      if (baseThreads + (copies - 1) * part.getThreads() > maxBlockThreads ||
          part.getBlocks() < copies)
        continue;
      FusionPlan plan = base;
      plan.strategy = FusionStrategy::Thread;
      plan.maxnreg = std::max<int64_t>(cap, 0);
      plan.units = 1;
      plan.parts[i].replicas = copies;
      addPlan(plan, "replicas");
    }
  }
  // Register budgets (setmaxnreg): when the parts need registers far apart
  // alone, each takes what ptxas gave it alone (rounded up to 8), so that
  // the fused block is not sized for the hungriest part in every thread.
  {
    int64_t most = *llvm::max_element(aloneRegisters);
    int64_t least = *llvm::min_element(aloneRegisters);
    if (cap < 0 && most - least >= 16 && base.parts.size() > 1) {
      FusionPlan plan = base;
      plan.strategy = FusionStrategy::Thread;
      plan.maxnreg = 0;
      plan.units = 1;
      for (auto [part, registers] : llvm::zip(plan.parts, aloneRegisters))
        part.setmaxnreg =
            std::clamp<int64_t>(llvm::alignTo(registers, 8), 24, 256);
      addPlan(plan, "register budgets");
    }
  }
  for (FusionStrategy strategy :
       {FusionStrategy::Interleave, FusionStrategy::Dynamic,
        FusionStrategy::SMAware}) {
    FusionPlan plan = base;
    plan.strategy = strategy;
    plan.maxnreg = std::max<int64_t>(cap, 0);
    if (strategy == FusionStrategy::Interleave)
      plan.units = 1;
    addPlan(plan);
    // Four work units per ticket where the fused grid spans more than four
    // waves of 8 blocks per SM: a quarter of the tickets, the same slot
    // model.
    if (strategy != FusionStrategy::Interleave && base.units == 1 &&
        getFusedGridBlocks(plan) > 4 * 8 * limits.multiprocessors) {
      FusionPlan batched = plan;
      batched.units = 4;
      addPlan(batched, "units");
    }
    for (PartPlan &part : plan.parts)
      part.ratio = 1;
    addPlan(plan);
  }

  std::vector<Candidate> candidates;
  auto evaluate = [&](const FusionPlan &plan,
                      StringRef origin = "") -> Candidate {
    Candidate candidate;
    candidate.plan = plan;
    candidate.origin = origin.str();
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
      std::string shortfall = describeRegisterShortfall(
          plan, aloneRegisters, layout.blockThreads, limits);
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
    // With per-part budgets the block launches with the pool they share.
    if (llvm::any_of(plan.parts,
                     [](const PartPlan &part) { return part.setmaxnreg; }))
      if (int64_t launch = getLaunchRegisters(plan))
        candidate.registers = launch;
    candidate.sharedBytes = res.sharedBytes + dynamicSmem;
    candidate.spillBytes = res.spillBytes;
    candidate.occupancy = limits.occupancy(
        layout.blockThreads, candidate.registers, candidate.sharedBytes);
    if (candidate.occupancy == 0) {
      candidate.feasible = false;
      candidate.reason = "a fused block does not fit on an SM";
      return candidate;
    }
    // The parts as planned (a resized part has more or fewer blocks).
    SmallVector<KernelTimes> parts;
    SmallVector<int64_t> ratio;
    for (auto [i, part] : llvm::enumerate(plan.parts)) {
      ratio.push_back(std::max<int64_t>(part.ratio, 1));
      KernelTimes sized = alone[i].resized(base.parts[i].getThreads(),
                                           part.getThreads(), part.getBlocks());
      if (part.replicas > 1)
        sized =
            sized.resized(part.getThreads(), part.getThreads() * part.replicas,
                          llvm::divideCeil(part.getBlocks(), part.replicas));
      parts.push_back(sized);
    }
    bool threadSplit = plan.strategy == FusionStrategy::Thread;
    double slotModel =
        threadSplit ? predictThreadSplit(parts, candidate.occupancy,
                                         limits.multiprocessors)
                    : predictBlockLevel(parts, ratio, candidate.occupancy,
                                        limits.multiprocessors);
    // A thread split holds every part at the fused occupancy for the whole
    // run: their contention is at the times they take there (gemm_mma +
    // ethash_like at one block per SM). A part given other threads or
    // copies to make it finish with the others is slower there by design,
    // not by contention: it counts its time alone. The block-level
    // strategies give each part a changing share: the slot model has it;
    // the bound counts the times alone.
    SmallVector<double> atOccupancy, contending;
    for (auto [i, part] : llvm::enumerate(parts)) {
      atOccupancy.push_back(part.timeAt(double(candidate.occupancy)));
      bool reshaped = candidate.resized[i] || plan.parts[i].replicas > 1;
      contending.push_back(reshaped ? alone[i].timeMs : atOccupancy.back());
    }
    double contention =
        threadSplit ? contentionBound(contending) : aloneContention;
    double predicted = std::max(slotModel, contention);
    std::string shares;
    llvm::raw_string_ostream os(shares);
    for (auto [i, t] : llvm::enumerate(atOccupancy))
      os << (i ? ", " : "") << llvm::formatv("{0:f3}", t);
    double dispatch = getDispatchCost(plan, candidate.occupancy,
                                      limits.multiprocessors, timed);
    predicted += dispatch;
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
                k += (i ? "+" : "") + stringifyKernelKind(kind).str();
              return k;
            }(),
            layout.blockThreads, candidate.registers, candidate.occupancy,
            shares, slotModel, contention)
            .str();
    if (dispatch > 0)
      candidate.explanation +=
          llvm::formatv(", tickets {0:f3}", dispatch).str();
    return candidate;
  };
  for (const auto &[plan, origin] : plans) {
    Candidate candidate = evaluate(plan, origin);
    candidates.push_back(candidate);
    // Register caps that raise the occupancy of a feasible thread split.
    if (!candidate.feasible || cap >= 0 ||
        plan.strategy != FusionStrategy::Thread)
      continue;
    if (llvm::any_of(plan.parts,
                     [](const PartPlan &part) { return part.setmaxnreg; }))
      continue;
    int64_t blockWarps = 0;
    for (const PartPlan &part : plan.parts)
      blockWarps += part.replicas * llvm::divideCeil(part.getThreads(), 32);
    for (int64_t blocks = candidate.occupancy + 1, added = 0, last = 0;
         added < 3 && blocks <= limits.blocksPerSM; ++blocks) {
      int64_t regs =
          (limits.registersPerSM / (blocks * blockWarps) / 256) * 256 / 32;
      regs = regs / 8 * 8;
      if (regs < 24 || regs >= candidate.registers || regs == last)
        continue;
      last = regs;
      FusionPlan capped = plan;
      capped.maxnreg = std::min<int64_t>(regs, 255);
      candidates.push_back(evaluate(capped, origin));
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
  // Only messages read the limits here: a chip the table lacks keeps the
  // defaults.
  StringRef chip = options.chip;
  if (chip.empty() && !analyses.empty())
    chip = analyses.front().getModule().getChip();
  DeviceLimits limits = options.limits.value_or(
      lookupDeviceLimits(chip).value_or(DeviceLimits()));
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
    int64_t aloneSpills = 0, aloneRegisterNeed = 0;
    for (const Resources &res : alone) {
      aloneSpills += res.spillBytes;
      aloneRegisterNeed = std::max(aloneRegisterNeed, res.registers);
    }
    if (fusedResources.spillBytes > aloneSpills)
      emitWarning(loc) << "hfuse: the fused kernel '" << plan.name
                       << "' spills " << fusedResources.spillBytes
                       << " bytes to local memory (the kernels alone: "
                       << aloneSpills << "): it has "
                       << fusedResources.registers
                       << " registers per thread, at most "
                       << getRegisterCap(plan, blockThreads, limits)
                       << (getRegisterCap(plan, blockThreads, limits) <
                                   limits.maxRegistersPerThread(blockThreads)
                               ? " under the register cap (maxnreg=)"
                               : " for a block of " +
                                     std::to_string(blockThreads) + " threads")
                       << "; it computes the same results, slower; "
                       << suggestFewerRegisters(plan, blockThreads, limits,
                                                aloneRegisterNeed);
    return true;
  }

  // ptxas rejects the fused kernel but accepts the kernels alone: the fusion
  // is to blame; say by how many registers.
  SmallVector<int64_t> aloneRegisters;
  for (const Resources &res : alone)
    aloneRegisters.push_back(res.registers);
  std::string shortfall =
      describeRegisterShortfall(plan, aloneRegisters, blockThreads, limits);
  InFlightDiagnostic diag = emitError(loc)
                            << "cannot fuse into '" << plan.name << "' by "
                            << stringifyFusionStrategy(plan.strategy)
                            << " strategy: ptxas rejects the fused kernel";
  if (shortfall.empty())
    diag << ", although it accepts each kernel alone";
  else
    diag << ": " << shortfall << "; "
         << suggestFewerRegisters(plan, blockThreads, limits,
                                  *llvm::max_element(aloneRegisters));
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
    if (!c.origin.empty())
      object["origin"] = c.origin;
    if (c.plan.units > 1)
      object["units"] = c.plan.units;
    if (llvm::any_of(c.plan.parts, [](const PartPlan &p) {
          return p.replicas != 1 || p.setmaxnreg;
        })) {
      llvm::json::Array replicas, budgets;
      for (const PartPlan &p : c.plan.parts) {
        replicas.push_back(p.replicas);
        budgets.push_back(p.setmaxnreg);
      }
      object["replicas"] = std::move(replicas);
      object["setmaxnreg"] = std::move(budgets);
    }
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
