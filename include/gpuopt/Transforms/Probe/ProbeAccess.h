//===- ProbeAccess.h - What a kernel instruction moves, and where -*- C++ -*-=//
//
// Instruction points: matching a kernel instruction against a spec's
// patterns, and the values of `{bytes}` and `{addr}` at it. --probe-plan
// (unmatched points), --probe-insert (where snippets go, and where they
// cannot) and --probe-lower (the placeholders' values) share them.
//
//===----------------------------------------------------------------------===//

#ifndef GPUOPT_TRANSFORMS_PROBE_PROBEACCESS_H
#define GPUOPT_TRANSFORMS_PROBE_PROBEACCESS_H

#include "gpuopt/Transforms/Probe/ProbeSpec.h"
#include "ptx/IR/PTX.h"

#include "llvm/ADT/StringMap.h"

namespace gpuopt::probe {

/// What a memory instruction moves (accessBytes).
struct AccessSize {
  /// An integer immediate or a 32-bit register; null when not known.
  mlir::Attribute bytes;
  /// cp.async's ignore-src predicate (`%p` or `!%p`): when it holds the copy
  /// reads nothing, so the size is 0.
  mlir::Attribute ignoreSrc;
};

/// Bytes a memory instruction moves, when known from its text: the type
/// size times the vector width (ld, st, atom, red); the size operand of a
/// bulk copy (cp.async.bulk, cp.reduce.async.bulk); for cp.async, the bytes
/// it reads from global memory: src-size when given (the rest of cp-size is
/// zero-filled: Triton's masked loads pass 0), cp-size otherwise, 0 when its
/// ignore-src predicate holds. Null otherwise (TMA tensor copies, whose size
/// is in the tensor map).
AccessSize accessBytes(ptx::InstOp inst,
                       llvm::function_ref<bool(ptx::RegisterAttr)> isPredicate);

/// Whether `inst` has the pattern's opcode and all of its modifiers.
bool matches(ptx::InstOp inst, const InstructionPattern &pattern);

/// The address an instruction accesses global memory at: its address
/// operand; for a copy between state spaces (`cp.async.shared.global`), the
/// one whose state space is global. Null if there is none.
ptx::AddressAttr accessAddress(ptx::InstOp inst);

/// The kernel's predicate registers (`%p<4>` declares %p0 to %p3), for
/// cp.async's ignore-src operand.
class PredicateRegisters {
public:
  explicit PredicateRegisters(ptx::EntryOp entry);
  bool contains(ptx::RegisterAttr reg) const;

private:
  llvm::StringMap<int64_t> predicates;
};

} // namespace gpuopt::probe

#endif // GPUOPT_TRANSFORMS_PROBE_PROBEACCESS_H
