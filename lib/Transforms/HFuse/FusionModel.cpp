//===- FusionModel.cpp - Predict which fusion wins ------------------------===//
//
// Builds each candidate on a copy of the input, asks ptxas for its
// resources, and predicts its time:
//
//  - kernel i alone has occupancy occ_i and time t_i (measured, or its
//    number of waves when no profile is given);
//  - in the fused kernel it keeps x_i = (its resident threads per SM) /
//    (its resident threads alone); it keeps its speed down to x_i = 1/2
//    (most kernels saturate there) and below that slows as fewer warps hide
//    less latency: t_i / sqrt(min(2 x_i, 1));
//  - the parts overlap by their kinds: a memory-bound kernel with a
//    compute-bound or tensor-core one overlaps almost fully, two of a kind
//    hardly: T = max_i t'_i + gamma * (sum_i t'_i - max_i t'_i);
//  - spills add their bytes over 256 as a fraction.
//
//===----------------------------------------------------------------------===//

#include "gpuopt/Transforms/HFuse/FusionModel.h"

#include "gpuopt/Target/PTX/ExportPTX.h"

#include "mlir/IR/Diagnostics.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MathExtras.h"
#include "mlir/Support/FileUtilities.h"
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
  // Registers are allocated per warp in units of 256.
  int64_t perWarp = llvm::alignTo(std::max<int64_t>(registers, 1) * 32, 256);
  int64_t byRegisters = registersPerSM / (perWarp * warps);
  int64_t byThreads = threadsPerSM / (warps * 32);
  int64_t byShared = sharedPerSM / (sharedBytes + sharedReservedPerBlock);
  return std::max<int64_t>(
      0, std::min({byRegisters, byThreads, byShared, blocksPerSM}));
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
  return memory >= 0.04 ? KernelKind::Memory : KernelKind::Compute;
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
double overlapPenalty(ArrayRef<KernelKind> kinds) {
  bool memory = llvm::is_contained(kinds, KernelKind::Memory);
  bool compute = llvm::is_contained(kinds, KernelKind::Compute);
  bool tensor = llvm::is_contained(kinds, KernelKind::Tensor);
  if (memory && (compute || tensor))
    return 0.2;
  if (compute && tensor)
    return 0.5;
  return 0.85;
}

struct Resources {
  int64_t registers = 32, sharedBytes = 0, spillBytes = 0;
  bool known = false;
};

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
                          ArrayRef<bool> resizable, ArrayRef<double> timesMs,
                          int64_t cap, const ModelOptions &options) {
  DeviceLimits limits;
  MLIRContext *ctx = root.getContext();
  Location loc = root.getLoc();

  // Each kernel alone.
  std::vector<KernelAnalysis> analyses;
  for (const PartPlan &part : base.parts) {
    FailureOr<EntryOp> entry = findPartKernel(root, part, loc);
    if (failed(entry))
      return failure();
    analyses.emplace_back(*entry);
  }
  SmallVector<KernelKind> kinds;
  SmallVector<int64_t> aloneOccupancy;
  SmallVector<double> aloneTime;
  std::string ptxasError;
  for (auto [part, analysis, time] : llvm::zip(base.parts, analyses, timesMs)) {
    Resources alone = queryResources(analysis.getModule(), part.kernel,
                                     options, ptxasError);
    if (!alone.known)
      return emitError(loc) << "hfuse: strategy=auto needs ptxas's resource "
                               "report of '"
                            << part.kernel << "': " << ptxasError,
             failure();
    int64_t smem = alone.sharedBytes + std::max<int64_t>(part.dynamicSmem, 0);
    int64_t occ = limits.occupancy(part.getThreads(), alone.registers, smem);
    aloneOccupancy.push_back(std::max<int64_t>(occ, 1));
    kinds.push_back(classify(analysis));
    double waves = std::ceil(double(part.getBlocks()) /
                             double(aloneOccupancy.back() *
                                    limits.multiprocessors));
    aloneTime.push_back(time > 0 ? time : waves);
  }
  double gamma = overlapPenalty(kinds);
  double baseline = 0;
  for (double t : aloneTime)
    baseline += t;

  // The candidates.
  std::vector<FusionPlan> plans;
  auto addPlan = [&](FusionPlan plan) {
    for (const FusionPlan &p : plans)
      if (p.toAttr(ctx) == plan.toAttr(ctx))
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
    candidate.baselineMs = baseline;
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
    std::string error;
    Resources res = queryResources(*fused, plan.name, options, error);
    if (!res.known) {
      candidate.feasible = false;
      candidate.reason = "ptxas: " + error;
      return candidate;
    }
    ThreadLayout layout;
    {
      SmallVector<const KernelAnalysis *> ptrs;
      for (KernelAnalysis &a : analyses)
        ptrs.push_back(&a);
      layout = layoutThreads(plan, ptrs);
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
    int64_t period = 0;
    for (const PartPlan &part : plan.parts)
      period += part.ratio;
    double longest = 0, sum = 0;
    std::string shares;
    llvm::raw_string_ostream os(shares);
    for (auto [i, part] : llvm::enumerate(plan.parts)) {
      const PartPlan &original = base.parts[i];
      double residentBlocks =
          plan.strategy == FusionStrategy::Thread
              ? double(candidate.occupancy)
              : double(candidate.occupancy) * part.ratio / period;
      double share = residentBlocks * part.getThreads() /
                     (double(aloneOccupancy[i]) * original.getThreads());
      // A kernel keeps its speed down to half its warps alone (most are
      // saturated there), then slows with the square root of its share.
      double time = aloneTime[i] / std::sqrt(std::min(share / 0.5, 1.0));
      longest = std::max(longest, time);
      sum += time;
      os << (i ? ", " : "") << llvm::formatv("{0:f2}", std::min(share, 1.0));
    }
    double predicted = longest + gamma * (sum - longest);
    if (plan.strategy == FusionStrategy::Dynamic)
      predicted *= 1.01; // a ticket per block
    predicted *= 1.0 + double(candidate.spillBytes) / 256.0;
    candidate.predictedMs = predicted;
    candidate.explanation =
        llvm::formatv("kernels are {0}; fused block {1} threads, {2} "
                      "registers, {3} blocks/SM, warp shares vs alone {4}",
                      [&] {
                        std::string k;
                        for (auto [i, kind] : llvm::enumerate(kinds))
                          k += (i ? "+" : "") + stringifyKind(kind).str();
                        return k;
                      }(),
                      layout.blockThreads, candidate.registers,
                      candidate.occupancy, shares)
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
