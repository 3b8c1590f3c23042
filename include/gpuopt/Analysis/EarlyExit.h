//===- EarlyExit.h - Threads that leave before their block's barrier -----===//
//
// A thread that has exited counts as arrived at every later full-block
// barrier (`bar.sync 0`, `__syncthreads()`), so a kernel may let some of its
// threads `ret` while the others still synchronise:
//
//   if (threadIdx.x >= active) return;
//   ...
//   __syncthreads();
//
// Once such a kernel runs in part of a fused block, its barriers wait for a
// thread count and the threads that left never arrive. This analysis finds
// the kernels where that may happen: a branch whose threads may go different
// ways (its predicate may differ between the threads of a block), one way
// leading to an exit with no barrier on the way, another to a barrier.
//
// Divergence is a taint from the thread's own special registers (%tid,
// %laneid, %clock, ...), from every value read from memory that another
// thread may write (loads other than of the kernel's parameters and of
// constant or read-only memory at a block-uniform address), from atomics,
// warp collectives and calls, and from control: a register written under a
// divergent branch (up to the branch's post-dominator) diverges too. What
// cannot be shown uniform is divergent, so the analysis may report an early
// exit that never happens, never miss one.
//
//===----------------------------------------------------------------------===//

#ifndef GPUOPT_ANALYSIS_EARLYEXIT_H
#define GPUOPT_ANALYSIS_EARLYEXIT_H

#include "ptx/IR/PTX.h"

#include "llvm/ADT/STLFunctionalExtras.h"

#include <optional>
#include <string>

namespace gpuopt {

/// Where some threads of a block may leave a kernel while others of the same
/// block may still wait at a barrier.
struct EarlyExit {
  /// The `ret` or `exit` the leaving threads reach with no barrier on the
  /// way.
  ptx::InstOp exit;
  /// Where they part from the others: a conditional branch, a guarded
  /// `ret`/`exit`/barrier, a barrier reached under divergent control, or an
  /// indirect branch (whose targets the analysis does not follow).
  ptx::InstOp divergence;
  /// A barrier (or a call of a device function with one) the others may
  /// still reach.
  ptx::InstOp barrier;

  /// "threads leaving at 'ret' (line 12) part at '@%p1 bra' (line 8) from
  /// threads that go on to 'bar.sync' (line 20)".
  std::string describe() const;
};

/// Finds an early exit in `entry`, or std::nullopt when every thread that
/// leaves the kernel has passed every barrier the others of its block may
/// still reach. `isBarrier` says which instructions wait for the block: CTA
/// barriers that wait (`bar.sync`, `barrier.sync`, `bar.red`), and calls of
/// device functions that contain one.
std::optional<EarlyExit>
findEarlyExit(ptx::EntryOp entry,
              llvm::function_ref<bool(ptx::InstOp)> isBarrier);

} // namespace gpuopt

#endif // GPUOPT_ANALYSIS_EARLYEXIT_H
