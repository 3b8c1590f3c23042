//===- ProbeLowering.h - --probe-lower on one kernel ------------*- C++ -*-===//
//
// Shared by ProbeLower.cpp (points, slots, saves and record stores),
// ProbeExitFunction.cpp (exit-function outlining) and ProbeKeepOccupancy.cpp
// (which lowers a kernel again after another placement).
//
//===----------------------------------------------------------------------===//

#ifndef GPUOPT_LIB_TRANSFORMS_PROBE_PROBELOWERING_H
#define GPUOPT_LIB_TRANSFORMS_PROBE_PROBELOWERING_H

#include "gpuopt/Transforms/Probe/ProbeSteps.h"
#include "ptx/IR/PTXBuilder.h"

#include "llvm/ADT/StringSet.h"

namespace gpuopt::probe {

/// Lowers the probe ops --probe-insert put into kernels. Labels are numbered
/// across every kernel one ProbeLowering lowers, as they are named in
/// outputs.
class ProbeLowering {
public:
  /// A guard to call the exit function under (none: unguarded).
  struct ExitGuard {
    ptx::RegisterAttr reg;
    bool negated = false;
  };

  /// Lowers `entry`'s probe ops; the exit code goes into an exit function
  /// when `allowExitFunction` and the maps allow it.
  mlir::LogicalResult lower(ptx::EntryOp entry,
                            llvm::ArrayRef<CheckedProbe> probes,
                            bool allowExitFunction);
  /// The exit function the last lower() built, or "".
  llvm::StringRef getExitFunction() const { return exitFunction; }

private:
  /// A fresh label `$<probe prefix>STEM<n>`.
  std::string newLabel(llvm::StringRef stem);

  // Points (ProbeLower.cpp).
  void lowerEntry(ptx::ProbeOp op);
  void lowerInstructionProbe(ptx::ProbeOp op, ptx::InstOp inst, size_t site,
                             bool after);
  /// The exit code: prologue before `snippet` (at the end of `op` when it is
  /// empty), its saves lowered, epilogue at the end of `op`.
  void lowerExitPoint(ptx::ProbeOp op,
                      llvm::ArrayRef<mlir::Operation *> snippet);
  void lowerSave(ptx::PTXBuilder &pb, const SaveView &save);
  void emitSave(ptx::PTXBuilder &pb, const SaveView &save);
  /// The stores of one record: `values` (registers, in field order) at
  /// `map.addr + base`, and the `part` field of a fused kernel's record.
  /// Neighbouring fields of one size go into one vector store where the
  /// record's alignment allows: fewer instructions and memory requests in
  /// the kernel's own issue slots. A field that stays zero is still stored
  /// when the record has others: records with holes leave 32-byte sectors
  /// partly written, which cost more than the bytes saved (gmem_bytes
  /// storing 8 of its 16 bytes per thread: 1.13x instead of 1.07x on an
  /// H100).
  void emitRecordStores(ptx::PTXBuilder &pb, const MapLayout &map,
                        ptx::RegisterAttr guard, int64_t base,
                        llvm::ArrayRef<mlir::Attribute> values);
  /// The slot addresses (and writers, counters) of the maps computed at
  /// entry (`exitMaps` false) or at each exit.
  void emitSlots(ptx::PTXBuilder &pb, bool exitMaps);
  /// A dynamic map's slot, count and overflow addresses, from the capacity
  /// parameter (after the linear indices of emitSlots).
  void emitDynamicSlot(ptx::PTXBuilder &pb, const MapLayout &map);
  /// At an exit, before its first save: the carried maps' addresses.
  void reloadSlots(ptx::PTXBuilder &pb);
  /// At an exit, first: threads that write no record go to the exit.
  void skipNonWritersAtExit(ptx::PTXBuilder &pb);
  /// The probe registers, the slot computation's and each map's.
  void declareRegisters(ptx::PTXBuilder &pb);
  /// The first map of each buffer parameter (in the exit function, of
  /// those it takes: not the maps whose records stay zero). Maps in the
  /// kernel's last parameter share it.
  llvm::SmallVector<const MapLayout *>
  getBufferMaps(bool exitFunctionParams = false);
  /// The maps' buffer parameters, which the probe ops name (in the exit
  /// function, those it takes: not the maps whose records stay zero).
  mlir::ArrayAttr getBufferNames(bool exitFunctionParams = false);

  // Exits and the exit function (ProbeExitFunction.cpp).
  /// Lowers the exit probe ops, inline or through an exit function.
  mlir::LogicalResult lowerExits(ptx::EntryOp entry);
  /// The exit code can go into a function that each exit calls when every
  /// map is written at exits only, from registers: then the exit function
  /// computes the slot itself, and ptxas cannot keep the kernel's own
  /// %tid/%ctaid reads live to the exit for it. Decides, and chooses the
  /// registers passed (set before the exit, read at it) and those the
  /// function sets itself (constants).
  bool planExitFunction();
  /// Sets MapLayout::zeroRecords. Returns whether every map has zero
  /// records.
  bool findZeroRecordMaps();
  /// Probe registers set before the exits only by one unguarded
  /// `mov r, imm` at entry (no instruction point that matched writes it),
  /// with that instruction.
  llvm::StringMap<ptx::InstOp> findEntryConstants();
  /// `.func __pr_exit_<kernel>` (under the kernel's probe prefix) before the
  /// kernel: the exit code.
  void buildExitFunction(ptx::EntryOp entry);
  /// The call of the exit function at the builder, under `guard`.
  void emitExitCall(mlir::OpBuilder &builder, mlir::Location loc,
                    ExitGuard guard);
  /// Calls on every path to each exit (before the branches into a block
  /// that only returns, else before the exit) and at a body's end.
  void placeExitCalls(ptx::EntryOp entry, llvm::ArrayRef<ptx::InstOp> exits,
                      bool fallsOffEnd);

  llvm::ArrayRef<CheckedProbe> probes;
  /// The kernel's probe names (its plan's prefix).
  ProbeNames names;
  bool allowExitFunction = true;
  std::vector<MapLayout> maps;
  unsigned labelCounter = 0;
  bool exitSlotsPending = false;
  bool inExit = false;
  /// Where threads that write nothing at this exit go.
  std::string exitSkipLabel;
  /// A fused kernel: records name their part; with a replicated part, the
  /// copy of its block too.
  bool hasParts = false;
  bool hasCopies = false;
  /// --probe-insert's snippets, as it left them: at the entry (without its
  /// saves, which are lowered first) and at the first exit (every exit has
  /// the same).
  llvm::SmallVector<mlir::Operation *> entrySnippet, exitSnippet;
  /// --probe-insert's exit ops, in order; the last may be at the end of a
  /// body that falls off it.
  llvm::SmallVector<ptx::ProbeOp> exitProbes;
  /// Probe registers that inserted instruction snippets write.
  llvm::StringSet<> writtenAtInstructions;
  /// The exit function, its register arguments (register, .param type) and
  /// the entry instructions it repeats to set constants.
  std::string exitFunction;
  llvm::SmallVector<std::pair<std::string, std::string>> exitArgs;
  llvm::SmallVector<ptx::InstOp> exitConstants;
};

/// `.SPACE .TYPE NAME` (a probe variable or call argument).
void declareVariable(mlir::OpBuilder &builder, mlir::Location loc,
                     llvm::StringRef space, llvm::StringRef type,
                     llvm::StringRef name);
/// Adds the base names of the registers `operand` names to `names`.
void collectRegisters(mlir::Attribute operand, llvm::StringSet<> &names);
/// Adds the registers the snippet's instructions write to `written`.
void noteWrites(llvm::ArrayRef<mlir::Operation *> snippet,
                llvm::StringSet<> &written);

} // namespace gpuopt::probe

#endif // GPUOPT_LIB_TRANSFORMS_PROBE_PROBELOWERING_H
