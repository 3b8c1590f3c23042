//===- FusionModel.h - Predict which fusion wins ----------------*- C++ -*-===//
//
// The cost model behind `--hfuse-plan strategy=auto`: every candidate
// (strategy x split x ratio x register cap) is built, ptxas reports its
// registers, spills and shared memory, and an occupancy and wave model
// predicts its time from each kernel's time alone. docs/fusion.md explains
// the model; the search tool measures the top candidates.
//
//===----------------------------------------------------------------------===//

#ifndef GPUOPT_TRANSFORMS_HFUSE_FUSIONMODEL_H
#define GPUOPT_TRANSFORMS_HFUSE_FUSIONMODEL_H

#include "gpuopt/Transforms/HFuse/DeviceLimits.h"
#include "gpuopt/Transforms/HFuse/FusionPlan.h"

namespace gpuopt::hfuse {

struct ModelOptions {
  std::string chip;
  std::string ptxas;
  /// The GPU's limits, from its driver (measure= with a GPU); else the
  /// model takes the chip's row of the chip table (getDeviceLimits).
  std::optional<DeviceLimits> limits;
  /// Where errors about the kernels as a whole go (the config, the kernels=
  /// option); the root's location when unset.
  std::optional<mlir::Location> loc;
};

/// One kernel alone, from a `gpu-run --json` profile: its time at its own
/// occupancy and, with `--occupancy-sweep`, at fewer blocks per SM.
struct KernelProfile {
  /// Median time alone; < 0 when unknown.
  double timeMs = -1;
  /// Bytes it reads and writes in global memory (the profile's "bytes");
  /// < 0 when unknown.
  double bytes = -1;
  /// Blocks per SM alone (the driver's count); 0 when unknown.
  int64_t blocksPerSM = 0;
  /// (blocks per SM, ms) measured below blocksPerSM, ascending.
  std::vector<std::pair<int64_t, double>> sweep;
};

/// The model's constants (docs/fusion.md, "Choosing"). Unless a comment says
/// otherwise, each was fitted on the fusion suite's H100 measurements
/// (docs/results/fusion-h100.md and occupancy-h100.json), the same pairs
/// those results report; none is validated on other kernels.
namespace model {
/// gamma (the share of the shorter parts' time not hidden) by kinds. Memory +
/// compute: ethash_like with the hash kernels (interleave 1.26-1.34x).
inline constexpr double GammaMemoryCompute = 0.2;
/// Memory + tensor, and compute + tensor: a software-pipelined attention
/// decode (0.444 ms) beside a prefill (0.297 ms) ran 0.580 ms by thread
/// split: (0.580 - 0.444) / 0.297 = 0.46; with the parts' times at the
/// fused occupancy it still declines gemm_mma + ethash_like (0.86x).
inline constexpr double GammaTensor = 0.5;
/// Two memory-bound kernels: the suite's three memory + memory pairs that
/// gain (im2col + batchnorm_stats, upsample_bilinear + histogram, Triton
/// softmax + layernorm, 1.09-1.16x) overlap with gamma 0.41-0.72.
inline constexpr double GammaMemoryMemory = 0.6;
/// Two compute-bound (or two tensor) kernels: the hash pairs (0.97-1.01x).
inline constexpr double GammaSameKind = 0.85;
/// What a dynamic or sm_aware ticket adds to a fused block's duration, in
/// ms: dynamic against interleave at the same ratio on the suite's DL pairs
/// is slower by 0.5-0.9 us per fused block and slot (median 0.6).
inline constexpr double TicketMs = 0.6e-3;
/// sm_aware dispatch takes a per-SM and a per-kernel ticket: on an H100
/// (benchmarks/fusion/dispatch_cost.py, docs/results/dispatch-cost-h100.json)
/// it cost 1.26-1.37x dynamic's extra time over interleave at one unit
/// (4.02 vs 3.18 us on the tiny pair, 50.3 vs 36.8 us on the short one), so
/// 1.3x dynamic's ticket.
inline constexpr double SMAwareTicketMs = 1.3 * TicketMs;
/// Apart, the second kernel of two starts this long after the first (ms):
/// the gpu-dialect example's 3-4 us kernels did not overlap at all on two
/// streams (docs/results/gpu-dialect-h100.md), the suite's 0.1-0.3 ms ones
/// did (batchnorm_stats beside upsample_bilinear or histogram).
inline constexpr double LaunchGapMs = 0.005;
/// Without times (waves mode), one wave of a kernel stands for this many ms
/// in the ticket cost: the median over the suite's 15 kernels of time alone
/// over waves.
inline constexpr double AssumedWaveMs = 0.046;
/// Without a sweep, a kernel below its own k0 blocks per SM takes
/// t * (k0 / k)^p: p fitted (least squares in logs) on the suite's sweeps,
/// the median per kind: memory 0.55, compute 0.10, tensor 0.33.
inline constexpr double SlowdownMemory = 0.55;
inline constexpr double SlowdownCompute = 0.10;
inline constexpr double SlowdownTensor = 0.33;
/// A kernel whose profile gives the bytes it moves is memory-bound when it
/// moves them at least this fast (GB/s; an H100 reaches about 3000): the
/// suite's memory-bound kernels move 500-2900, its hash kernels ~0.
inline constexpr double MemoryBoundGBs = 400;
} // namespace model

/// What kind of throughput a kernel is limited by.
enum class KernelKind { Memory, Compute, Tensor };
llvm::StringRef stringifyKernelKind(KernelKind kind);
/// Tensor with mma/wgmma instructions; else, when `bytes` and `timeMs` are
/// known (profile), memory if it moves them at model::MemoryBoundGBs or
/// more, compute otherwise; else from the static mix (2% of instructions
/// access global memory).
KernelKind classifyKernel(const KernelAnalysis &analysis, double timeMs = -1,
                          double bytes = -1);
/// gamma for parts of these kinds (model::Gamma*).
double getOverlapPenalty(llvm::ArrayRef<KernelKind> kinds);

/// A kernel alone as the model sees it.
struct KernelTimes {
  /// Time alone (ms, or waves), at blocksPerSM of its blocks per SM.
  double timeMs = 0;
  int64_t blocksPerSM = 1;
  /// Its grid (blocks), on a GPU of `multiprocessors` SMs: with fewer
  /// blocks than a wave, all of them run at blocks / multiprocessors per SM.
  int64_t blocks = 1;
  int64_t multiprocessors = 132;
  /// Blocks per SM at which all of its work is resident: blocks /
  /// multiprocessors when 0; a resized kernel keeps its own work's.
  double allResidentPerSM = 0;
  /// Blocks per SM from which it runs at its time alone: blocksPerSM when
  /// 0; a resized kernel's, unrounded.
  double fullSpeedPerSM = 0;
  KernelKind kind = KernelKind::Memory;
  /// (blocks per SM, ms) below blocksPerSM, ascending.
  llvm::SmallVector<std::pair<double, double>, 8> sweep;

  /// The time with `k` blocks resident per SM: the sweep, interpolated,
  /// time growing as 1/k below its lowest point; without one,
  /// t * (blocksPerSM / k)^p, p by kind (model::Slowdown*). Alone speed
  /// from blocksPerSM up, or once every block is resident.
  double timeAt(double k) const;
  /// How long one block takes alone: the time over the number of waves.
  double blockMs(int64_t multiprocessors) const;
  /// The same kernel run with `threads` per block instead of `ownThreads`
  /// over `blocks` blocks (a grid- or block-stride kernel): per SM it needs
  /// as many threads as before for the same speed.
  KernelTimes resized(int64_t ownThreads, int64_t threads,
                      int64_t newBlocks) const;
};

/// A thread split at `occupancy` fused blocks per SM: every part gets that
/// many of its blocks per SM, and a fused block lives as long as its
/// slowest part.
double predictThreadSplit(llvm::ArrayRef<KernelTimes> parts, int64_t occupancy,
                          int64_t multiprocessors);
/// Interleave, dynamic, sm_aware: the parts share `occupancy` slots per SM in
/// proportion to ratio x block duration, a part never holding more slots
/// than it has blocks, until one ends; then the rest share all of them.
double predictBlockLevel(llvm::ArrayRef<KernelTimes> parts,
                         llvm::ArrayRef<int64_t> ratio, int64_t occupancy,
                         int64_t multiprocessors);
/// The kernels apart, launched in order without waiting for each other (two
/// streams, a CUDA graph): the sum of their times, except that a first
/// kernel with less than a wave of blocks leaves its free slots to the
/// second from model::LaunchGapMs on. In waves (`timed` false) the sum.
double predictApart(llvm::ArrayRef<KernelTimes> kernels,
                    int64_t multiprocessors, bool timed = true);
/// What dynamic or sm_aware dispatch adds to `plan` at `occupancy` fused
/// blocks per SM: a ticket's latency per fused block and slot (in waves of
/// model::AssumedWaveMs when `timed` is false); 0 for other strategies.
double getDispatchCost(const FusionPlan &plan, int64_t occupancy,
                       int64_t multiprocessors, bool timed);
/// A balanced thread split: for the parts that may be resized, thread counts
/// in 32-thread steps (the others keep `threads[i]`), at most 1024 in all,
/// that minimize the predicted thread split, i.e. make the parts finish
/// together, at the occupancy a fused block of `registers` per thread and
/// `sharedBytes` allows. `parts` are the kernels at their own threads,
/// `threads[i]` their own block; empty when no split fits.
llvm::SmallVector<int64_t> balanceThreadSplit(llvm::ArrayRef<KernelTimes> parts,
                                              llvm::ArrayRef<int64_t> threads,
                                              llvm::ArrayRef<bool> resizable,
                                              int64_t registers,
                                              int64_t sharedBytes,
                                              const DeviceLimits &limits);

struct Candidate {
  FusionPlan plan;
  bool feasible = true;
  /// Why it cannot be built, when not feasible.
  std::string reason;
  int64_t registers = 0, sharedBytes = 0, spillBytes = 0, occupancy = 0;
  double predictedMs = 0, baselineMs = 0;
  /// What predictedMs and baselineMs count: "ms" when every kernel has a
  /// time alone, "waves" (each kernel's number of waves) when none has.
  std::string unit = "ms";
  std::string explanation;
  /// Where the candidate comes from when not from the fixed list (e.g.
  /// "balanced split"); empty otherwise.
  std::string origin;
  /// Per part: whether the split runs it with other threads than its block.
  /// options() then marks it resizable, so that replaying them (hfuse_search)
  /// builds the same kernel; auto resizes only kernels the analysis shows
  /// resizable or the user marked.
  llvm::SmallVector<bool> resized;

  /// "thread split 256+128, maxnreg 64", "interleave 3:1".
  std::string describe() const;
  /// The `--hfuse` options that build it (with blocks/grids given apart).
  std::string options() const;
};

/// Builds and predicts every candidate around `base` (whose parts have their
/// blocks, grids and a fitted ratio). `resizable[i]` allows other splits of
/// kernel i; `profiles[i]` is what is known of kernel i alone (without a
/// time, its number of waves stands in); `cap >= 0` fixes the register cap.
/// Sorted by predicted time.
mlir::FailureOr<std::vector<Candidate>>
evaluateCandidates(mlir::ModuleOp root, const FusionPlan &base,
                   llvm::ArrayRef<bool> resizable,
                   llvm::ArrayRef<KernelProfile> profiles, int64_t cap,
                   const ModelOptions &options);

/// For a plan the user chose (no model): builds it on a copy of `root` and
/// asks ptxas to assemble it. When ptxas rejects the fused kernel but not the
/// kernels alone, emits an error at `loc` that names the registers each
/// kernel needs and what the fused block allows, and fails. Returns whether
/// ptxas checked the plan: false when there is no ptxas, or when it rejects
/// a kernel alone too (then a warning says so).
mlir::FailureOr<bool> checkPlanWithPtxas(mlir::ModuleOp root,
                                         const FusionPlan &plan,
                                         const ModelOptions &options,
                                         mlir::Location loc);

/// Writes the candidates as a JSON array to `path`.
mlir::LogicalResult writeCandidates(llvm::ArrayRef<Candidate> candidates,
                                    llvm::StringRef path, mlir::Location loc);

} // namespace gpuopt::hfuse

#endif // GPUOPT_TRANSFORMS_HFUSE_FUSIONMODEL_H
