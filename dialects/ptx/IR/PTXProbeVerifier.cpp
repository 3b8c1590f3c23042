//===- PTXProbeVerifier.cpp - What makes probe code invisible -------------===//
//
// The verifiers of ptx.probe and of the probe rules of functions and
// modules. Together they prove that a kernel cannot observe its probes:
// probe code holds no barriers, warp-wide or carry-flag instructions and no
// branches out of itself (ProbeOp::verifyRegions); it writes only registers
// declared in probe ops, stores to global memory only through addresses
// derived from its buffer parameters, and uses only its own .local variables
// (verifyProbeIsolation); the kernel names no probe register, variable,
// buffer or label, and only probe code calls probe functions
// (PTXModuleOp::verifyRegions). So the kernel computes what it computed
// before it was probed.
//
//===----------------------------------------------------------------------===//

#include "ptx/IR/PTXProbeVerifier.h"
#include "ptx/IR/PTX.h"
#include "ptx/IR/PTXOpcodes.h"
#include "ptx/IR/PTXParser.h"

#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringSet.h"

using namespace mlir;
using namespace gpuopt::ptx;
using llvm::StringRef;

//===----------------------------------------------------------------------===//
// Probe statements
//===----------------------------------------------------------------------===//

/// What the opcode table says the opcode may do beyond computing registers:
/// touch memory, synchronise or act on the warp, branch, or use other thread
/// state (the carry flag, the stack pointer, the clock). Opcodes outside the
/// table pass here (the importer warned about them).
bool ProbeOp::isForbiddenOpcode(StringRef opcode) {
  const OpcodeInfo *info = lookupOpcode(opcode);
  return info && info->effects != NoEffect;
}

static bool is(InstOp inst, OpcodeKind kind) {
  return getOpcodeKind(inst.getOpcode()) == kind;
}

/// The name a `bra` goes to, whether the parser took it for a label or a
/// symbol.
static StringRef getBranchTarget(InstOp inst) {
  ArrayAttr operands = inst.getPtxOperands();
  if (operands.empty())
    return {};
  if (auto label = dyn_cast<LabelRefAttr>(operands[0]))
    return label.getName();
  if (auto sym = dyn_cast<FlatSymbolRefAttr>(operands[0]))
    return sym.getValue();
  return {};
}

/// Whether `callee` is probe code: a `.func` without results whose body is
/// one ptx.probe followed by `ret` (the exit function --probe builds).
static bool isProbeFunction(Operation *callee) {
  auto func = dyn_cast_or_null<FuncOp>(callee);
  if (!func || !func.hasBody() || func.getReturnParams())
    return false;
  SmallVector<Operation *> statements;
  for (Operation &op : *func.getBodyBlock())
    if (!isa<LocOp>(op))
      statements.push_back(&op);
  auto ret =
      statements.size() == 2 ? dyn_cast<InstOp>(statements[1]) : InstOp();
  return isa<ProbeOp>(statements[0]) && ret && is(ret, OpcodeKind::Return) &&
         !ret.getGuard();
}

/// Only probe code calls probe functions (or names them at all): they store
/// through their buffer parameters, which their callers must fill with the
/// probe's buffers (verifyProbeAddresses checks those calls).
LogicalResult PTXModuleOp::verifyRegions() {
  llvm::StringSet<> probeFunctions;
  for (FuncOp func : getBody().getOps<FuncOp>())
    if (isProbeFunction(func))
      probeFunctions.insert(func.getSymName());
  if (probeFunctions.empty())
    return success();
  WalkResult result = walk([&](InstOp inst) -> WalkResult {
    if (inst->getParentOfType<ProbeOp>())
      return WalkResult::advance();
    StringRef named;
    walkOperandLeaves(inst.getPtxOperandsAttr(), [&](Attribute leaf) {
      if (auto sym = dyn_cast<FlatSymbolRefAttr>(leaf);
          sym && probeFunctions.contains(sym.getValue()))
        named = sym.getValue();
    });
    if (named.empty())
      return WalkResult::advance();
    inst.emitOpError("names the probe function '")
        << named << "' outside probe code; only probes call probe functions";
    return WalkResult::interrupt();
  });
  return failure(result.wasInterrupted());
}

/// Checks the statements of a probe (and of `{ }` scopes in it, which hold
/// call sequences) on their own; what they may touch is checked for the
/// whole function (verifyProbeIsolation), which knows the probe's
/// registers. `labels`: the probe's labels visible in `block` (its own and
/// those of the enclosing blocks up to the probe: a label inside a `{ }`
/// is not visible outside it, where a branch to its name would reach a
/// kernel label).
static LogicalResult verifyProbeStatements(Block &block,
                                           llvm::DenseSet<StringRef> labels) {
  for (LabelOp label : block.getOps<LabelOp>())
    labels.insert(label.getName());
  for (Operation &op : block) {
    if (auto scope = dyn_cast<ScopeOp>(op)) {
      if (failed(verifyProbeStatements(*scope.getBodyBlock(), labels)))
        return failure();
      continue;
    }
    if (auto var = dyn_cast<VarOp>(op)) {
      if (var.getSpace() != ".local" && var.getSpace() != ".param")
        return var.emitOpError("in a probe declares ")
               << var.getSpace()
               << " memory; probe code declares only .local variables and "
                  ".param call arguments";
      continue;
    }
    if (isa<RegOp, LabelOp, ProbeSaveOp>(op))
      continue;
    auto inst = dyn_cast<InstOp>(op);
    if (!inst)
      return op.emitOpError("is not allowed in a probe: probe code holds only "
                            "instructions, register and variable "
                            "declarations, labels and call scopes");
    StringRef opcode = inst.getOpcode();
    OpcodeKind kind = getOpcodeKind(opcode);
    StringRef space = inst.getStateSpace();
    if (kind == OpcodeKind::Branch) {
      if (!labels.contains(getBranchTarget(inst)))
        return inst.emitOpError("in a probe branches outside it: probe code "
                                "may branch only to its own labels, so that "
                                "the kernel's control flow stays as it is");
      continue;
    }
    if (kind == OpcodeKind::Call) {
      ArrayAttr operands = inst.getPtxOperands();
      auto callee = operands.empty() ? FlatSymbolRefAttr()
                                     : dyn_cast<FlatSymbolRefAttr>(operands[0]);
      if (!callee ||
          !isProbeFunction(SymbolTable::lookupNearestSymbolFrom(inst, callee)))
        return inst.emitOpError("in a probe calls something other than probe "
                                "code: probe code calls only functions whose "
                                "body is one ptx.probe and `ret`, and that "
                                "return nothing");
      continue;
    }
    if ((kind == OpcodeKind::Store &&
         (space == "global" || space == "local" || space == "param")) ||
        (kind == OpcodeKind::Reduction && space == "global") ||
        (kind == OpcodeKind::Load && (space == "param" || space == "local")))
      continue;
    if (inst.hasModifier("cc"))
      return inst.emitOpError("'")
             << inst.getFullOpcode()
             << "' is not allowed in a probe: it writes the carry flag, which "
                "the kernel's addc/subc/madc may read";
    if (ProbeOp::isForbiddenOpcode(opcode))
      return inst.emitOpError("'")
             << inst.getFullOpcode()
             << "' is not allowed in a probe: it touches memory, synchronises, "
                "acts on the whole warp or changes control flow, which the "
                "kernel could observe";
  }
  return success();
}

LogicalResult ProbeOp::verifyRegions() {
  return verifyProbeStatements(*getBodyBlock(), {});
}

/// The registers an instruction of probe code writes, as the opcode table
/// says (an opcode outside it: its first operand).
static Attribute getWrittenOperand(InstOp inst) {
  ArrayAttr operands = inst.getPtxOperands();
  std::optional<unsigned> written = getDefinedOperand(
      lookupOpcode(inst.getOpcode()), operands.size(),
      [&](StringRef modifier) { return inst.hasModifier(modifier); });
  return written ? operands[*written] : Attribute();
}

/// Checks that probe code stores to global memory only through addresses
/// derived from its buffers: the largest set of registers each of whose
/// writes in probe code loads a buffer parameter (or a .local variable that
/// only such addresses are stored to), converts one to global, adds an
/// offset to one (`add`, `mad` into it), or keeps one or 0 (`selp`, `mov`).
/// A register copied from the kernel's (an `{addr}` operand) is not one.
static LogicalResult
verifyProbeAddresses(Block &body, const llvm::StringSet<> &buffers,
                     llvm::function_ref<bool(RegisterAttr)> isProbeRegister) {
  SmallVector<InstOp> probeInsts;
  body.walk([&](InstOp inst) {
    if (inst->getParentOfType<ProbeOp>())
      probeInsts.push_back(inst);
  });
  auto baseName = [](Attribute a) -> StringRef {
    if (auto reg = dyn_cast_or_null<RegisterAttr>(a))
      return reg.getBaseName();
    return {};
  };
  // Candidates: every probe register written in probe code.
  llvm::StringSet<> derived;
  for (InstOp inst : probeInsts)
    if (Attribute written = getWrittenOperand(inst))
      if (auto reg = dyn_cast<RegisterAttr>(written);
          reg && isProbeRegister(reg))
        derived.insert(reg.getBaseName());
  auto isDerived = [&](Attribute a) {
    StringRef name = baseName(a);
    return !name.empty() && derived.contains(name);
  };
  auto isZero = [](Attribute a) {
    auto imm = dyn_cast<IntImmAttr>(a);
    return imm && imm.getValue() == 0;
  };
  auto symbolOf = [](Attribute a) -> StringRef {
    auto addr = dyn_cast<AddressAttr>(a);
    // `[buffer+8]` is the next parameter, not the buffer.
    if (addr && addr.getOffset() != 0)
      return {};
    auto sym = addr ? dyn_cast<FlatSymbolRefAttr>(addr.getBase())
                    : FlatSymbolRefAttr();
    return sym ? sym.getValue() : StringRef();
  };
  // A write keeps its register an address if it is one of the forms above.
  auto keepsAddress = [&](InstOp inst, const llvm::StringSet<> &localAddrs) {
    StringRef opcode = inst.getOpcode();
    ArrayAttr ops = inst.getPtxOperands();
    if (is(inst, OpcodeKind::Load) && ops.size() == 2) {
      StringRef space = inst.getStateSpace();
      StringRef sym = symbolOf(ops[1]);
      return (space == "param" && buffers.contains(sym)) ||
             (space == "local" && localAddrs.contains(sym));
    }
    if ((opcode == "cvta" || opcode == "mov") && ops.size() == 2)
      return isDerived(ops[1]);
    if (opcode == "add" && ops.size() == 3)
      return isDerived(ops[1]) != isDerived(ops[2]);
    if (opcode == "sub" && ops.size() == 3)
      return isDerived(ops[1]) && !isDerived(ops[2]);
    if (opcode == "mad" && ops.size() == 4)
      return isDerived(ops[3]) && !isDerived(ops[1]) && !isDerived(ops[2]);
    if (opcode == "selp" && ops.size() == 4)
      return (isDerived(ops[1]) || isZero(ops[1])) &&
             (isDerived(ops[2]) || isZero(ops[2]));
    return false;
  };
  // Largest fixed point: drop registers with a write of another form.
  for (bool changed = true; changed;) {
    changed = false;
    // .local variables that only addresses are stored to.
    llvm::StringSet<> localAddrs, localOther;
    for (InstOp inst : probeInsts)
      if (is(inst, OpcodeKind::Store) && inst.getStateSpace() == "local" &&
          inst.getPtxOperands().size() == 2) {
        StringRef sym = symbolOf(inst.getPtxOperands()[0]);
        (isDerived(inst.getPtxOperands()[1]) ? localAddrs : localOther)
            .insert(sym);
      }
    for (const auto &other : localOther)
      localAddrs.erase(other.getKey());
    for (InstOp inst : probeInsts) {
      StringRef name = baseName(getWrittenOperand(inst));
      if (name.empty() || !derived.contains(name) ||
          keepsAddress(inst, localAddrs))
        continue;
      derived.erase(name);
      changed = true;
    }
  }
  for (InstOp inst : probeInsts) {
    if ((!is(inst, OpcodeKind::Store) && !is(inst, OpcodeKind::Reduction)) ||
        inst.getStateSpace() != "global")
      continue;
    auto address = dyn_cast<AddressAttr>(inst.getPtxOperands()[0]);
    if (!address || address.getIndices() || !isDerived(address.getBase()))
      return inst.emitOpError(
          "in a probe stores to global memory through an address not derived "
          "from the probe's buffers: every write of the address register "
          "must load a buffer parameter or add an offset to such an address");
  }
  // A probe function stores through its buffer parameters as through
  // buffers: the caller must pass it addresses derived from its own. A
  // register argument is checked as an address; a .param one must be
  // declared in the call's own `{ }` and set there, before the call, only
  // from addresses (another scope's variable of that name is another
  // variable).
  auto passesAddress = [&](InstOp call, Attribute arg) {
    if (isa<RegisterAttr>(arg))
      return isDerived(arg);
    auto name = dyn_cast<FlatSymbolRefAttr>(arg);
    if (!name)
      return false;
    bool declared = false, stored = false, derivedOnly = true;
    for (Operation &op : *call->getBlock()) {
      if (&op == call.getOperation())
        break;
      if (auto var = dyn_cast<VarOp>(op))
        declared |= var.getName() == name.getValue();
      auto st = dyn_cast<InstOp>(op);
      if (st && is(st, OpcodeKind::Store) && st.getStateSpace() == "param" &&
          st.getPtxOperands().size() == 2 &&
          symbolOf(st.getPtxOperands()[0]) == name.getValue()) {
        stored = true;
        derivedOnly &= !st.getGuard() && isDerived(st.getPtxOperands()[1]);
      }
    }
    return declared && stored && derivedOnly;
  };
  for (InstOp inst : probeInsts) {
    ArrayAttr ops = inst.getPtxOperands();
    if (!is(inst, OpcodeKind::Call) || ops.size() != 2)
      continue;
    auto callee = dyn_cast<FlatSymbolRefAttr>(ops[0]);
    auto args = dyn_cast<ListAttr>(ops[1]);
    auto func = callee ? dyn_cast_or_null<FuncOp>(
                             SymbolTable::lookupNearestSymbolFrom(inst, callee))
                       : FuncOp();
    if (!func || !args || !func.hasBody())
      continue; // not a probe function: verifyProbeStatements refuses it
    llvm::StringSet<> calleeBuffers;
    func.walk([&](ProbeOp probe) {
      if (ArrayAttr names = probe.getBuffersAttr())
        for (Attribute name : names)
          calleeBuffers.insert(cast<StringAttr>(name).getValue());
    });
    for (auto [arg, param] :
         llvm::zip(args.getElements(), func.getParams().getValue())) {
      bool ok = !calleeBuffers.contains(cast<ParamDeclAttr>(param).getName()) ||
                passesAddress(inst, arg);
      if (!ok)
        return inst.emitOpError("in a probe passes ")
               << callee << " a value not derived from the probe's buffers "
               << "for its buffer parameter '"
               << cast<ParamDeclAttr>(param).getName()
               << "': the function stores through it";
    }
  }
  return success();
}

/// Proves that the kernel cannot observe its probes: probe code writes only
/// the probe's registers (declared in probe ops), stores only through them
/// or to the probe's .local variables, and the kernel never names a probe
/// register, variable or label. Together with ProbeOp::verifyRegions (no
/// barriers, no jumps out), the kernel computes what it computed before.
LogicalResult gpuopt::ptx::verifyProbeIsolation(Operation *function,
                                                ArrayAttr params, Block &body) {
  llvm::StringMap<int64_t> registers;
  llvm::StringSet<> variables, buffers;
  llvm::DenseSet<StringRef> labels;
  bool anyProbe = false;
  ProbeOp firstProbe;
  body.walk([&](ProbeOp probe) {
    anyProbe = true;
    if (!firstProbe)
      firstProbe = probe;
    if (ArrayAttr names = probe.getBuffersAttr())
      for (Attribute name : names)
        buffers.insert(cast<StringAttr>(name).getValue());
    probe.walk([&](Operation *op) {
      if (auto reg = dyn_cast<RegOp>(op))
        registers[reg.getName()] =
            reg.getCount() ? int64_t(*reg.getCount()) : -1;
      else if (auto var = dyn_cast<VarOp>(op))
        variables.insert(var.getName());
      else if (auto label = dyn_cast<LabelOp>(op))
        labels.insert(label.getName());
    });
  });
  if (!anyProbe)
    return success();
  for (const auto &buffer : buffers)
    if (llvm::none_of(params, [&](Attribute param) {
          return cast<ParamDeclAttr>(param).getName() == buffer.getKey();
        }))
      return firstProbe.emitOpError("names buffer '")
             << buffer.getKey() << "', which is not a parameter of "
             << function->getName();
  auto isProbeRegister = [&](RegisterAttr reg) {
    return declaresRegister(registers, reg.getBaseName());
  };
  if (failed(verifyProbeAddresses(body, buffers, isProbeRegister)))
    return failure();
  // A save (until --probe-lower) records the probe's own registers.
  WalkResult saves = body.walk([&](ProbeSaveOp save) -> WalkResult {
    SmallVector<Attribute> named(save.getValues().begin(),
                                 save.getValues().end());
    if (Attribute guard = save.getGuardAttr())
      named.push_back(isa<NotAttr>(guard) ? cast<NotAttr>(guard).getOperand()
                                          : guard);
    for (Attribute value : named)
      if (!isProbeRegister(cast<RegisterAttr>(value))) {
        save.emitOpError("names '")
            << cast<RegisterAttr>(value).getName()
            << "', which is not a probe register: a probe saves only its "
               "own registers";
        return WalkResult::interrupt();
      }
    return WalkResult::advance();
  });
  if (saves.wasInterrupted())
    return failure();
  // Jump tables (`.branchtargets`) of the kernel name no probe label.
  WalkResult tables = body.walk([&](DirectiveOp directive) -> WalkResult {
    if (directive->getParentOfType<ProbeOp>())
      return WalkResult::advance();
    SmallVector<StringRef> words;
    directive.getText().split(words, ' ', -1, false);
    for (StringRef word : words) {
      word = word.trim(" ,;:\t");
      if (labels.contains(word)) {
        directive.emitOpError("names the probe's label '")
            << word << "': the kernel may not jump into probe code";
        return WalkResult::interrupt();
      }
    }
    return WalkResult::advance();
  });
  if (tables.wasInterrupted())
    return failure();
  WalkResult result = body.walk([&](InstOp inst) -> WalkResult {
    bool inProbe = inst->getParentOfType<ProbeOp>() != nullptr;
    if (!inProbe) {
      // The kernel names nothing of the probe's.
      std::string clash;
      auto check = [&](Attribute leaf) {
        if (auto reg = dyn_cast<RegisterAttr>(leaf)) {
          if (isProbeRegister(reg))
            clash = ("register '" + reg.getName() + "'").str();
        } else if (auto sym = dyn_cast<FlatSymbolRefAttr>(leaf)) {
          if (variables.contains(sym.getValue()))
            clash = ("variable '" + sym.getValue() + "'").str();
          else if (buffers.contains(sym.getValue()))
            clash = ("buffer '" + sym.getValue() + "'").str();
          else if (labels.contains(sym.getValue()))
            clash = ("label '" + sym.getValue() + "'").str();
        } else if (auto label = dyn_cast<LabelRefAttr>(leaf)) {
          if (labels.contains(label.getName()))
            clash = ("label '" + label.getName() + "'").str();
        }
      };
      if (RegisterAttr guard = inst.getGuardAttr())
        check(guard);
      walkOperandLeaves(inst.getPtxOperandsAttr(), check);
      if (!clash.empty()) {
        inst.emitOpError("names the probe's ")
            << clash
            << " outside probe code; probes and kernel must not "
               "share state";
        return WalkResult::interrupt();
      }
      return WalkResult::advance();
    }
    if (Attribute written = getWrittenOperand(inst)) {
      std::string kernelRegister;
      walkOperandLeaves(written, [&](Attribute leaf) {
        if (auto reg = dyn_cast<RegisterAttr>(leaf);
            reg && !isProbeRegister(reg))
          kernelRegister = reg.getName().str();
      });
      if (!kernelRegister.empty()) {
        inst.emitOpError("in a probe writes '")
            << kernelRegister
            << "', which is not a probe register; probe code writes only "
               "registers declared in probe ops";
        return WalkResult::interrupt();
      }
    }
    OpcodeKind kind = getOpcodeKind(inst.getOpcode());
    bool isLoad = kind == OpcodeKind::Load;
    if (kind != OpcodeKind::Store && kind != OpcodeKind::Reduction && !isLoad)
      return WalkResult::advance();
    // ld/st/red: the address is the first operand of a store, the second
    // of a load.
    ArrayAttr operands = inst.getPtxOperands();
    unsigned index = isLoad ? 1 : 0;
    auto address = index < operands.size()
                       ? dyn_cast<AddressAttr>(operands[index])
                       : AddressAttr();
    StringRef space = inst.getStateSpace();
    // Reading a parameter is harmless; writing one is a call argument.
    if (space == "param" && isLoad)
      return WalkResult::advance();
    bool owned = false;
    if (address && !address.getIndices()) {
      Attribute base = address.getBase();
      // Probe variables are scalars: an offset could reach the kernel's.
      if (space == "local" || space == "param")
        owned = isa<FlatSymbolRefAttr>(base) && address.getOffset() == 0 &&
                variables.contains(cast<FlatSymbolRefAttr>(base).getValue());
      else
        owned = isa<RegisterAttr>(base) &&
                isProbeRegister(cast<RegisterAttr>(base));
    }
    if (!owned) {
      inst.emitOpError("in a probe accesses memory that is not the probe's: "
                       "probe code stores to global memory only through a "
                       "probe register (its buffers) and uses only its own "
                       ".local variables and .param call arguments");
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return failure(result.wasInterrupted());
}
