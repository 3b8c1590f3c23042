//===- FuseKernels.cpp - Build one kernel that runs several ---------------===//
//
// The transform behind `--hfuse-apply`. Every part's body is copied into its
// own `{ }` scope of one new `.entry`, so its registers, labels and local
// variables keep their names; the scope starts with registers holding the
// part's view of the special registers (its own thread index, block shape,
// block index and grid), and the body is rewritten to read those, to branch
// to the part's end instead of returning, and to use its own barrier ids and
// thread counts. The entry's prologue decides which threads (thread split)
// or which blocks (interleave, dynamic dispatch) run which part.
//
//===----------------------------------------------------------------------===//

#include "gpuopt/Transforms/HFuse/FusionPlan.h"

#include "ptx/IR/PTXBuilder.h"
#include "ptx/IR/PTXNamespace.h"
#include "ptx/IR/PTXOpcodes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace gpuopt;
using namespace gpuopt::hfuse;
using namespace gpuopt::ptx;

namespace {

/// Everything the rewrite of one part needs.
struct PartContext {
  unsigned index = 0;
  const PartPlan *plan = nullptr;
  const KernelAnalysis *analysis = nullptr;
  /// First thread in the fused block (thread split), and the fused block.
  int64_t lo = 0;
  int64_t fusedThreads = 0;
  /// First barrier id it may use (thread split).
  int64_t barrierBase = 0;
  /// Offset of its dynamic shared memory in the fused kernel's.
  int64_t dynamicSmemOffset = 0;
  /// Symbols renamed in the fused module: its module's globals and
  /// functions, and its parameters.
  llvm::StringMap<std::string> renames;
  /// Names of its module's `.extern .shared` arrays.
  llvm::StringSet<> dynamicShared;
  std::string endLabel;
};

/// Names of the module-level variables this pass declares, reserved before
/// the parts' symbols are copied (which are renamed around them). Registers
/// and labels come from a PTXNamespace of the function, from `%__hf_` and
/// `$__hfuse_` stems.
constexpr StringLiteral kDynamicSmemName = "__hfuse_dynamic_smem";
constexpr StringLiteral kTicketCounterName = "__hfuse_tickets";
constexpr StringLiteral kTicketSharedName = "__hfuse_ticket";

/// The special registers a part sees differently from the fused kernel.
bool isRemappedSpecialRegister(StringRef name) {
  return name.starts_with("tid.") || name.starts_with("ntid.") ||
         name.starts_with("ctaid.") || name.starts_with("nctaid.") ||
         name == "dynamic_smem_size";
}

/// The stem of the register holding a part's view of `sreg`:
/// `%__hf_tid_x` for `tid.x`.
std::string getViewStem(StringRef sreg) {
  std::string name = "%__hf_" + sreg.str();
  std::replace(name.begin(), name.end(), '.', '_');
  return name;
}

/// The registers that hold a part's view of the special registers in `used`,
/// fresh in `names` (the function or scope they are declared in).
llvm::StringMap<std::string> getViewNames(const llvm::StringSet<> &used,
                                          PTXNamespace &names) {
  llvm::StringMap<std::string> view;
  for (const auto &entry : used)
    if (isRemappedSpecialRegister(entry.getKey()))
      view[entry.getKey()] = names.newName(getViewStem(entry.getKey())).str();
  return view;
}

/// The fused entry's own registers and labels.
struct EntryNames {
  RegisterAttr tid, cta, skip, part, blk, done;
  std::string dispatched, exit;
};

class KernelFuser {
public:
  KernelFuser(ModuleOp root, const FusionPlan &plan)
      : root(root), plan(plan), ctx(root.getContext()), loc(root.getLoc()) {}

  FailureOr<PTXModuleOp> run();

private:
  LogicalResult cloneModules();
  void buildEntry();
  void emitTicketMap(PTXBuilder &pb, PTXNamespace &names, RegisterAttr ticket,
                     RegisterAttr partReg, RegisterAttr localReg);
  void emitPartView(PTXBuilder &pb, PTXNamespace &names, PartContext &part,
                    const llvm::StringSet<> &used,
                    const llvm::StringMap<std::string> &view,
                    RegisterAttr blockIndexReg);
  LogicalResult rewritePartCode(Operation *container, PartContext &part,
                                bool isEntryBody,
                                const llvm::StringMap<std::string> &view);
  Attribute rewriteOperand(Attribute operand, PartContext &part,
                           const llvm::StringMap<std::string> &view,
                           bool &needsDynamicOffset);

  ModuleOp root;
  const FusionPlan &plan;
  MLIRContext *ctx;
  Location loc;
  PTXModuleOp fused;
  EntryOp fusedEntry;
  std::vector<KernelAnalysis> analyses;
  std::vector<PartContext> parts;
  /// Distinct input modules, and each part's index into them.
  SmallVector<PTXModuleOp> modules;
  SmallVector<unsigned> moduleOfPart;
  std::vector<llvm::StringMap<std::string>> moduleRenames;
  std::vector<llvm::StringSet<>> moduleDynamicShared;
  SmallVector<int64_t> fileOffsets;
  llvm::StringMap<Operation *> symbols;
  /// Module-level names: the parts' symbols, this pass's variables and the
  /// fused kernel's parameters.
  PTXNamespace symbolNames;
  /// The fused entry's names: every part's (their scopes see the entry's
  /// registers and labels), and the entry's own.
  PTXNamespace entryNames;
  ThreadLayout layout;
  int64_t dynamicSmemTotal = 0;
  uint64_t dynamicSmemAlign = 16;
  bool failedRewrite = false;
};

} // namespace

/// "8.7" < "8.10": compares version numbers, not strings.
static bool versionLess(StringRef a, StringRef b) {
  auto split = [](StringRef v) {
    auto [major, minor] = v.split('.');
    unsigned ma = 0, mi = 0;
    major.getAsInteger(10, ma);
    minor.getAsInteger(10, mi);
    return std::make_pair(ma, mi);
  };
  return split(a) < split(b);
}

LogicalResult KernelFuser::cloneModules() {
  OpBuilder builder(ctx);
  builder.setInsertionPointToEnd(fused.getBodyBlock());
  int64_t nextFile = 0;
  for (auto [k, module] : llvm::enumerate(modules)) {
    llvm::StringMap<std::string> &renames = moduleRenames[k];
    fileOffsets.push_back(nextFile);
    int64_t maxFile = 0;
    SmallVector<Operation *> clones;
    for (Operation &op : module.getBodyBlock()->getOperations()) {
      if (isa<EntryOp, SectionOp>(op))
        continue;
      if (auto file = dyn_cast<FileOp>(op)) {
        auto clone = cast<FileOp>(builder.clone(op));
        clone.setIndex(file.getIndex() + fileOffsets[k]);
        maxFile = std::max<int64_t>(maxFile, file.getIndex());
        continue;
      }
      auto symName =
          op.getAttrOfType<StringAttr>(SymbolTable::getSymbolAttrName());
      if (!symName) {
        clones.push_back(builder.clone(op));
        continue;
      }
      StringRef name = symName.getValue();
      auto global = dyn_cast<GlobalOp>(op);
      if (global && global.getSpace() == ".shared" &&
          global.getLinkage() == StringRef(".extern")) {
        moduleDynamicShared[k].insert(name);
        continue;
      }
      auto isDeclaration = [](Operation *op) {
        if (auto func = dyn_cast<FuncOp>(op))
          return !func.hasBody();
        if (auto global = dyn_cast<GlobalOp>(op))
          return global.getLinkage() == StringRef(".extern");
        return false;
      };
      // Two declarations of one external symbol: keep the first.
      if (auto it = symbols.find(name);
          it != symbols.end() && it->second && isDeclaration(&op) &&
          isDeclaration(it->second) && it->second->getName() == op.getName())
        continue;
      // A clash gets the first free `name_hfN`.
      std::string newName = symbolNames.newName(name, "_hf").str();
      Operation *clone = builder.clone(op);
      clones.push_back(clone);
      if (newName != name) {
        renames[name] = newName;
        clone->setAttr(SymbolTable::getSymbolAttrName(),
                       builder.getStringAttr(newName));
      }
      symbols[newName] = clone;
    }
    // References inside the copies follow the renames; `.loc` follows the
    // renumbered files and drops what pointed into the dropped sections.
    for (Operation *clone : clones)
      clone->walk([&](Operation *op) {
        if (auto inst = dyn_cast<InstOp>(op)) {
          SmallVector<Attribute> operands;
          for (Attribute operand : inst.getPtxOperands())
            operands.push_back(
                mapOperandLeaves(operand, [&](Attribute leaf) -> Attribute {
                  if (auto sym = dyn_cast<FlatSymbolRefAttr>(leaf))
                    if (auto it = renames.find(sym.getValue());
                        it != renames.end())
                      return FlatSymbolRefAttr::get(ctx, it->second);
                  return leaf;
                }));
          inst.setPtxOperandsAttr(ArrayAttr::get(ctx, operands));
        } else if (auto decl = dyn_cast<ForwardDeclOp>(op)) {
          if (auto it = renames.find(decl.getFunction()); it != renames.end())
            decl.setFunction(it->second);
        } else if (auto locOp = dyn_cast<LocOp>(op)) {
          locOp.setFile(locOp.getFile() + fileOffsets[k]);
          locOp.removeExtraAttr();
        }
      });
    nextFile += maxFile;
  }
  return success();
}

/// Maps a ticket (a block's position in the dispatch order) to the part
/// that runs it and that part's block index: tickets come in periods of
/// sum(ratio) blocks, `ratio[i]` of them for part i, for as many periods as
/// every part has blocks for; the remaining blocks follow part by part.
void KernelFuser::emitTicketMap(PTXBuilder &pb, PTXNamespace &names,
                                RegisterAttr ticket, RegisterAttr partReg,
                                RegisterAttr localReg) {
  int64_t period = 0, periods = INT64_MAX;
  for (const PartPlan &part : plan.parts) {
    period += part.ratio;
    periods = std::min(periods, part.getBlocks() / part.ratio);
  }
  int64_t headEnd = periods * period;
  // Quotient and remainder of the ticket by the period; part and local index
  // in the head (whole periods) and in the tail; a scratch value.
  auto declare = [&](StringRef type, StringRef stem) {
    return pb.reg(type, names.newName(stem));
  };
  RegisterAttr q = declare(".b32", "%__hf_m_q"),
               m = declare(".b32", "%__hf_m_m"),
               u = declare(".b32", "%__hf_m_u"),
               ph = declare(".b32", "%__hf_m_ph"),
               lh = declare(".b32", "%__hf_m_lh"),
               pt = declare(".b32", "%__hf_m_pt"),
               lt = declare(".b32", "%__hf_m_lt"),
               x = declare(".b32", "%__hf_m_x");
  RegisterAttr in = declare(".pred", "%__hf_m_in"),
               c = declare(".pred", "%__hf_m_c");
  pb.inst("setp").mod("lt").u(32).create({in, ticket, headEnd});
  pb.inst("div").u(32).create({q, ticket, period});
  pb.inst("rem").u(32).create({m, ticket, period});
  pb.inst("mov").u(32).create({ph, 0});
  pb.inst("mad").mod("lo").u(32).create({lh, q, plan.parts[0].ratio, m});
  pb.inst("sub").u(32).create({u, ticket, headEnd});
  pb.inst("mov").u(32).create({pt, 0});
  pb.inst("add").u(32).create({lt, u, periods * plan.parts[0].ratio});
  int64_t headStart = 0, tailStart = 0;
  for (auto [i, part] : llvm::enumerate(plan.parts)) {
    if (i == 0) {
      headStart += part.ratio;
      tailStart += part.getBlocks() - periods * part.ratio;
      continue;
    }
    pb.inst("setp").mod("ge").u(32).create({c, m, headStart});
    pb.inst("selp").b(32).create({ph, int64_t(i), ph, c});
    pb.inst("mad").mod("lo").u(32).create({x, q, part.ratio, m});
    pb.inst("sub").u(32).create({x, x, headStart});
    pb.inst("selp").b(32).create({lh, x, lh, c});
    pb.inst("setp").mod("ge").u(32).create({c, u, tailStart});
    pb.inst("selp").b(32).create({pt, int64_t(i), pt, c});
    pb.inst("sub").u(32).create({x, u, tailStart});
    pb.inst("add").u(32).create({x, x, periods * part.ratio});
    pb.inst("selp").b(32).create({lt, x, lt, c});
    headStart += part.ratio;
    tailStart += part.getBlocks() - periods * part.ratio;
  }
  pb.inst("selp").b(32).create({partReg, ph, pt, in});
  pb.inst("selp").b(32).create({localReg, lh, lt, in});
}

/// Declares and computes, at the builder's position, the registers `view`
/// names with the part's own view of the special registers in `used`.
/// `blockIndexReg` already holds the part's block index, or is null to
/// compute it here (in device functions); other registers it needs are fresh
/// in `names`.
void KernelFuser::emitPartView(PTXBuilder &pb, PTXNamespace &names,
                               PartContext &part, const llvm::StringSet<> &used,
                               const llvm::StringMap<std::string> &view,
                               RegisterAttr blockIndexReg) {
  const Dim3 &block = part.plan->block, &grid = part.plan->grid;
  auto needs = [&](StringRef name) { return used.contains(name); };
  auto viewReg = [&](const Twine &sreg) {
    return pb.reg(view.lookup(sreg.str()));
  };
  bool needsThread = needs("tid.x") || needs("tid.y") || needs("tid.z");
  bool needsBlock = needs("ctaid.x") || needs("ctaid.y") || needs("ctaid.z");
  for (const auto &entry : view)
    pb.reg(".b32", entry.getValue());
  // A split of shape (x, y, z) from a linear index.
  auto split = [&](RegisterAttr linear, StringRef prefix, const Dim3 &dims) {
    if (needs((prefix + ".x").str())) {
      RegisterAttr x = viewReg(prefix + ".x");
      if (dims[1] * dims[2] == 1)
        pb.inst("mov").u(32).create({x, linear});
      else
        pb.inst("rem").u(32).create({x, linear, dims[0]});
    }
    if (needs((prefix + ".y").str())) {
      RegisterAttr y = viewReg(prefix + ".y");
      pb.inst("div").u(32).create({y, linear, dims[0]});
      if (dims[2] != 1)
        pb.inst("rem").u(32).create({y, y, dims[1]});
    }
    if (needs((prefix + ".z").str()))
      pb.inst("div").u(32).create(
          {viewReg(prefix + ".z"), linear, dims[0] * dims[1]});
  };
  if (needsThread) {
    RegisterAttr localTid = pb.reg(".b32", names.newName("%__hf_local_tid"));
    // Special registers are only operands of mov and cvt.
    pb.inst("mov").u(32).create({localTid, pb.sreg("%tid.x")});
    if (part.lo)
      pb.inst("sub").u(32).create({localTid, localTid, part.lo});
    split(localTid, "tid", block);
  }
  if (needsBlock) {
    RegisterAttr blockIndex = blockIndexReg;
    if (!blockIndex) {
      blockIndex = pb.reg(".b32", names.newName("%__hf_local_cta"));
      switch (plan.strategy) {
      case FusionStrategy::Thread:
        pb.inst("mov").u(32).create({blockIndex, pb.sreg("%ctaid.x")});
        break;
      case FusionStrategy::Interleave:
      case FusionStrategy::Dynamic: {
        RegisterAttr ticket = pb.reg(".b32", names.newName("%__hf_ticket"));
        RegisterAttr partReg = pb.reg(".b32", names.newName("%__hf_part"));
        if (plan.strategy == FusionStrategy::Interleave)
          pb.inst("mov").u(32).create({ticket, pb.sreg("%ctaid.x")});
        else
          pb.inst("ld").mod("shared").u(32).create(
              {ticket, pb.addr(kTicketSharedName)});
        emitTicketMap(pb, names, ticket, partReg, blockIndex);
        break;
      }
      }
    }
    split(blockIndex, "ctaid", grid);
  }
  for (auto [i, axis] : llvm::enumerate(StringRef("xyz"))) {
    std::string suffix = "." + std::string(1, axis);
    if (needs("ntid" + suffix))
      pb.inst("mov").u(32).create({viewReg("ntid" + suffix), block[i]});
    if (needs("nctaid" + suffix))
      pb.inst("mov").u(32).create({viewReg("nctaid" + suffix), grid[i]});
  }
  if (needs("dynamic_smem_size"))
    pb.inst("mov").u(32).create({viewReg("dynamic_smem_size"),
                                 std::max<int64_t>(part.plan->dynamicSmem, 0)});
}

Attribute KernelFuser::rewriteOperand(Attribute operand, PartContext &part,
                                      const llvm::StringMap<std::string> &view,
                                      bool &needsDynamicOffset) {
  // `[dynsmem+8]` becomes `[__hfuse_dynamic_smem+8+offset]`.
  if (auto addr = dyn_cast<AddressAttr>(operand)) {
    if (auto sym = dyn_cast<FlatSymbolRefAttr>(addr.getBase());
        sym && part.dynamicShared.contains(sym.getValue())) {
      SmallVector<int64_t> terms(addr.getTerms());
      uint64_t minus = addr.getMinus();
      if (part.dynamicSmemOffset)
        terms.push_back(part.dynamicSmemOffset);
      return AddressAttr::get(ctx,
                              FlatSymbolRefAttr::get(ctx, kDynamicSmemName),
                              terms, minus, addr.getIndices());
    }
  }
  return mapOperandLeaves(operand, [&](Attribute leaf) -> Attribute {
    if (auto sreg = dyn_cast<SpecialRegisterAttr>(leaf)) {
      auto it = view.find(sreg.getName().drop_front());
      if (it != view.end())
        return RegisterAttr::get(ctx, it->second);
      return leaf;
    }
    if (auto sym = dyn_cast<FlatSymbolRefAttr>(leaf)) {
      if (part.dynamicShared.contains(sym.getValue())) {
        needsDynamicOffset |= part.dynamicSmemOffset != 0;
        return FlatSymbolRefAttr::get(ctx, kDynamicSmemName);
      }
      auto it = part.renames.find(sym.getValue());
      if (it != part.renames.end())
        return FlatSymbolRefAttr::get(ctx, it->second);
    }
    return leaf;
  });
}

LogicalResult
KernelFuser::rewritePartCode(Operation *container, PartContext &part,
                             bool isEntryBody,
                             const llvm::StringMap<std::string> &view) {
  OpBuilder builder(ctx);
  SmallVector<InstOp> insts;
  container->walk([&](Operation *op) {
    if (auto inst = dyn_cast<InstOp>(op))
      insts.push_back(inst);
    else if (auto locOp = dyn_cast<LocOp>(op); locOp && isEntryBody) {
      // Debug sections are dropped, so `.loc` keeps only file, line, column.
      locOp.setFile(locOp.getFile() + fileOffsets[moduleOfPart[part.index]]);
      locOp.removeExtraAttr();
    }
  });
  for (InstOp inst : insts) {
    StringRef opcode = inst.getOpcode();
    OpcodeKind kind = getOpcodeKind(opcode);
    // A thread that leaves its part early must not end the fused kernel:
    // the other parts' counted barriers still expect it... and the parts
    // after it still have to run.
    if (isEntryBody &&
        (kind == OpcodeKind::Return || kind == OpcodeKind::Exit)) {
      SmallVector<Attribute> modifiers;
      if (inst.hasModifier("uni"))
        modifiers.push_back(builder.getStringAttr("uni"));
      inst.setOpcode("bra");
      inst.setModifiersAttr(builder.getArrayAttr(modifiers));
      inst.setPtxOperandsAttr(
          builder.getArrayAttr({LabelRefAttr::get(ctx, part.endLabel)}));
      continue;
    }
    bool needsDynamicOffset = false;
    SmallVector<Attribute> operands;
    for (Attribute operand : inst.getPtxOperands())
      operands.push_back(
          rewriteOperand(operand, part, view, needsDynamicOffset));
    inst.setPtxOperandsAttr(builder.getArrayAttr(operands));
    if (needsDynamicOffset) {
      // `mov.u64 %rd1, smem` or `cvta.shared.u64 %rd1, smem`: add the
      // part's offset to the destination.
      bool isAddressOf = (opcode == "mov" || opcode == "cvta") &&
                         operands.size() == 2 && isa<RegisterAttr>(operands[0]);
      if (!isAddressOf) {
        inst.emitError("cannot fuse kernel '")
            << part.plan->kernel
            << "': its dynamic shared memory array is used by '"
            << inst.getFullOpcode()
            << "', which gpu-opt cannot offset (only addresses, mov and "
               "cvta)";
        return failure();
      }
      SmallVector<StringRef> types = inst.getTypeModifiers();
      StringRef type = types.empty() ? "u64" : types.back();
      builder.setInsertionPointAfter(inst);
      PTXBuilder pb(builder, inst.getLoc());
      auto dst = cast<RegisterAttr>(operands[0]);
      InstBuilder add = pb.inst("add").u(type.ends_with("32") ? 32 : 64);
      if (RegisterAttr guard = inst.getGuardAttr())
        add.guard(guard, inst.getGuardNegated());
      add.create({dst, dst, part.dynamicSmemOffset});
    }
    if (kind != OpcodeKind::Barrier)
      continue;
    // The barrier's id and count sit where KernelAnalysis found them.
    if (inst.hasModifier("warp") || inst.hasModifier("cluster"))
      continue;
    bool isReduce = inst.hasModifier("red");
    unsigned first = isReduce ? 1 : 0;
    unsigned withCount = isReduce ? 4 : 2;
    if (operands.size() <= first)
      continue;
    if (plan.strategy == FusionStrategy::Thread) {
      auto id = cast<IntImmAttr>(operands[first]);
      operands[first] = IntImmAttr::get(ctx, id.getValue() + part.barrierBase,
                                        /*hex=*/false);
    }
    int64_t partThreads = part.plan->getThreads();
    bool needsCount = plan.strategy == FusionStrategy::Thread ||
                      partThreads < part.fusedThreads;
    if (operands.size() < withCount && needsCount)
      operands.insert(operands.begin() + first + 1,
                      IntImmAttr::get(ctx, partThreads, /*hex=*/false));
    inst.setPtxOperandsAttr(builder.getArrayAttr(operands));
  }
  return success();
}

void KernelFuser::buildEntry() {
  OpBuilder builder(ctx);
  builder.setInsertionPointToEnd(fused.getBodyBlock());
  // Parameters: every part's, in order, renamed where they clash.
  SmallVector<Attribute> params;
  for (PartContext &part : parts) {
    for (Attribute attr : part.analysis->getEntry().getParams()) {
      auto param = cast<ParamDeclAttr>(attr);
      StringRef name = param.getName();
      if (symbolNames.contains(name))
        name = symbolNames.newName(name + "_hf" + Twine(part.index));
      else
        symbolNames.add(name);
      if (name != param.getName())
        part.renames[param.getName()] = name;
      params.push_back(ParamDeclAttr::get(
          ctx, param.getSpace(), param.getType(), name, param.getAlign(),
          param.getPtrSpace(), param.getPtrAlign(), param.getArraySize(),
          param.getIsPtr()));
    }
  }
  // The fused kernel stands where its parts' kernels stood: diagnostics
  // about it (probes, ptxas) point at them.
  SmallVector<Location> partLocs;
  for (PartContext &part : parts)
    partLocs.push_back(part.analysis->getEntry().getLoc());
  fusedEntry = EntryOp::create(
      builder, FusedLoc::get(ctx, partLocs), builder.getStringAttr(plan.name),
      builder.getStringAttr(".visible"), builder.getArrayAttr(params),
      ArrayAttr(), DenseI32ArrayAttr(),
      builder.getDenseI32ArrayAttr(
          {static_cast<int32_t>(layout.blockThreads), 1, 1}),
      IntegerAttr(),
      plan.maxnreg ? builder.getI32IntegerAttr(plan.maxnreg) : IntegerAttr(),
      ArrayAttr());
  symbols[plan.name] = fusedEntry;
  Block *body = &fusedEntry.getBody().emplaceBlock();
  builder.setInsertionPointToEnd(body);
  PTXBuilder pb(builder, loc);

  // The entry's own registers and labels, fresh among the parts' names
  // (which the parts' scopes see).
  bool blockLevel = plan.strategy != FusionStrategy::Thread;
  bool dynamic = plan.strategy == FusionStrategy::Dynamic;
  EntryNames names;
  auto newReg = [&](StringRef stem) {
    return pb.reg(entryNames.newName(stem));
  };
  names.tid = newReg("%__hf_tid");
  names.cta = newReg("%__hf_cta");
  names.skip = newReg("%__hf_skip");
  if (blockLevel) {
    names.part = newReg("%__hf_part");
    names.blk = newReg("%__hf_blk");
  }
  if (dynamic) {
    names.done = newReg("%__hf_done");
    names.dispatched = entryNames.newName("$__hfuse_dispatched").str();
    names.exit = entryNames.newName("$__hfuse_exit").str();
  }

  // Which threads or blocks run which part.
  pb.reg(".b32", names.tid.getName());
  pb.reg(".b32", names.cta.getName());
  pb.reg(".pred", names.skip.getName());
  pb.inst("mov").u(32).create({names.tid, pb.sreg("%tid.x")});
  if (blockLevel) {
    pb.reg(".b32", names.part.getName());
    pb.reg(".b32", names.blk.getName());
  }
  if (dynamic) {
    // Thread 0 takes the block's ticket; the block learns it through shared
    // memory. Tickets hand out blocks in dispatch order whatever order the
    // hardware starts them in.
    pb.inst("setp").mod("ne").u(32).create({names.skip, names.tid, 0});
    pb.inst("bra").guard(names.skip).create({pb.labelRef(names.dispatched)});
    pb.inst("atom")
        .mods({"global", "add"})
        .u(32)
        .create({names.cta, pb.addr(kTicketCounterName), 1});
    pb.inst("st").mod("shared").u(32).create(
        {pb.addr(kTicketSharedName), names.cta});
    pb.label(names.dispatched);
    pb.inst("bar").mod("sync").create({0});
    pb.inst("ld").mod("shared").u(32).create(
        {names.cta, pb.addr(kTicketSharedName)});
  } else {
    pb.inst("mov").u(32).create({names.cta, pb.sreg("%ctaid.x")});
  }
  if (blockLevel)
    emitTicketMap(pb, entryNames, names.cta, names.part, names.blk);

  int64_t fusedBlocks = 0;
  for (const PartPlan &p : plan.parts)
    fusedBlocks = std::max(fusedBlocks, p.getBlocks());

  for (PartContext &part : parts) {
    // Skip the part in threads and blocks that do not run it: a list of
    // (comparison, register, bound) or-ed into one predicate.
    SmallVector<std::tuple<StringRef, RegisterAttr, int64_t>> conditions;
    int64_t hi = part.lo + part.plan->getThreads();
    if (blockLevel) {
      conditions.push_back({"ne", names.part, part.index});
      if (hi < layout.blockThreads)
        conditions.push_back({"ge", names.tid, hi});
    } else {
      if (part.lo > 0)
        conditions.push_back({"lt", names.tid, part.lo});
      if (hi < layout.blockThreads)
        conditions.push_back({"ge", names.tid, hi});
      if (part.plan->getBlocks() < fusedBlocks)
        conditions.push_back({"ge", names.cta, part.plan->getBlocks()});
    }
    for (auto [i, condition] : llvm::enumerate(conditions)) {
      auto [cmp, reg, bound] = condition;
      if (i == 0)
        pb.inst("setp").mod(cmp).u(32).create({names.skip, reg, bound});
      else
        pb.inst("setp").mod(cmp).mod("or").u(32).create(
            {names.skip, reg, bound, names.skip});
    }
    if (!conditions.empty())
      pb.inst("bra").guard(names.skip).create({pb.labelRef(part.endLabel)});

    auto scope = ScopeOp::create(builder, loc);
    Block *scopeBody = &scope.getBody().emplaceBlock();
    OpBuilder inner = OpBuilder::atBlockEnd(scopeBody);
    PTXBuilder partPb(inner, loc);
    EntryOp original = part.analysis->getEntry();
    for (Operation &op : original.getBodyBlock()->getOperations())
      inner.clone(op);
    // The scope sees its part's names and the entry's own: those declared
    // so far (outside the parts' scopes) and those declared after it.
    PTXNamespace scopeNames(original);
    for (Operation &op : *body)
      if (!isa<ScopeOp>(op))
        scopeNames.add(&op);
    for (const PartContext &other : parts)
      scopeNames.add(other.endLabel);
    if (dynamic) {
      scopeNames.add(names.done.getName());
      scopeNames.add(names.exit);
    }
    llvm::StringSet<> used = part.analysis->getSpecialRegistersOf(original);
    llvm::StringMap<std::string> view = getViewNames(used, scopeNames);
    // Rewrite the copy first, then put the view's prologue before it.
    if (failed(rewritePartCode(scope, part, /*isEntryBody=*/true, view)))
      failedRewrite = true;
    inner.setInsertionPointToStart(scopeBody);
    emitPartView(partPb, scopeNames, part, used, view,
                 blockLevel ? names.blk : names.cta);
    builder.setInsertionPointAfter(scope);
    pb.label(part.endLabel);
  }

  if (dynamic) {
    // The last block to finish resets the tickets for the next launch, so
    // no launch needs a memset first. acq_rel orders every block's ticket
    // before its count, and the reset after the last count.
    int64_t total = 0;
    for (const PartPlan &p : plan.parts)
      total += p.getBlocks();
    pb.reg(".b32", names.done.getName());
    pb.inst("setp").mod("ne").u(32).create({names.skip, names.tid, 0});
    pb.inst("bra").guard(names.skip).create({pb.labelRef(names.exit)});
    pb.inst("atom")
        .mods({"acq_rel", "gpu", "global", "add"})
        .u(32)
        .create({names.done, pb.addr(kTicketCounterName, 4), 1});
    pb.inst("setp").mod("ne").u(32).create({names.skip, names.done, total - 1});
    pb.inst("bra").guard(names.skip).create({pb.labelRef(names.exit)});
    pb.inst("st")
        .mods({"relaxed", "gpu", "global"})
        .u(32)
        .create({pb.addr(kTicketCounterName), 0});
    pb.inst("st")
        .mods({"relaxed", "gpu", "global"})
        .u(32)
        .create({pb.addr(kTicketCounterName, 4), 0});
    pb.label(names.exit);
  }
  pb.inst("ret").create();
}

FailureOr<PTXModuleOp> KernelFuser::run() {
  if (failed(checkFusionPlan(root, plan, loc)))
    return failure();
  for (const PartPlan &partPlan : plan.parts)
    analyses.emplace_back(*findPartKernel(root, partPlan, loc));
  SmallVector<const KernelAnalysis *> analysisPtrs;
  for (KernelAnalysis &analysis : analyses)
    analysisPtrs.push_back(&analysis);
  layout = layoutThreads(plan, analysisPtrs);

  // Distinct modules, in order of first use.
  for (KernelAnalysis &analysis : analyses) {
    auto it = llvm::find(modules, analysis.getModule());
    if (it == modules.end()) {
      modules.push_back(analysis.getModule());
      moduleOfPart.push_back(modules.size() - 1);
    } else {
      moduleOfPart.push_back(it - modules.begin());
    }
  }
  moduleRenames.resize(modules.size());
  moduleDynamicShared.resize(modules.size());

  // Reserve the names this pass declares.
  for (StringRef reserved : {kDynamicSmemName.str(), kTicketCounterName.str(),
                             kTicketSharedName.str(), plan.name}) {
    symbols[reserved] = nullptr;
    symbolNames.add(reserved);
  }
  // The parts' bodies are copied into the fused entry's scopes as they are.
  for (KernelAnalysis &analysis : analyses)
    entryNames.add(analysis.getEntry());

  // The fused module: the newest PTX version, the parts' chip, no debug
  // sections (they describe the original kernels).
  StringRef version = modules.front().getVersion();
  for (PTXModuleOp module : modules)
    if (versionLess(version, module.getVersion()))
      version = module.getVersion();
  SmallVector<Attribute> target;
  for (Attribute t : modules.front().getTarget())
    if (cast<StringAttr>(t).getValue() != "debug")
      target.push_back(t);
  for (auto module : root.getBody()->getOps<PTXModuleOp>())
    if (module.getSymName() == plan.name &&
        !llvm::is_contained(modules, module))
      return emitError(loc) << "cannot name the fused kernel '" << plan.name
                            << "': a module of that name exists",
             failure();
  OpBuilder builder(ctx);
  builder.setInsertionPointToEnd(root.getBody());
  fused = PTXModuleOp::create(builder, loc, plan.name, version,
                              builder.getArrayAttr(target),
                              builder.getI32IntegerAttr(64));
  if (fused.getBody().empty())
    fused.getBody().emplaceBlock();
  auto cleanup = [&]() {
    fused.erase();
    return failure();
  };
  if (failed(cloneModules()))
    return cleanup();

  // Per-part contexts: barrier ids, dynamic shared memory offsets.
  int64_t barrierBase = 0, smemOffset = 0;
  // Every kernel found its dynamic shared memory at the start of the block's
  // dynamic region; here static arrays of the other parts (and the ticket)
  // come first. Swizzled layouts (TMA, wgmma, ldmatrix) need the base
  // 1024-aligned, as it is when a kernel has no static shared memory.
  for (auto [i, analysis] : llvm::enumerate(analyses))
    if (!analysis.getDynamicShared().empty())
      dynamicSmemAlign = std::max<uint64_t>(
          1024, std::max(dynamicSmemAlign, analysis.getDynamicSharedAlign()));
  for (auto [i, analysis] : llvm::enumerate(analyses)) {
    PartContext part;
    part.index = i;
    part.plan = &plan.parts[i];
    part.analysis = &analysis;
    part.lo = layout.lo[i];
    part.fusedThreads = layout.blockThreads;
    part.barrierBase = barrierBase;
    if (plan.strategy == FusionStrategy::Thread)
      barrierBase += analysis.getMaxBarrierId() + 1;
    int64_t bytes = std::max<int64_t>(part.plan->dynamicSmem, 0);
    if (plan.strategy == FusionStrategy::Thread) {
      smemOffset = llvm::alignTo(smemOffset, 1024);
      part.dynamicSmemOffset = smemOffset;
      smemOffset += bytes;
      dynamicSmemTotal = smemOffset;
    } else {
      dynamicSmemTotal = std::max(dynamicSmemTotal, bytes);
    }
    part.renames = moduleRenames[moduleOfPart[i]];
    for (const auto &name : moduleDynamicShared[moduleOfPart[i]])
      part.dynamicShared.insert(name.getKey());
    part.endLabel = entryNames.newName("$__hfuse_end_" + Twine(i)).str();
    parts.push_back(std::move(part));
  }

  // Module-level declarations the fused kernel needs.
  builder.setInsertionPointToStart(fused.getBodyBlock());
  auto declare = [&](StringRef name, StringRef linkage, StringRef space,
                     int64_t align, StringRef type, ArrayRef<int64_t> dims) {
    GlobalOp::create(
        builder, loc, builder.getStringAttr(name),
        linkage.empty() ? StringAttr() : builder.getStringAttr(linkage),
        builder.getStringAttr(space), builder.getI32IntegerAttr(align),
        IntegerAttr(), builder.getStringAttr(type),
        builder.getDenseI64ArrayAttr(dims), StringAttr(), ArrayAttr());
  };
  if (llvm::any_of(analyses, [](const KernelAnalysis &a) {
        return !a.getDynamicShared().empty();
      }))
    declare(kDynamicSmemName, ".extern", ".shared", dynamicSmemAlign, ".b8",
            {0});
  if (plan.strategy == FusionStrategy::Dynamic) {
    declare(kTicketCounterName, "", ".global", 4, ".u32", {2});
    declare(kTicketSharedName, "", ".shared", 4, ".u32", {});
  }

  buildEntry();

  // Device functions see the part's view too.
  llvm::DenseSet<Operation *> rewritten;
  for (PartContext &part : parts) {
    for (FuncOp callee : part.analysis->getCallees()) {
      StringRef name = callee.getSymName();
      auto it = part.renames.find(name);
      auto func = dyn_cast_or_null<FuncOp>(symbols.lookup(
          it != part.renames.end() ? StringRef(it->second) : name));
      if (!func || !func.hasBody())
        continue;
      llvm::StringSet<> used;
      for (const auto &sreg : part.analysis->getSpecialRegistersOf(func))
        if (isRemappedSpecialRegister(sreg.getKey()))
          used.insert(sreg.getKey());
      bool hasBarrier = false;
      func.walk([&](InstOp inst) {
        hasBarrier |= getOpcodeKind(inst.getOpcode()) == OpcodeKind::Barrier;
      });
      if (!rewritten.insert(func).second) {
        // Called by two parts of one module: one copy cannot serve both
        // views.
        if (!used.empty() || hasBarrier || part.dynamicSmemOffset) {
          emitError(callee.getLoc())
              << "cannot fuse: device function '" << name
              << "' is called by two fused kernels of one module and reads "
                 "their launch shape, synchronises or uses dynamic shared "
                 "memory";
          return cleanup();
        }
        continue;
      }
      // The copy's symbol references were renamed when it was cloned.
      PartContext calleeContext = part;
      calleeContext.renames.clear();
      PTXNamespace funcNames(func);
      llvm::StringMap<std::string> view = getViewNames(used, funcNames);
      if (failed(rewritePartCode(func, calleeContext, /*isEntryBody=*/false,
                                 view)))
        return cleanup();
      OpBuilder funcBuilder = OpBuilder::atBlockBegin(func.getBodyBlock());
      PTXBuilder pb(funcBuilder, func.getLoc());
      emitPartView(pb, funcNames, part, used, view, RegisterAttr());
    }
  }
  if (failedRewrite)
    return cleanup();

  // What the launch manifest and the probes need.
  SmallVector<FusionPartAttr> partInfos;
  int64_t paramIndex = 0;
  int64_t gridBlocks = 0;
  for (PartContext &part : parts) {
    SmallVector<int64_t> argMap;
    for (size_t i = 0, e = part.analysis->getEntry().getParams().size(); i < e;
         ++i)
      argMap.push_back(paramIndex++);
    gridBlocks = plan.strategy == FusionStrategy::Thread
                     ? std::max(gridBlocks, part.plan->getBlocks())
                     : gridBlocks + part.plan->getBlocks();
    std::optional<int64_t> ratio;
    if (plan.strategy != FusionStrategy::Thread)
      ratio = part.plan->ratio;
    partInfos.push_back(FusionPartAttr::get(
        ctx, part.plan->kernel, modules[moduleOfPart[part.index]].getSymName(),
        {part.lo, part.lo + part.plan->getThreads()}, part.plan->block,
        part.plan->grid, part.dynamicSmemOffset,
        std::max<int64_t>(part.plan->dynamicSmem, 0), argMap, ratio));
  }
  setFusionInfo(fusedEntry,
                FusionInfoAttr::get(ctx, plan.strategy, {gridBlocks, 1, 1},
                                    dynamicSmemTotal, partInfos));

  for (PTXModuleOp module : modules)
    module.erase();
  return fused;
}

FailureOr<PTXModuleOp> hfuse::buildFusedKernel(ModuleOp root,
                                               const FusionPlan &plan) {
  return KernelFuser(root, plan).run();
}
