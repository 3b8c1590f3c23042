//===- KernelAnalysis.cpp - What a kernel assumes about its launch --------===//
//
// Walks a kernel and the device functions it calls once and records what
// fusion and probes rewrite or refuse: special registers, barriers, exits,
// shared memory and launch-level features.
//
//===----------------------------------------------------------------------===//

#include "gpuopt/Analysis/KernelAnalysis.h"
#include "ptx/IR/PTXOpcodes.h"
#include "ptx/IR/PTXParser.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/FormatVariadic.h"

using namespace mlir;
using namespace gpuopt;
using namespace gpuopt::ptx;

static std::optional<Dim3> toDim3(std::optional<ArrayRef<int32_t>> dims) {
  if (!dims)
    return std::nullopt;
  Dim3 result = {1, 1, 1};
  for (unsigned i = 0; i < dims->size() && i < 3; ++i)
    result[i] = (*dims)[i];
  return result;
}

static std::optional<int64_t> getImmediate(Attribute operand) {
  if (auto imm = dyn_cast<IntImmAttr>(operand))
    return imm.getValue();
  return std::nullopt;
}

KernelAnalysis::KernelAnalysis(Operation *entryOp)
    : entry(cast<EntryOp>(entryOp)),
      module(entryOp->getParentOfType<PTXModuleOp>()) {
  requiredBlock = toDim3(entry.getReqntid());
  maxBlock = toDim3(entry.getMaxntid());
  if (ArrayAttr directives = entry.getDirectivesAttr())
    for (Attribute directive : directives)
      if (auto str = dyn_cast<StringAttr>(directive))
        clusters |= str.getValue().starts_with(".reqnctapercluster") ||
                    str.getValue().starts_with(".explicitcluster") ||
                    str.getValue().starts_with(".maxclusterrank");
  if (!entry.hasBody())
    return;
  analyzeFunction(entry, /*isEntry=*/true);
  // Callees are appended while they are analyzed: a worklist.
  for (unsigned i = 0; i < callees.size(); ++i)
    analyzeFunction(callees[i], /*isEntry=*/false);
}

void KernelAnalysis::analyzeFunction(Operation *function, bool isEntry) {
  function->walk([&](Operation *op) {
    if (auto inst = dyn_cast<InstOp>(op))
      return analyzeInstruction(inst, !isEntry);
    if (auto var = dyn_cast<VarOp>(op))
      if (var.getSpace() == ".shared") {
        uint64_t bytes = getTypeSize(var.getType()) *
                         std::max<int64_t>(1, var.getVector().value_or(1));
        for (int64_t dim : var.getDims())
          bytes *= dim;
        staticSharedBytes += bytes;
      }
  });
}

void KernelAnalysis::noteSymbol(StringRef name) {
  Operation *symbol = SymbolTable::lookupSymbolIn(module, name);
  if (!symbol)
    return;
  if (auto func = dyn_cast<FuncOp>(symbol)) {
    if (func.hasBody())
      callees.insert(func);
    else
      externalCallees.insert(name);
    usedGlobals.insert(symbol);
    return;
  }
  auto global = dyn_cast<GlobalOp>(symbol);
  if (!global)
    return;
  usedGlobals.insert(symbol);
  if (global.getSpace() != ".shared")
    return;
  if (global.getLinkage() == StringRef(".extern")) {
    if (dynamicShared.insert(global))
      dynamicSharedAlign =
          std::max<uint64_t>(dynamicSharedAlign, global.getAlign().value_or(1));
    return;
  }
  if (!staticShared.insert(global))
    return;
  uint64_t bytes = getTypeSize(global.getType()) *
                   std::max<int64_t>(1, global.getVector().value_or(1));
  for (int64_t dim : global.getDims())
    bytes *= dim;
  staticSharedBytes += bytes;
}

void KernelAnalysis::analyzeInstruction(InstOp inst, bool inDeviceFunction) {
  ++numInstructions;
  StringRef opcode = inst.getOpcode();
  ArrayAttr operands = inst.getPtxOperands();
  for (Attribute operand : operands)
    walkOperandLeaves(operand, [&](Attribute leaf) {
      if (auto sreg = dyn_cast<SpecialRegisterAttr>(leaf)) {
        StringRef name = sreg.getName().drop_front();
        sregs.insert(name);
        if (name.starts_with("envreg"))
          gridSync = true;
        if (name.starts_with("cluster") || name.starts_with("nclusterid") ||
            name.starts_with("is_explicit_cluster"))
          clusters = true;
      } else if (auto sym = dyn_cast<FlatSymbolRefAttr>(leaf)) {
        noteSymbol(sym.getValue());
      }
    });

  // An opcode from a newer PTX ISA than the table: it may access global
  // memory, and getFusionHazard refuses to reshape the kernel around it.
  const OpcodeInfo *info = lookupOpcode(opcode);
  if (!info) {
    unknownOpcodes.insert(opcode);
    ++numGlobalMemory;
  }
  OpcodeKind kind = info ? info->kind : OpcodeKind::Other;

  switch (kind) {
  case OpcodeKind::Return:
    exits.push_back({inst, ExitUse::Kind::Ret, inDeviceFunction});
    return;
  case OpcodeKind::Exit:
    exits.push_back({inst, ExitUse::Kind::Exit, inDeviceFunction});
    return;
  case OpcodeKind::Trap:
    exits.push_back({inst, ExitUse::Kind::Trap, inDeviceFunction});
    return;
  default:
    break;
  }
  if (kind == OpcodeKind::Call) {
    // call (rets), f, (args)  or  call (rets), %rd, (args), prototype.
    for (Attribute operand : operands) {
      if (isa<ListAttr>(operand))
        continue;
      if (auto sym = dyn_cast<FlatSymbolRefAttr>(operand)) {
        StringRef name = sym.getValue();
        // CUDA 12+ spells the device runtime's entry points
        // __cudaCDP2LaunchDeviceV2 and __cudaCDP2GetParameterBufferV2.
        name.consume_front("__cudaCDP2");
        if (name.starts_with("cudaLaunchDevice") ||
            name.starts_with("cudaGetParameterBuffer") ||
            name.starts_with("LaunchDevice") ||
            name.starts_with("GetParameterBuffer") ||
            name.starts_with("cudaCGGetIntrinsicHandle"))
          dynamicParallelism = true;
      } else {
        indirectCalls = true;
      }
      break;
    }
    return;
  }
  // Another CTA's shared memory is reached only through an address from
  // mapa (or a multicast copy): `.shared::cluster` alone, as on every TMA
  // copy nvcc emits, names the CTA's own window outside a cluster launch.
  if (opcode == "mapa" || inst.hasModifier("multicast::cluster"))
    clusters = true;
  if (opcode == "wgmma" || opcode == "setmaxnreg")
    warpgroup = true;
  if (opcode == "setmaxnreg")
    setmaxnreg.push_back(inst);
  if (kind == OpcodeKind::TensorCore)
    ++numTensor;
  StringRef space = inst.getStateSpace();
  if (kind == OpcodeKind::AsyncCopy && inst.hasModifier("bulk"))
    tma = true;
  bool accessesMemory = kind == OpcodeKind::Load || kind == OpcodeKind::Store ||
                        kind == OpcodeKind::Atomic ||
                        kind == OpcodeKind::Reduction;
  if ((accessesMemory && (space == "global" || space.empty())) ||
      (kind == OpcodeKind::AsyncCopy && inst.hasModifier("async")))
    ++numGlobalMemory;

  if (kind == OpcodeKind::Mbarrier && inst.hasModifier("init")) {
    mbarriers.push_back(
        {inst, operands.size() > 1 ? getImmediate(operands[1]) : std::nullopt});
    return;
  }
  if (kind != OpcodeKind::Barrier)
    return;
  if (inst.hasModifier("warp"))
    return; // bar.warp.sync: a warp-level barrier, no CTA barrier resource.
  if (inst.hasModifier("cluster")) {
    clusters = true;
    return;
  }
  BarrierUse use;
  use.op = inst;
  use.kind = inst.hasModifier("red")      ? BarrierUse::Kind::Reduce
             : inst.hasModifier("arrive") ? BarrierUse::Kind::Arrive
                                          : BarrierUse::Kind::Sync;
  // bar.red has a destination first and the predicate to reduce last.
  unsigned first = use.kind == BarrierUse::Kind::Reduce ? 1 : 0;
  unsigned withCount = use.kind == BarrierUse::Kind::Reduce ? 4 : 2;
  use.idOperand = first;
  if (operands.size() > first) {
    use.id = getImmediate(operands[first]);
    use.dynamicId = !use.id;
  }
  if (operands.size() >= withCount) {
    use.countOperand = first + 1;
    use.count = getImmediate(operands[first + 1]);
    use.dynamicCount = !use.count;
  }
  barriers.push_back(use);
}

bool KernelAnalysis::usesSpecialRegisterPrefix(StringRef prefix) const {
  return llvm::any_of(
      sregs, [&](const auto &e) { return e.getKey().starts_with(prefix); });
}

llvm::StringSet<> KernelAnalysis::getSpecialRegistersOf(Operation *fn) const {
  llvm::StringSet<> result;
  fn->walk([&](InstOp inst) {
    for (Attribute operand : inst.getPtxOperands())
      walkOperandLeaves(operand, [&](Attribute leaf) {
        if (auto sreg = dyn_cast<SpecialRegisterAttr>(leaf))
          result.insert(sreg.getName().drop_front());
      });
  });
  return result;
}

int64_t KernelAnalysis::getMaxBarrierId() const {
  int64_t maxId = -1;
  for (const BarrierUse &use : barriers)
    if (use.id)
      maxId = std::max(maxId, *use.id);
  return maxId;
}

bool KernelAnalysis::hasDynamicBarrierIds() const {
  return llvm::any_of(barriers,
                      [](const BarrierUse &u) { return u.dynamicId; });
}

const std::optional<EarlyExit> &KernelAnalysis::getEarlyExit() const {
  if (earlyExit)
    return *earlyExit;
  // The barriers an exited thread counts as arrived at: those that wait for
  // the whole block (no thread count; `bar.arrive` does not wait), and calls
  // of device functions that contain one. A barrier with a count waits for
  // that many threads in the fused kernel as in the kernel alone.
  llvm::DenseSet<Operation *> blockBarriers;
  llvm::StringSet<> waitingFunctions;
  for (const BarrierUse &use : barriers) {
    if (use.kind == BarrierUse::Kind::Arrive || use.countOperand >= 0)
      continue;
    blockBarriers.insert(use.op);
    if (auto func = use.op->getParentOfType<FuncOp>())
      waitingFunctions.insert(func.getSymName());
  }
  auto calledSymbols = [](InstOp inst) {
    SmallVector<StringRef> symbols;
    for (Attribute operand : inst.getPtxOperands())
      if (auto sym = dyn_cast<FlatSymbolRefAttr>(operand))
        symbols.push_back(sym.getValue());
    return symbols;
  };
  // A callee that calls a waiting function waits too.
  for (bool changed = true; changed;) {
    changed = false;
    for (FuncOp callee : callees)
      if (!waitingFunctions.contains(callee.getSymName()))
        callee->walk([&](InstOp inst) {
          if (getOpcodeKind(inst.getOpcode()) == OpcodeKind::Call)
            for (StringRef symbol : calledSymbols(inst))
              if (waitingFunctions.contains(symbol))
                changed |= waitingFunctions.insert(callee.getSymName()).second;
        });
  }
  earlyExit = findEarlyExit(entry, [&](InstOp inst) {
    if (blockBarriers.contains(inst))
      return true;
    if (getOpcodeKind(inst.getOpcode()) != OpcodeKind::Call)
      return false;
    SmallVector<StringRef> symbols = calledSymbols(inst);
    // An indirect call may reach any function.
    if (symbols.empty())
      return !waitingFunctions.empty();
    return llvm::any_of(symbols, [&](StringRef symbol) {
      return waitingFunctions.contains(symbol);
    });
  });
  return *earlyExit;
}

std::string KernelAnalysis::getFusionHazard() const {
  if (gridSync)
    return "it synchronises the whole grid (reads %envreg: a cooperative "
           "launch), which needs every block of its own grid resident";
  if (clusters)
    return "it uses thread-block clusters (cluster registers, "
           "barrier.cluster, mapa or distributed shared memory)";
  if (dynamicParallelism)
    return "it launches kernels from the device (dynamic parallelism)";
  for (StringRef name : {"warpid", "nwarpid"})
    if (sregs.contains(name))
      return ("it reads %" + name +
              ", a hardware warp slot that changes when the block is "
              "reshaped")
          .str();
  if (hasDynamicBarrierIds())
    return "a barrier takes its id from a register, so its id cannot be "
           "renumbered";
  for (const ExitUse &exit : exits)
    if (exit.inDeviceFunction && exit.kind == ExitUse::Kind::Exit)
      return "a device function it calls ends the thread with 'exit', "
             "which a counted barrier of its part would wait for";
  if (indirectCalls)
    return "it makes indirect calls, whose targets cannot be analysed";
  if (!unknownOpcodes.empty())
    return ("it uses '" + unknownOpcodes.front() +
            "', an instruction missing from gpu-opt's opcode table (newer "
            "PTX ISA), which may synchronise or depend on the block shape; "
            "to fuse it, add the opcode with its effects to "
            "dialects/ptx/IR/PTXOpcodes.cpp")
        .str();
  // The CUDA runtime's device-side system calls neither read the thread's
  // position nor wait at barriers; any other body lives in another module
  // (separate compilation) and may do both.
  for (const auto &callee : externalCallees) {
    StringRef name = callee.getKey();
    if (llvm::is_contained({"vprintf", "__assertfail", "malloc", "free"}, name))
      continue;
    return ("it calls '" + name +
            "', whose body is in another module (separate compilation) and "
            "cannot be checked: give its definition in the same PTX")
        .str();
  }
  return "";
}

//===----------------------------------------------------------------------===//
// Resizability
//===----------------------------------------------------------------------===//

namespace {
/// What a register's value may be computed from: the thread index, the
/// block size, a thread index stepped by a block- or grid-stride loop.
enum Derivation : uint8_t { FromTid = 1, FromNtid = 2, FromStride = 4 };

/// Registers by name, per function, with what their values may be computed
/// from: flow-insensitive (any write counts), through arithmetic. A value
/// loaded from global or shared memory does not derive from its address (it
/// is data); one loaded from local memory, a call's result and a device
/// function's argument may derive from anything.
class RegisterDerivations {
public:
  explicit RegisterDerivations(ArrayRef<InstOp> insts) : insts(insts) {
    propagate();
  }

  /// Marks the register `index` written by `inst` as `bits` too, and what is
  /// computed from it.
  void seed(InstOp inst, RegisterAttr index, uint8_t bits) {
    derivations[{getFunction(inst), index.getBaseName()}] |= bits;
    propagate();
  }

  void propagate() {
    for (bool changed = true; changed;) {
      changed = false;
      for (InstOp inst : insts) {
        std::optional<unsigned> written = getWrittenOperand(inst);
        if (!written)
          continue;
        uint8_t from = 0;
        ArrayAttr operands = inst.getPtxOperands();
        if (loadsAnything(inst))
          from = FromTid | FromNtid;
        for (auto [i, operand] : llvm::enumerate(operands))
          if (i != *written && !isa<AddressAttr>(operand))
            walkOperandLeaves(operand,
                              [&](Attribute leaf) { from |= get(inst, leaf); });
        if (!from)
          continue;
        walkOperandLeaves(operands[*written], [&](Attribute leaf) {
          if (auto reg = dyn_cast<RegisterAttr>(leaf)) {
            uint8_t &bits = derivations[{getFunction(inst), reg.getBaseName()}];
            changed |= (bits | from) != bits;
            bits |= from;
          }
        });
      }
    }
  }

  /// What `leaf`, an operand of `inst`, may be computed from.
  uint8_t get(InstOp inst, Attribute leaf) const {
    if (auto sreg = dyn_cast<SpecialRegisterAttr>(leaf)) {
      StringRef name = sreg.getName();
      return name.starts_with("%tid")    ? FromTid
             : name.starts_with("%ntid") ? FromNtid
                                         : 0;
    }
    if (auto reg = dyn_cast<RegisterAttr>(leaf))
      return derivations.lookup({getFunction(inst), reg.getBaseName()});
    return 0;
  }

  /// The register operand `inst` writes, as the opcode table says: a
  /// register, or a vector or pair of them (a call's results are not: they
  /// come back through `ld.param`, see loadsAnything).
  static std::optional<unsigned> getWrittenOperand(InstOp inst) {
    ArrayAttr operands = inst.getPtxOperands();
    std::optional<unsigned> written = getDefinedOperand(
        lookupOpcode(inst.getOpcode()), operands.size(),
        [&](StringRef modifier) { return inst.hasModifier(modifier); });
    if (!written ||
        !isa<RegisterAttr, VectorAttr, PairAttr>(operands[*written]))
      return std::nullopt;
    return written;
  }

private:
  /// Loads from local memory (values kept on the stack), and of `.param`
  /// outside the kernel's own parameters: a call's results (`ld.param
  /// [retval0]` in its `{ }` call sequence) and a device function's
  /// arguments.
  static bool loadsAnything(InstOp inst) {
    if (getOpcodeKind(inst.getOpcode()) != OpcodeKind::Load)
      return false;
    StringRef space = inst.getStateSpace();
    return space == "local" ||
           (space == "param" && (inst->getParentOfType<ScopeOp>() ||
                                 inst->getParentOfType<FuncOp>()));
  }

  static Operation *getFunction(InstOp inst) {
    Operation *op = inst;
    while (op && !isa<EntryOp, FuncOp>(op))
      op = op->getParentOp();
    return op;
  }

  ArrayRef<InstOp> insts;
  llvm::DenseMap<std::pair<Operation *, StringRef>, uint8_t> derivations;
};
} // namespace

std::optional<ResizeBlocker> KernelAnalysis::getResizeBlocker() const {
  if (requiredBlock)
    return ResizeBlocker{
        entry, "its .reqntid fixes the block at " +
                   llvm::formatv("{0}x{1}x{2}", (*requiredBlock)[0],
                                 (*requiredBlock)[1], (*requiredBlock)[2])
                       .str()};
  SmallVector<InstOp> insts;
  entry->walk([&](InstOp inst) { insts.push_back(inst); });
  for (FuncOp callee : callees)
    callee->walk([&](InstOp inst) { insts.push_back(inst); });

  // An opcode the table does not know may do anything with the block.
  if (!unknownOpcodes.empty())
    for (InstOp inst : insts)
      if (inst.getOpcode() == unknownOpcodes.front())
        return ResizeBlocker{inst,
                             "'" + inst.getOpcode().str() +
                                 "' is not in gpu-opt's opcode table: "
                                 "what it does with the block is unknown"};

  llvm::StringMap<InstOp> firstRead;
  for (InstOp inst : insts)
    for (Attribute operand : inst.getPtxOperands())
      walkOperandLeaves(operand, [&](Attribute leaf) {
        if (auto sreg = dyn_cast<SpecialRegisterAttr>(leaf))
          firstRead.try_emplace(sreg.getName().drop_front(), inst);
      });
  for (StringRef name : {"tid.y", "tid.z", "ntid.y", "ntid.z"})
    if (InstOp inst = firstRead.lookup(name))
      return ResizeBlocker{inst, ("it reads %" + name +
                                  ", but a resized block is 1-D: its "
                                  "threads would no longer differ in " +
                                  name.take_back())
                                     .str()};

  for (BarrierUse barrier : barriers)
    if (barrier.countOperand >= 0)
      return ResizeBlocker{
          barrier.op,
          "'" + barrier.op.getFullOpcode() + "' waits for " +
              (barrier.count ? std::to_string(*barrier.count) + " threads"
                             : std::string("a thread count in a register")) +
              ", a count tied to the block the kernel was written for"};
  if (!mbarriers.empty())
    return ResizeBlocker{mbarriers.front().op,
                         "'mbarrier.init' sets an arrival count, which may "
                         "be tied to the block the kernel was written for"};

  // A warp collective that names only some lanes assumes how the block's
  // threads fill its warps.
  for (InstOp inst : insts) {
    StringRef opcode = inst.getOpcode();
    ArrayAttr operands = inst.getPtxOperands();
    std::optional<int64_t> mask;
    if (operands.empty() || !inst.hasModifier("sync"))
      continue;
    if (getOpcodeKind(opcode) == OpcodeKind::WarpCollective)
      mask = getImmediate(operands[operands.size() - 1]);
    else if (getOpcodeKind(opcode) == OpcodeKind::Barrier &&
             inst.hasModifier("warp"))
      mask = getImmediate(operands[0]);
    if (mask && uint32_t(*mask) != 0xffffffffu)
      return ResizeBlocker{
          inst, llvm::formatv("'{0}' takes the lanes {1:x8} of a warp only, "
                              "which assumes how the block fills its warps",
                              inst.getFullOpcode(), uint32_t(*mask))
                    .str()};
  }

  InstOp tidRead = firstRead.lookup("tid.x");
  RegisterDerivations derived(insts);
  for (InstOp inst : insts) {
    if (!inst.getStateSpace().starts_with("shared"))
      continue;
    for (Attribute operand : inst.getPtxOperands()) {
      auto addr = dyn_cast<AddressAttr>(operand);
      if (addr && (derived.get(inst, addr.getBase()) & FromTid))
        return ResizeBlocker{
            inst, "'" + inst.getFullOpcode() +
                      "' indexes shared memory by the thread index, and "
                      "shared arrays are sized for the block the kernel was "
                      "written for"};
    }
  }
  if (tidRead && (staticSharedBytes || !dynamicShared.empty()))
    return ResizeBlocker{
        tidRead, "it reads %tid.x and uses shared memory, which may be sized "
                 "for the block the kernel was written for"};
  if (!tidRead)
    return ResizeBlocker{
        entry, "it never reads %tid.x: every thread of a block does the same "
               "work, so the thread count changes how often it is done"};
  if (!firstRead.count("ntid.x"))
    return ResizeBlocker{tidRead,
                         "it reads %tid.x but never %ntid.x (blockDim.x): its "
                         "indexing assumes the block it was written for"};

  // Block- and grid-stride loops: a thread index stepped by a value computed
  // from %ntid.x (`add %r10, %r10, %r3`, %r3 = %ntid.x * %nctaid.x).
  bool strided = false;
  for (InstOp inst : insts) {
    // Arithmetic that can step an index: the few opcodes compilers use.
    if (!llvm::is_contained({"add", "sub", "mad"}, inst.getOpcode()))
      continue;
    std::optional<unsigned> written =
        RegisterDerivations::getWrittenOperand(inst);
    ArrayAttr operands = inst.getPtxOperands();
    auto index =
        written ? dyn_cast<RegisterAttr>(operands[*written]) : RegisterAttr();
    if (!index || !(derived.get(inst, index) & FromTid))
      continue;
    bool carried = false;
    uint8_t step = 0;
    for (auto [i, operand] : llvm::enumerate(operands)) {
      if (i == *written)
        continue;
      auto reg = dyn_cast<RegisterAttr>(operand);
      if (reg && reg.getBaseName() == index.getBaseName())
        carried = true;
      else
        step |= derived.get(inst, operand);
    }
    if (carried && (step & FromNtid)) {
      derived.seed(inst, index, FromStride);
      strided = true;
    }
  }
  if (!strided)
    return ResizeBlocker{
        tidRead, "no loop steps a thread index by %ntid.x (a block- or "
                 "grid-stride loop): each thread handles fixed elements, so "
                 "another block size covers other elements"};

  // Outside such loops, memory is reached, and values are stored, as the
  // block size decides: one result per thread at `out[blockIdx.x *
  // blockDim.x + threadIdx.x]`, or per block at `out[blockIdx.x]` (a
  // reduction's partial sums, whose float order also follows the block).
  auto outsideLoop = [](InstOp inst, StringRef what) {
    return ResizeBlocker{inst, "'" + inst.getFullOpcode() + "' " + what.str() +
                                   " outside a block- or grid-stride loop, "
                                   "so another block size gives other "
                                   "results"};
  };
  for (InstOp inst : insts) {
    StringRef space = inst.getStateSpace();
    OpcodeKind kind = getOpcodeKind(inst.getOpcode());
    bool writes = kind == OpcodeKind::Store || kind == OpcodeKind::Atomic ||
                  kind == OpcodeKind::Reduction;
    std::optional<unsigned> written =
        RegisterDerivations::getWrittenOperand(inst);
    for (auto [i, operand] : llvm::enumerate(inst.getPtxOperands())) {
      if (auto addr = dyn_cast<AddressAttr>(operand)) {
        uint8_t from = derived.get(inst, addr.getBase());
        if (from & FromStride)
          continue;
        if (writes && (space.empty() || space == "global"))
          return outsideLoop(inst, "writes memory");
        if (from & FromTid)
          return outsideLoop(inst, "addresses memory by the thread index");
        continue;
      }
      uint8_t from = 0;
      if (writes && i != written)
        walkOperandLeaves(
            operand, [&](Attribute leaf) { from |= derived.get(inst, leaf); });
      if (from && !(from & FromStride))
        return outsideLoop(inst, "stores a value computed from the thread "
                                 "index or the block size");
    }
  }
  return std::nullopt;
}
