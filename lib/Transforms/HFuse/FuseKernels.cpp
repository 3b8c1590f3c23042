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

#include "gpuopt/Transforms/StatementBuilder.h"
#include "ptx/IR/PTXSyntax.h"

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

/// Names of everything this pass declares; no compiler emits `__hf`.
constexpr StringLiteral kDynamicSmemName = "__hfuse_dynamic_smem";
constexpr StringLiteral kTicketCounterName = "__hfuse_tickets";
constexpr StringLiteral kTicketSharedName = "__hfuse_ticket";

/// The special registers a part sees differently from the fused kernel.
bool isRemappedSpecialRegister(StringRef name) {
  return name.starts_with("tid.") || name.starts_with("ntid.") ||
         name.starts_with("ctaid.") || name.starts_with("nctaid.") ||
         name == "dynamic_smem_size";
}

std::string regName(StringRef sreg) {
  std::string name = "%__hf_" + sreg.str();
  std::replace(name.begin(), name.end(), '.', '_');
  return name;
}

/// The registers that hold a part's view of the special registers in `used`.
llvm::StringMap<std::string> getViewNames(const llvm::StringSet<> &used) {
  llvm::StringMap<std::string> view;
  for (const auto &entry : used)
    if (isRemappedSpecialRegister(entry.getKey()))
      view[entry.getKey()] = regName(entry.getKey());
  return view;
}

class KernelFuser {
public:
  KernelFuser(ModuleOp root, const FusionPlan &plan)
      : root(root), plan(plan), ctx(root.getContext()), loc(root.getLoc()) {}

  FailureOr<PTXModuleOp> run();

private:
  LogicalResult cloneModules();
  void buildEntry();
  void emitTicketMap(StatementBuilder &sb, StringRef ticket, StringRef partReg,
                     StringRef localReg);
  void emitPartView(StatementBuilder &sb, PartContext &part,
                    const llvm::StringSet<> &used, StringRef blockIndexReg);
  LogicalResult rewritePartCode(Operation *container, PartContext &part,
                                bool isEntryBody,
                                const llvm::StringMap<std::string> &view);
  Attribute rewriteOperand(Attribute operand, PartContext &part,
                           const llvm::StringMap<std::string> &view,
                           bool &needsDynamicOffset);
  std::string uniqueName(StringRef base);

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
  ThreadLayout layout;
  int64_t dynamicSmemTotal = 0;
  uint64_t dynamicSmemAlign = 16;
  bool failedRewrite = false;
};

} // namespace

std::string KernelFuser::uniqueName(StringRef base) {
  if (!symbols.count(base))
    return base.str();
  for (unsigned i = 1;; ++i) {
    std::string candidate = (base + "_hf" + Twine(i)).str();
    if (!symbols.count(candidate))
      return candidate;
  }
}

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
      std::string newName = uniqueName(name);
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
void KernelFuser::emitTicketMap(StatementBuilder &sb, StringRef ticket,
                                StringRef partReg, StringRef localReg) {
  int64_t period = 0, periods = INT64_MAX;
  for (const PartPlan &part : plan.parts) {
    period += part.ratio;
    periods = std::min(periods, part.getBlocks() / part.ratio);
  }
  int64_t headEnd = periods * period;
  for (StringRef name : {"%__hf_m_q", "%__hf_m_m", "%__hf_m_u", "%__hf_m_ph",
                         "%__hf_m_lh", "%__hf_m_pt", "%__hf_m_lt", "%__hf_m_x"})
    sb.reg(".b32", name);
  sb.reg(".pred", "%__hf_m_in");
  sb.reg(".pred", "%__hf_m_c");
  sb.inst("setp.lt.u32 %__hf_m_in, " + ticket + ", " + Twine(headEnd));
  sb.inst("div.u32 %__hf_m_q, " + ticket + ", " + Twine(period));
  sb.inst("rem.u32 %__hf_m_m, " + ticket + ", " + Twine(period));
  sb.inst("mov.u32 %__hf_m_ph, 0");
  sb.inst("mad.lo.u32 %__hf_m_lh, %__hf_m_q, " + Twine(plan.parts[0].ratio) +
          ", %__hf_m_m");
  sb.inst("sub.u32 %__hf_m_u, " + ticket + ", " + Twine(headEnd));
  sb.inst("mov.u32 %__hf_m_pt, 0");
  sb.inst("add.u32 %__hf_m_lt, %__hf_m_u, " +
          Twine(periods * plan.parts[0].ratio));
  int64_t headStart = 0, tailStart = 0;
  for (auto [i, part] : llvm::enumerate(plan.parts)) {
    if (i == 0) {
      headStart += part.ratio;
      tailStart += part.getBlocks() - periods * part.ratio;
      continue;
    }
    sb.inst("setp.ge.u32 %__hf_m_c, %__hf_m_m, " + Twine(headStart));
    sb.inst("selp.b32 %__hf_m_ph, " + Twine(i) + ", %__hf_m_ph, %__hf_m_c");
    sb.inst("mad.lo.u32 %__hf_m_x, %__hf_m_q, " + Twine(part.ratio) +
            ", %__hf_m_m");
    sb.inst("sub.u32 %__hf_m_x, %__hf_m_x, " + Twine(headStart));
    sb.inst("selp.b32 %__hf_m_lh, %__hf_m_x, %__hf_m_lh, %__hf_m_c");
    sb.inst("setp.ge.u32 %__hf_m_c, %__hf_m_u, " + Twine(tailStart));
    sb.inst("selp.b32 %__hf_m_pt, " + Twine(i) + ", %__hf_m_pt, %__hf_m_c");
    sb.inst("sub.u32 %__hf_m_x, %__hf_m_u, " + Twine(tailStart));
    sb.inst("add.u32 %__hf_m_x, %__hf_m_x, " + Twine(periods * part.ratio));
    sb.inst("selp.b32 %__hf_m_lt, %__hf_m_x, %__hf_m_lt, %__hf_m_c");
    headStart += part.ratio;
    tailStart += part.getBlocks() - periods * part.ratio;
  }
  sb.inst("selp.b32 " + partReg + ", %__hf_m_ph, %__hf_m_pt, %__hf_m_in");
  sb.inst("selp.b32 " + localReg + ", %__hf_m_lh, %__hf_m_lt, %__hf_m_in");
}

/// Declares and computes, at the builder's position, registers with the
/// part's own view of the special registers in `used`. `blockIndexReg` is a
/// register already holding the part's block index, or "" to compute it
/// here (in device functions).
void KernelFuser::emitPartView(StatementBuilder &sb, PartContext &part,
                               const llvm::StringSet<> &used,
                               StringRef blockIndexReg) {
  llvm::StringMap<std::string> view = getViewNames(used);
  const Dim3 &block = part.plan->block, &grid = part.plan->grid;
  auto needs = [&](StringRef name) { return used.contains(name); };
  bool needsThread = needs("tid.x") || needs("tid.y") || needs("tid.z");
  bool needsBlock = needs("ctaid.x") || needs("ctaid.y") || needs("ctaid.z");
  for (const auto &entry : view)
    sb.reg(".b32", entry.getValue());
  // A split of shape (x, y, z) from a linear index.
  auto split = [&](StringRef linear, StringRef prefix, const Dim3 &dims) {
    std::string x = regName((prefix + ".x").str()),
                y = regName((prefix + ".y").str()),
                z = regName((prefix + ".z").str());
    if (needs((prefix + ".x").str())) {
      if (dims[1] * dims[2] == 1)
        sb.inst("mov.u32 " + x + ", " + linear);
      else
        sb.inst("rem.u32 " + x + ", " + linear + ", " + Twine(dims[0]));
    }
    if (needs((prefix + ".y").str())) {
      sb.inst("div.u32 " + y + ", " + linear + ", " + Twine(dims[0]));
      if (dims[2] != 1)
        sb.inst("rem.u32 " + y + ", " + y + ", " + Twine(dims[1]));
    }
    if (needs((prefix + ".z").str()))
      sb.inst("div.u32 " + z + ", " + linear + ", " + Twine(dims[0] * dims[1]));
  };
  if (needsThread) {
    sb.reg(".b32", "%__hf_local_tid");
    // Special registers are only operands of mov and cvt.
    sb.inst("mov.u32 %__hf_local_tid, %tid.x");
    if (part.lo)
      sb.inst("sub.u32 %__hf_local_tid, %__hf_local_tid, " + Twine(part.lo));
    split("%__hf_local_tid", "tid", block);
  }
  if (needsBlock) {
    std::string blockIndex = blockIndexReg.str();
    if (blockIndex.empty()) {
      blockIndex = "%__hf_local_cta";
      sb.reg(".b32", blockIndex);
      switch (plan.strategy) {
      case FusionStrategy::Thread:
        sb.inst("mov.u32 " + blockIndex + ", %ctaid.x");
        break;
      case FusionStrategy::Interleave:
      case FusionStrategy::Dynamic:
        sb.reg(".b32", "%__hf_ticket");
        sb.reg(".b32", "%__hf_part");
        if (plan.strategy == FusionStrategy::Interleave)
          sb.inst("mov.u32 %__hf_ticket, %ctaid.x");
        else
          sb.inst("ld.shared.u32 %__hf_ticket, [" + kTicketSharedName + "]");
        emitTicketMap(sb, "%__hf_ticket", "%__hf_part", blockIndex);
        break;
      }
    }
    split(blockIndex, "ctaid", grid);
  }
  for (auto [i, axis] : llvm::enumerate(StringRef("xyz"))) {
    std::string suffix = "." + std::string(1, axis);
    if (needs("ntid" + suffix))
      sb.inst("mov.u32 " + view["ntid" + suffix] + ", " + Twine(block[i]));
    if (needs("nctaid" + suffix))
      sb.inst("mov.u32 " + view["nctaid" + suffix] + ", " + Twine(grid[i]));
  }
  if (needs("dynamic_smem_size"))
    sb.inst("mov.u32 " + view["dynamic_smem_size"] + ", " +
            Twine(std::max<int64_t>(part.plan->dynamicSmem, 0)));
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
    // A thread that leaves its part early must not end the fused kernel:
    // the other parts' counted barriers still expect it... and the parts
    // after it still have to run.
    if (isEntryBody && (opcode == "ret" || opcode == "exit")) {
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
      std::string width = type.ends_with("32") ? "u32" : "u64";
      builder.setInsertionPointAfter(inst);
      StatementBuilder sb(builder, inst.getLoc());
      std::string dst = cast<RegisterAttr>(operands[0]).getName().str();
      InstOp add = sb.inst("add." + width + " " + dst + ", " + dst + ", " +
                           Twine(part.dynamicSmemOffset));
      if (inst.getGuard()) {
        add.setGuardAttr(inst.getGuardAttr());
        add.setGuardNegated(inst.getGuardNegated());
      }
    }
    if (opcode != "bar" && opcode != "barrier")
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
  llvm::StringSet<> paramNames;
  for (PartContext &part : parts) {
    for (Attribute attr : part.analysis->getEntry().getParams()) {
      auto param = cast<ParamDeclAttr>(attr);
      std::string name = param.getName().str();
      if (paramNames.contains(name) || symbols.count(name))
        name = (param.getName() + "_hf" + Twine(part.index)).str();
      while (paramNames.contains(name) || symbols.count(name))
        name += "_";
      paramNames.insert(name);
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
  StatementBuilder sb(builder, loc);

  // Which threads or blocks run which part.
  sb.reg(".b32", "%__hf_tid");
  sb.reg(".b32", "%__hf_cta");
  sb.reg(".pred", "%__hf_skip");
  sb.inst("mov.u32 %__hf_tid, %tid.x");
  bool blockLevel = plan.strategy != FusionStrategy::Thread;
  if (blockLevel) {
    sb.reg(".b32", "%__hf_part");
    sb.reg(".b32", "%__hf_blk");
  }
  if (plan.strategy == FusionStrategy::Dynamic) {
    // Thread 0 takes the block's ticket; the block learns it through shared
    // memory. Tickets hand out blocks in dispatch order whatever order the
    // hardware starts them in.
    sb.inst("setp.ne.u32 %__hf_skip, %__hf_tid, 0");
    sb.inst("@%__hf_skip bra $__hfuse_dispatched");
    sb.inst(("atom.global.add.u32 %__hf_cta, [" + kTicketCounterName + "], 1")
                .str());
    sb.inst(("st.shared.u32 [" + kTicketSharedName + "], %__hf_cta").str());
    sb.label("$__hfuse_dispatched");
    sb.inst("bar.sync 0");
    sb.inst(("ld.shared.u32 %__hf_cta, [" + kTicketSharedName + "]").str());
  } else {
    sb.inst("mov.u32 %__hf_cta, %ctaid.x");
  }
  if (blockLevel)
    emitTicketMap(sb, "%__hf_cta", "%__hf_part", "%__hf_blk");

  int64_t fusedBlocks = 0;
  for (const PartPlan &p : plan.parts)
    fusedBlocks = std::max(fusedBlocks, p.getBlocks());

  for (PartContext &part : parts) {
    // Skip the part in threads and blocks that do not run it: a list of
    // (comparison, register, bound) or-ed into one predicate.
    SmallVector<std::tuple<StringRef, StringRef, int64_t>> conditions;
    int64_t hi = part.lo + part.plan->getThreads();
    if (blockLevel) {
      conditions.push_back({"ne", "%__hf_part", part.index});
      if (hi < layout.blockThreads)
        conditions.push_back({"ge", "%__hf_tid", hi});
    } else {
      if (part.lo > 0)
        conditions.push_back({"lt", "%__hf_tid", part.lo});
      if (hi < layout.blockThreads)
        conditions.push_back({"ge", "%__hf_tid", hi});
      if (part.plan->getBlocks() < fusedBlocks)
        conditions.push_back({"ge", "%__hf_cta", part.plan->getBlocks()});
    }
    for (auto [i, condition] : llvm::enumerate(conditions)) {
      auto [cmp, reg, bound] = condition;
      if (i == 0)
        sb.inst("setp." + cmp + ".u32 %__hf_skip, " + reg + ", " +
                Twine(bound));
      else
        sb.inst("setp." + cmp + ".or.u32 %__hf_skip, " + reg + ", " +
                Twine(bound) + ", %__hf_skip");
    }
    if (!conditions.empty())
      sb.inst("@%__hf_skip bra " + part.endLabel);

    auto scope = ScopeOp::create(builder, loc);
    Block *scopeBody = &scope.getBody().emplaceBlock();
    OpBuilder inner = OpBuilder::atBlockEnd(scopeBody);
    StatementBuilder partSb(inner, loc);
    EntryOp original = part.analysis->getEntry();
    for (Operation &op : original.getBodyBlock()->getOperations())
      inner.clone(op);
    // Rewrite the copy first, then put the view's prologue before it.
    llvm::StringSet<> used = part.analysis->getSpecialRegistersOf(original);
    if (failed(rewritePartCode(scope, part, /*isEntryBody=*/true,
                               getViewNames(used))))
      failedRewrite = true;
    inner.setInsertionPointToStart(scopeBody);
    emitPartView(partSb, part, used, blockLevel ? "%__hf_blk" : "%__hf_cta");
    builder.setInsertionPointAfter(scope);
    sb.label(part.endLabel);
  }

  if (plan.strategy == FusionStrategy::Dynamic) {
    // The last block to finish resets the tickets for the next launch, so
    // no launch needs a memset first. acq_rel orders every block's ticket
    // before its count, and the reset after the last count.
    int64_t total = 0;
    for (const PartPlan &p : plan.parts)
      total += p.getBlocks();
    sb.reg(".b32", "%__hf_done");
    sb.inst("setp.ne.u32 %__hf_skip, %__hf_tid, 0");
    sb.inst("@%__hf_skip bra $__hfuse_exit");
    sb.inst(("atom.acq_rel.gpu.global.add.u32 %__hf_done, [" +
             kTicketCounterName + "+4], 1")
                .str());
    sb.inst("setp.ne.u32 %__hf_skip, %__hf_done, " + Twine(total - 1));
    sb.inst("@%__hf_skip bra $__hfuse_exit");
    sb.inst(
        ("st.relaxed.gpu.global.u32 [" + kTicketCounterName + "], 0").str());
    sb.inst(
        ("st.relaxed.gpu.global.u32 [" + kTicketCounterName + "+4], 0").str());
    sb.label("$__hfuse_exit");
  }
  sb.inst("ret");
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
                             kTicketSharedName.str(), plan.name})
    symbols[reserved] = nullptr;

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
    part.endLabel = ("$__hfuse_end_" + Twine(i)).str();
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
        hasBarrier |=
            inst.getOpcode() == "bar" || inst.getOpcode() == "barrier";
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
      if (failed(rewritePartCode(func, calleeContext, /*isEntryBody=*/false,
                                 getViewNames(used))))
        return cleanup();
      OpBuilder funcBuilder = OpBuilder::atBlockBegin(func.getBodyBlock());
      StatementBuilder sb(funcBuilder, func.getLoc());
      emitPartView(sb, part, used, "");
    }
  }
  if (failedRewrite)
    return cleanup();

  // What the launch manifest needs.
  Builder b(ctx);
  SmallVector<Attribute> partInfos;
  unsigned paramIndex = 0;
  int64_t gridBlocks = 0;
  for (PartContext &part : parts) {
    SmallVector<int64_t> argMap;
    for (size_t i = 0, e = part.analysis->getEntry().getParams().size(); i < e;
         ++i)
      argMap.push_back(paramIndex++);
    gridBlocks = plan.strategy == FusionStrategy::Thread
                     ? std::max(gridBlocks, part.plan->getBlocks())
                     : gridBlocks + part.plan->getBlocks();
    SmallVector<NamedAttribute> fields = {
        b.getNamedAttr("kernel", b.getStringAttr(part.plan->kernel)),
        b.getNamedAttr(
            "module",
            b.getStringAttr(modules[moduleOfPart[part.index]].getSymName())),
        b.getNamedAttr("threads",
                       b.getDenseI64ArrayAttr(
                           {part.lo, part.lo + part.plan->getThreads()})),
        b.getNamedAttr("block", b.getDenseI64ArrayAttr(part.plan->block)),
        b.getNamedAttr("grid", b.getDenseI64ArrayAttr(part.plan->grid)),
        b.getNamedAttr("dynamic_smem_offset",
                       b.getI64IntegerAttr(part.dynamicSmemOffset)),
        b.getNamedAttr("dynamic_smem", b.getI64IntegerAttr(std::max<int64_t>(
                                           part.plan->dynamicSmem, 0))),
        b.getNamedAttr("arg_map", b.getDenseI64ArrayAttr(argMap))};
    if (plan.strategy != FusionStrategy::Thread)
      fields.push_back(
          b.getNamedAttr("ratio", b.getI64IntegerAttr(part.plan->ratio)));
    partInfos.push_back(b.getDictionaryAttr(fields));
  }
  fusedEntry->setAttr(
      kFusionInfoAttrName,
      b.getDictionaryAttr(
          {b.getNamedAttr("strategy", b.getStringAttr(stringifyFusionStrategy(
                                          plan.strategy))),
           b.getNamedAttr("grid", b.getDenseI64ArrayAttr({gridBlocks, 1, 1})),
           b.getNamedAttr("dynamic_smem",
                          b.getI64IntegerAttr(dynamicSmemTotal)),
           b.getNamedAttr("parts", b.getArrayAttr(partInfos))}));

  for (PTXModuleOp module : modules)
    module.erase();
  return fused;
}

FailureOr<PTXModuleOp> hfuse::buildFusedKernel(ModuleOp root,
                                               const FusionPlan &plan) {
  return KernelFuser(root, plan).run();
}
