//===- KernelAnalysis.h - What a kernel assumes about its launch -*- C++
//-*-===//
//
// One analysis of a `ptx.entry` and the device functions it calls, shared by
// horizontal fusion and probes: the launch contract (block shape), which
// special registers the code reads, its barriers (form, id, thread count),
// mbarrier objects, exits, shared memory, parameters, and the features that
// make a kernel unsafe to fuse or to probe (grid-wide synchronisation,
// clusters, dynamic parallelism, hardware warp ids).
//
// It is an MLIR analysis: `getAnalysis<KernelAnalysis>()` on a ptx.entry.
//
//===----------------------------------------------------------------------===//

#ifndef GPUOPT_ANALYSIS_KERNELANALYSIS_H
#define GPUOPT_ANALYSIS_KERNELANALYSIS_H

#include "gpuopt/Analysis/EarlyExit.h"
#include "ptx/IR/PTX.h"

#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringSet.h"

#include <array>
#include <optional>

namespace gpuopt {

using Dim3 = std::array<int64_t, 3>;

/// A CTA-level barrier instruction (`bar`, `bar.sync`, `barrier.sync`,
/// `bar.arrive`, `bar.red`, `barrier.cta.*`), with where its id and thread
/// count sit among the operands.
struct BarrierUse {
  enum class Kind { Sync, Arrive, Reduce };
  ptx::InstOp op;
  Kind kind = Kind::Sync;
  /// Operand index of the barrier id, and its value when it is a constant.
  unsigned idOperand = 0;
  std::optional<int64_t> id;
  /// Operand index of the thread count, or -1 when the instruction has none
  /// (then every thread of the CTA takes part).
  int countOperand = -1;
  std::optional<int64_t> count;
  /// True when the id or count is a register, not an immediate.
  bool dynamicId = false, dynamicCount = false;
};

/// An `mbarrier.init` with its expected arrival count when constant.
struct MbarrierInit {
  ptx::InstOp op;
  std::optional<int64_t> count;
};

/// A `ret`, `exit` or `trap`: in the kernel body, or in a device function it
/// calls (where `ret` returns to the caller and only `exit`/`trap` end the
/// thread).
struct ExitUse {
  enum class Kind { Ret, Exit, Trap };
  ptx::InstOp op;
  Kind kind = Kind::Ret;
  bool inDeviceFunction = false;
};

/// Why a kernel may compute something else in a 1-D block of another size:
/// the instruction (or the entry) that shows it, and the reason.
struct ResizeBlocker {
  mlir::Operation *op;
  std::string reason;
};

class KernelAnalysis {
public:
  explicit KernelAnalysis(mlir::Operation *entryOp);

  ptx::EntryOp getEntry() const { return entry; }
  ptx::PTXModuleOp getModule() const { return module; }

  /// Device functions reachable from the kernel through direct calls.
  llvm::ArrayRef<ptx::FuncOp> getCallees() const {
    return callees.getArrayRef();
  }
  /// External functions it calls (`.extern .func`, declarations).
  const llvm::StringSet<> &getExternalCallees() const {
    return externalCallees;
  }
  bool hasIndirectCalls() const { return indirectCalls; }

  /// `.reqntid`, when the kernel fixes its block shape.
  std::optional<Dim3> getRequiredBlock() const { return requiredBlock; }
  /// `.maxntid`: only an upper bound.
  std::optional<Dim3> getMaxBlock() const { return maxBlock; }

  /// Special registers read anywhere in the kernel or its callees, without
  /// the `%` (`tid.x`, `ctaid.y`, `laneid`, `clock64`).
  const llvm::StringSet<> &getSpecialRegisters() const { return sregs; }
  bool usesSpecialRegister(llvm::StringRef name) const {
    return sregs.contains(name);
  }
  /// True when some special register whose name starts with `prefix` is read.
  bool usesSpecialRegisterPrefix(llvm::StringRef prefix) const;
  /// Special registers read by the instructions of `function` only.
  llvm::StringSet<> getSpecialRegistersOf(mlir::Operation *function) const;

  llvm::ArrayRef<BarrierUse> getBarriers() const { return barriers; }
  /// The largest constant barrier id used, or -1 without barriers.
  int64_t getMaxBarrierId() const;
  bool hasDynamicBarrierIds() const;
  llvm::ArrayRef<MbarrierInit> getMbarrierInits() const { return mbarriers; }
  llvm::ArrayRef<ExitUse> getExits() const { return exits; }

  /// Module-scope `.shared` variables the kernel (or a callee) uses, split
  /// into static arrays and `.extern .shared` (dynamic) arrays.
  llvm::ArrayRef<ptx::GlobalOp> getStaticShared() const {
    return staticShared.getArrayRef();
  }
  llvm::ArrayRef<ptx::GlobalOp> getDynamicShared() const {
    return dynamicShared.getArrayRef();
  }
  /// Bytes of static `.shared` declared at module scope and used by the
  /// kernel, plus function-scope `.shared` variables.
  uint64_t getStaticSharedBytes() const { return staticSharedBytes; }
  /// The largest alignment among the dynamic shared arrays (at least 16).
  uint64_t getDynamicSharedAlign() const { return dynamicSharedAlign; }
  /// All module-scope symbols the kernel and its callees reference.
  const llvm::SetVector<mlir::Operation *> &getUsedGlobals() const {
    return usedGlobals;
  }

  /// Features that fusion and probes must know about.
  bool usesWarpgroupInstructions() const { return warpgroup; }
  llvm::ArrayRef<ptx::InstOp> getSetmaxnreg() const { return setmaxnreg; }
  bool usesClusters() const { return clusters; }
  /// `%envreg` reads: cooperative launches (grid.sync) use them.
  bool usesGridSync() const { return gridSync; }
  bool usesDynamicParallelism() const { return dynamicParallelism; }
  bool usesTMA() const { return tma; }
  /// Opcodes missing from the opcode table (newer PTX), in first-use order.
  /// Each may touch memory, synchronise or branch: each counts as a global
  /// memory instruction and makes the kernel a fusion hazard.
  llvm::ArrayRef<llvm::StringRef> getUnknownOpcodes() const {
    return unknownOpcodes.getArrayRef();
  }

  /// Static instruction counts, for cost models.
  unsigned getInstructionCount() const { return numInstructions; }
  unsigned getGlobalMemoryInstructionCount() const { return numGlobalMemory; }
  unsigned getTensorInstructionCount() const { return numTensor; }

  /// The first reason this kernel cannot be split by thread ranges or run
  /// in a block of another shape, or "" (grid sync, clusters, dynamic
  /// parallelism, `%warpid`/`%nwarpid`, register barrier ids, `exit` in a
  /// device function, indirect calls, opcodes gpu-opt does not know).
  std::string getFusionHazard() const;

  /// Whether a thread split may run this kernel in a 1-D block of another
  /// size over the same grid: std::nullopt when its results provably depend
  /// on the block only through `%ntid.x` (grid- or block-stride loops over
  /// global memory), else the first reason they may not (`.reqntid`, y/z
  /// thread indices, counted barriers, mbarrier arrival counts, partial warp
  /// masks, shared memory with thread indexing, no `%ntid.x`, no loop that
  /// steps a thread index by it, thread-indexed addresses or stored values
  /// outside such loops). Conservative: what cannot be shown is a blocker.
  std::optional<ResizeBlocker> getResizeBlocker() const;
  bool isResizable() const { return !getResizeBlocker(); }

  /// Where some threads may leave the kernel while others of their block
  /// may still wait at a CTA barrier (EarlyExit.h), or std::nullopt. Such
  /// a kernel relies on exited threads counting as arrived, which a part of
  /// a fused block whose barriers wait for a thread count does not give.
  const std::optional<EarlyExit> &getEarlyExit() const;

private:
  void analyzeFunction(mlir::Operation *function, bool isEntry);
  void analyzeInstruction(ptx::InstOp inst, bool inDeviceFunction);
  void noteSymbol(llvm::StringRef name);

  ptx::EntryOp entry;
  ptx::PTXModuleOp module;
  llvm::SetVector<ptx::FuncOp> callees;
  llvm::StringSet<> externalCallees;
  bool indirectCalls = false;
  std::optional<Dim3> requiredBlock, maxBlock;
  llvm::StringSet<> sregs;
  llvm::SmallVector<BarrierUse> barriers;
  llvm::SmallVector<MbarrierInit> mbarriers;
  llvm::SmallVector<ExitUse> exits;
  llvm::SetVector<ptx::GlobalOp> staticShared, dynamicShared;
  llvm::SetVector<mlir::Operation *> usedGlobals;
  uint64_t staticSharedBytes = 0;
  uint64_t dynamicSharedAlign = 16;
  bool warpgroup = false, clusters = false, gridSync = false,
       dynamicParallelism = false, tma = false;
  llvm::SmallVector<ptx::InstOp> setmaxnreg;
  llvm::SetVector<llvm::StringRef> unknownOpcodes;
  unsigned numInstructions = 0, numGlobalMemory = 0, numTensor = 0;
  /// getEarlyExit's answer, computed on first use.
  mutable std::optional<std::optional<EarlyExit>> earlyExit;
};

using ptx::mapOperandLeaves;
using ptx::walkOperandLeaves;

} // namespace gpuopt

#endif // GPUOPT_ANALYSIS_KERNELANALYSIS_H
