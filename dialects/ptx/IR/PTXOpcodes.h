//===- PTXOpcodes.h - What gpu-opt knows about PTX opcodes ------*- C++ -*-===//
//
// The table of PTX opcodes (PTX ISA 9.0): for each opcode base (`ld`, `mma`),
// the state spaces it takes, the other modifiers it takes, a coarse class of
// its effects, which operand it writes and the kind that passes single out. The
// statement parser checks instructions against it, so that PTX ptxas would
// reject (`ld.glubal`, `.reg .b33`) is refused at import instead of being
// missed by the analyses that match on modifiers; analyses treat opcodes
// missing from it (a newer PTX ISA) conservatively.
//
//===----------------------------------------------------------------------===//

#ifndef GPUOPT_DIALECT_PTX_IR_PTXOPCODES_H
#define GPUOPT_DIALECT_PTX_IR_PTXOPCODES_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <optional>
#include <string>

namespace gpuopt::ptx {

/// State spaces as instruction modifiers, one bit per group that the ISA
/// allows or refuses together (`.shared` and `.shared::cta` are one).
enum StateSpaceBits : uint8_t {
  NoSpace = 0,
  GlobalSpace = 1 << 0,
  SharedSpace = 1 << 1,  // .shared, .shared::cta
  ClusterSpace = 1 << 2, // .shared::cluster
  LocalSpace = 1 << 3,
  ConstSpace = 1 << 4,
  ParamSpace = 1 << 5, // .param, .param::entry, .param::func
};

/// A coarse class of what an opcode does, for analyses that must not miss an
/// effect; an opcode outside the table has all of them.
enum OpcodeEffectBits : uint8_t {
  NoEffect = 0,
  MemoryEffect = 1 << 0,  // reads or writes memory (any state space)
  SyncEffect = 1 << 1,    // barrier, fence, or a collective of a warp or more
  ControlEffect = 1 << 2, // branches, calls, returns or ends the thread
  /// Reads or writes thread state besides registers and memory: the carry
  /// flag (addc), the stack pointer (stacksave), the clock (nanosleep),
  /// performance counters (pmevent), texture, surface or cache-policy
  /// handles (txq, createpolicy).
  StateEffect = 1 << 3,
  AllEffects = 0xf,
};

/// Which operand an instruction writes. Operands are read unless the role
/// names them; memory operands (`[addr]`) are never registers written.
enum class DefRole : uint8_t {
  /// Operand 0: a register, a vector `{%r1, %r2}` or a pair `%p|%q` (every
  /// computing instruction, `ld`, `atom`'s old value, `mma`'s accumulators).
  First,
  /// None: stores, reductions, branches, fences, `nanosleep %r`.
  None,
  /// Operand 0 only with the `.red` modifier (`bar.red.popc.u32 %r1, 0, %p`).
  FirstIfRed,
  /// The parenthesised results of `call (%r1), f, (%r2)`, operand 0 when it
  /// is a list.
  CallResults,
};

/// The few kinds of instruction that passes and analyses single out; each
/// names the opcodes of one kind, so a pass asks the table, not a string.
enum class OpcodeKind : uint8_t {
  Other,
  Load,       // ld, ldu
  Store,      // st
  Atomic,     // atom
  Reduction,  // red
  Barrier,    // bar, barrier (CTA, warp or cluster; see the modifiers)
  Branch,     // bra, brx
  Call,       // call
  Return,     // ret
  Exit,       // exit
  Trap,       // trap
  Mbarrier,   // mbarrier
  TensorCore, // mma, wmma, wgmma
  AsyncCopy,  // cp (async, bulk, tensor copies)
  /// Collectives over a member mask of a warp's lanes, the mask last:
  /// shfl, vote, match, redux, elect.
  WarpCollective,
};

struct OpcodeInfo {
  /// The opcode base, without modifiers: `ld`, `cp`, `mbarrier`.
  llvm::StringRef name;
  /// StateSpaceBits this opcode takes as a modifier.
  uint8_t spaces;
  /// OpcodeEffectBits.
  uint8_t effects;
  /// The modifiers it takes besides types and state spaces, separated by
  /// spaces; null for families whose modifiers combine into too many forms
  /// to list (`mma`, `wgmma`, `tcgen05`, `cp`): those are checked against
  /// the vocabulary of all PTX modifiers instead.
  const char *modifiers;
  /// The operand it writes.
  DefRole defs = DefRole::First;
  OpcodeKind kind = OpcodeKind::Other;

  bool is(OpcodeKind k) const { return kind == k; }
  bool hasEffect(OpcodeEffectBits bit) const { return effects & bit; }
};

/// The table entry of an opcode base, or null when gpu-opt does not know it.
const OpcodeInfo *lookupOpcode(llvm::StringRef base);

/// The kind of an opcode base; Other for opcodes outside the table.
OpcodeKind getOpcodeKind(llvm::StringRef base);

/// The index of the operand an instruction writes, or nullopt when it writes
/// none. `hasModifier` answers for its modifiers (without dots); operands
/// past `numOperands` do not exist. An opcode outside the table is taken to
/// write its operand 0, as most instructions do.
std::optional<unsigned>
getDefinedOperand(const OpcodeInfo *info, unsigned numOperands,
                  llvm::function_ref<bool(llvm::StringRef)> hasModifier);

/// Whether `name` (without the dot) is a PTX type an instruction may name:
/// `b32`, `f16x2`, `e4m3`, `pred`.
bool isInstructionType(llvm::StringRef name);

/// The StateSpaceBits of a state space (without the dot), or NoSpace.
uint8_t getStateSpaceBit(llvm::StringRef name);

/// A modifier of an instruction that the table refuses, with the message.
struct ModifierError {
  /// Index into the modifiers that were checked.
  unsigned index;
  std::string message;
};

/// Checks the modifiers (without dots) of an instruction whose opcode is
/// `info`; returns the first one that ptxas would refuse.
std::optional<ModifierError>
checkModifiers(const OpcodeInfo &info,
               llvm::ArrayRef<llvm::StringRef> modifiers);

/// Checks the type (with its dot) of a declaration in `space` (`.reg`,
/// `.param`, `.global`, ...); returns the message when ptxas would refuse it.
std::optional<std::string> checkDeclarationType(llvm::StringRef type,
                                                llvm::StringRef space);

/// Checks a state space (with its dot) written after `.ptr` in a parameter.
std::optional<std::string> checkPointerSpace(llvm::StringRef space);

} // namespace gpuopt::ptx

#endif // GPUOPT_DIALECT_PTX_IR_PTXOPCODES_H
