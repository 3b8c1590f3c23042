//===- ProbeExitFunction.cpp - Exit code, inline or outlined --------------===//
//
// --probe-lower's exits. When every map is written at exits only, from
// registers, the exit code goes into `.func __pr_exit_<kernel>`, which takes
// each buffer parameter (one for the maps in the kernel's last parameter)
// and the probe registers set before the exit and read at it (a register
// set only by one `mov r, imm` at entry is set by the function itself),
// and the kernel calls it on every path to an exit: ptxas then
// keeps the kernel's registers (docs/probes.md, "Exit function"). Otherwise
// the exit code goes before each exit, a guarded exit's branched around.
// Maps whose records stay zero store nothing; with nothing left to store
// there is no exit code at all.
//
//===----------------------------------------------------------------------===//

#include "ProbeLowering.h"

#include "gpuopt/Analysis/KernelAnalysis.h"
#include "gpuopt/Runtime/ProbeRecordLayout.h"

#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"

using namespace mlir;
using namespace gpuopt;
using namespace gpuopt::ptx;
using namespace gpuopt::probe;

void probe::collectRegisters(Attribute operand, llvm::StringSet<> &names) {
  walkOperandLeaves(operand, [&](Attribute leaf) {
    if (auto reg = dyn_cast<RegisterAttr>(leaf))
      names.insert(reg.getBaseName());
  });
}

void probe::noteWrites(ArrayRef<Operation *> snippet,
                       llvm::StringSet<> &written) {
  for (Operation *op : snippet) {
    auto inst = dyn_cast<InstOp>(op);
    if (inst && !getSave(op) && !inst.getPtxOperands().empty())
      collectRegisters(inst.getPtxOperands()[0], written);
  }
}

/// Whether `inst` is `mov r, imm` without a guard.
static bool isConstantMove(InstOp inst) {
  return inst.getOpcode() == "mov" && !inst.getGuard() &&
         inst.getPtxOperands().size() == 2 &&
         isa<IntImmAttr>(inst.getPtxOperands()[1]);
}

llvm::StringMap<InstOp> ProbeLowering::findEntryConstants() {
  llvm::StringMap<InstOp> constants;
  llvm::StringMap<unsigned> entryWrites;
  for (Operation *op : entrySnippet) {
    auto inst = dyn_cast<InstOp>(op);
    if (!inst || getSave(op))
      continue;
    llvm::StringSet<> written;
    noteWrites(op, written);
    for (const auto &name : written) {
      ++entryWrites[name.getKey()];
      if (isConstantMove(inst))
        constants[name.getKey()] = inst;
    }
  }
  for (const auto &[name, writes] : entryWrites)
    if (writes != 1 || writtenAtInstructions.contains(name))
      constants.erase(name);
  return constants;
}

bool ProbeLowering::findZeroRecordMaps() {
  // Registers that stay zero: entry constants 0 that no exit snippet
  // writes either.
  llvm::StringSet<> writtenAtExit;
  noteWrites(exitSnippet, writtenAtExit);
  llvm::StringMap<InstOp> constants = findEntryConstants();
  auto staysZero = [&](Attribute operand) {
    auto reg = dyn_cast<RegisterAttr>(operand);
    auto constant = reg ? constants.find(reg.getName()) : constants.end();
    return constant != constants.end() &&
           !writtenAtExit.contains(reg.getName()) &&
           cast<IntImmAttr>(constant->second.getPtxOperands()[1]).getValue() ==
               0;
  };
  // A fused kernel's records name their part even when zero.
  for (MapLayout &map : maps)
    map.zeroRecords = map.atExit && !map.partField;
  // (A map saved at the entry or at instructions is not an exit map.)
  for (Operation *op : exitSnippet) {
    std::optional<SaveView> save = getSave(op);
    if (!save)
      continue;
    MapLayout &map = *llvm::find_if(
        maps, [&](const MapLayout &m) { return m.spec->name == save->map; });
    map.zeroRecords &= llvm::all_of(save->values, staysZero);
  }
  return !maps.empty() &&
         llvm::all_of(maps, [](const MapLayout &m) { return m.zeroRecords; });
}

bool ProbeLowering::planExitFunction() {
  exitArgs.clear();
  exitConstants.clear();
  // Every map written at exits only, from registers: the exit code needs
  // nothing else from the kernel.
  if (!allowExitFunction || maps.empty() ||
      !llvm::all_of(maps, [](const MapLayout &m) { return m.atExit; }))
    return false;
  llvm::StringSet<> readAtExit, setAtEntry;
  noteWrites(entrySnippet, setAtEntry);
  for (Operation *op : exitSnippet) {
    if (std::optional<SaveView> save = getSave(op)) {
      for (Attribute value : save->values)
        collectRegisters(value, readAtExit);
      if (save->guard)
        collectRegisters(save->guard, readAtExit);
      continue;
    }
    auto inst = dyn_cast<InstOp>(op);
    if (!inst)
      continue;
    for (Attribute operand : inst.getPtxOperands())
      collectRegisters(operand, readAtExit);
    if (inst.getGuard())
      collectRegisters(*inst.getGuard(), readAtExit);
  }
  // Constants set at entry: the exit function sets them itself, so the
  // kernel does not keep a constant live.
  llvm::StringMap<InstOp> constants = findEntryConstants();
  for (const CheckedProbe &probe : probes)
    for (const TypedName &reg : probe.spec.registers) {
      const auto &[name, type] = probe.registers.lookup(reg.name);
      if (!readAtExit.contains(name) ||
          !(setAtEntry.contains(name) || writtenAtInstructions.contains(name)))
        continue;
      if (auto constant = constants.find(name); constant != constants.end()) {
        exitConstants.push_back(constant->second);
        continue;
      }
      // Parameters carry 16-, 32- and 64-bit values, not predicates.
      int64_t bytes = getTypeBytes(type);
      if (type == "pred" || bytes < 2)
        return false;
      exitArgs.push_back({name, ".b" + std::to_string(bytes * 8)});
    }
  if (hasParts)
    exitArgs.push_back({names.reg(kPartField), ".b32"});
  if (hasCopies)
    exitArgs.push_back({names.reg(kCopyField), ".b32"});
  return true;
}

LogicalResult ProbeLowering::lowerExits(EntryOp entry) {
  if (exitProbes.empty())
    return success();
  if (findZeroRecordMaps()) {
    // Nothing to store at the exits (a counter probe on a kernel without
    // the instructions it counts): no exit code at all.
    entry.emitRemark() << "probe: no instruction of '" << entry.getSymName()
                       << "' changes what the probes record at its exits; "
                          "their records stay zero and nothing is inserted "
                          "there";
    for (ProbeOp op : exitProbes)
      op->erase();
    return success();
  }
  KernelAnalysis analysis(entry);
  for (const ExitUse &exit : analysis.getExits())
    if (exit.inDeviceFunction && exit.kind == ExitUse::Kind::Exit)
      return InstOp(exit.op).emitError()
             << "cannot probe kernel.exit of '" << entry.getSymName()
             << "': this device function ends the thread with 'exit', "
                "where the kernel's exit snippets cannot run";
  // Each exit op is before its exit, or at the end of a body that falls
  // off it.
  SmallVector<InstOp> exits;
  bool fallsOffEnd = false;
  for (ProbeOp op : exitProbes) {
    if (auto exit = dyn_cast_or_null<InstOp>(op->getNextNode()))
      exits.push_back(exit);
    else
      fallsOffEnd = true;
  }
  if (planExitFunction()) {
    buildExitFunction(entry);
    for (ProbeOp op : exitProbes)
      op->erase();
    placeExitCalls(entry, exits, fallsOffEnd);
    return success();
  }
  for (ProbeOp op : exitProbes) {
    auto exit = dyn_cast_or_null<InstOp>(op->getNextNode());
    SmallVector<Operation *> snippet;
    for (Operation &inner : *op.getBodyBlock())
      snippet.push_back(&inner);
    OpBuilder builder = OpBuilder::atBlockBegin(op.getBodyBlock());
    PTXBuilder pb(builder, exit ? exit.getLoc() : entry.getLoc());
    std::string skip;
    if (exit && exit.getGuard()) {
      // `@%p ret` -> `@!%p bra skip; <exit snippets>; skip: @%p ret`
      skip = newLabel("skip_");
      pb.inst("bra")
          .guard(*exit.getGuard(), !exit.getGuardNegated())
          .create({pb.labelRef(skip)});
    }
    lowerExitPoint(op, snippet);
    if (!skip.empty()) {
      builder.setInsertionPointToEnd(op.getBodyBlock());
      pb.label(skip);
    }
  }
  return success();
}

/// The exit function's parameter for probe register `%PREFIXNAME`: NAME.
static std::string argName(const ProbeNames &names, StringRef reg) {
  reg.consume_front(names.reg(""));
  return reg.str();
}

void ProbeLowering::buildExitFunction(EntryOp entry) {
  MLIRContext *ctx = entry.getContext();
  auto module = entry->getParentOfType<PTXModuleOp>();
  exitFunction = names.name("exit_" + entry.getSymName());
  for (unsigned n = 1; SymbolTable::lookupSymbolIn(module, exitFunction); ++n)
    exitFunction = names.name("exit_" + entry.getSymName() + "_" + Twine(n));
  // Parameters: each map's buffer under the kernel's parameter name (the
  // slot code reads it as at a kernel's exit), then the registers.
  SmallVector<Attribute> params;
  auto param = [&](StringRef type, StringRef name) {
    params.push_back(ParamDeclAttr::get(ctx, ".param", type, name,
                                        /*align=*/0, "", /*ptrAlign=*/0,
                                        /*arraySize=*/-1, /*isPtr=*/false));
  };
  for (const MapLayout *map : getBufferMaps(/*exitFunctionParams=*/true))
    param(".b64", map->param);
  for (const auto &[reg, type] : exitArgs)
    param(type, names.name("in_" + argName(names, reg)));
  OpBuilder builder(ctx);
  builder.setInsertionPoint(entry);
  Location loc = entry.getLoc();
  auto func = FuncOp::create(
      builder, loc, builder.getStringAttr(exitFunction), StringAttr(),
      builder.getArrayAttr(params), ArrayAttr(), DenseI32ArrayAttr(),
      DenseI32ArrayAttr(), IntegerAttr(), IntegerAttr(), ArrayAttr());
  builder.setInsertionPointToStart(&func.getBody().emplaceBlock());
  PTXBuilder pb(builder, loc);
  {
    ProbeOpInsertion probeOp(builder, loc, kExitPoint,
                             getBufferNames(/*exitFunctionParams=*/true));
    declareRegisters(pb);
    for (const auto &[reg, type] : exitArgs)
      pb.inst("ld")
          .mods({"param", StringRef(type).drop_front()})
          .create(
              {pb.reg(reg), pb.addr(names.name("in_" + argName(names, reg)))});
    for (InstOp constant : exitConstants)
      builder.clone(*constant);
    // The exit code --probe-insert put at every exit.
    SmallVector<Operation *> snippet;
    for (Operation *op : exitSnippet)
      snippet.push_back(builder.clone(*op));
    lowerExitPoint(probeOp.getOp(), snippet);
  }
  pb.inst("ret").create();
}

void ProbeLowering::emitExitCall(OpBuilder &builder, Location loc,
                                 ExitGuard guard) {
  ProbeOpInsertion probeOp(builder, loc, kExitPoint);
  // Call arguments live in a scope of their own, as compilers write them.
  auto scope = ScopeOp::create(builder, loc);
  OpBuilder::InsertionGuard insertion(builder);
  builder.setInsertionPointToStart(&scope.getBody().emplaceBlock());
  PTXBuilder pb(builder, loc);
  SmallVector<Attribute> args;
  // One argument per buffer parameter: maps in the kernel's last parameter
  // share theirs.
  for (const MapLayout *map : getBufferMaps(/*exitFunctionParams=*/true)) {
    std::string arg = names.name("buf_" + map->spec->name);
    declareVariable(builder, loc, ".param", ".b64", arg);
    pb.inst("ld").mod("param").u(64).create(
        {pb.reg(map->addr), pb.addr(map->param)});
    pb.inst("st").mod("param").b(64).create({pb.addr(arg), pb.reg(map->addr)});
    args.push_back(pb.sym(arg));
  }
  for (const auto &[reg, type] : exitArgs) {
    std::string arg = names.name("arg_" + argName(names, reg));
    declareVariable(builder, loc, ".param", type, arg);
    pb.inst("st")
        .mods({"param", StringRef(type).drop_front()})
        .create({pb.addr(arg), pb.reg(reg)});
    args.push_back(pb.sym(arg));
  }
  InstBuilder call = pb.inst("call");
  if (guard.reg)
    call.guard(guard.reg, guard.negated);
  call.create({pb.sym(exitFunction), pb.list(args)});
}

/// A guarded instruction's guard (or its negation); none for another.
static ProbeLowering::ExitGuard guardOf(InstOp inst, bool negate = false) {
  if (!inst.getGuard())
    return {};
  return {*inst.getGuard(), inst.getGuardNegated() != negate};
}

void ProbeLowering::placeExitCalls(EntryOp entry, ArrayRef<InstOp> exits,
                                   bool fallsOffEnd) {
  OpBuilder builder(entry.getContext());
  // Where the kernel's code names each label: branches, and anything else
  // (jump tables), which keeps the call at the exit itself.
  llvm::StringMap<SmallVector<InstOp>> branchesTo;
  llvm::StringSet<> otherUses;
  SmallVector<StringRef> directives;
  // Labels are scoped: a name defined twice (inline asm reuses names) may
  // not mean the exit's label at every branch.
  llvm::StringMap<unsigned> definitions;
  entry.walk<WalkOrder::PreOrder>([&](Operation *op) -> WalkResult {
    if (isa<ProbeOp>(op))
      return WalkResult::skip();
    if (auto directive = dyn_cast<DirectiveOp>(op))
      directives.push_back(directive.getText());
    if (auto label = dyn_cast<LabelOp>(op))
      ++definitions[label.getName()];
    auto inst = dyn_cast<InstOp>(op);
    if (!inst)
      return WalkResult::advance();
    bool isBranch = inst.getOpcode() == "bra";
    for (auto [index, operand] : llvm::enumerate(inst.getPtxOperands()))
      walkOperandLeaves(operand, [&](Attribute leaf) {
        StringRef name;
        if (auto label = dyn_cast<LabelRefAttr>(leaf))
          name = label.getName();
        else if (auto sym = dyn_cast<FlatSymbolRefAttr>(leaf))
          name = sym.getValue();
        else
          return;
        if (isBranch && index == 0)
          branchesTo[name].push_back(inst);
        else
          otherUses.insert(name);
      });
    return WalkResult::advance();
  });
  for (InstOp exit : exits) {
    Location loc = exit.getLoc();
    // `@%p ret`: the call under the same guard.
    if (exit.getGuard()) {
      builder.setInsertionPoint(exit);
      emitExitCall(builder, loc, guardOf(exit));
      continue;
    }
    // The labels right before the exit: when every jump to them is a
    // branch, the call goes on each path into them, and the exit stays a
    // bare `ret`, which ptxas keeps as such (exit code at a join makes it
    // keep the kernel's values live there).
    SmallVector<LabelOp> labels;
    Operation *before = exit->getPrevNode();
    while (before && isa<LabelOp, LocOp>(before)) {
      if (auto label = dyn_cast<LabelOp>(before))
        labels.push_back(label);
      before = before->getPrevNode();
    }
    bool onEdges = !labels.empty() && llvm::all_of(labels, [&](LabelOp label) {
      return !otherUses.contains(label.getName()) &&
             definitions.lookup(label.getName()) == 1 &&
             llvm::none_of(directives, [&](StringRef text) {
               return text.contains(label.getName());
             });
    });
    if (!onEdges) {
      builder.setInsertionPoint(exit);
      emitExitCall(builder, loc, {});
      continue;
    }
    for (LabelOp label : labels)
      for (InstOp branch : branchesTo.lookup(label.getName())) {
        builder.setInsertionPoint(branch);
        emitExitCall(builder, branch.getLoc(), guardOf(branch));
      }
    // Threads that fall into the labels (none out of a scope that ends in
    // a jump, as fused parts do).
    while (auto scope = dyn_cast_or_null<ScopeOp>(before))
      before = scope.getBodyBlock()->empty() ? nullptr
                                             : &scope.getBodyBlock()->back();
    auto previous = dyn_cast_or_null<InstOp>(before);
    if (previous && !previous.getGuard() &&
        llvm::is_contained({"bra", "brx", "ret", "exit", "trap"},
                           previous.getOpcode()))
      continue;
    if (previous && previous.getGuard() && previous.getOpcode() == "bra") {
      builder.setInsertionPoint(previous);
      emitExitCall(builder, loc, guardOf(previous, /*negate=*/true));
      continue;
    }
    builder.setInsertionPoint(labels.back());
    emitExitCall(builder, loc, {});
  }
  if (fallsOffEnd) {
    builder.setInsertionPointToEnd(&entry.getBody().front());
    emitExitCall(builder, entry.getLoc(), {});
  }
}
