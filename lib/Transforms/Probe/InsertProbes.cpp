//===- InsertProbes.cpp - Instrument kernels with probes ------------------===//
//
// `--probe=SPEC[,SPEC...]`: reads each probe spec (a built-in name or a YAML
// file), checks its snippets, and instruments every `.entry`:
//
//  - one `.param .u64 .ptr .global` buffer per record map, appended to the
//    kernel's parameters;
//  - the `kernel.entry` snippets at the start, and the `kernel.exit`
//    snippets before every `ret` and `exit` of the kernel (a guarded one is
//    branched around) and at the end of a body that falls off it;
//  - the record slot of each thread, warp or block, with the same rounding
//    as the host (`ProbeBuffer::bufferBytes`: warps = ceil(threads / 32)):
//    computed once at entry, or, for a map saved only at exits within its
//    capacity, at the exit by the threads that write (the others leave
//    first), so that the kernel keeps its registers;
//  - `save.MAP v...`: stores into a fixed record when the saves a thread can
//    make fit the capacity ("static" maps), else stores guarded by a
//    per-thread count, a full slot bumping the overflow counter after the
//    records instead of writing.
//
// Snippets may use only the probe's own registers, special registers and
// immediates, and no memory, barrier or control-flow instruction: what a
// probe writes is then provably its own registers and its buffer, and the
// kernel's control flow is unchanged. The entry gets a `gpuopt.probes`
// attribute from which `--manifest` writes each map's layout.
//
//===----------------------------------------------------------------------===//

#include "gpuopt/Analysis/KernelAnalysis.h"
#include "gpuopt/Analysis/KernelLookup.h"
#include "gpuopt/Support/ProbeSpec.h"
#include "gpuopt/Target/PTX/ExportPTX.h"
#include "gpuopt/Transforms/HFuse/FusionModel.h"
#include "gpuopt/Transforms/Passes.h"
#include "gpuopt/Transforms/StatementBuilder.h"
#include "ptx/IR/PTXSyntax.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MathExtras.h"

namespace gpuopt {
#define GEN_PASS_DEF_PROBE
#include "gpuopt/Transforms/Passes.h.inc"
} // namespace gpuopt

using namespace mlir;
using namespace gpuopt;
using namespace gpuopt::ptx;
using namespace gpuopt::probe;

namespace {

/// One instruction of a snippet, parsed once and built at every point.
struct SnippetInst {
  InstructionSyntax syntax;
  Location loc;
};

/// What the named operands of an instruction snippet stand for at one
/// instruction. A register `bytes` (a copy size operand) is copied into the
/// probe's 32- and 64-bit registers.
struct NamedValues {
  Attribute bytes, bytes32, addr, site;
};

/// A record map as laid out in the buffer.
struct MapLayout {
  const MapSpec *spec = nullptr;
  std::string probeName;
  std::string param;
  SmallVector<int64_t> offsets;
  int64_t recordBytes = 0;
  /// Registers holding the next record's address and the records written.
  std::string addr, count, overflow;
  /// save.MAP statements in the entry and in the exit snippets. Each exit
  /// path runs the exit snippets once, so a thread saves at most
  /// entrySaves + exitSaves records: when that fits the capacity, every
  /// save has a fixed record and needs no counter ("static").
  int64_t entrySaves = 0, exitSaves = 0, instSaves = 0;
  bool isStatic = false;
  /// Static, and its probe carries state in local memory: the slot address
  /// (0 for a thread that does not write) waits in `local` from the entry to
  /// the exits instead of in a register (`carry: local`).
  bool carried = false;
  std::string local, has;
  /// Static, saved only at exits, state in registers: only the threads that
  /// write compute the slot, at the exit.
  bool atExit = false;
  /// Saved at exits only, and every value it saves stays zero in this
  /// kernel (set to 0 at entry, changed by no point that matched): the
  /// runtime zeroes the buffer, so its saves store nothing.
  bool zeroRecords = false;
  /// The record the next save writes (static maps), while emitting.
  int64_t nextRecord = 0;
  /// `capacity: dynamic`: the capacity arrives in a .u32 parameter, and each
  /// writer stores, at its exit, how many records it tried to save into the
  /// slot counts after the records (the runtime's counting launch sizes the
  /// buffer from them).
  bool dynamic = false;
  std::string capParam, capReg, countAddr;
  /// A fused kernel's records end with the part that wrote them; -1 for a
  /// block-level record of a thread-split kernel, whose block runs every
  /// part.
  bool partField = false;
  bool partIsWholeBlock = false;
};

/// A parsed and checked probe spec.
struct CheckedProbe {
  ProbeSpec spec;
  /// Probe register -> (renamed register, type).
  llvm::StringMap<std::pair<std::string, std::string>> registers;
  std::vector<SmallVector<SnippetInst>> points;
  /// Which named operands ({bytes}, {addr}, {site}) each point's snippet
  /// uses.
  std::vector<unsigned> uses;
  /// Probe registers set at entry and read at exit, carried in local
  /// memory: (register, local variable, type).
  SmallVector<std::tuple<std::string, std::string, std::string>> carried;
};

/// Builds into a new ptx.probe at the builder's insertion point; when it
/// goes out of scope, the builder goes on after the op.
class ProbeOpInsertion {
public:
  ProbeOpInsertion(OpBuilder &builder, Location loc, StringRef point,
                   ArrayAttr buffers = {})
      : builder(builder), op(ProbeOp::create(builder, loc, point, buffers)) {
    builder.setInsertionPointToEnd(op.getBodyBlock());
  }
  ProbeOpInsertion(const ProbeOpInsertion &) = delete;
  ProbeOpInsertion &operator=(const ProbeOpInsertion &) = delete;
  ~ProbeOpInsertion() { builder.setInsertionPointAfter(op); }

private:
  OpBuilder &builder;
  ProbeOp op;
};

class ProbeInserter {
public:
  ProbeInserter(ModuleOp root, ArrayRef<CheckedProbe> probes,
                bool allowExitFunction = true)
      : root(root), probes(probes), allowExitFunction(allowExitFunction) {}

  LogicalResult instrument(EntryOp entry);
  /// The exit function the last instrument() built, or null.
  FuncOp getExitFunction(EntryOp entry) {
    if (exitFunction.empty())
      return {};
    return dyn_cast_or_null<FuncOp>(SymbolTable::lookupSymbolIn(
        entry->getParentOfType<PTXModuleOp>(), exitFunction));
  }

private:
  LogicalResult emitSave(StatementBuilder &sb, const CheckedProbe &probe,
                         const SnippetInst &inst);
  LogicalResult emitSnippet(StatementBuilder &sb, const CheckedProbe &probe,
                            ArrayRef<SnippetInst> snippet,
                            const NamedValues &named = {});
  /// The instruction points: their snippets around every matching
  /// instruction of the kernel body.
  LogicalResult emitInstructionPoints(ArrayRef<InstOp> kernelInsts,
                                      StatementBuilder &sb);
  LogicalResult emitPoint(StatementBuilder &sb, PointKind kind);
  /// The slot addresses (and writers, counters) of the maps computed at
  /// entry (`exitMaps` false) or at each exit.
  void emitSlots(StatementBuilder &sb, bool exitMaps);
  /// A dynamic map's slot, count and overflow addresses, from the capacity
  /// parameter (after the linear indices of emitSlots).
  void emitDynamicSlot(StatementBuilder &sb, const MapLayout &map);
  /// The stores of one record: `values` (registers, in field order) at
  /// `map.addr + base`, and the `part` field of a fused kernel's record.
  /// Neighbouring fields of one size go into one vector store where the
  /// record's alignment allows: fewer instructions and memory requests in
  /// the kernel's own issue slots. A field that stays zero is still stored
  /// when the record has others: records with holes leave 32-byte sectors
  /// partly written, which cost more than the bytes saved (gmem_bytes
  /// storing 8 of its 16 bytes per thread: 1.13x instead of 1.07x on an
  /// H100).
  void emitRecordStores(StatementBuilder &sb, const MapLayout &map,
                        StringRef guard, int64_t base,
                        ArrayRef<std::string> values);
  /// At an exit, before its first save: the carried maps' addresses.
  void reloadSlots(StatementBuilder &sb);
  /// At an exit, first: threads that write no record go to the exit.
  void skipNonWritersAtExit(StatementBuilder &sb);
  Attribute rename(const CheckedProbe &probe, Attribute operand);
  /// The probe registers, the slot computation's and each map's.
  void declareRegisters(StatementBuilder &sb);
  /// The maps' buffer parameters, which the probe ops name (in the exit
  /// function, those it takes: not the maps whose records stay zero).
  ArrayAttr getBufferNames(bool exitFunctionParams = false) {
    SmallVector<Attribute> names;
    for (const MapLayout &map : maps)
      if (!exitFunctionParams || !map.zeroRecords)
        names.push_back(StringAttr::get(root.getContext(), map.param));
    return ArrayAttr::get(root.getContext(), names);
  }
  /// Adds the registers the snippet's instructions write to `written`.
  void noteWrites(const CheckedProbe &probe, ArrayRef<SnippetInst> snippet,
                  llvm::StringSet<> &written);

  /// The exit code can go into a function that each exit calls when every
  /// map is written at exits only, from registers: then the exit function
  /// computes the slot itself, and ptxas cannot keep the kernel's own
  /// %tid/%ctaid reads live to the exit for it. Decides, and chooses the
  /// registers passed (set before the exit, read at it) and those the
  /// function sets itself (constants).
  bool planExitFunction();
  /// Sets MapLayout::zeroRecords, once the instruction points are in.
  /// Returns whether every map has zero records.
  bool findZeroRecordMaps();
  /// A probe register set before the exits only by one unguarded
  /// `mov r, imm` at entry (no instruction point that matched writes it),
  /// with that instruction; once the instruction points are in.
  struct EntryConstant {
    const CheckedProbe *probe;
    const SnippetInst *inst;
  };
  llvm::StringMap<EntryConstant> findEntryConstants();
  /// `.func __pr_exit_<kernel>` before the kernel: the exit code.
  void buildExitFunction(EntryOp entry);
  /// The call of the exit function at the builder, under `guard`.
  void emitExitCall(OpBuilder &builder, Location loc, StringRef guard);
  /// Calls on every path to each exit (before the branches into a block
  /// that only returns, else before the exit) and at a body's end.
  void placeExitCalls(EntryOp entry, ArrayRef<InstOp> exits, bool fallsOffEnd);

  ModuleOp root;
  ArrayRef<CheckedProbe> probes;
  bool allowExitFunction;
  std::vector<MapLayout> maps;
  unsigned labelCounter = 0;
  bool exitSlotsPending = false;
  bool inExit = false;
  /// Where threads that write nothing at this exit go.
  std::string exitSkipLabel;
  /// A fused kernel: records name their part.
  bool hasParts = false;
  /// Probe registers that inserted instruction snippets write.
  llvm::StringSet<> writtenAtInstructions;
  /// The exit function, its register arguments (register, .param type) and
  /// the entry instructions it repeats to set constants.
  std::string exitFunction;
  SmallVector<std::pair<std::string, std::string>> exitArgs;
  SmallVector<EntryConstant> exitConstants;
};

} // namespace

/// The named operands of instruction snippets. Each parses as an immediate
/// that no snippet writes, replaced at every instruction: `{bytes}` by what
/// it moves, `{addr}` by its effective address, `{site}` by its position
/// among the kernel's instructions.
enum NamedOperand : unsigned { kBytes = 1, kAddr = 2, kSite = 4 };
struct NamedOperandSpelling {
  StringLiteral text;
  NamedOperand kind;
  int64_t sentinel;
};
constexpr NamedOperandSpelling kNamedOperands[] = {
    {"{bytes}", kBytes, 0x7ffffffe5eb17e5},
    {"{addr}", kAddr, 0x7ffffffe5ead0d5},
    {"{site}", kSite, 0x7ffffffe5e5173e}};

/// Parses each snippet line by line into instructions, with the location of
/// each in the spec file, and checks what it may touch.
static FailureOr<CheckedProbe> checkProbe(ProbeSpec spec, MLIRContext *ctx) {
  CheckedProbe probe{std::move(spec), {}, {}};
  const ProbeSpec &s = probe.spec;
  for (const TypedName &reg : s.registers) {
    // `%smid` in a snippet must stay the hardware's.
    if (isSpecialRegisterName("%" + reg.name))
      return emitError(reg.loc) << "register '" << reg.name
                                << "' would shadow the special register %"
                                << reg.name << ": choose another name";
    probe.registers[reg.name] = {("%__pr_" + s.name + "_" + reg.name),
                                 reg.type};
  }
  for (const PointSpec &point : s.points) {
    SmallVector<SnippetInst> &insts = probe.points.emplace_back();
    unsigned &uses = probe.uses.emplace_back(0);
    for (const NamedOperandSpelling &named : kNamedOperands)
      if (StringRef(point.ptx).contains(named.text))
        uses |= named.kind;
    SmallVector<StringRef> lines;
    StringRef(point.ptx).split(lines, '\n');
    for (auto [lineNo, fullLine] : llvm::enumerate(lines)) {
      StringRef line = fullLine.split("//").first;
      size_t column = 0;
      while (!line.trim().empty()) {
        auto [stmt, rest] = line.split(';');
        size_t lead = stmt.size() - stmt.ltrim().size();
        StringRef text = stmt.trim();
        Location loc =
            FileLineColLoc::get(ctx, s.file, point.firstLine + lineNo,
                                point.indent + column + lead + 1);
        column += stmt.size() + 1;
        line = rest;
        if (text.empty())
          continue;
        std::string copy = text.str();
        for (const NamedOperandSpelling &named : kNamedOperands) {
          if (copy.find(named.text) == std::string::npos)
            continue;
          if (point.kind != PointKind::Instruction)
            return emitError(loc) << "probe '" << s.name << "': " << named.text
                                  << " exists only at instruction points";
          for (size_t at; (at = copy.find(named.text)) != std::string::npos;)
            copy.replace(at, named.text.size(), std::to_string(named.sentinel));
        }
        Parser parser(copy, ctx, [&](const char *) { return loc; });
        parser.allowEofAsStatementEnd = true;
        InstructionSyntax syntax;
        if (failed(parser.parseInstruction(syntax)))
          return failure();
        StringRef opcode = syntax.opcode.getValue();
        if (ProbeOp::isForbiddenOpcode(opcode))
          return emitError(loc)
                 << "probe '" << s.name << "': '" << opcode
                 << "' is not allowed in a snippet: snippets compute in the "
                    "probe's registers and write only through save.MAP, so "
                    "that the kernel's memory, barriers and control flow "
                    "stay as they are";
        if (syntax.guard &&
            !probe.registers.count(syntax.guard.getBaseName().drop_front()))
          return emitError(loc) << "probe '" << s.name << "': the guard "
                                << syntax.guard.getName()
                                << " is not one of the probe's registers";
        // Every register must be the probe's own: a probe never reads or
        // writes the kernel's registers.
        std::string error;
        for (Attribute operand : syntax.operands)
          walkOperandLeaves(operand, [&](Attribute leaf) {
            if (!error.empty())
              return;
            if (auto reg = dyn_cast<RegisterAttr>(leaf)) {
              StringRef name = reg.getBaseName();
              if (!name.starts_with("%") ||
                  !probe.registers.count(name.drop_front()))
                error = ("'" + reg.getName() +
                         "' is not one of the probe's registers (declare it "
                         "under 'registers:'; a probe may not use the "
                         "kernel's)")
                            .str();
            } else if (isa<AddressAttr, LabelRefAttr, FlatSymbolRefAttr>(
                           leaf)) {
              error = "snippets take no addresses, labels or symbols";
            }
          });
        if (!error.empty())
          return emitError(loc) << "probe '" << s.name << "': " << error;
        if (opcode == "save") {
          if (syntax.modifiers.size() != 1)
            return emitError(loc)
                   << "probe '" << s.name
                   << "': write save.MAP with one of the maps: "
                   << llvm::join(llvm::map_range(s.maps,
                                                 [](const MapSpec &m) {
                                                   return StringRef(m.name);
                                                 }),
                                 ", ");
          StringRef mapName = cast<StringAttr>(syntax.modifiers[0]).getValue();
          const MapSpec *map = nullptr;
          for (const MapSpec &m : s.maps)
            if (m.name == mapName)
              map = &m;
          if (!map)
            return emitError(loc) << "probe '" << s.name << "': no map named '"
                                  << mapName << "'";
          if (syntax.operands.size() != map->fields.size())
            return emitError(loc)
                   << "save." << mapName << " takes " << map->fields.size()
                   << " values (one per field), not " << syntax.operands.size();
          for (auto [operand, field] :
               llvm::zip(syntax.operands, map->fields)) {
            auto reg = dyn_cast<RegisterAttr>(operand);
            if (!reg)
              return emitError(loc)
                     << "save." << mapName << " takes registers, one per field";
            const auto &decl = probe.registers[reg.getName().drop_front()];
            if (getTypeBytes(decl.second) != getTypeBytes(field.type))
              return emitError(loc)
                     << "save." << mapName << ": " << reg.getName() << " is ."
                     << decl.second << " but field '" << field.name << "' is ."
                     << field.type;
          }
        }
        insts.push_back({syntax, loc});
      }
    }
  }
  if (!s.carryInRegisters) {
    // Written at entry (the first operand of an entry instruction) and read
    // at an exit.
    llvm::StringSet<> setAtEntry, readAtExit;
    for (auto [point, insts] : llvm::zip(s.points, probe.points))
      for (const SnippetInst &inst : insts)
        for (auto [i, operand] : llvm::enumerate(inst.syntax.operands))
          walkOperandLeaves(operand, [&](Attribute leaf) {
            auto reg = dyn_cast<RegisterAttr>(leaf);
            if (!reg)
              return;
            StringRef name = reg.getBaseName().drop_front();
            if (point.kind == PointKind::KernelEntry && i == 0 &&
                inst.syntax.opcode.getValue() != "save")
              setAtEntry.insert(name);
            if (point.kind == PointKind::KernelExit)
              readAtExit.insert(name);
          });
    for (const TypedName &reg : s.registers)
      if (reg.type != "pred" && setAtEntry.contains(reg.name) &&
          readAtExit.contains(reg.name))
        probe.carried.push_back({probe.registers[reg.name].first,
                                 "__pr_local_" + s.name + "_" + reg.name,
                                 reg.type});
  }
  return probe;
}

Attribute ProbeInserter::rename(const CheckedProbe &probe, Attribute operand) {
  return mapOperandLeaves(operand, [&](Attribute leaf) -> Attribute {
    if (auto reg = dyn_cast<RegisterAttr>(leaf)) {
      StringRef name = reg.getName();
      StringRef base = reg.getBaseName();
      auto it = probe.registers.find(base.drop_front());
      if (it != probe.registers.end())
        return RegisterAttr::get(reg.getContext(),
                                 it->second.first +
                                     name.drop_front(base.size()).str());
    }
    return leaf;
  });
}

LogicalResult ProbeInserter::emitSave(StatementBuilder &sb,
                                      const CheckedProbe &probe,
                                      const SnippetInst &inst) {
  StringRef mapName = cast<StringAttr>(inst.syntax.modifiers[0]).getValue();
  MapLayout *map = &*llvm::find_if(
      maps, [&](const MapLayout &m) { return m.spec->name == mapName; });
  if (map->zeroRecords)
    return success();
  sb.setLoc(inst.loc);
  auto operandRegisters = [&] {
    SmallVector<std::string> regs;
    for (Attribute operand : inst.syntax.operands)
      regs.push_back(
          cast<RegisterAttr>(rename(probe, operand)).getName().str());
    return regs;
  };
  StringRef lead = map->spec->level == Level::Thread ? ""
                   : map->spec->level == Level::Warp ? "%__pr_lead_warp"
                                                     : "%__pr_lead_block";
  if (map->isStatic) {
    // A fixed record: stores by the slot's writer, nothing to count.
    int64_t base = map->nextRecord++ * map->recordBytes;
    // At an exit that let only the writers through, no guard is needed.
    std::string guard = lead.empty() || (inExit && !exitSkipLabel.empty()) ? ""
                        : map->carried && inExit ? "@" + map->has + " "
                                                 : ("@" + lead + " ").str();
    emitRecordStores(sb, *map, guard, base, operandRegisters());
    return success();
  }
  // ok: this thread writes the slot and the slot has room; over: it would
  // write, but the slot is full.
  std::string cap =
      map->dynamic ? map->capReg : std::to_string(map->spec->capacity);
  if (lead.empty()) {
    sb.inst("setp.lt.u32 %__pr_ok, " + map->count + ", " + cap);
    sb.inst("setp.ge.u32 %__pr_over, " + map->count + ", " + cap);
  } else {
    sb.inst("setp.lt.and.u32 %__pr_ok, " + map->count + ", " + cap + ", " +
            lead);
    sb.inst("setp.ge.and.u32 %__pr_over, " + map->count + ", " + cap + ", " +
            lead);
  }
  emitRecordStores(sb, *map, "@%__pr_ok ", 0, operandRegisters());
  sb.inst("@%__pr_ok add.u64 " + map->addr + ", " + map->addr + ", " +
          std::to_string(map->recordBytes));
  // Every save is counted, kept or not: a dynamic map's count is the
  // capacity it needs.
  sb.inst("add.u32 " + map->count + ", " + map->count + ", 1");
  sb.inst("@%__pr_over red.global.add.u64 [" + map->overflow + "], 1");
  return success();
}

void ProbeInserter::emitRecordStores(StatementBuilder &sb, const MapLayout &map,
                                     StringRef guard, int64_t base,
                                     ArrayRef<std::string> values) {
  SmallVector<std::string> regs(values);
  SmallVector<int64_t> sizes;
  for (const TypedName &field : map.spec->fields)
    sizes.push_back(getTypeBytes(field.type));
  if (map.partField) {
    if (map.partIsWholeBlock)
      sb.inst("mov.u32 %__pr_w32, -1");
    regs.push_back(map.partIsWholeBlock ? "%__pr_w32" : "%__pr_part");
    sizes.push_back(4);
  }
  // Every record starts at a multiple of the largest power of two dividing
  // the record size (buffers are 256-byte aligned; a slot is a whole number
  // of records).
  int64_t align = map.recordBytes & -map.recordBytes;
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
    std::string type = ".b" + std::to_string(bytes * 8);
    std::string address =
        " [" + map.addr + "+" + std::to_string(offset) + "], ";
    if (width == 1) {
      sb.inst(guard + "st.global" + type + address + regs[i]);
    } else {
      std::string list =
          "{" + llvm::join(ArrayRef(regs).slice(i, width), ", ") + "}";
      sb.inst(guard + "st.global.v" + std::to_string(width) + type + address +
              list);
    }
    i += width;
  }
}

LogicalResult ProbeInserter::emitSnippet(StatementBuilder &sb,
                                         const CheckedProbe &probe,
                                         ArrayRef<SnippetInst> snippet,
                                         const NamedValues &named) {
  OpBuilder &builder = sb.getBuilder();
  for (const SnippetInst &inst : snippet) {
    if (inst.syntax.opcode.getValue() == "save") {
      if (exitSlotsPending) {
        exitSlotsPending = false;
        reloadSlots(sb);
      }
      // `@%p save.m ...`: the save's stores (and count) only when %p holds.
      std::string skip;
      if (inst.syntax.guard) {
        skip = "$__pr_skip_" + std::to_string(labelCounter++);
        auto guard = cast<RegisterAttr>(rename(probe, inst.syntax.guard));
        sb.inst(Twine("@") + (inst.syntax.guardNegated ? "" : "!") +
                guard.getName() + " bra " + skip);
      }
      if (failed(emitSave(sb, probe, inst)))
        return failure();
      if (!skip.empty())
        sb.label(skip);
      continue;
    }
    // A 64-bit instruction takes the 64-bit copy of a register size.
    bool wide = llvm::any_of(inst.syntax.modifiers, [](Attribute m) {
      return getTypeSize(("." + cast<StringAttr>(m).getValue()).str()) == 8;
    });
    SmallVector<Attribute> operands;
    for (Attribute operand : inst.syntax.operands)
      operands.push_back(
          mapOperandLeaves(rename(probe, operand), [&](Attribute leaf) {
            auto imm = dyn_cast<IntImmAttr>(leaf);
            if (!imm)
              return leaf;
            for (const NamedOperandSpelling &spelling : kNamedOperands) {
              if (imm.getValue() != spelling.sentinel)
                continue;
              Attribute value =
                  spelling.kind == kBytes
                      ? (wide || !named.bytes32 ? named.bytes : named.bytes32)
                  : spelling.kind == kAddr ? named.addr
                                           : named.site;
              return value ? value : leaf;
            }
            return leaf;
          }));
    RegisterAttr guard;
    if (inst.syntax.guard)
      guard = cast<RegisterAttr>(rename(probe, inst.syntax.guard));
    InstOp::create(builder, inst.loc, guard,
                   inst.syntax.guardNegated ? builder.getUnitAttr()
                                            : UnitAttr(),
                   inst.syntax.opcode, inst.syntax.modifiers,
                   builder.getArrayAttr(operands));
  }
  return success();
}

LogicalResult ProbeInserter::emitPoint(StatementBuilder &sb, PointKind kind) {
  for (MapLayout &map : maps)
    map.nextRecord = kind == PointKind::KernelEntry ? 0 : map.entrySaves;
  // Exit slots are computed at the first save, after the snippet's reads of
  // the clocks, so that they time the kernel rather than the probe.
  exitSlotsPending = kind == PointKind::KernelExit;
  inExit = kind == PointKind::KernelExit;
  if (inExit)
    skipNonWritersAtExit(sb);
  if (kind == PointKind::KernelExit)
    for (const CheckedProbe &probe : probes)
      for (const auto &[reg, var, type] : probe.carried)
        sb.inst("ld.local." + type + " " + reg + ", [" + var + "]");
  for (const CheckedProbe &probe : probes)
    for (auto [point, snippet] : llvm::zip(probe.spec.points, probe.points))
      if (point.kind == kind && failed(emitSnippet(sb, probe, snippet)))
        return failure();
  if (kind == PointKind::KernelExit)
    for (const MapLayout &map : maps) {
      if (!map.dynamic)
        continue;
      StringRef lead = map.spec->level == Level::Thread ? ""
                       : map.spec->level == Level::Warp ? "@%__pr_lead_warp "
                                                        : "@%__pr_lead_block ";
      sb.inst(lead + "st.global.u32 [" + map.countAddr + "], " + map.count);
    }
  if (kind == PointKind::KernelEntry) {
    for (const CheckedProbe &probe : probes)
      for (const auto &[reg, var, type] : probe.carried)
        sb.inst("st.local." + type + " [" + var + "], " + reg);
    for (const MapLayout &map : maps) {
      if (!map.carried)
        continue;
      if (map.spec->level != Level::Thread)
        sb.inst("selp.b64 " + map.addr + ", " + map.addr + ", 0, " +
                (map.spec->level == Level::Warp ? "%__pr_lead_warp"
                                                : "%__pr_lead_block"));
      sb.inst("st.local.u64 [" + map.local + "], " + map.addr);
    }
  }
  if (!exitSkipLabel.empty()) {
    sb.label(exitSkipLabel);
    exitSkipLabel.clear();
  }
  return success();
}

static void declareVariable(OpBuilder &builder, Location loc, StringRef space,
                            StringRef type, StringRef name) {
  VarOp::create(builder, loc, builder.getStringAttr(name), StringAttr(),
                builder.getStringAttr(space), IntegerAttr(), IntegerAttr(),
                builder.getStringAttr(type), builder.getDenseI64ArrayAttr({}),
                StringAttr(), ArrayAttr());
}

void ProbeInserter::declareRegisters(StatementBuilder &sb) {
  OpBuilder &builder = sb.getBuilder();
  Location loc = builder.getUnknownLoc();
  for (const CheckedProbe &probe : probes) {
    for (const TypedName &reg : probe.spec.registers)
      sb.reg("." + reg.type, probe.registers.lookup(reg.name).first);
    for (const auto &[reg, var, type] : probe.carried)
      declareVariable(builder, loc, ".local", "." + type, var);
  }
  for (StringRef name :
       {"%__pr_t0", "%__pr_t1", "%__pr_t2", "%__pr_n0", "%__pr_n1", "%__pr_n2"})
    sb.reg(".b32", name);
  sb.reg(".b32", "%__pr_lin");
  sb.reg(".b32", "%__pr_units");
  sb.reg(".b64", "%__pr_blk");
  sb.reg(".b64", "%__pr_nblk");
  sb.reg(".b64", "%__pr_w");
  sb.reg(".b32", "%__pr_w32");
  sb.reg(".b64", "%__pr_a");
  sb.reg(".b64", "%__pr_x");
  sb.reg(".b64", "%__pr_slot");
  sb.reg(".b64", "%__pr_off");
  if (hasParts)
    sb.reg(".b32", "%__pr_part");
  sb.reg(".pred", "%__pr_lead_warp");
  sb.reg(".pred", "%__pr_lead_block");
  sb.reg(".pred", "%__pr_ok");
  sb.reg(".pred", "%__pr_over");
  for (const MapLayout &map : maps) {
    if (map.carried) {
      declareVariable(builder, loc, ".local", ".u64", map.local);
      sb.reg(".pred", map.has);
    }
    sb.reg(".b64", map.addr);
    sb.reg(".b64", map.overflow);
    sb.reg(".b32", map.count);
    if (map.dynamic) {
      sb.reg(".b32", map.capReg);
      sb.reg(".b64", map.countAddr);
    }
  }
}

/// The base names of the registers `operand` names.
static void collectRegisters(Attribute operand, llvm::StringSet<> &names) {
  walkOperandLeaves(operand, [&](Attribute leaf) {
    if (auto reg = dyn_cast<RegisterAttr>(leaf))
      names.insert(reg.getBaseName());
  });
}

void ProbeInserter::noteWrites(const CheckedProbe &probe,
                               ArrayRef<SnippetInst> snippet,
                               llvm::StringSet<> &written) {
  for (const SnippetInst &inst : snippet)
    if (inst.syntax.opcode.getValue() != "save" &&
        !inst.syntax.operands.empty())
      collectRegisters(rename(probe, inst.syntax.operands[0]), written);
}

llvm::StringMap<ProbeInserter::EntryConstant>
ProbeInserter::findEntryConstants() {
  llvm::StringMap<EntryConstant> constants;
  llvm::StringMap<unsigned> entryWrites;
  for (const CheckedProbe &probe : probes)
    for (auto [point, snippet] : llvm::zip(probe.spec.points, probe.points)) {
      if (point.kind != PointKind::KernelEntry)
        continue;
      for (const SnippetInst &inst : snippet) {
        llvm::StringSet<> written;
        noteWrites(probe, inst, written);
        for (const auto &name : written) {
          ++entryWrites[name.getKey()];
          if (inst.syntax.opcode.getValue() == "mov" && !inst.syntax.guard &&
              inst.syntax.operands.size() == 2 &&
              isa<IntImmAttr>(inst.syntax.operands[1]))
            constants[name.getKey()] = {&probe, &inst};
        }
      }
    }
  for (const auto &[name, writes] : entryWrites)
    if (writes != 1 || writtenAtInstructions.contains(name))
      constants.erase(name);
  return constants;
}

bool ProbeInserter::findZeroRecordMaps() {
  // Registers that stay zero: entry constants 0 that no exit snippet
  // writes either.
  llvm::StringSet<> writtenAtExit;
  for (const CheckedProbe &probe : probes)
    for (auto [point, snippet] : llvm::zip(probe.spec.points, probe.points))
      if (point.kind == PointKind::KernelExit)
        noteWrites(probe, snippet, writtenAtExit);
  llvm::StringMap<EntryConstant> constants = findEntryConstants();
  auto staysZero = [&](Attribute operand) {
    auto reg = dyn_cast<RegisterAttr>(operand);
    auto constant = reg ? constants.find(reg.getName()) : constants.end();
    return constant != constants.end() &&
           !writtenAtExit.contains(reg.getName()) &&
           cast<IntImmAttr>(constant->second.inst->syntax.operands[1])
                   .getValue() == 0;
  };
  // A fused kernel's records name their part even when zero.
  for (MapLayout &map : maps)
    map.zeroRecords = map.atExit && !map.partField;
  for (const CheckedProbe &probe : probes)
    for (const auto &snippet : probe.points)
      for (const SnippetInst &inst : snippet) {
        if (inst.syntax.opcode.getValue() != "save")
          continue;
        StringRef mapName =
            cast<StringAttr>(inst.syntax.modifiers[0]).getValue();
        MapLayout &map = *llvm::find_if(
            maps, [&](const MapLayout &m) { return m.spec->name == mapName; });
        map.zeroRecords &= llvm::all_of(inst.syntax.operands, [&](Attribute a) {
          return staysZero(rename(probe, a));
        });
      }
  return !maps.empty() &&
         llvm::all_of(maps, [](const MapLayout &m) { return m.zeroRecords; });
}

bool ProbeInserter::planExitFunction() {
  exitArgs.clear();
  exitConstants.clear();
  // Every map written at exits only, from registers: the exit code needs
  // nothing else from the kernel.
  if (!allowExitFunction || maps.empty() ||
      !llvm::all_of(maps, [](const MapLayout &m) { return m.atExit; }))
    return false;
  llvm::StringSet<> readAtExit, setAtEntry;
  for (const CheckedProbe &probe : probes)
    for (auto [point, snippet] : llvm::zip(probe.spec.points, probe.points)) {
      if (point.kind == PointKind::KernelEntry)
        noteWrites(probe, snippet, setAtEntry);
      if (point.kind != PointKind::KernelExit)
        continue;
      for (const SnippetInst &inst : snippet) {
        for (Attribute operand : inst.syntax.operands)
          collectRegisters(rename(probe, operand), readAtExit);
        if (inst.syntax.guard)
          collectRegisters(rename(probe, inst.syntax.guard), readAtExit);
      }
    }
  // Constants set at entry: the exit function sets them itself, so the
  // kernel does not keep a constant live.
  llvm::StringMap<EntryConstant> constants = findEntryConstants();
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
    exitArgs.push_back({"%__pr_part", ".b32"});
  return true;
}

/// The exit function's parameter for probe register `%__pr_NAME`: NAME.
static std::string argName(StringRef reg) {
  reg.consume_front("%__pr_");
  return reg.str();
}

void ProbeInserter::buildExitFunction(EntryOp entry) {
  MLIRContext *ctx = entry.getContext();
  auto module = entry->getParentOfType<PTXModuleOp>();
  exitFunction = ("__pr_exit_" + entry.getSymName()).str();
  for (unsigned n = 1; SymbolTable::lookupSymbolIn(module, exitFunction); ++n)
    exitFunction = ("__pr_exit_" + entry.getSymName() + "_" + Twine(n)).str();
  // Parameters: each map's buffer under the kernel's parameter name (the
  // slot code reads it as at a kernel's exit), then the registers.
  SmallVector<Attribute> params;
  auto param = [&](StringRef type, StringRef name) {
    params.push_back(ParamDeclAttr::get(ctx, ".param", type, name,
                                        /*align=*/0, "", /*ptrAlign=*/0,
                                        /*arraySize=*/-1, /*isPtr=*/false));
  };
  for (const MapLayout &map : maps)
    if (!map.zeroRecords)
      param(".b64", map.param);
  for (const auto &[reg, type] : exitArgs)
    param(type, "__pr_in_" + argName(reg));
  OpBuilder builder(ctx);
  builder.setInsertionPoint(entry);
  Location loc = entry.getLoc();
  auto func = FuncOp::create(
      builder, loc, builder.getStringAttr(exitFunction), StringAttr(),
      builder.getArrayAttr(params), ArrayAttr(), DenseI32ArrayAttr(),
      DenseI32ArrayAttr(), IntegerAttr(), IntegerAttr(), ArrayAttr());
  builder.setInsertionPointToStart(&func.getBody().emplaceBlock());
  StatementBuilder sb(builder, loc);
  {
    ProbeOpInsertion probeOp(builder, loc, "kernel.exit",
                             getBufferNames(/*exitFunctionParams=*/true));
    declareRegisters(sb);
    for (const auto &[reg, type] : exitArgs)
      sb.inst("ld.param" + type + " " + reg + ", [__pr_in_" + argName(reg) +
              "]");
    for (const EntryConstant &constant : exitConstants)
      (void)emitSnippet(sb, *constant.probe, *constant.inst);
    (void)emitPoint(sb, PointKind::KernelExit);
  }
  sb.inst("ret");
}

void ProbeInserter::emitExitCall(OpBuilder &builder, Location loc,
                                 StringRef guard) {
  ProbeOpInsertion probeOp(builder, loc, "kernel.exit");
  // Call arguments live in a scope of their own, as compilers write them.
  auto scope = ScopeOp::create(builder, loc);
  OpBuilder::InsertionGuard insertion(builder);
  builder.setInsertionPointToStart(&scope.getBody().emplaceBlock());
  StatementBuilder sb(builder, loc);
  SmallVector<std::string> args;
  for (const MapLayout &map : maps) {
    if (map.zeroRecords)
      continue;
    std::string arg = "__pr_buf_" + map.spec->name;
    declareVariable(builder, loc, ".param", ".b64", arg);
    sb.inst("ld.param.u64 " + map.addr + ", [" + map.param + "]");
    sb.inst("st.param.b64 [" + arg + "], " + map.addr);
    args.push_back(arg);
  }
  for (const auto &[reg, type] : exitArgs) {
    std::string arg = "__pr_arg_" + argName(reg);
    declareVariable(builder, loc, ".param", type, arg);
    sb.inst("st.param" + type + " [" + arg + "], " + reg);
    args.push_back(arg);
  }
  sb.inst(guard + "call " + exitFunction + ", (" + llvm::join(args, ", ") +
          ")");
}

/// `@%p `, `@!%p ` (or its negation) for a guarded instruction, else "".
static std::string guardPrefix(InstOp inst, bool negate = false) {
  if (!inst.getGuard())
    return "";
  bool negated = inst.getGuardNegated() != negate;
  return (Twine("@") + (negated ? "!" : "") + inst.getGuard()->getName() + " ")
      .str();
}

void ProbeInserter::placeExitCalls(EntryOp entry, ArrayRef<InstOp> exits,
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
      emitExitCall(builder, loc, guardPrefix(exit));
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
      emitExitCall(builder, loc, "");
      continue;
    }
    for (LabelOp label : labels)
      for (InstOp branch : branchesTo.lookup(label.getName())) {
        builder.setInsertionPoint(branch);
        emitExitCall(builder, branch.getLoc(), guardPrefix(branch));
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
      emitExitCall(builder, loc, guardPrefix(previous, /*negate=*/true));
      continue;
    }
    builder.setInsertionPoint(labels.back());
    emitExitCall(builder, loc, "");
  }
  if (fallsOffEnd) {
    builder.setInsertionPointToEnd(&entry.getBody().front());
    emitExitCall(builder, entry.getLoc(), "");
  }
}

void ProbeInserter::reloadSlots(StatementBuilder &sb) {
  SmallVector<MapLayout *> carried;
  for (MapLayout &map : maps)
    if (map.carried)
      carried.push_back(&map);
  for (MapLayout *map : carried) {
    sb.inst("ld.local.u64 " + map->addr + ", [" + map->local + "]");
    if (map->spec->level != Level::Thread)
      sb.inst("setp.ne.u64 " + map->has + ", " + map->addr + ", 0");
  }
  // When every map is written by the same kind of leader, the other threads
  // have nothing left to do: they go to the exit.
  bool allLeaders = llvm::all_of(maps, [&](const MapLayout &m) {
    return (m.carried || m.atExit) && m.spec->level != Level::Thread &&
           m.spec->level == maps.front().spec->level;
  });
  if (!carried.empty() && allLeaders && carried.size() == maps.size()) {
    exitSkipLabel = "$__pr_done_" + std::to_string(labelCounter++);
    sb.inst("@!" + carried.front()->has + " bra " + exitSkipLabel);
  }
  if (llvm::none_of(maps, [](const MapLayout &m) { return m.atExit; }))
    return;
  emitSlots(sb, /*exitMaps=*/true);
}

void ProbeInserter::skipNonWritersAtExit(StatementBuilder &sb) {
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
  if (maps.front().spec->level == Level::Warp) {
    sb.inst("mov.u32 %__pr_t0, %laneid");
  } else {
    sb.inst("mov.u32 %__pr_t0, %tid.x");
    sb.inst("mov.u32 %__pr_t1, %tid.y");
    sb.inst("mov.u32 %__pr_t2, %tid.z");
    sb.inst("or.b32 %__pr_t0, %__pr_t0, %__pr_t1");
    sb.inst("or.b32 %__pr_t0, %__pr_t0, %__pr_t2");
  }
  sb.inst("setp.ne.u32 %__pr_ok, %__pr_t0, 0");
  exitSkipLabel = "$__pr_done_" + std::to_string(labelCounter++);
  sb.inst("@%__pr_ok bra " + exitSkipLabel);
}

void ProbeInserter::emitSlots(StatementBuilder &sb, bool exitMaps) {
  SmallVector<MapLayout *> chosen;
  for (MapLayout &map : maps)
    if (map.atExit == exitMaps && !map.zeroRecords)
      chosen.push_back(&map);
  if (chosen.empty())
    return;
  bool needBlocks =
      llvm::any_of(chosen, [](MapLayout *m) { return !m->isStatic; });
  // Linear thread index (x fastest) and threads per block.
  sb.inst("mov.u32 %__pr_t0, %tid.x");
  sb.inst("mov.u32 %__pr_t1, %tid.y");
  sb.inst("mov.u32 %__pr_t2, %tid.z");
  sb.inst("mov.u32 %__pr_n0, %ntid.x");
  sb.inst("mov.u32 %__pr_n1, %ntid.y");
  sb.inst("mov.u32 %__pr_n2, %ntid.z");
  sb.inst("mad.lo.u32 %__pr_lin, %__pr_t2, %__pr_n1, %__pr_t1");
  sb.inst("mad.lo.u32 %__pr_lin, %__pr_lin, %__pr_n0, %__pr_t0");
  sb.inst("mul.lo.u32 %__pr_n1, %__pr_n1, %__pr_n0");
  sb.inst("mul.lo.u32 %__pr_n2, %__pr_n2, %__pr_n1");
  // Writers: lane 0 of each warp (of the linear index, as the host counts
  // warps), thread 0 of the block.
  sb.inst("and.b32 %__pr_t0, %__pr_lin, 31");
  sb.inst("setp.eq.u32 %__pr_lead_warp, %__pr_t0, 0");
  sb.inst("setp.eq.u32 %__pr_lead_block, %__pr_lin, 0");
  // %__pr_n2: threads per block. Linear block index (x fastest):
  // (z * ny + y) fits 32 bits (ny, z, y < 65536), times nx plus x in 64.
  sb.inst("mov.u32 %__pr_t0, %ctaid.x");
  sb.inst("mov.u32 %__pr_t1, %ctaid.y");
  sb.inst("mov.u32 %__pr_t2, %ctaid.z");
  sb.inst("mov.u32 %__pr_n0, %nctaid.y");
  sb.inst("mov.u32 %__pr_n1, %nctaid.x");
  sb.inst("mad.lo.u32 %__pr_t2, %__pr_t2, %__pr_n0, %__pr_t1");
  sb.inst("cvt.u64.u32 %__pr_w, %__pr_t0");
  sb.inst("mad.wide.u32 %__pr_blk, %__pr_t2, %__pr_n1, %__pr_w");
  if (needBlocks) {
    sb.inst("mul.wide.u32 %__pr_nblk, %__pr_n0, %__pr_n1");
    sb.inst("mov.u32 %__pr_n0, %nctaid.z");
    sb.inst("cvt.u64.u32 %__pr_w, %__pr_n0");
    sb.inst("mul.lo.u64 %__pr_nblk, %__pr_nblk, %__pr_w");
  }
  for (MapLayout *map : chosen) {
    switch (map->spec->level) {
    case Level::Thread:
      sb.inst("mov.u32 %__pr_units, %__pr_n2");
      sb.inst("mov.u32 %__pr_t1, %__pr_lin");
      break;
    case Level::Warp:
      sb.inst("add.u32 %__pr_units, %__pr_n2, 31");
      sb.inst("shr.u32 %__pr_units, %__pr_units, 5");
      sb.inst("shr.u32 %__pr_t1, %__pr_lin, 5");
      break;
    case Level::Block:
      sb.inst("mov.u32 %__pr_units, 1");
      sb.inst("mov.u32 %__pr_t1, 0");
      break;
    }
    sb.inst("ld.param.u64 " + map->addr + ", [" + map->param + "]");
    sb.inst("cvta.to.global.u64 " + map->addr + ", " + map->addr);
    if (map->dynamic) {
      emitDynamicSlot(sb, *map);
      continue;
    }
    int64_t slotBytes = map->spec->capacity * map->recordBytes;
    // slot = (block * units + unit) * capacity * record bytes
    sb.inst("cvt.u64.u32 %__pr_w, %__pr_units");
    sb.inst("cvt.u64.u32 %__pr_slot, %__pr_t1");
    sb.inst("mad.lo.u64 %__pr_slot, %__pr_blk, %__pr_w, %__pr_slot");
    sb.inst("mad.lo.u64 " + map->addr + ", %__pr_slot, " +
            std::to_string(slotBytes) + ", " + map->addr);
    if (map->isStatic)
      continue;
    // The overflow counter: after all records, at a multiple of 8.
    sb.inst("cvt.u64.u32 %__pr_w, %__pr_units");
    sb.inst("mul.lo.u64 %__pr_slot, %__pr_nblk, %__pr_w");
    sb.inst("mul.lo.u64 %__pr_slot, %__pr_slot, " + std::to_string(slotBytes));
    sb.inst("add.u64 %__pr_slot, %__pr_slot, 7");
    sb.inst("and.b64 %__pr_slot, %__pr_slot, -8");
    sb.inst("ld.param.u64 " + map->overflow + ", [" + map->param + "]");
    sb.inst("cvta.to.global.u64 " + map->overflow + ", " + map->overflow);
    sb.inst("add.u64 " + map->overflow + ", " + map->overflow + ", %__pr_slot");
    sb.inst("mov.u32 " + map->count + ", 0");
  }
}

void ProbeInserter::emitDynamicSlot(StatementBuilder &sb,
                                    const MapLayout &map) {
  // The capacity is the runtime's; the buffer holds the records, then a u32
  // count per slot, then the overflow counter, each at a multiple of 8.
  std::string rb = std::to_string(map.recordBytes);
  sb.inst("cvt.u64.u32 %__pr_w, %__pr_units");
  sb.inst("mul.lo.u64 %__pr_slot, %__pr_blk, %__pr_w");
  sb.inst("cvt.u64.u32 %__pr_x, %__pr_t1");
  sb.inst("add.u64 %__pr_slot, %__pr_slot, %__pr_x");
  // %__pr_w: slots in the grid; %__pr_x: bytes per slot.
  sb.inst("mul.lo.u64 %__pr_w, %__pr_w, %__pr_nblk");
  sb.inst("ld.param.u32 " + map.capReg + ", [" + map.capParam + "]");
  sb.inst("mul.wide.u32 %__pr_x, " + map.capReg + ", " + rb);
  // Offsets in %__pr_off, each address the buffer's plus an offset (the
  // form the verifier proves): counts start after the records.
  sb.inst("mul.lo.u64 %__pr_off, %__pr_w, %__pr_x");
  sb.inst("add.u64 %__pr_off, %__pr_off, 7");
  sb.inst("and.b64 %__pr_off, %__pr_off, -8");
  sb.inst("mad.lo.u64 " + map.countAddr + ", %__pr_slot, 4, " + map.addr);
  sb.inst("add.u64 " + map.countAddr + ", " + map.countAddr + ", %__pr_off");
  // The overflow counter after the counts.
  sb.inst("mad.lo.u64 %__pr_off, %__pr_w, 4, %__pr_off");
  sb.inst("add.u64 %__pr_off, %__pr_off, 7");
  sb.inst("and.b64 %__pr_off, %__pr_off, -8");
  sb.inst("add.u64 " + map.overflow + ", " + map.addr + ", %__pr_off");
  sb.inst("mad.lo.u64 " + map.addr + ", %__pr_slot, %__pr_x, " + map.addr);
  sb.inst("mov.u32 " + map.count + ", 0");
}

namespace {
/// What a memory instruction moves (accessBytes).
struct AccessSize {
  /// An integer immediate or a 32-bit register; null when not known.
  Attribute bytes;
  /// cp.async's ignore-src predicate (`%p` or `!%p`): when it holds the copy
  /// reads nothing, so the size is 0.
  Attribute ignoreSrc;
};
} // namespace

/// Bytes a memory instruction moves, when known from its text: the type
/// size times the vector width (ld, st, atom, red); the size operand of a
/// bulk copy (cp.async.bulk, cp.reduce.async.bulk); for cp.async, the bytes
/// it reads from global memory: src-size when given (the rest of cp-size is
/// zero-filled: Triton's masked loads pass 0), cp-size otherwise, 0 when its
/// ignore-src predicate holds. Null otherwise (TMA tensor copies, whose size
/// is in the tensor map).
static AccessSize accessBytes(InstOp inst,
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

static bool matches(InstOp inst, const InstructionPattern &pattern) {
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
static AddressAttr accessAddress(InstOp inst) {
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

LogicalResult ProbeInserter::emitInstructionPoints(ArrayRef<InstOp> kernelInsts,
                                                   StatementBuilder &sb) {
  OpBuilder &builder = sb.getBuilder();
  MLIRContext *ctx = root.getContext();
  // The kernel's predicate registers (`%p<4>` declares %p0 to %p3), for
  // cp.async's ignore-src operand.
  llvm::StringMap<int64_t> predicates;
  if (!kernelInsts.empty())
    kernelInsts.front()->getParentOfType<EntryOp>().walk([&](RegOp reg) {
      if (reg.getType() == ".pred")
        predicates[reg.getName()] =
            reg.getCount() ? int64_t(*reg.getCount()) : -1;
    });
  auto isPredicate = [&](RegisterAttr reg) {
    return declaresRegister(predicates, reg.getBaseName());
  };
  for (size_t site = 0, e = kernelInsts.size(); site < e; ++site) {
    InstOp inst = kernelInsts[site];
    for (const CheckedProbe &probe : probes)
      for (auto [point, snippet, uses] :
           llvm::zip(probe.spec.points, probe.points, probe.uses)) {
        if (point.kind != PointKind::Instruction ||
            !llvm::any_of(point.patterns, [&](const InstructionPattern &p) {
              return matches(inst, p);
            }))
          continue;
        NamedValues named;
        named.site = IntImmAttr::get(ctx, site, /*hex=*/false);
        Attribute ignoreSrc;
        if (uses & kBytes) {
          AccessSize size = accessBytes(inst, isPredicate);
          named.bytes = size.bytes;
          ignoreSrc = size.ignoreSrc;
          if (!named.bytes) {
            inst.emitWarning()
                << "probe '" << probe.spec.name
                << "': not recorded here: the bytes this instruction moves "
                   "are not known from its text (a TMA tensor copy's size is "
                   "in its tensor map)";
            continue;
          }
        }
        AddressAttr address;
        if (uses & kAddr) {
          address = accessAddress(inst);
          if (!address || address.getIndices()) {
            inst.emitWarning() << "probe '" << probe.spec.name
                               << "': not recorded here: no global address "
                                  "operand for {addr}";
            continue;
          }
          if (!isa<RegisterAttr, FlatSymbolRefAttr, IntImmAttr>(
                  address.getBase())) {
            inst.emitWarning() << "probe '" << probe.spec.name
                               << "': not recorded here: an address of a "
                                  "form {addr} does not take";
            continue;
          }
        }
        // Whatever reads the kernel's registers goes before the instruction,
        // which may overwrite them; the probe reads them into its own.
        std::string opcode = inst.getFullOpcode();
        builder.setInsertionPoint(inst);
        sb.setLoc(inst.getLoc());
        bool copies =
            address || ignoreSrc || isa_and_nonnull<RegisterAttr>(named.bytes);
        std::optional<ProbeOpInsertion> probeOp;
        if (copies || !point.after)
          probeOp.emplace(builder, inst.getLoc(), "before " + opcode);
        if (ignoreSrc) {
          // cp-size, or 0 when the predicate says the source is ignored.
          std::string size, pred;
          llvm::raw_string_ostream sizeOS(size), predOS(pred);
          printOperand(named.bytes, sizeOS);
          auto negated = dyn_cast<NotAttr>(ignoreSrc);
          printOperand(negated ? negated.getOperand() : ignoreSrc, predOS);
          sb.inst("selp.u32 %__pr_w32, " +
                  (negated ? size + ", 0, " : "0, " + size + ", ") + pred);
          sb.inst("cvt.u64.u32 %__pr_w, %__pr_w32");
          named.bytes = RegisterAttr::get(ctx, "%__pr_w");
          named.bytes32 = RegisterAttr::get(ctx, "%__pr_w32");
        } else if (auto reg = dyn_cast_or_null<RegisterAttr>(named.bytes)) {
          sb.inst("mov.b32 %__pr_w32, " + reg.getName());
          sb.inst("cvt.u64.u32 %__pr_w, " + reg.getName());
          named.bytes = RegisterAttr::get(ctx, "%__pr_w");
          named.bytes32 = RegisterAttr::get(ctx, "%__pr_w32");
        }
        if (address) {
          // The effective address: base register, symbol or integer, plus
          // the offset, in a 64-bit probe register.
          int64_t offset = address.getOffset();
          Attribute base = address.getBase();
          if (auto reg = dyn_cast<RegisterAttr>(base)) {
            sb.inst("add.s64 %__pr_a, " + reg.getName() + ", " + Twine(offset));
          } else if (auto sym = dyn_cast<FlatSymbolRefAttr>(base)) {
            sb.inst("mov.u64 %__pr_a, " + sym.getValue());
            sb.inst("add.s64 %__pr_a, %__pr_a, " + Twine(offset));
          } else {
            auto imm = cast<IntImmAttr>(base);
            sb.inst("mov.u64 %__pr_a, " + Twine(imm.getValue() + offset));
          }
          named.addr = RegisterAttr::get(ctx, "%__pr_a");
        }
        if (point.after) {
          probeOp.reset();
          builder.setInsertionPointAfter(inst);
          probeOp.emplace(builder, inst.getLoc(), "after " + opcode);
        }
        // A guarded instruction: its snippet runs when the guard holds.
        std::string skip;
        if (inst.getGuard()) {
          skip = "$__pr_skip_" + std::to_string(labelCounter++);
          sb.inst(Twine("@") + (inst.getGuardNegated() ? "" : "!") +
                  inst.getGuard()->getName() + " bra " + skip);
        }
        inExit = false;
        noteWrites(probe, snippet, writtenAtInstructions);
        if (failed(emitSnippet(sb, probe, snippet, named)))
          return failure();
        if (!skip.empty())
          sb.label(skip);
      }
  }
  return success();
}

LogicalResult ProbeInserter::instrument(EntryOp entry) {
  MLIRContext *ctx = root.getContext();
  Location loc = entry.getLoc();
  // Dynamic maps store their slot counts at every exit.
  bool hasExit = llvm::any_of(probes, [](const CheckedProbe &p) {
    return llvm::any_of(p.spec.points,
                        [](const PointSpec &point) {
                          return point.kind == PointKind::KernelExit;
                        }) ||
           llvm::any_of(p.spec.maps,
                        [](const MapSpec &m) { return m.dynamicCapacity; });
  });
  // A fused kernel (--hfuse in the same pipeline): its parts are the
  // top-level scopes of its body, in order, and every record says which
  // part wrote it.
  SmallVector<ScopeOp> partScopes;
  bool threadSplit = false;
  if (auto fusion = entry->getAttrOfType<DictionaryAttr>("gpuopt.fusion")) {
    auto parts = fusion.getAs<ArrayAttr>("parts");
    auto strategy = fusion.getAs<StringAttr>("strategy");
    for (Operation &op : entry.getBody().front())
      if (auto scope = dyn_cast<ScopeOp>(op))
        partScopes.push_back(scope);
    if (!parts || !strategy || partScopes.size() != parts.size())
      return entry.emitError()
             << "cannot attribute probe records to the parts of fused kernel '"
             << entry.getSymName() << "': expected one top-level scope per "
             << "part, as --hfuse-apply builds them";
    threadSplit = strategy.getValue() == "thread";
  }
  KernelAnalysis analysis(entry);
  // The kernel's own instructions, before any probe code goes in.
  SmallVector<InstOp> kernelInsts;
  entry.walk([&](InstOp inst) {
    if (inst->getParentOfType<EntryOp>() == entry)
      kernelInsts.push_back(inst);
  });
  entry.walk([&](RegOp reg) {
    if (reg.getName().starts_with("%__pr_"))
      reg.emitWarning() << "register names starting with %__pr_ are the "
                           "probes'; this one may clash";
  });

  // The buffers: one parameter each, after the kernel's own.
  SmallVector<Attribute> params(entry.getParams().begin(),
                                entry.getParams().end());
  SmallVector<Attribute> mapAttrs;
  if (entry->hasAttr("gpuopt.probes"))
    return entry.emitError() << "kernel '" << entry.getSymName()
                             << "' is probed already: give every probe to "
                                "one --probe (--probe=a,b)";
  maps.clear();
  writtenAtInstructions.clear();
  exitFunction.clear();
  for (const CheckedProbe &probe : probes)
    for (const MapSpec &spec : probe.spec.maps) {
      if (llvm::any_of(maps, [&](const MapLayout &m) {
            return m.spec->name == spec.name;
          }))
        return emitError(spec.loc)
               << "two probes have a map named '" << spec.name << "'";
      MapLayout &map = maps.emplace_back();
      map.spec = &spec;
      map.probeName = probe.spec.name;
      map.param = "__probe_" + spec.name;
      map.partField = !partScopes.empty();
      map.partIsWholeBlock = threadSplit && spec.level == Level::Block;
      if (map.partField)
        for (const TypedName &field : spec.fields)
          if (field.name == "part")
            return emitError(field.loc)
                   << "a probe of a fused kernel adds the field 'part' to its "
                      "records: rename this one";
      int64_t offset = 0, align = 1;
      auto place = [&](int64_t bytes) {
        offset = llvm::alignTo(offset, bytes);
        map.offsets.push_back(offset);
        offset += bytes;
        align = std::max(align, bytes);
      };
      for (const TypedName &field : spec.fields)
        place(getTypeBytes(field.type));
      if (map.partField)
        place(4);
      map.recordBytes = llvm::alignTo(offset, align);
      for (auto [point, snippet] : llvm::zip(probe.spec.points, probe.points))
        for (const SnippetInst &inst : snippet)
          if (inst.syntax.opcode.getValue() == "save" &&
              cast<StringAttr>(inst.syntax.modifiers[0]).getValue() ==
                  spec.name)
            ++(point.kind == PointKind::KernelEntry  ? map.entrySaves
               : point.kind == PointKind::KernelExit ? map.exitSaves
                                                     : map.instSaves);
      map.dynamic = spec.dynamicCapacity;
      map.isStatic = !map.dynamic && map.instSaves == 0 &&
                     map.entrySaves + map.exitSaves <= spec.capacity;
      map.carried =
          map.isStatic && map.exitSaves > 0 && !probe.spec.carryInRegisters;
      map.atExit = map.isStatic && map.entrySaves == 0 && map.exitSaves > 0 &&
                   probe.spec.carryInRegisters;
      map.local = "__pr_local_addr_" + spec.name;
      map.has = "%__pr_has_" + spec.name;
      map.addr = "%__pr_addr_" + spec.name;
      map.count = "%__pr_count_" + spec.name;
      map.overflow = "%__pr_overflow_" + spec.name;
      map.capParam = "__probe_" + spec.name + "_capacity";
      map.capReg = "%__pr_cap_" + spec.name;
      map.countAddr = "%__pr_counts_" + spec.name;
      unsigned paramIndex = params.size();
      // The alignment the record stores rely on (16-byte vector stores for
      // records of a multiple of 16 bytes), 8 at least for the counters;
      // the runtime's buffers are 256-byte aligned.
      unsigned bufferAlign =
          std::clamp<int64_t>(map.recordBytes & -map.recordBytes, 8, 16);
      params.push_back(ParamDeclAttr::get(
          ctx, ".param", ".u64", map.param, /*align=*/0, ".global",
          /*ptrAlign=*/bufferAlign, /*arraySize=*/-1, /*isPtr=*/true));
      if (map.dynamic)
        params.push_back(ParamDeclAttr::get(
            ctx, ".param", ".u32", map.capParam, /*align=*/0, "",
            /*ptrAlign=*/0, /*arraySize=*/-1, /*isPtr=*/false));
      Builder b(ctx);
      SmallVector<Attribute> fields;
      auto addField = [&](StringRef name, StringRef type, int64_t off) {
        fields.push_back(b.getDictionaryAttr(
            {b.getNamedAttr("name", b.getStringAttr(name)),
             b.getNamedAttr("type", b.getStringAttr(type)),
             b.getNamedAttr("offset", b.getI64IntegerAttr(off))}));
      };
      for (auto [field, off] : llvm::zip(spec.fields, map.offsets))
        addField(field.name, field.type, off);
      if (map.partField)
        addField("part", "u32", map.offsets.back());
      SmallVector<NamedAttribute> attrs = {
          b.getNamedAttr("name", b.getStringAttr(spec.name)),
          b.getNamedAttr("probe", b.getStringAttr(probe.spec.name)),
          b.getNamedAttr("param", b.getI64IntegerAttr(paramIndex)),
          b.getNamedAttr("level", b.getStringAttr(stringifyLevel(spec.level))),
          b.getNamedAttr("capacity", b.getI64IntegerAttr(spec.capacity)),
          b.getNamedAttr("record_bytes", b.getI64IntegerAttr(map.recordBytes)),
          b.getNamedAttr("fields", b.getArrayAttr(fields))};
      if (map.dynamic)
        attrs.push_back(b.getNamedAttr("capacity_param",
                                       b.getI64IntegerAttr(paramIndex + 1)));
      mapAttrs.push_back(b.getDictionaryAttr(attrs));
    }
  entry.setParamsAttr(ArrayAttr::get(ctx, params));
  entry->setAttr("gpuopt.probes", ArrayAttr::get(ctx, mapAttrs));

  // Entry: registers, slots, then the entry snippets.
  Block *body = &entry.getBody().front();
  OpBuilder builder(ctx);
  builder.setInsertionPointToStart(body);
  StatementBuilder sb(builder, loc);
  std::optional<ProbeOpInsertion> entryProbe;
  entryProbe.emplace(builder, loc, "kernel.entry", getBufferNames());
  hasParts = !partScopes.empty();
  declareRegisters(sb);
  emitSlots(sb, /*exitMaps=*/false);
  if (!partScopes.empty()) {
    // No part until a thread enters one (thread split: threads beyond
    // every part's; records at kernel entry).
    sb.inst("mov.u32 %__pr_part, -1");
    for (auto [index, scope] : llvm::enumerate(partScopes)) {
      OpBuilder partBuilder = OpBuilder::atBlockBegin(scope.getBodyBlock());
      ProbeOpInsertion partProbe(partBuilder, scope.getLoc(),
                                 "part " + std::to_string(index));
      StatementBuilder partSb(partBuilder, scope.getLoc());
      partSb.inst("mov.u32 %__pr_part, " + Twine(index));
    }
  }
  if (failed(emitPoint(sb, PointKind::KernelEntry)))
    return failure();
  entryProbe.reset();
  if (failed(emitInstructionPoints(kernelInsts, sb)))
    return failure();

  if (!hasExit)
    return success();
  if (findZeroRecordMaps()) {
    // Nothing to store at the exits (a counter probe on a kernel without
    // the instructions it counts): no exit code at all.
    entry.emitRemark() << "probe: no instruction of '" << entry.getSymName()
                       << "' changes what the probes record at its exits; "
                          "their records stay zero and nothing is inserted "
                          "there";
    return success();
  }
  for (const ExitUse &exit : analysis.getExits())
    if (exit.inDeviceFunction && exit.kind == ExitUse::Kind::Exit)
      return InstOp(exit.op).emitError()
             << "cannot probe kernel.exit of '" << entry.getSymName()
             << "': this device function ends the thread with 'exit', "
                "where the kernel's exit snippets cannot run";
  // Exits: before every ret/exit of the kernel body (not of callees).
  SmallVector<InstOp> exits;
  entry.walk([&](InstOp inst) {
    StringRef opcode = inst.getOpcode();
    if ((opcode == "ret" || opcode == "exit") &&
        inst->getParentOfType<EntryOp>() == entry)
      exits.push_back(inst);
  });
  // A body that ends without ret or exit falls off the end: that is an exit.
  // Labels after the last instruction that nothing branches to (debug
  // labels such as `$L__func_end0`) do not make a path.
  llvm::StringSet<> named;
  for (InstOp inst : kernelInsts)
    walkOperandLeaves(inst.getPtxOperandsAttr(), [&](Attribute leaf) {
      if (auto label = dyn_cast<LabelRefAttr>(leaf))
        named.insert(label.getName());
      else if (auto sym = dyn_cast<FlatSymbolRefAttr>(leaf))
        named.insert(sym.getValue());
    });
  SmallVector<StringRef> tables;
  entry.walk(
      [&](DirectiveOp directive) { tables.push_back(directive.getText()); });
  auto isTarget = [&](LabelOp label) {
    return named.contains(label.getName()) ||
           llvm::any_of(tables, [&](StringRef text) {
             return text.contains(label.getName());
           });
  };
  Operation *last = body->empty() ? nullptr : &body->back();
  while (last && (isa<LocOp>(last) ||
                  (isa<LabelOp>(last) && !isTarget(cast<LabelOp>(last)))))
    last = last->getPrevNode();
  auto lastInst = dyn_cast_or_null<InstOp>(last);
  bool endsInExit =
      lastInst && !lastInst.getGuard() &&
      llvm::is_contained({"ret", "exit", "bra", "trap"}, lastInst.getOpcode());
  if (planExitFunction()) {
    buildExitFunction(entry);
    placeExitCalls(entry, exits, /*fallsOffEnd=*/!endsInExit);
    return success();
  }
  for (InstOp exit : exits) {
    builder.setInsertionPoint(exit);
    sb.setLoc(exit.getLoc());
    ProbeOpInsertion exitProbe(builder, exit.getLoc(), "kernel.exit");
    std::string skip;
    if (exit.getGuard()) {
      // `@%p ret` -> `@!%p bra skip; <exit snippets>; skip: @%p ret`
      skip = "$__pr_skip_" + std::to_string(labelCounter++);
      sb.inst(Twine("@") + (exit.getGuardNegated() ? "" : "!") +
              exit.getGuard()->getName() + " bra " + skip);
    }
    if (failed(emitPoint(sb, PointKind::KernelExit)))
      return failure();
    if (!skip.empty())
      sb.label(skip);
  }
  if (!endsInExit) {
    builder.setInsertionPointToEnd(body);
    sb.setLoc(loc);
    ProbeOpInsertion exitProbe(builder, loc, "kernel.exit");
    if (failed(emitPoint(sb, PointKind::KernelExit)))
      return failure();
  }
  return success();
}

/// A kernel that sets its warpgroups' registers with setmaxnreg: its launch
/// register count is fixed by the setmaxnreg immediates and launch bounds,
/// and ptxas keeps each region within its budget by spilling. It is never
/// capped (a .maxnreg below the consumers' budget would leave their
/// setmaxnreg.inc waiting for registers forever, and without launch bounds
/// it would turn on setmaxnreg that ptxas ignored); new spills are reported.
/// Fails for such a kernel, so that the caller leaves it alone.
static LogicalResult checkWarpSpecialized(EntryOp entry,
                                          const KernelResources &before,
                                          const KernelResources &after) {
  KernelAnalysis analysis(entry);
  if (analysis.getSetmaxnreg().empty())
    return success();
  uint64_t spillsBefore = before.spillStores + before.spillLoads;
  uint64_t spillsAfter = after.spillStores + after.spillLoads;
  if (spillsAfter > spillsBefore) {
    int64_t smallest = 0;
    for (InstOp inst : analysis.getSetmaxnreg()) {
      ArrayAttr operands = inst.getPtxOperands();
      auto imm =
          operands.empty() ? IntImmAttr() : dyn_cast<IntImmAttr>(operands[0]);
      if (imm)
        smallest =
            smallest ? std::min(smallest, imm.getValue()) : imm.getValue();
    }
    entry.emitWarning() << "probe: '" << entry.getSymName() << "' spills "
                        << spillsAfter - spillsBefore
                        << " more bytes once probed: the probes' state does "
                           "not fit a warpgroup's setmaxnreg budget (the "
                           "smallest is "
                        << smallest
                        << " registers); fewer probes at once, or `carry: "
                           "local` in their specs, keep it out of registers";
  }
  return failure();
}

/// Warns about each instruction point of a spec file that matches no
/// instruction of some of `entries`: a misspelt opcode or modifier otherwise
/// shows only as records that stay zero. Built-in probes list every
/// instruction they might count, so theirs are not reported.
static void warnUnmatchedPoints(ArrayRef<EntryOp> entries,
                                ArrayRef<CheckedProbe> probes) {
  // Each kernel's own instructions, as emitInstructionPoints sees them.
  SmallVector<SmallVector<InstOp>> kernelInsts;
  for (EntryOp entry : entries) {
    SmallVector<InstOp> &insts = kernelInsts.emplace_back();
    entry.walk([&](InstOp inst) {
      if (inst->getParentOfType<EntryOp>() == entry)
        insts.push_back(inst);
    });
  }
  for (const CheckedProbe &probe : probes) {
    if (StringRef(probe.spec.file).starts_with("<builtin "))
      continue;
    for (const PointSpec &point : probe.spec.points) {
      if (point.kind != PointKind::Instruction)
        continue;
      SmallVector<StringRef> unmatched;
      for (auto [index, insts] : llvm::enumerate(kernelInsts))
        if (llvm::none_of(insts, [&](InstOp inst) {
              return llvm::any_of(point.patterns,
                                  [&](const InstructionPattern &pattern) {
                                    return matches(inst, pattern);
                                  });
            }))
          unmatched.push_back(EntryOp(entries[index]).getSymName());
      if (unmatched.empty())
        continue;
      SmallVector<std::string> patterns;
      for (const InstructionPattern &pattern : point.patterns) {
        std::string text = pattern.opcode;
        for (const std::string &m : pattern.modifiers)
          text += "." + m;
        patterns.push_back(std::move(text));
      }
      InFlightDiagnostic diag = emitWarning(point.loc)
                                << "probe '" << probe.spec.name << "': point '"
                                << llvm::join(patterns, ", ")
                                << "' matches no instruction of ";
      constexpr size_t kListed = 5;
      if (unmatched.size() == 1) {
        diag << "kernel '" << unmatched.front() << "'";
      } else {
        diag << unmatched.size() << " kernels (";
        for (auto [i, name] :
             llvm::enumerate(ArrayRef(unmatched).take_front(kListed)))
          diag << (i ? ", '" : "'") << name << "'";
        if (unmatched.size() > kListed)
          diag << " and " << unmatched.size() - kListed << " more";
        diag << ")";
      }
      diag << ": a pattern matches the instructions that have its opcode and "
              "all of its modifiers; check their spelling, or probe only the "
              "kernels that have such instructions (kernels=)";
    }
  }
}

/// Whether `entry` has the dispatch --hfuse-apply builds: the register
/// `%__hf_tid` and one top-level scope per part.
static bool looksFused(EntryOp entry) {
  if (!entry.hasBody())
    return false;
  bool dispatch = false, scopes = false;
  for (Operation &op : entry.getBody().front()) {
    if (auto reg = dyn_cast<RegOp>(op))
      dispatch |= reg.getName() == "%__hf_tid";
    scopes |= isa<ScopeOp>(op);
  }
  return dispatch && scopes;
}

namespace {
/// Blocks per SM before and after probing, at the block size where probing
/// costs the largest share of them (the larger on a tie); `fixed` when the
/// kernel's `.reqntid` fixes that size.
struct OccupancyDrop {
  int64_t threads, before, after;
  bool fixed;
};
} // namespace

/// The block sizes a kernel may be launched with: its `.reqntid`, else each
/// multiple of 32 up to its `.maxntid` or 1024 (a partial warp takes a
/// whole warp's registers).
static SmallVector<int64_t> getLaunchThreads(EntryOp entry) {
  auto product = [](ArrayRef<int32_t> dims) {
    int64_t n = 1;
    for (int32_t d : dims)
      n *= d;
    return n;
  };
  if (auto reqntid = entry.getReqntid())
    return {product(*reqntid)};
  int64_t most = 1024;
  if (auto maxntid = entry.getMaxntid())
    most = std::clamp<int64_t>(product(*maxntid), 1, 1024);
  SmallVector<int64_t> threads;
  for (int64_t t = 32; t < most; t += 32)
    threads.push_back(t);
  threads.push_back(most);
  return threads;
}

/// Shared memory per block: ptxas's static count and, in a fused kernel, the
/// dynamic shared memory fusion gave it. Other kernels' dynamic shared
/// memory is chosen at launch; counting none is the safe side (more shared
/// memory per block only leaves registers more room).
static int64_t getSharedBytes(EntryOp entry, const KernelResources &before) {
  int64_t shared = before.sharedBytes;
  if (auto fusion = entry->getAttrOfType<DictionaryAttr>("gpuopt.fusion"))
    if (auto dynamic = fusion.getAs<IntegerAttr>("dynamic_smem"))
      shared += dynamic.getInt();
  return shared;
}

/// The most registers per thread (up to ptxas's 255) with which the kernel
/// keeps, for every block size in `threads`, the blocks per SM it has with
/// `registers`.
static unsigned getOccupancyRegisters(const hfuse::DeviceLimits &limits,
                                      ArrayRef<int64_t> threads, int64_t shared,
                                      unsigned registers) {
  unsigned most = std::max(registers, 1u);
  auto keeps = [&](unsigned r) {
    return llvm::all_of(threads, [&](int64_t t) {
      return limits.occupancy(t, r, shared) ==
             limits.occupancy(t, registers, shared);
    });
  };
  while (most < 255 && keeps(most + 1))
    ++most;
  return most;
}

/// The most registers per thread (up to `wanted`) with which every block
/// size in `threads` that fits an SM with `registers` still fits one, and
/// the largest size that would not fit with `wanted` (0 if none).
static std::pair<unsigned, int64_t>
getLaunchableRegisters(const hfuse::DeviceLimits &limits,
                       ArrayRef<int64_t> threads, int64_t shared,
                       unsigned registers, unsigned wanted) {
  unsigned most = std::max(registers, 1u);
  auto fits = [&](unsigned r, int64_t t) {
    return limits.occupancy(t, r, shared) > 0 ||
           limits.occupancy(t, registers, shared) == 0;
  };
  while (most < wanted &&
         llvm::all_of(threads, [&](int64_t t) { return fits(most + 1, t); }))
    ++most;
  int64_t tooLarge = 0;
  for (int64_t t : threads)
    if (!fits(wanted, t))
      tooLarge = std::max(tooLarge, t);
  return {most, tooLarge};
}

/// Where `after` registers cost the largest share of the blocks per SM that
/// `before` registers have; none when they cost none at any block size.
static std::optional<OccupancyDrop>
getWorstDrop(const hfuse::DeviceLimits &limits, ArrayRef<int64_t> threads,
             int64_t shared, unsigned before, unsigned after) {
  std::optional<OccupancyDrop> worst;
  bool fixed = threads.size() == 1;
  for (int64_t t : threads) {
    int64_t had = limits.occupancy(t, before, shared);
    int64_t has = limits.occupancy(t, after, shared);
    // Compares has/had against the worst's after/before.
    if (has < had && (!worst || has * worst->before <= worst->after * had))
      worst = OccupancyDrop{t, had, has, false};
  }
  if (worst)
    worst->fixed = fixed;
  return worst;
}

namespace {
/// ptxas's report for each kernel of `module`, by name.
static FailureOr<llvm::StringMap<KernelResources>>
getEntryResources(PTXModuleOp module, const PtxasOptions &options) {
  FailureOr<SmallVector<KernelResources>> report =
      getPtxasResources(module, options);
  if (failed(report))
    return failure();
  llvm::StringMap<KernelResources> byName;
  for (const KernelResources &k : *report)
    if (k.isEntry)
      byName[k.kernel] = k;
  return byName;
}

/// ptxas's reports of `modules`, by module and kernel name.
using ModuleResources =
    llvm::DenseMap<Operation *, llvm::StringMap<KernelResources>>;
static FailureOr<ModuleResources>
getModuleResources(ArrayRef<PTXModuleOp> modules, const PtxasOptions &options) {
  ModuleResources reports;
  for (PTXModuleOp module : modules) {
    FailureOr<llvm::StringMap<KernelResources>> r =
        getEntryResources(module, options);
    if (failed(r))
      return failure();
    reports[module] = std::move(*r);
  }
  return reports;
}

struct ProbePass : public gpuopt::impl::ProbeBase<ProbePass> {
  using ProbeBase::ProbeBase;

  /// `--probe=block_sched,my.yaml` as the user writes it, as well as the
  /// pass-option form `--probe="specs=block_sched"`.
  LogicalResult initializeOptions(
      StringRef options,
      function_ref<LogicalResult(const Twine &)> errorHandler) override {
    if (!options.empty() && !options.contains('='))
      return ProbeBase::initializeOptions(("specs=" + options).str(),
                                          errorHandler);
    return ProbeBase::initializeOptions(options, errorHandler);
  }

  /// The entries `kernels=` names (every entry with a body without it), in
  /// module order, by --hfuse's name rules (splitModuleName, lookupKernel).
  FailureOr<SmallVector<EntryOp>> selectKernels() {
    ModuleOp root = getOperation();
    SmallVector<EntryOp> entries;
    if (kernels.empty()) {
      root.walk([&](EntryOp entry) {
        if (entry.hasBody())
          entries.push_back(entry);
      });
      return entries;
    }
    llvm::SmallPtrSet<Operation *, 8> chosen;
    for (auto [i, name] : llvm::enumerate(kernels)) {
      Location loc = getPassOptionLoc(&getContext(), getArgument(), "kernels",
                                      getPassOptionColumn(kernels, i));
      auto [moduleName, kernelName] = splitModuleName(root, name);
      FailureOr<EntryOp> entry =
          lookupKernel(root, moduleName, kernelName, loc);
      if (failed(entry))
        return failure();
      chosen.insert(*entry);
    }
    root.walk([&](EntryOp entry) {
      if (chosen.contains(entry))
        entries.push_back(entry);
    });
    return entries;
  }

  /// A fused kernel is probed with its parts known (`gpuopt.fusion`, which
  /// --hfuse writes and gpu-opt's --manifest-in restores). One that has
  /// --hfuse-apply's dispatch but not the attribute lost it to a PTX file
  /// in between: its records could not name their part, and the manifest
  /// written after would lack `fused_from`.
  LogicalResult checkFusionInfo(EntryOp entry) {
    if (entry->hasAttr("gpuopt.fusion") || !looksFused(entry))
      return success();
    return entry.emitError()
           << "kernel '" << entry.getSymName()
           << "' was fused by --hfuse (its body dispatches threads to parts "
              "through %__hf_tid), but its launch manifest is not loaded: "
              "the probes' records could not say which part wrote them and "
              "the new manifest would have no fused_from; give the manifest "
              "written with it (gpu-opt --manifest-in=FUSED.json), or fuse "
              "and probe in one call (gpu-opt a.ptx b.ptx --hfuse=... "
              "--probe=... -o out.ptx --manifest out.json)";
  }

  void runOnOperation() override {
    ModuleOp root = getOperation();
    MLIRContext *ctx = &getContext();
    if (specs.empty()) {
      emitError(root.getLoc())
          << "--probe needs a probe: a built-in ("
          << llvm::join(getBuiltinProbeNames(), ", ") << ") or a YAML file";
      return signalPassFailure();
    }
    std::vector<CheckedProbe> probes;
    for (const std::string &name : specs) {
      FailureOr<ProbeSpec> spec = loadProbeSpec(name, ctx);
      if (failed(spec))
        return signalPassFailure();
      FailureOr<CheckedProbe> probe = checkProbe(std::move(*spec), ctx);
      if (failed(probe))
        return signalPassFailure();
      probes.push_back(std::move(*probe));
    }
    FailureOr<SmallVector<EntryOp>> selected = selectKernels();
    if (failed(selected))
      return signalPassFailure();
    SmallVector<EntryOp> entries = std::move(*selected);
    if (entries.empty()) {
      emitError(root.getLoc()) << "--probe: no .entry with a body to probe";
      return signalPassFailure();
    }
    for (EntryOp entry : entries)
      if (failed(checkFusionInfo(entry)))
        return signalPassFailure();
    warnUnmatchedPoints(entries, probes);
    // Each kernel's registers before instrumenting, per module.
    PtxasOptions ptxasOptions;
    ptxasOptions.ptxasPath = ptxas;
    ptxasOptions.chip = chip;
    // Per module: two modules may have kernels of the same name (Triton
    // names every softmax kernel alike).
    llvm::DenseMap<Operation *, llvm::StringMap<KernelResources>>
        resourcesBefore;
    SmallVector<PTXModuleOp> modules;
    for (EntryOp entry : entries) {
      auto module = entry->getParentOfType<PTXModuleOp>();
      if (!llvm::is_contained(modules, module))
        modules.push_back(module);
    }
    if (keepOccupancy)
      for (PTXModuleOp module : modules) {
        FailureOr<llvm::StringMap<KernelResources>> report =
            getEntryResources(module, ptxasOptions);
        if (failed(report)) {
          module.emitError() << "probe: keep-occupancy needs ptxas's resource "
                                "report (see above); pass keep-occupancy=false "
                                "to probe without it";
          return signalPassFailure();
        }
        resourcesBefore[module] = std::move(*report);
      }
    // The kernels as they were, for a second placement of the probes.
    llvm::DenseMap<Operation *, OwningOpRef<EntryOp>> originals;
    if (keepOccupancy)
      for (EntryOp entry : entries)
        originals[entry] = cast<EntryOp>(entry->clone());
    ProbeInserter inserter(root, probes);
    SmallVector<ProbedKernel> kernels;
    for (EntryOp entry : entries) {
      OwningOpRef<EntryOp> original;
      if (keepOccupancy)
        original = std::move(originals[entry]);
      if (failed(inserter.instrument(entry)))
        return signalPassFailure();
      kernels.push_back(
          {entry, inserter.getExitFunction(entry), std::move(original),
           resourcesBefore.lookup(entry->getParentOfType<PTXModuleOp>())
               .lookup(entry.getSymName()),
           KernelResources()});
      ++numProbed;
    }
    if (!keepOccupancy)
      return;
    if (failed(choosePlacements(kernels, probes, ptxasOptions)))
      return signalPassFailure();
    if (failed(capRegisters(kernels, ptxasOptions)))
      return signalPassFailure();
  }

  /// A probed kernel: its entry, the exit function it calls (if any), a copy
  /// of the kernel before probing and what ptxas reports for it probed.
  struct ProbedKernel {
    EntryOp entry;
    FuncOp exitFunction;
    OwningOpRef<EntryOp> original;
    /// ptxas's report before and after probing.
    KernelResources before, resources;
  };

  /// Asks ptxas for the probed kernels' resources; where the first placement
  /// costs spills or more than 4 registers, probes the kernel again another
  /// way and keeps the better of the two (fewer spilled bytes, then fewer
  /// registers): with the exit code inline instead of in an exit function
  /// (whose call has a register floor of its own, about 20), and for a
  /// setmaxnreg kernel also with the probes' state in local memory (a
  /// warpgroup held to 24 registers has no room for it).
  LogicalResult choosePlacements(MutableArrayRef<ProbedKernel> kernels,
                                 ArrayRef<CheckedProbe> probes,
                                 const PtxasOptions &ptxasOptions) {
    llvm::DenseMap<Operation *, llvm::StringMap<KernelResources>> reports;
    for (ProbedKernel &kernel : kernels) {
      auto module = kernel.entry->getParentOfType<PTXModuleOp>();
      if (!reports.count(module)) {
        FailureOr<llvm::StringMap<KernelResources>> r =
            getEntryResources(module, ptxasOptions);
        if (failed(r))
          return failure();
        reports[module] = std::move(*r);
      }
      kernel.resources = reports[module].lookup(kernel.entry.getSymName());
    }
    auto spills = [](const KernelResources &k) {
      return k.spillStores + k.spillLoads;
    };
    // The same probes with their state in local memory.
    std::vector<CheckedProbe> localProbes;
    for (const CheckedProbe &probe : probes) {
      ProbeSpec spec = probe.spec;
      spec.carryInRegisters = false;
      FailureOr<CheckedProbe> checked =
          checkProbe(std::move(spec), &getContext());
      if (failed(checked))
        return failure();
      localProbes.push_back(std::move(*checked));
    }
    ProbeInserter inlineExits(getOperation(), probes,
                              /*allowExitFunction=*/false);
    ProbeInserter local(getOperation(), localProbes,
                        /*allowExitFunction=*/false);
    // Second placements, detached first ones.
    struct Retry {
      ProbedKernel *kernel;
      OwningOpRef<EntryOp> firstEntry;
      OwningOpRef<FuncOp> firstFunction;
      KernelResources first;
      bool local;
    };
    SmallVector<Retry> retries;
    SmallVector<PTXModuleOp> retried;
    for (ProbedKernel &kernel : kernels) {
      const KernelResources &before = kernel.before;
      const KernelResources &after = kernel.resources;
      bool warpSpecialized =
          !KernelAnalysis(kernel.entry).getSetmaxnreg().empty();
      bool costly =
          spills(after) > spills(before) ||
          (!warpSpecialized && after.registers > before.registers + 4);
      bool alreadyLocal = llvm::none_of(probes, [](const CheckedProbe &p) {
        return p.spec.carryInRegisters;
      });
      if (!costly || !kernel.original ||
          (warpSpecialized ? alreadyLocal : !kernel.exitFunction))
        continue;
      ProbeInserter &second = warpSpecialized ? local : inlineExits;
      EntryOp first = kernel.entry;
      EntryOp fresh = cast<EntryOp>(kernel.original->clone());
      first->getBlock()->getOperations().insert(Block::iterator(first),
                                                fresh.getOperation());
      Retry retry{&kernel, OwningOpRef<EntryOp>(first),
                  OwningOpRef<FuncOp>(kernel.exitFunction), after,
                  warpSpecialized};
      first->remove();
      if (kernel.exitFunction)
        kernel.exitFunction->remove();
      kernel.entry = fresh;
      kernel.exitFunction = {};
      if (failed(second.instrument(fresh)))
        return failure();
      retries.push_back(std::move(retry));
      auto module = fresh->getParentOfType<PTXModuleOp>();
      if (!llvm::is_contained(retried, module))
        retried.push_back(module);
    }
    FailureOr<ModuleResources> retriedReports =
        getModuleResources(retried, ptxasOptions);
    if (failed(retriedReports))
      return failure();
    for (auto &[module, report] : *retriedReports)
      reports[module] = std::move(report);
    for (Retry &retry : retries) {
      ProbedKernel &kernel = *retry.kernel;
      auto module = kernel.entry->getParentOfType<PTXModuleOp>();
      KernelResources second =
          reports[module].lookup(kernel.entry.getSymName());
      bool better = std::make_pair(spills(second), second.registers) <
                    std::make_pair(spills(retry.first), retry.first.registers);
      if (better) {
        kernel.resources = second;
        kernel.entry.emitRemark()
            << "probe: '" << kernel.entry.getSymName()
            << "': probe code placed inline"
            << (retry.local ? ", its state in local memory" : "") << " ("
            << second.registers << " registers, " << spills(second)
            << " bytes spilled; as first placed: " << retry.first.registers
            << ", " << spills(retry.first) << ")";
        continue;
      }
      // Back to the first placement.
      EntryOp firstEntry = retry.firstEntry.release();
      Block *block = kernel.entry->getBlock();
      block->getOperations().insert(Block::iterator(kernel.entry),
                                    firstEntry.getOperation());
      if (FuncOp func = retry.firstFunction.release())
        block->getOperations().insert(Block::iterator(firstEntry),
                                      func.getOperation());
      kernel.entry->erase();
      kernel.entry = firstEntry;
      kernel.resources = retry.first;
    }
    return success();
  }

  /// Caps each probed kernel whose probes cost it blocks per SM at the most
  /// registers that keep the original's occupancy, unless that makes ptxas
  /// spill more than the original did: then the kernel keeps its registers,
  /// with a warning and a `gpuopt.probe_occupancy` record for the manifest.
  LogicalResult capRegisters(MutableArrayRef<ProbedKernel> kernels,
                             const PtxasOptions &ptxasOptions) {
    hfuse::DeviceLimits limits;
    struct Cap {
      ProbedKernel *kernel;
      unsigned registers;
      OccupancyDrop drop;
      /// The block sizes and shared memory the cap was chosen for.
      SmallVector<int64_t> threads;
      int64_t shared;
    };
    SmallVector<Cap> caps;
    SmallVector<PTXModuleOp> capped;
    for (ProbedKernel &kernel : kernels) {
      EntryOp entry = kernel.entry;
      const KernelResources &before = kernel.before;
      const KernelResources &after = kernel.resources;
      if (failed(checkWarpSpecialized(entry, before, after)) ||
          entry.getMaxnreg())
        continue;
      SmallVector<int64_t> threads = getLaunchThreads(entry);
      int64_t shared = getSharedBytes(entry, before);
      unsigned keep =
          getOccupancyRegisters(limits, threads, shared, before.registers);
      if (after.registers <= keep)
        continue;
      std::optional<OccupancyDrop> drop = getWorstDrop(
          limits, threads, shared, before.registers, after.registers);
      if (!drop)
        continue;
      entry.setMaxnreg(keep);
      caps.push_back({&kernel, keep, *drop, std::move(threads), shared});
      auto module = entry->getParentOfType<PTXModuleOp>();
      if (!llvm::is_contained(capped, module))
        capped.push_back(module);
    }
    // ptxas again, to see whether the caps cost spills.
    FailureOr<ModuleResources> reports =
        getModuleResources(capped, ptxasOptions);
    if (failed(reports))
      return failure();
    auto spills = [](const KernelResources &k) {
      return k.spillStores + k.spillLoads;
    };
    for (Cap &cap : caps) {
      EntryOp entry = cap.kernel->entry;
      StringRef name = entry.getSymName();
      const KernelResources &before = cap.kernel->before;
      const KernelResources &after = cap.kernel->resources;
      KernelResources withCap =
          (*reports)[entry->getParentOfType<PTXModuleOp>()].lookup(name);
      auto describe = [](const OccupancyDrop &drop) {
        return llvm::formatv("from {0} to {1} blocks per SM for blocks of {2} "
                             "threads{3}",
                             drop.before, drop.after, drop.threads,
                             drop.fixed ? ""
                                        : ", the size that loses most without "
                                          "a .reqntid")
            .str();
      };
      if (spills(withCap) <= spills(before)) {
        ++numCapped;
        entry.emitRemark() << "probe: capped '" << name << "' at .maxnreg "
                           << cap.registers << " (it had " << before.registers
                           << " registers; instrumented, ptxas used "
                           << after.registers
                           << ", which would lower its occupancy "
                           << describe(cap.drop) << ")";
        continue;
      }
      // Never trade the kernel's speed for spills it did not have, but keep
      // every block size it could launch with launchable: one that does not
      // fit an SM at all fails to launch.
      ArrayRef<int64_t> threads = cap.threads;
      int64_t shared = cap.shared;
      auto [fit, tooLarge] = getLaunchableRegisters(
          limits, threads, shared, before.registers, after.registers);
      unsigned registers = std::min(after.registers, fit);
      if (registers < after.registers)
        entry.setMaxnreg(fit);
      else
        entry.setMaxnreg(std::nullopt);
      std::optional<OccupancyDrop> drop =
          getWorstDrop(limits, threads, shared, before.registers, registers);
      if (drop) {
        Builder b(entry.getContext());
        entry->setAttr(
            "gpuopt.probe_occupancy",
            b.getDictionaryAttr({
                b.getNamedAttr("before", b.getI64IntegerAttr(drop->before)),
                b.getNamedAttr("after", b.getI64IntegerAttr(drop->after)),
                b.getNamedAttr("block_threads",
                               b.getI64IntegerAttr(drop->threads)),
                b.getNamedAttr("registers_before",
                               b.getI64IntegerAttr(before.registers)),
                b.getNamedAttr("registers_after",
                               b.getI64IntegerAttr(registers)),
                b.getNamedAttr("cap_spill_bytes",
                               b.getI64IntegerAttr(spills(withCap))),
            }));
      }
      std::string spilled = llvm::formatv("ptxas spills {0} bytes (the kernel "
                                          "spilled {1})",
                                          spills(withCap), spills(before))
                                .str();
      InFlightDiagnostic warning = entry.emitWarning();
      if (registers == after.registers) {
        warning << "probe: '" << name << "' keeps the " << after.registers
                << " registers its probes need (it had " << before.registers
                << "): capped at .maxnreg " << cap.registers
                << " to keep its occupancy, " << spilled
                << ", so its occupancy drops " << describe(*drop);
      } else {
        warning << "probe: '" << name << "' needs " << after.registers
                << " registers once probed (it had " << before.registers
                << "), too many for blocks of " << tooLarge
                << " threads to fit an SM: capped at .maxnreg " << fit
                << " so that they still launch";
        if (fit == cap.registers)
          warning << ", which keeps its occupancy, but " << spilled;
        else
          warning << ", where ptxas may spill (at .maxnreg " << cap.registers
                  << ", which keeps its occupancy, " << spilled
                  << "); its occupancy drops " << describe(*drop);
      }
      warning << "; fewer probes at once, or `carry: local` in their specs, "
                 "need fewer registers";
      if (drop)
        warning << " (the manifest's probe_occupancy records the drop)";
    }
    return success();
  }
};
} // namespace
