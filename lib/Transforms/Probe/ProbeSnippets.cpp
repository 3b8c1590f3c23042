//===- ProbeSnippets.cpp - Checked probe specs and their snippets ---------===//
//
// Parses and checks the snippets of probe specs (the user's PTX, read with
// the PTX parser), and builds and reads the seam --probe-insert leaves for
// --probe-lower: saves and placeholder operands.
//
//===----------------------------------------------------------------------===//

#include "gpuopt/Transforms/Probe/ProbeSnippets.h"

#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"

using namespace mlir;
using namespace gpuopt;
using namespace gpuopt::ptx;
using namespace gpuopt::probe;

namespace {
/// The named operands: as snippets write them, and their placeholders'
/// names (`#ptx.placeholder<bytes>`, which the PTX parser reads from
/// `{bytes}` where placeholders are allowed).
struct NamedOperandSpelling {
  StringLiteral text;
  StringLiteral name;
  NamedOperand kind;
};
constexpr NamedOperandSpelling kNamedOperands[] = {{"{bytes}", "bytes", kBytes},
                                                   {"{addr}", "addr", kAddr},
                                                   {"{site}", "site", kSite}};
} // namespace

/// Parses each snippet line by line into instructions, with the location of
/// each in the spec file, and checks what it may touch.
FailureOr<CheckedProbe>
probe::checkProbe(ProbeSpec spec, const ProbeNames &names, MLIRContext *ctx) {
  CheckedProbe probe{std::move(spec), {}, {}, {}, {}};
  const ProbeSpec &s = probe.spec;
  for (const TypedName &reg : s.registers) {
    // `%smid` in a snippet must stay the hardware's.
    if (isSpecialRegisterName("%" + reg.name))
      return emitError(reg.loc) << "register '" << reg.name
                                << "' would shadow the special register %"
                                << reg.name << ": choose another name";
    probe.registers[reg.name] = {names.reg(s.name + "_" + reg.name), reg.type};
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
        for (const NamedOperandSpelling &named : kNamedOperands)
          if (text.contains(named.text) && point.kind != PointKind::Instruction)
            return emitError(loc) << "probe '" << s.name << "': " << named.text
                                  << " exists only at instruction points";
        std::string copy = text.str();
        Parser parser(copy, ctx, [&](const char *) { return loc; });
        parser.allowEofAsStatementEnd = true;
        parser.allowPlaceholders = point.kind == PointKind::Instruction;
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
                                 names.name("local_" + s.name + "_" + reg.name),
                                 reg.type});
  }
  return probe;
}

Attribute CheckedProbe::rename(Attribute operand) const {
  return mapOperandLeaves(operand, [&](Attribute leaf) -> Attribute {
    if (auto reg = dyn_cast<RegisterAttr>(leaf)) {
      StringRef name = reg.getName();
      StringRef base = reg.getBaseName();
      auto it = registers.find(base.drop_front());
      if (it != registers.end())
        return RegisterAttr::get(reg.getContext(),
                                 it->second.first +
                                     name.drop_front(base.size()).str());
    }
    return leaf;
  });
}

FailureOr<std::vector<CheckedProbe>>
probe::loadProbes(ArrayRef<std::string> specs, bool carryLocal,
                  const ProbeNames &names, MLIRContext *ctx) {
  std::vector<CheckedProbe> probes;
  for (const std::string &name : specs) {
    FailureOr<ProbeSpec> spec = loadProbeSpec(name, ctx);
    if (failed(spec))
      return failure();
    if (carryLocal)
      spec->carryInRegisters = false;
    FailureOr<CheckedProbe> probe = checkProbe(std::move(*spec), names, ctx);
    if (failed(probe))
      return failure();
    probes.push_back(std::move(*probe));
  }
  return probes;
}

std::optional<NamedOperand> probe::getPlaceholderKind(Attribute operand) {
  auto placeholder = dyn_cast<PlaceholderAttr>(operand);
  if (!placeholder)
    return std::nullopt;
  for (const NamedOperandSpelling &named : kNamedOperands)
    if (placeholder.getName() == named.name)
      return named.kind;
  return std::nullopt;
}

void probe::createSave(OpBuilder &builder, Location loc, StringRef map,
                       ArrayRef<Attribute> values, RegisterAttr guard,
                       bool guardNegated) {
  Attribute guardOperand = guard;
  if (guard && guardNegated)
    guardOperand = NotAttr::get(builder.getContext(), guard);
  ProbeSaveOp::create(builder, loc,
                      FlatSymbolRefAttr::get(builder.getContext(), map),
                      builder.getArrayAttr(values), guardOperand);
}

std::optional<SaveView> probe::getSave(Operation *op) {
  auto save = dyn_cast<ProbeSaveOp>(op);
  if (!save)
    return std::nullopt;
  SaveView view{op, save.getMap(), save.getValues().getValue(), {}, false};
  if (Attribute guard = save.getGuardAttr()) {
    auto negated = dyn_cast<NotAttr>(guard);
    view.guard = cast<RegisterAttr>(negated ? negated.getOperand() : guard);
    view.guardNegated = negated != nullptr;
  }
  return view;
}
