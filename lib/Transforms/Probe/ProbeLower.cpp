//===- ProbeLower.cpp - Lower probe points to slot code and stores --------===//
//
// `--probe-lower`: turns the probe ops --probe-insert left into the code
// that runs:
//
//  - the probe's registers and the slot of each thread, warp or block, with
//    the same rounding as the runtime (ProbeRecordLayout.h; warps =
//    ceil(threads / 32)): computed once at entry, or, for a map saved only
//    at exits within its capacity, at the exit by the threads that write
//    (the others leave first), so that the kernel keeps its registers;
//  - each save: stores into a fixed record when the saves a thread can make
//    fit the capacity ("static" maps), else stores guarded by a per-thread
//    count, a full slot bumping the overflow counter after the records
//    instead of writing; a guarded save is branched around;
//  - the placeholders of instruction snippets: `{bytes}`, `{addr}` (copied
//    into probe registers before the instruction, which may overwrite what
//    they are computed from) and `{site}`;
//  - the exits, inline or outlined into an exit function
//    (ProbeExitFunction.cpp).
//
//===----------------------------------------------------------------------===//

#include "ProbeLowering.h"

#include "gpuopt/Dialect/GPUOpt/GPUOptDialect.h"
#include "gpuopt/Runtime/ProbeRecordLayout.h"
#include "gpuopt/Transforms/Passes.h"
#include "gpuopt/Transforms/Probe/ProbeAccess.h"
#include "ptx/IR/PTXParser.h"

#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"

namespace gpuopt {
#define GEN_PASS_DEF_PROBELOWER
#include "gpuopt/Transforms/Passes.h.inc"
} // namespace gpuopt

using namespace mlir;
using namespace gpuopt;
using namespace gpuopt::ptx;
using namespace gpuopt::probe;

/// Rounding an offset up to the buffer's part alignment: add, then mask.
static constexpr int64_t kRoundUp = kBufferPartAlign - 1;
static constexpr int64_t kRoundMask = -int64_t(kBufferPartAlign);

std::string ProbeLowering::newLabel(StringRef stem) {
  return names.label(stem + Twine(labelCounter++));
}

SmallVector<const MapLayout *>
ProbeLowering::getBufferMaps(bool exitFunctionParams) {
  SmallVector<const MapLayout *> buffers;
  for (const MapLayout &map : maps)
    if ((!exitFunctionParams || !map.zeroRecords) &&
        llvm::none_of(buffers, [&](const MapLayout *other) {
          return other->param == map.param;
        }))
      buffers.push_back(&map);
  return buffers;
}

ArrayAttr ProbeLowering::getBufferNames(bool exitFunctionParams) {
  MLIRContext *ctx = probes.front().spec.loc.getContext();
  SmallVector<Attribute> buffers;
  for (const MapLayout *map : getBufferMaps(exitFunctionParams))
    buffers.push_back(StringAttr::get(ctx, map->param));
  return ArrayAttr::get(ctx, buffers);
}

void ProbeLowering::lowerSave(PTXBuilder &pb, const SaveView &save) {
  if (exitSlotsPending) {
    exitSlotsPending = false;
    reloadSlots(pb);
  }
  // `@%p save.m ...`: the save's stores (and count) only when %p holds.
  std::string skip;
  if (save.guard) {
    skip = newLabel("skip_");
    pb.inst("bra")
        .guard(save.guard, !save.guardNegated)
        .create({pb.labelRef(skip)});
  }
  emitSave(pb, save);
  if (!skip.empty())
    pb.label(skip);
}

/// The ops of `op`'s body, before anything is added to it.
static SmallVector<Operation *> getBodyOps(ProbeOp op) {
  SmallVector<Operation *> ops;
  for (Operation &inner : *op.getBodyBlock())
    ops.push_back(&inner);
  return ops;
}

/// Lowers the saves among `ops`; other ops stay.
static void
lowerSaves(ArrayRef<Operation *> ops, OpBuilder &builder,
           function_ref<void(PTXBuilder &, const SaveView &)> lower) {
  for (Operation *op : ops) {
    std::optional<SaveView> save = getSave(op);
    if (!save)
      continue;
    builder.setInsertionPoint(op);
    PTXBuilder pb(builder, op->getLoc());
    lower(pb, *save);
    op->erase();
  }
}

void ProbeLowering::lowerEntry(ProbeOp op) {
  for (MapLayout &map : maps)
    map.nextRecord = 0;
  exitSlotsPending = false;
  inExit = false;
  // --probe-insert's declarations give way to all of the probe's.
  for (RegOp reg :
       llvm::make_early_inc_range(op.getBodyBlock()->getOps<RegOp>()))
    reg->erase();
  SmallVector<Operation *> snippet = getBodyOps(op);
  OpBuilder builder = OpBuilder::atBlockBegin(op.getBodyBlock());
  PTXBuilder pb(builder, op.getLoc());
  declareRegisters(pb);
  emitSlots(pb, /*exitMaps=*/false);
  lowerSaves(snippet, builder, [&](PTXBuilder &pb, const SaveView &save) {
    lowerSave(pb, save);
  });
  builder.setInsertionPointToEnd(op.getBodyBlock());
  pb.setLoc(op.getLoc());
  for (const CheckedProbe &probe : probes)
    for (const auto &[reg, var, type] : probe.carried)
      pb.inst("st").mods({"local", type}).create({pb.addr(var), pb.reg(reg)});
  for (const MapLayout &map : maps) {
    if (!map.carried)
      continue;
    if (map.spec->level != Level::Thread)
      pb.inst("selp").b(64).create(
          {pb.reg(map.addr), pb.reg(map.addr), 0,
           pb.reg(map.spec->level == Level::Warp ? names.reg("lead_warp")
                                                 : names.reg("lead_block"))});
    pb.inst("st").mod("local").u(64).create(
        {pb.addr(map.local), pb.reg(map.addr)});
  }
}

void ProbeLowering::lowerInstructionProbe(ProbeOp op, InstOp inst, size_t site,
                                          bool after) {
  MLIRContext *ctx = op.getContext();
  SmallVector<Operation *> snippet = getBodyOps(op);
  unsigned uses = 0;
  for (Operation *inner : snippet)
    if (auto snippetInst = dyn_cast<InstOp>(inner))
      walkOperandLeaves(snippetInst.getPtxOperandsAttr(), [&](Attribute leaf) {
        if (std::optional<NamedOperand> kind = getPlaceholderKind(leaf))
          uses |= *kind;
      });
  // What the placeholders stand for at this instruction. A register size
  // (a copy's size operand) is copied into 32- and 64-bit probe registers.
  Attribute bytes, bytes32, addr;
  Attribute siteValue = IntImmAttr::get(ctx, site, /*hex=*/false);
  Attribute ignoreSrc;
  if (uses & kBytes) {
    std::optional<PredicateRegisters> predicates;
    AccessSize size = accessBytes(inst, [&](RegisterAttr reg) {
      if (!predicates)
        predicates.emplace(inst->getParentOfType<EntryOp>());
      return predicates->contains(reg);
    });
    bytes = size.bytes;
    ignoreSrc = size.ignoreSrc;
  }
  AddressAttr address;
  if (uses & kAddr)
    address = accessAddress(inst);
  // Whatever reads the kernel's registers goes before the instruction,
  // which may overwrite them; the probe reads them into its own.
  bool copies = address || ignoreSrc || isa_and_nonnull<RegisterAttr>(bytes);
  if (copies) {
    OpBuilder builder(ctx);
    std::optional<ProbeOpInsertion> copyOp;
    if (after) {
      builder.setInsertionPoint(inst);
      copyOp.emplace(builder, inst.getLoc(),
                     (kBeforePrefix + inst.getFullOpcode()).str());
    } else {
      builder.setInsertionPointToStart(op.getBodyBlock());
    }
    PTXBuilder pb(builder, inst.getLoc());
    if (ignoreSrc) {
      // cp-size, or 0 when the predicate says the source is ignored.
      auto negated = dyn_cast<NotAttr>(ignoreSrc);
      Attribute pred = negated ? negated.getOperand() : ignoreSrc;
      Attribute zero = pb.imm(0);
      pb.inst("selp").u(32).create({pb.reg(names.reg("w32")),
                                    negated ? bytes : zero,
                                    negated ? zero : bytes, pred});
      pb.inst("cvt").u(64).u(32).create(
          {pb.reg(names.reg("w")), pb.reg(names.reg("w32"))});
      bytes = RegisterAttr::get(ctx, names.reg("w"));
      bytes32 = RegisterAttr::get(ctx, names.reg("w32"));
    } else if (auto reg = dyn_cast_or_null<RegisterAttr>(bytes)) {
      pb.inst("mov").b(32).create({pb.reg(names.reg("w32")), reg});
      pb.inst("cvt").u(64).u(32).create({pb.reg(names.reg("w")), reg});
      bytes = RegisterAttr::get(ctx, names.reg("w"));
      bytes32 = RegisterAttr::get(ctx, names.reg("w32"));
    }
    if (address) {
      // The effective address: base register, symbol or integer, plus
      // the offset, in a 64-bit probe register.
      int64_t offset = address.getOffset();
      Attribute base = address.getBase();
      RegisterAttr a = pb.reg(names.reg("a"));
      if (auto reg = dyn_cast<RegisterAttr>(base)) {
        pb.inst("add").s(64).create({a, reg, offset});
      } else if (auto sym = dyn_cast<FlatSymbolRefAttr>(base)) {
        pb.inst("mov").u(64).create({a, sym});
        pb.inst("add").s(64).create({a, a, offset});
      } else {
        auto imm = cast<IntImmAttr>(base);
        pb.inst("mov").u(64).create({a, imm.getValue() + offset});
      }
      addr = RegisterAttr::get(ctx, names.reg("a"));
    }
  }
  inExit = false;
  // --probe-insert's labels (around a guarded instruction's snippet) are
  // numbered again with this lowering's, in the order the code runs.
  llvm::StringMap<std::string> labels;
  auto renameLabel = [&](Attribute leaf) -> Attribute {
    StringRef name;
    if (auto label = dyn_cast<LabelRefAttr>(leaf))
      name = label.getName();
    else if (auto sym = dyn_cast<FlatSymbolRefAttr>(leaf))
      name = sym.getValue();
    auto it = name.empty() ? labels.end() : labels.find(name);
    if (it == labels.end())
      return leaf;
    if (isa<LabelRefAttr>(leaf))
      return LabelRefAttr::get(ctx, it->second);
    return FlatSymbolRefAttr::get(ctx, it->second);
  };
  OpBuilder builder(ctx);
  for (Operation *inner : snippet) {
    if (std::optional<SaveView> save = getSave(inner)) {
      builder.setInsertionPoint(inner);
      PTXBuilder pb(builder, inner->getLoc());
      lowerSave(pb, *save);
      inner->erase();
      continue;
    }
    if (auto label = dyn_cast<LabelOp>(inner)) {
      auto it = labels.find(label.getName());
      if (it != labels.end())
        label.setName(it->second);
      continue;
    }
    auto snippetInst = dyn_cast<InstOp>(inner);
    if (!snippetInst)
      continue;
    if (snippetInst.getOpcode() == "bra") {
      walkOperandLeaves(snippetInst.getPtxOperandsAttr(), [&](Attribute leaf) {
        StringRef name;
        if (auto label = dyn_cast<LabelRefAttr>(leaf))
          name = label.getName();
        else if (auto sym = dyn_cast<FlatSymbolRefAttr>(leaf))
          name = sym.getValue();
        if (name.starts_with(names.label("")) && !labels.count(name))
          labels[name] = newLabel("skip_");
      });
    }
    // A 64-bit instruction takes the 64-bit copy of a register size.
    bool wide = llvm::any_of(snippetInst.getModifiers(), [](Attribute m) {
      return getTypeSize(("." + cast<StringAttr>(m).getValue()).str()) == 8;
    });
    SmallVector<Attribute> operands;
    for (Attribute operand : snippetInst.getPtxOperands())
      operands.push_back(mapOperandLeaves(operand, [&](Attribute leaf) {
        std::optional<NamedOperand> kind = getPlaceholderKind(leaf);
        if (!kind)
          return renameLabel(leaf);
        Attribute value = *kind == kBytes ? (wide || !bytes32 ? bytes : bytes32)
                          : *kind == kAddr ? addr
                                           : siteValue;
        return value ? value : leaf;
      }));
    snippetInst.setPtxOperandsAttr(ArrayAttr::get(ctx, operands));
  }
}

void ProbeLowering::lowerExitPoint(ProbeOp op, ArrayRef<Operation *> snippet) {
  for (MapLayout &map : maps)
    map.nextRecord = map.entrySaves;
  // Exit slots are computed at the first save, after the snippet's reads of
  // the clocks, so that they time the kernel rather than the probe.
  exitSlotsPending = true;
  inExit = true;
  OpBuilder builder(op.getContext());
  if (snippet.empty())
    builder.setInsertionPointToEnd(op.getBodyBlock());
  else
    builder.setInsertionPoint(snippet.front());
  PTXBuilder pb(builder, op.getLoc());
  skipNonWritersAtExit(pb);
  for (const CheckedProbe &probe : probes)
    for (const auto &[reg, var, type] : probe.carried)
      pb.inst("ld").mods({"local", type}).create({pb.reg(reg), pb.addr(var)});
  lowerSaves(snippet, builder, [&](PTXBuilder &pb, const SaveView &save) {
    lowerSave(pb, save);
  });
  builder.setInsertionPointToEnd(op.getBodyBlock());
  pb.setLoc(op.getLoc());
  for (const MapLayout &map : maps) {
    if (!map.dynamic)
      continue;
    InstBuilder store = pb.inst("st");
    if (map.spec->level != Level::Thread)
      store.guard(pb.reg(map.spec->level == Level::Warp
                             ? names.reg("lead_warp")
                             : names.reg("lead_block")));
    store.mod("global").u(32).create(
        {pb.addr(pb.reg(map.countAddr)), pb.reg(map.count)});
  }
  if (!exitSkipLabel.empty()) {
    pb.label(exitSkipLabel);
    exitSkipLabel.clear();
  }
}

LogicalResult ProbeLowering::lower(EntryOp entry, ArrayRef<CheckedProbe> probes,
                                   bool allowExitFunction) {
  this->probes = probes;
  this->allowExitFunction = allowExitFunction;
  FailureOr<FusedParts> parts = getFusedParts(entry);
  if (failed(parts))
    return failure();
  std::optional<ProbePlan> plan = getProbePlan(entry);
  names = plan ? ProbeNames(plan->prefix) : ProbeNames();
  FailureOr<std::vector<MapLayout>> layout =
      layoutMaps(entry, probes, *parts, names);
  if (failed(layout))
    return failure();
  maps = std::move(*layout);
  hasParts = !parts->scopes.empty();
  hasCopies = parts->replicated;
  exitFunction.clear();
  writtenAtInstructions.clear();
  entrySnippet.clear();
  exitSnippet.clear();
  exitProbes.clear();

  // --probe-insert's ops: at the entry, around instructions, at exits.
  ProbeOp entryProbe;
  SmallVector<std::pair<ProbeOp, bool>> pointProbes;
  SmallVector<InstOp> kernelInsts;
  entry.walk<WalkOrder::PreOrder>([&](Operation *op) {
    if (auto probe = dyn_cast<ProbeOp>(op)) {
      StringRef point = probe.getPoint();
      if (point == kEntryPoint)
        entryProbe = probe;
      else if (point == kExitPoint)
        exitProbes.push_back(probe);
      return WalkResult::skip();
    }
    if (auto inst = dyn_cast<InstOp>(op))
      kernelInsts.push_back(inst);
    return WalkResult::advance();
  });
  if (entryProbe)
    for (Operation *op : getBodyOps(entryProbe)) {
      // Not a snippet: declarations, and the part (and copy) a thread is
      // in. Saves write no register, and are lowered right away.
      if (isa<RegOp>(op) || getSave(op))
        continue;
      auto inst = dyn_cast<InstOp>(op);
      if (inst && !inst.getPtxOperands().empty())
        if (auto reg = dyn_cast<RegisterAttr>(inst.getPtxOperands()[0]);
            reg && (reg.getName() == names.reg(kPartField) ||
                    reg.getName() == names.reg(kCopyField)))
          continue;
      entrySnippet.push_back(op);
    }
  // Each kernel instruction's probe ops: those before it, then those after
  // it, nearest last (in the order they were inserted).
  SmallVector<std::tuple<ProbeOp, InstOp, size_t, bool>> instructionProbes;
  for (auto [site, inst] : llvm::enumerate(kernelInsts)) {
    SmallVector<ProbeOp> before, after;
    // (An exit's op goes between an exit and the ops before it.)
    for (Operation *op = inst->getPrevNode(); op; op = op->getPrevNode()) {
      auto probe = dyn_cast<ProbeOp>(op);
      if (probe && probe.getPoint() == kExitPoint)
        continue;
      if (!probe || !probe.getPoint().starts_with(kBeforePrefix))
        break;
      before.push_back(probe);
    }
    for (Operation *op = inst->getNextNode(); op; op = op->getNextNode()) {
      auto probe = dyn_cast<ProbeOp>(op);
      if (!probe || !probe.getPoint().starts_with(kAfterPrefix))
        break;
      after.push_back(probe);
    }
    for (ProbeOp probe : llvm::reverse(before))
      instructionProbes.push_back({probe, inst, site, false});
    for (ProbeOp probe : llvm::reverse(after))
      instructionProbes.push_back({probe, inst, site, true});
  }
  for (auto &[probe, inst, site, after] : instructionProbes)
    noteWrites(getBodyOps(probe), writtenAtInstructions);
  if (!exitProbes.empty())
    exitSnippet = getBodyOps(exitProbes.front());

  if (entryProbe)
    lowerEntry(entryProbe);
  for (auto &[probe, inst, site, after] : instructionProbes)
    lowerInstructionProbe(probe, inst, site, after);
  return lowerExits(entry);
}

void ProbeLowering::emitSave(PTXBuilder &pb, const SaveView &save) {
  MapLayout *map = &*llvm::find_if(
      maps, [&](const MapLayout &m) { return m.spec->name == save.map; });
  if (map->zeroRecords)
    return;
  pb.setLoc(save.op->getLoc());
  SmallVector<Attribute> values(save.values.begin(), save.values.end());
  RegisterAttr lead;
  if (map->spec->level != Level::Thread)
    lead = pb.reg(map->spec->level == Level::Warp ? names.reg("lead_warp")
                                                  : names.reg("lead_block"));
  if (map->isStatic) {
    // A fixed record: stores by the slot's writer, nothing to count.
    int64_t base = map->nextRecord++ * map->recordBytes;
    // At an exit that let only the writers through, no guard is needed.
    RegisterAttr guard = !lead || (inExit && !exitSkipLabel.empty()) ? nullptr
                         : map->carried && inExit ? pb.reg(map->has)
                                                  : lead;
    emitRecordStores(pb, *map, guard, base, values);
    return;
  }
  // ok: this thread writes the slot and the slot has room; over: it would
  // write, but the slot is full.
  RegisterAttr ok = pb.reg(names.reg("ok")), over = pb.reg(names.reg("over"));
  RegisterAttr count = pb.reg(map->count);
  Attribute cap = map->dynamic ? Attribute(pb.reg(map->capReg))
                               : Attribute(pb.imm(map->spec->capacity));
  if (!lead) {
    pb.inst("setp").mod("lt").u(32).create({ok, count, cap});
    pb.inst("setp").mod("ge").u(32).create({over, count, cap});
  } else {
    pb.inst("setp").mods({"lt", "and"}).u(32).create({ok, count, cap, lead});
    pb.inst("setp").mods({"ge", "and"}).u(32).create({over, count, cap, lead});
  }
  emitRecordStores(pb, *map, ok, 0, values);
  pb.inst("add").guard(ok).u(64).create(
      {pb.reg(map->addr), pb.reg(map->addr), map->recordBytes});
  // Every save is counted, kept or not: a dynamic map's count is the
  // capacity it needs.
  pb.inst("add").u(32).create({count, count, 1});
  pb.inst("red")
      .guard(over)
      .mods({"global", "add"})
      .u(64)
      .create({pb.addr(pb.reg(map->overflow)), 1});
}

void ProbeLowering::emitRecordStores(PTXBuilder &pb, const MapLayout &map,
                                     RegisterAttr guard, int64_t base,
                                     ArrayRef<Attribute> values) {
  SmallVector<Attribute> regs(values);
  SmallVector<int64_t> sizes;
  for (const TypedName &field : map.spec->fields)
    sizes.push_back(getTypeBytes(field.type));
  if (map.partField) {
    if (map.partIsWholeBlock)
      pb.inst("mov").u(32).create({pb.reg(names.reg("w32")), -1});
    regs.push_back(pb.reg(map.partIsWholeBlock ? names.reg("w32")
                                               : names.reg(kPartField)));
    sizes.push_back(4);
  }
  if (map.copyField) {
    regs.push_back(pb.reg(map.partIsWholeBlock ? names.reg("w32")
                                               : names.reg(kCopyField)));
    sizes.push_back(4);
  }
  // Every record starts at a multiple of the largest power of two dividing
  // the record size (buffers are 256-byte aligned; a slot is a whole number
  // of records).
  int64_t align = RecordLayout::recordAlign(map.recordBytes);
  for (size_t i = 0; i < regs.size();) {
    int64_t bytes = sizes[i], offset = base + map.offsets[i];
    size_t width = 1;
    for (size_t n : {4, 2}) {
      if (i + n > regs.size() || n * bytes > 16 || align % (n * bytes) ||
          offset % (n * bytes))
        continue;
      bool contiguous = true;
      for (size_t k = 1; k < n; ++k)
        contiguous &= sizes[i + k] == bytes &&
                      base + map.offsets[i + k] == offset + int64_t(k) * bytes;
      if (contiguous) {
        width = n;
        break;
      }
    }
    // `[addr+offset]`, the offset written even when 0.
    Attribute address = AddressAttr::get(pb.getContext(), pb.reg(map.addr),
                                         ArrayRef<int64_t>{offset},
                                         /*minus=*/0, Attribute());
    InstBuilder store = pb.inst("st");
    if (guard)
      store.guard(guard);
    store.mod("global");
    if (width == 1) {
      store.b(bytes * 8).create({address, regs[i]});
    } else {
      store.v(width).b(bytes * 8).create(
          {address, pb.vec(ArrayRef(regs).slice(i, width))});
    }
    i += width;
  }
}

void probe::declareVariable(OpBuilder &builder, Location loc, StringRef space,
                            StringRef type, StringRef name) {
  VarOp::create(builder, loc, builder.getStringAttr(name), StringAttr(),
                builder.getStringAttr(space), IntegerAttr(), IntegerAttr(),
                builder.getStringAttr(type), builder.getDenseI64ArrayAttr({}),
                StringAttr(), ArrayAttr());
}

void ProbeLowering::declareRegisters(PTXBuilder &pb) {
  OpBuilder &builder = pb.getBuilder();
  Location loc = builder.getUnknownLoc();
  for (const CheckedProbe &probe : probes) {
    for (const TypedName &reg : probe.spec.registers)
      pb.reg("." + reg.type, probe.registers.lookup(reg.name).first);
    for (const auto &[reg, var, type] : probe.carried)
      declareVariable(builder, loc, ".local", "." + type, var);
  }
  for (StringRef stem : {"t0", "t1", "t2", "n0", "n1", "n2"})
    pb.reg(".b32", names.reg(stem));
  pb.reg(".b32", names.reg("lin"));
  pb.reg(".b32", names.reg("units"));
  pb.reg(".b64", names.reg("blk"));
  pb.reg(".b64", names.reg("nblk"));
  pb.reg(".b64", names.reg("w"));
  pb.reg(".b32", names.reg("w32"));
  pb.reg(".b64", names.reg("a"));
  pb.reg(".b64", names.reg("x"));
  pb.reg(".b64", names.reg("slot"));
  pb.reg(".b64", names.reg("off"));
  if (hasParts)
    pb.reg(".b32", names.reg(kPartField));
  if (hasCopies)
    pb.reg(".b32", names.reg(kCopyField));
  pb.reg(".pred", names.reg("lead_warp"));
  pb.reg(".pred", names.reg("lead_block"));
  pb.reg(".pred", names.reg("ok"));
  pb.reg(".pred", names.reg("over"));
  for (const MapLayout &map : maps) {
    if (map.carried) {
      declareVariable(builder, loc, ".local", ".u64", map.local);
      pb.reg(".pred", map.has);
    }
    pb.reg(".b64", map.addr);
    pb.reg(".b64", map.overflow);
    pb.reg(".b32", map.count);
    if (map.dynamic) {
      pb.reg(".b32", map.capReg);
      pb.reg(".b64", map.countAddr);
    }
  }
}

void ProbeLowering::reloadSlots(PTXBuilder &pb) {
  SmallVector<MapLayout *> carried;
  for (MapLayout &map : maps)
    if (map.carried)
      carried.push_back(&map);
  for (MapLayout *map : carried) {
    pb.inst("ld").mod("local").u(64).create(
        {pb.reg(map->addr), pb.addr(map->local)});
    if (map->spec->level != Level::Thread)
      pb.inst("setp").mod("ne").u(64).create(
          {pb.reg(map->has), pb.reg(map->addr), 0});
  }
  // When every map is written by the same kind of leader, the other threads
  // have nothing left to do: they go to the exit.
  bool allLeaders = llvm::all_of(maps, [&](const MapLayout &m) {
    return (m.carried || m.atExit) && m.spec->level != Level::Thread &&
           m.spec->level == maps.front().spec->level;
  });
  if (!carried.empty() && allLeaders && carried.size() == maps.size()) {
    exitSkipLabel = newLabel("done_");
    pb.inst("bra")
        .guard(pb.reg(carried.front()->has), /*negated=*/true)
        .create({pb.labelRef(exitSkipLabel)});
  }
  if (llvm::none_of(maps, [](const MapLayout &m) { return m.atExit; }))
    return;
  emitSlots(pb, /*exitMaps=*/true);
}

void ProbeLowering::skipNonWritersAtExit(PTXBuilder &pb) {
  // Only when every map is saved at exits only, by the same kind of
  // leader, with its state in registers: then the exit snippets have no
  // effect for the other threads, which end right after them.
  if (maps.empty() || !llvm::all_of(maps, [&](const MapLayout &m) {
        return m.atExit && m.spec->level != Level::Thread &&
               m.spec->level == maps.front().spec->level;
      }))
    return;
  // Hardware forms warps from consecutive linear thread indices, so
  // %laneid is the linear index modulo 32.
  RegisterAttr t0 = pb.reg(names.reg("t0")), t1 = pb.reg(names.reg("t1")),
               t2 = pb.reg(names.reg("t2")), ok = pb.reg(names.reg("ok"));
  if (maps.front().spec->level == Level::Warp) {
    pb.inst("mov").u(32).create({t0, pb.sreg("%laneid")});
  } else {
    pb.inst("mov").u(32).create({t0, pb.sreg("%tid.x")});
    pb.inst("mov").u(32).create({t1, pb.sreg("%tid.y")});
    pb.inst("mov").u(32).create({t2, pb.sreg("%tid.z")});
    pb.inst("or").b(32).create({t0, t0, t1});
    pb.inst("or").b(32).create({t0, t0, t2});
  }
  pb.inst("setp").mod("ne").u(32).create({ok, t0, 0});
  exitSkipLabel = newLabel("done_");
  pb.inst("bra").guard(ok).create({pb.labelRef(exitSkipLabel)});
}

void ProbeLowering::emitSlots(PTXBuilder &pb, bool exitMaps) {
  SmallVector<MapLayout *> chosen;
  for (MapLayout &map : maps)
    if (map.atExit == exitMaps && !map.zeroRecords)
      chosen.push_back(&map);
  if (chosen.empty())
    return;
  // The grid's blocks: for the overflow counters after every block's
  // records, and for the maps in the kernel's last parameter after the
  // others' blocks.
  bool needBlocks = llvm::any_of(chosen, [](MapLayout *m) {
    return !m->isStatic || m->blockOffset.value_or(0) != 0;
  });
  RegisterAttr t0 = pb.reg(names.reg("t0")), t1 = pb.reg(names.reg("t1")),
               t2 = pb.reg(names.reg("t2")), n0 = pb.reg(names.reg("n0")),
               n1 = pb.reg(names.reg("n1")), n2 = pb.reg(names.reg("n2")),
               lin = pb.reg(names.reg("lin")),
               units = pb.reg(names.reg("units")),
               blk = pb.reg(names.reg("blk")), nblk = pb.reg(names.reg("nblk")),
               w = pb.reg(names.reg("w")), slot = pb.reg(names.reg("slot"));
  auto mov32 = [&](RegisterAttr dst, Attribute src) {
    pb.inst("mov").u(32).create({dst, src});
  };
  // Linear thread index (x fastest) and threads per block.
  mov32(t0, pb.sreg("%tid.x"));
  mov32(t1, pb.sreg("%tid.y"));
  mov32(t2, pb.sreg("%tid.z"));
  mov32(n0, pb.sreg("%ntid.x"));
  mov32(n1, pb.sreg("%ntid.y"));
  mov32(n2, pb.sreg("%ntid.z"));
  pb.inst("mad").mod("lo").u(32).create({lin, t2, n1, t1});
  pb.inst("mad").mod("lo").u(32).create({lin, lin, n0, t0});
  pb.inst("mul").mod("lo").u(32).create({n1, n1, n0});
  pb.inst("mul").mod("lo").u(32).create({n2, n2, n1});
  // Writers: lane 0 of each warp (of the linear index, as the host counts
  // warps), thread 0 of the block.
  pb.inst("and").b(32).create({t0, lin, 31});
  pb.inst("setp").mod("eq").u(32).create(
      {pb.reg(names.reg("lead_warp")), t0, 0});
  pb.inst("setp").mod("eq").u(32).create(
      {pb.reg(names.reg("lead_block")), lin, 0});
  // %__pr_n2: threads per block. Linear block index (x fastest):
  // (z * ny + y) fits 32 bits (ny, z, y < 65536), times nx plus x in 64.
  mov32(t0, pb.sreg("%ctaid.x"));
  mov32(t1, pb.sreg("%ctaid.y"));
  mov32(t2, pb.sreg("%ctaid.z"));
  mov32(n0, pb.sreg("%nctaid.y"));
  mov32(n1, pb.sreg("%nctaid.x"));
  pb.inst("mad").mod("lo").u(32).create({t2, t2, n0, t1});
  pb.inst("cvt").u(64).u(32).create({w, t0});
  pb.inst("mad").mod("wide").u(32).create({blk, t2, n1, w});
  if (needBlocks) {
    pb.inst("mul").mod("wide").u(32).create({nblk, n0, n1});
    mov32(n0, pb.sreg("%nctaid.z"));
    pb.inst("cvt").u(64).u(32).create({w, n0});
    pb.inst("mul").mod("lo").u(64).create({nblk, nblk, w});
  }
  // The map's buffer: its parameter's address or, in the kernel's last
  // parameter, the grid's blocks times its block offset after it.
  auto loadBuffer = [&](RegisterAttr reg, const MapLayout &map) {
    pb.inst("ld").mod("param").u(64).create({reg, pb.addr(map.param)});
    pb.inst("cvta").mods({"to", "global"}).u(64).create({reg, reg});
    if (map.blockOffset.value_or(0) != 0)
      pb.inst("mad").mod("lo").u(64).create(
          {reg, nblk, pb.imm(*map.blockOffset), reg});
  };
  for (MapLayout *map : chosen) {
    switch (map->spec->level) {
    case Level::Thread:
      mov32(units, n2);
      mov32(t1, lin);
      break;
    case Level::Warp:
      pb.inst("add").u(32).create({units, n2, 31});
      pb.inst("shr").u(32).create({units, units, 5});
      pb.inst("shr").u(32).create({t1, lin, 5});
      break;
    case Level::Block:
      mov32(units, pb.imm(1));
      mov32(t1, pb.imm(0));
      break;
    }
    RegisterAttr addr = pb.reg(map->addr);
    loadBuffer(addr, *map);
    if (map->dynamic) {
      emitDynamicSlot(pb, *map);
      continue;
    }
    int64_t slotBytes = map->spec->capacity * map->recordBytes;
    // slot = (block * units + unit) * capacity * record bytes
    pb.inst("cvt").u(64).u(32).create({w, units});
    pb.inst("cvt").u(64).u(32).create({slot, t1});
    pb.inst("mad").mod("lo").u(64).create({slot, blk, w, slot});
    pb.inst("mad").mod("lo").u(64).create({addr, slot, slotBytes, addr});
    if (map->isStatic)
      continue;
    // The overflow counter: after all records, rounded up as the runtime
    // rounds (kBufferPartAlign).
    RegisterAttr overflow = pb.reg(map->overflow);
    pb.inst("cvt").u(64).u(32).create({w, units});
    pb.inst("mul").mod("lo").u(64).create({slot, nblk, w});
    pb.inst("mul").mod("lo").u(64).create({slot, slot, slotBytes});
    pb.inst("add").u(64).create({slot, slot, kRoundUp});
    pb.inst("and").b(64).create({slot, slot, kRoundMask});
    loadBuffer(overflow, *map);
    pb.inst("add").u(64).create({overflow, overflow, slot});
    mov32(pb.reg(map->count), pb.imm(0));
  }
}

void ProbeLowering::emitDynamicSlot(PTXBuilder &pb, const MapLayout &map) {
  // The capacity is the runtime's; the buffer holds the records, then a u32
  // count per slot, then the overflow counter, each at a multiple of
  // kBufferPartAlign.
  RegisterAttr units = pb.reg(names.reg("units")), t1 = pb.reg(names.reg("t1")),
               blk = pb.reg(names.reg("blk")), nblk = pb.reg(names.reg("nblk")),
               w = pb.reg(names.reg("w")), x = pb.reg(names.reg("x")),
               slot = pb.reg(names.reg("slot")), off = pb.reg(names.reg("off")),
               addr = pb.reg(map.addr), capReg = pb.reg(map.capReg),
               countAddr = pb.reg(map.countAddr),
               overflow = pb.reg(map.overflow);
  pb.inst("cvt").u(64).u(32).create({w, units});
  pb.inst("mul").mod("lo").u(64).create({slot, blk, w});
  pb.inst("cvt").u(64).u(32).create({x, t1});
  pb.inst("add").u(64).create({slot, slot, x});
  // %__pr_w: slots in the grid; %__pr_x: bytes per slot.
  pb.inst("mul").mod("lo").u(64).create({w, w, nblk});
  pb.inst("ld").mod("param").u(32).create({capReg, pb.addr(map.capParam)});
  pb.inst("mul").mod("wide").u(32).create({x, capReg, map.recordBytes});
  // Offsets in %__pr_off, each address the buffer's plus an offset (the
  // form the verifier proves): counts start after the records.
  pb.inst("mul").mod("lo").u(64).create({off, w, x});
  pb.inst("add").u(64).create({off, off, kRoundUp});
  pb.inst("and").b(64).create({off, off, kRoundMask});
  pb.inst("mad").mod("lo").u(64).create(
      {countAddr, slot, kSlotCountBytes, addr});
  pb.inst("add").u(64).create({countAddr, countAddr, off});
  // The overflow counter after the counts.
  pb.inst("mad").mod("lo").u(64).create({off, w, kSlotCountBytes, off});
  pb.inst("add").u(64).create({off, off, kRoundUp});
  pb.inst("and").b(64).create({off, off, kRoundMask});
  pb.inst("add").u(64).create({overflow, addr, off});
  pb.inst("mad").mod("lo").u(64).create({addr, slot, x, addr});
  pb.inst("mov").u(32).create({pb.reg(map.count), 0});
}

void probe::removeProbes(EntryOp entry) {
  SmallVector<ProbeOp> probeOps;
  entry.walk<WalkOrder::PreOrder>([&](ProbeOp op) {
    probeOps.push_back(op);
    return WalkResult::skip();
  });
  for (ProbeOp op : probeOps)
    op->erase();
  if (std::optional<ProbePlan> plan = getProbePlan(entry)) {
    ArrayRef<Attribute> params = entry.getParams().getValue();
    entry.setParamsAttr(ArrayAttr::get(
        entry.getContext(),
        params.take_front(std::min<size_t>(plan->params, params.size()))));
  }
  removeProbeScratch(entry);
  entry->removeAttr(GPUOptDialect::ProbesAttrHelper::getNameStr());
}

namespace {
struct ProbeLowerPass : public gpuopt::impl::ProbeLowerBase<ProbeLowerPass> {
  using ProbeLowerBase::ProbeLowerBase;

  void runOnOperation() override {
    SmallVector<EntryOp> entries;
    getOperation().walk([&](EntryOp entry) {
      if (getProbePlan(entry))
        entries.push_back(entry);
    });
    ProbeCache cache;
    ProbeLowering lowering;
    for (EntryOp entry : entries) {
      ProbePlan plan = *getProbePlan(entry);
      FailureOr<ArrayRef<CheckedProbe>> probes = cache.get(plan, &getContext());
      if (failed(probes) ||
          failed(lowering.lower(entry, *probes, !plan.inlineExits)))
        return signalPassFailure();
      // The plan stays for --probe-keep-occupancy, which may probe the
      // kernel again; without it, nothing follows.
      if (!plan.before) {
        removeProbePlan(entry);
        continue;
      }
      plan.exitFunction = lowering.getExitFunction().str();
      setProbePlan(entry, plan);
    }
  }
};
} // namespace
