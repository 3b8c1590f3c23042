//===- PTXOpcodes.h - What gpu-opt knows about PTX opcodes ------*- C++ -*-===//
//
// The table of PTX opcodes (PTX ISA 9.0): for each opcode base (`ld`, `mma`),
// the state spaces it takes, the other modifiers it takes, and a coarse class
// of its effects. The statement parser checks instructions against it, so
// that PTX ptxas would reject (`ld.glubal`, `.reg .b33`) is refused at import
// instead of being missed by the analyses that match on modifiers; analyses
// treat opcodes missing from it (a newer PTX ISA) conservatively.
//
//===----------------------------------------------------------------------===//

#ifndef GPUOPT_DIALECT_PTX_IR_PTXOPCODES_H
#define GPUOPT_DIALECT_PTX_IR_PTXOPCODES_H

#include "llvm/ADT/ArrayRef.h"
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
  AllEffects = 0x7,
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
};

/// The table entry of an opcode base, or null when gpu-opt does not know it.
const OpcodeInfo *lookupOpcode(llvm::StringRef base);

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
