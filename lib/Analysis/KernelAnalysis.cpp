//===- KernelAnalysis.cpp - What a kernel assumes about its launch --------===//
//
// Walks a kernel and the device functions it calls once and records what
// fusion and probes rewrite or refuse: special registers, barriers, exits,
// shared memory and launch-level features.
//
//===----------------------------------------------------------------------===//

#include "gpuopt/Analysis/KernelAnalysis.h"
#include "ptx/IR/PTXSyntax.h"

#include "llvm/ADT/StringMap.h"

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

  if (opcode == "ret" || opcode == "exit" || opcode == "trap") {
    ExitUse::Kind kind = opcode == "ret"    ? ExitUse::Kind::Ret
                         : opcode == "exit" ? ExitUse::Kind::Exit
                                            : ExitUse::Kind::Trap;
    exits.push_back({inst, kind, inDeviceFunction});
    return;
  }
  if (opcode == "call") {
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
  if (opcode == "mma" || opcode == "wmma" || opcode == "wgmma")
    ++numTensor;
  StringRef space = inst.getStateSpace();
  if (opcode == "cp" && inst.hasModifier("bulk"))
    tma = true;
  if (((opcode == "ld" || opcode == "st" || opcode == "atom" ||
        opcode == "red") &&
       (space == "global" || space.empty())) ||
      (opcode == "cp" && inst.hasModifier("async")))
    ++numGlobalMemory;

  if (opcode == "mbarrier" && inst.hasModifier("init")) {
    mbarriers.push_back(
        {inst, operands.size() > 1 ? getImmediate(operands[1]) : std::nullopt});
    return;
  }
  if (opcode != "bar" && opcode != "barrier")
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
