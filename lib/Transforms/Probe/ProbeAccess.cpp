//===- ProbeAccess.cpp - What a kernel instruction moves, and where -------===//
//
// Instruction points: which instructions a pattern matches, and what the
// named operands stand for at one: the bytes it moves and the global address
// it accesses.
//
//===----------------------------------------------------------------------===//

#include "gpuopt/Transforms/Probe/ProbeAccess.h"
#include "ptx/IR/PTXParser.h"

#include "llvm/ADT/STLExtras.h"

using namespace mlir;
using namespace gpuopt;
using namespace gpuopt::ptx;
using namespace gpuopt::probe;

/// Bytes a memory instruction moves, when known from its text: the type
/// size times the vector width (ld, st, atom, red); the size operand of a
/// bulk copy (cp.async.bulk, cp.reduce.async.bulk); for cp.async, the bytes
/// it reads from global memory: src-size when given (the rest of cp-size is
/// zero-filled: Triton's masked loads pass 0), cp-size otherwise, 0 when its
/// ignore-src predicate holds. Null otherwise (TMA tensor copies, whose size
/// is in the tensor map).
AccessSize probe::accessBytes(InstOp inst,
                              function_ref<bool(RegisterAttr)> isPredicate) {
  MLIRContext *ctx = inst.getContext();
  StringRef opcode = inst.getOpcode();
  ArrayAttr operands = inst.getPtxOperandsAttr();
  if (opcode == "cp" || opcode == "cp.async") {
    if (inst.hasModifier("tensor") || operands.size() < 3)
      return {};
    // cp.async.bulk.<dst>.<src>... [dst], [src], size, ...
    if (inst.hasModifier("bulk"))
      return {operands[2], {}};
    // cp.async.{ca,cg}.shared.global [dst], [src], cp-size
    //     {, src-size | , ignore-src}{, cache-policy}
    size_t optional = operands.size() - 3;
    if (inst.hasModifier("L2::cache_hint") && optional)
      --optional;
    if (!optional)
      return {operands[2], {}};
    Attribute source = operands[3];
    auto reg = dyn_cast<RegisterAttr>(source);
    if (isa<NotAttr>(source) || (reg && isPredicate(reg)))
      return {operands[2], source};
    return {source, {}};
  }
  int64_t vector = 1, type = 0;
  for (Attribute m : inst.getModifiers()) {
    StringRef mod = cast<StringAttr>(m).getValue();
    if (mod == "v2")
      vector = 2;
    else if (mod == "v4")
      vector = 4;
    else if (mod == "v8")
      vector = 8;
    else if (uint64_t size = getTypeSize(("." + mod).str()))
      type = size;
  }
  if (!type)
    return {};
  return {IntImmAttr::get(ctx, type * vector, false), {}};
}

bool probe::matches(InstOp inst, const InstructionPattern &pattern) {
  if (inst.getOpcode() != pattern.opcode)
    return false;
  // cp.async's group and mbarrier forms move no data; a prefetch moves it
  // into L2 only, for no thread.
  if (inst.getOpcode() == "cp" &&
      llvm::any_of(ArrayRef<StringRef>{"commit_group", "wait_group", "wait_all",
                                       "mbarrier", "prefetch"},
                   [&](StringRef m) {
                     return inst.hasModifier(m) &&
                            !llvm::is_contained(pattern.modifiers, m.str());
                   }))
    return false;
  return llvm::all_of(pattern.modifiers, [&](const std::string &m) {
    return inst.hasModifier(m);
  });
}

/// The address an instruction accesses global memory at: its address
/// operand; for a copy between state spaces (`cp.async.shared.global`), the
/// one whose state space is global. Null if there is none.
AddressAttr probe::accessAddress(InstOp inst) {
  SmallVector<AddressAttr> addresses;
  for (Attribute operand : inst.getPtxOperands())
    if (auto address = dyn_cast<AddressAttr>(operand))
      addresses.push_back(address);
  if (addresses.empty())
    return {};
  if (inst.getOpcode() != "cp")
    return addresses.front();
  // cp.<kind>.<dst space>.<src space>: the addresses come in that order.
  unsigned space = 0;
  for (Attribute m : inst.getModifiers()) {
    StringRef mod = cast<StringAttr>(m).getValue();
    if (mod == "global")
      return space < addresses.size() ? addresses[space] : AddressAttr();
    if (mod.starts_with("shared") || mod == "local" || mod == "param" ||
        mod == "const")
      ++space;
  }
  return {};
}

PredicateRegisters::PredicateRegisters(EntryOp entry) {
  entry.walk([&](RegOp reg) {
    if (reg.getType() == ".pred")
      predicates[reg.getName()] =
          reg.getCount() ? int64_t(*reg.getCount()) : -1;
  });
}

bool PredicateRegisters::contains(RegisterAttr reg) const {
  return declaresRegister(predicates, reg.getBaseName());
}
