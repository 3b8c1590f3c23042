//===- ProbeInsert.cpp - Put probe snippets at their points ---------------===//
//
// `--probe-insert`: for every kernel that --probe-plan planned, the code of
// each point in a `ptx.probe` op:
//
//  - `kernel.entry`: the entry snippets (and, in a fused kernel, "no part
//    yet"); each part's scope starts by naming its part;
//  - `before OPCODE` / `after OPCODE`: the snippets of the instruction
//    points that match a kernel instruction (a guarded instruction's
//    snippet is branched around when its guard fails), with the placeholder
//    operands `{bytes}`, `{addr}` and `{site}`;
//  - `kernel.exit`: the exit snippets before every `ret` and `exit` of the
//    kernel body, and at the end of a body that falls off it.
//
// `save.MAP` becomes `ptx.probe_save` and `{bytes}`, `{addr}`, `{site}`
// stay `#ptx.placeholder` operands: slots, record stores and the values at
// each instruction are --probe-lower's.
//
//===----------------------------------------------------------------------===//

#include "gpuopt/Dialect/GPUOpt/GPUOptDialect.h"
#include "gpuopt/Runtime/ProbeRecordLayout.h"
#include "gpuopt/Transforms/Passes.h"
#include "gpuopt/Transforms/Probe/ProbeAccess.h"
#include "gpuopt/Transforms/Probe/ProbeSteps.h"
#include "ptx/IR/PTXBuilder.h"

#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringSet.h"

namespace gpuopt {
#define GEN_PASS_DEF_PROBEINSERT
#include "gpuopt/Transforms/Passes.h.inc"
} // namespace gpuopt

using namespace mlir;
using namespace gpuopt;
using namespace gpuopt::ptx;
using namespace gpuopt::probe;

/// Builds `snippet` with the probe's registers renamed.
static void insertSnippet(OpBuilder &builder, const CheckedProbe &probe,
                          ArrayRef<SnippetInst> snippet) {
  for (const SnippetInst &inst : snippet) {
    RegisterAttr guard;
    if (inst.syntax.guard)
      guard = cast<RegisterAttr>(probe.rename(inst.syntax.guard));
    SmallVector<Attribute> operands;
    for (Attribute operand : inst.syntax.operands)
      operands.push_back(probe.rename(operand));
    if (inst.syntax.opcode.getValue() == "save") {
      createSave(builder, inst.loc,
                 cast<StringAttr>(inst.syntax.modifiers[0]).getValue(),
                 operands, guard, inst.syntax.guardNegated);
      continue;
    }
    InstOp::create(builder, inst.loc, guard,
                   inst.syntax.guardNegated ? builder.getUnitAttr()
                                            : UnitAttr(),
                   inst.syntax.opcode, inst.syntax.modifiers,
                   builder.getArrayAttr(operands));
  }
}

/// The snippets of every point of `kind`, probe by probe.
static void insertPoint(OpBuilder &builder, ArrayRef<CheckedProbe> probes,
                        PointKind kind) {
  for (const CheckedProbe &probe : probes)
    for (auto [point, snippet] : llvm::zip(probe.spec.points, probe.points))
      if (point.kind == kind)
        insertSnippet(builder, probe, snippet);
}

LogicalResult ProbeInserter::insert(EntryOp entry,
                                    ArrayRef<CheckedProbe> probes) {
  MLIRContext *ctx = entry.getContext();
  Location loc = entry.getLoc();
  FailureOr<FusedParts> parts = getFusedParts(entry);
  if (failed(parts))
    return failure();
  std::optional<ProbePlan> plan = getProbePlan(entry);
  ProbeNames names = plan ? ProbeNames(plan->prefix) : ProbeNames();
  FailureOr<std::vector<MapLayout>> maps =
      layoutMaps(entry, probes, *parts, names);
  if (failed(maps))
    return failure();
  // The kernel's own instructions, before any probe code goes in.
  SmallVector<InstOp> kernelInsts;
  entry.walk([&](InstOp inst) {
    if (inst->getParentOfType<EntryOp>() == entry &&
        !inst->getParentOfType<ProbeOp>())
      kernelInsts.push_back(inst);
  });

  // Entry: the entry snippets, in the op that names the buffers.
  Block *body = &entry.getBody().front();
  OpBuilder builder(ctx);
  builder.setInsertionPointToStart(body);
  {
    // Maps in the kernel's last parameter share it.
    SmallVector<Attribute> buffers;
    for (const MapLayout &map : *maps)
      if (!llvm::is_contained(buffers, StringAttr::get(ctx, map.param)))
        buffers.push_back(StringAttr::get(ctx, map.param));
    ProbeOpInsertion entryProbe(builder, loc, kEntryPoint,
                                ArrayAttr::get(ctx, buffers));
    PTXBuilder pb(builder, loc);
    // The registers the snippets name, so that each pass leaves a module
    // that verifies (--probe-lower declares them again, with its own).
    for (const CheckedProbe &probe : probes)
      for (const TypedName &reg : probe.spec.registers)
        pb.reg("." + reg.type, probe.registers.lookup(reg.name).first);
    std::string part = names.reg(kPartField), copy = names.reg(kCopyField);
    if (!parts->scopes.empty())
      pb.reg(".b32", part);
    if (parts->replicated)
      pb.reg(".b32", copy);
    if (!parts->scopes.empty()) {
      // No part until a thread enters one (thread split: threads beyond
      // every part's; records at kernel entry).
      pb.inst("mov").u(32).create({pb.reg(part), -1});
      if (parts->replicated)
        pb.inst("mov").u(32).create({pb.reg(copy), -1});
      for (auto [index, scope] : llvm::enumerate(parts->scopes)) {
        OpBuilder partBuilder = OpBuilder::atBlockBegin(scope.getBodyBlock());
        ProbeOpInsertion partProbe(partBuilder, scope.getLoc(),
                                   "part " + std::to_string(index));
        PTXBuilder partPb(partBuilder, scope.getLoc());
        partPb.inst("mov").u(32).create({partPb.reg(part), index});
        if (!parts->replicated)
          continue;
        // The copy of the part's block this thread runs, as --hfuse-apply
        // computes it: (%tid.x - first) / its block's threads.
        const FusedParts::Copies &copies = parts->copies[index];
        RegisterAttr copyReg = partPb.reg(copy);
        if (copies.replicas == 1) {
          partPb.inst("mov").u(32).create({copyReg, 0});
          continue;
        }
        partPb.inst("mov").u(32).create({copyReg, partPb.sreg("%tid.x")});
        if (copies.first)
          partPb.inst("sub").u(32).create({copyReg, copyReg, copies.first});
        partPb.inst("div").u(32).create({copyReg, copyReg, copies.threads});
      }
    }
    insertPoint(builder, probes, PointKind::KernelEntry);
  }

  // Instruction points.
  PredicateRegisters predicates(entry);
  auto isPredicate = [&](RegisterAttr reg) { return predicates.contains(reg); };
  for (InstOp inst : kernelInsts)
    for (const CheckedProbe &probe : probes)
      for (auto [point, snippet, uses] :
           llvm::zip(probe.spec.points, probe.points, probe.uses)) {
        if (point.kind != PointKind::Instruction ||
            !llvm::any_of(point.patterns, [&](const InstructionPattern &p) {
              return matches(inst, p);
            }))
          continue;
        if ((uses & kBytes) && !accessBytes(inst, isPredicate).bytes) {
          inst.emitWarning()
              << "probe '" << probe.spec.name
              << "': not recorded here: the bytes this instruction moves "
                 "are not known from its text (a TMA tensor copy's size is "
                 "in its tensor map)";
          continue;
        }
        if (uses & kAddr) {
          AddressAttr address = accessAddress(inst);
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
        std::string opcode = inst.getFullOpcode();
        if (point.after)
          builder.setInsertionPointAfter(inst);
        else
          builder.setInsertionPoint(inst);
        ProbeOpInsertion probeOp(
            builder, inst.getLoc(),
            ((point.after ? kAfterPrefix : kBeforePrefix) + opcode).str());
        PTXBuilder pb(builder, inst.getLoc());
        // A guarded instruction: its snippet runs when the guard holds.
        std::string skip;
        if (inst.getGuard()) {
          skip = names.label("skip_" + Twine(labelCounter++));
          pb.inst("bra")
              .guard(*inst.getGuard(), !inst.getGuardNegated())
              .create({pb.labelRef(skip)});
        }
        insertSnippet(builder, probe, snippet);
        if (!skip.empty())
          pb.label(skip);
      }

  // Exits; dynamic maps store their slot counts at every exit.
  bool hasExit = llvm::any_of(probes, [](const CheckedProbe &p) {
    return llvm::any_of(p.spec.points,
                        [](const PointSpec &point) {
                          return point.kind == PointKind::KernelExit;
                        }) ||
           llvm::any_of(p.spec.maps,
                        [](const MapSpec &m) { return m.dynamicCapacity; });
  });
  if (!hasExit)
    return success();
  // Before every ret/exit of the kernel body (not of callees).
  SmallVector<InstOp> exits;
  for (InstOp inst : kernelInsts)
    if (inst.getOpcode() == "ret" || inst.getOpcode() == "exit")
      exits.push_back(inst);
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
  for (InstOp exit : exits) {
    builder.setInsertionPoint(exit);
    ProbeOpInsertion exitProbe(builder, exit.getLoc(), kExitPoint);
    insertPoint(builder, probes, PointKind::KernelExit);
  }
  if (!endsInExit) {
    builder.setInsertionPointToEnd(body);
    ProbeOpInsertion exitProbe(builder, loc, kExitPoint);
    insertPoint(builder, probes, PointKind::KernelExit);
  }
  return success();
}

FailureOr<ArrayRef<CheckedProbe>> ProbeCache::get(const ProbePlan &plan,
                                                  MLIRContext *ctx) {
  auto key = std::make_tuple(
      std::vector<std::string>(plan.specs.begin(), plan.specs.end()),
      plan.carryLocal, plan.prefix);
  auto it = probes.find(key);
  if (it == probes.end()) {
    FailureOr<std::vector<CheckedProbe>> loaded = loadProbes(
        std::get<0>(key), plan.carryLocal, ProbeNames(plan.prefix), ctx);
    if (failed(loaded))
      return failure();
    it = probes
             .emplace(key, std::make_unique<std::vector<CheckedProbe>>(
                               std::move(*loaded)))
             .first;
  }
  return ArrayRef<CheckedProbe>(*it->second);
}

namespace {
struct ProbeInsertPass : public gpuopt::impl::ProbeInsertBase<ProbeInsertPass> {
  using ProbeInsertBase::ProbeInsertBase;

  void runOnOperation() override {
    ProbeCache cache;
    ProbeInserter inserter;
    WalkResult result = getOperation().walk([&](EntryOp entry) {
      std::optional<ProbePlan> plan = getProbePlan(entry);
      if (!plan)
        return WalkResult::advance();
      FailureOr<ArrayRef<CheckedProbe>> probes =
          cache.get(*plan, &getContext());
      if (failed(probes) || failed(inserter.insert(entry, *probes)))
        return WalkResult::interrupt();
      return WalkResult::advance();
    });
    if (result.wasInterrupted())
      signalPassFailure();
  }
};
} // namespace
