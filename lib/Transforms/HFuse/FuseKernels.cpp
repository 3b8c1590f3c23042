//===- FuseKernels.cpp - Build one kernel that runs several ---------------===//
//
// The transform behind `--hfuse-apply`. Every part's body is copied into its
// own `{ }` scope of one new `.entry`, so its registers, labels and local
// variables keep their names; the scope starts with registers holding the
// part's view of the special registers (its own thread index, block shape,
// block index and grid), and the body is rewritten to read those, to branch
// to the part's end instead of returning, and to use its own barrier ids and
// thread counts. The entry's prologue decides which threads (thread split)
// or which blocks (interleave, dynamic or SM-aware dispatch) run which part;
// with several units per ticket, a block runs the parts in a loop.
//
//===----------------------------------------------------------------------===//

#include "gpuopt/Transforms/HFuse/FusionPlan.h"

#include "ptx/IR/PTXBuilder.h"
#include "ptx/IR/PTXNamespace.h"
#include "ptx/IR/PTXOpcodes.h"
#include "ptx/IR/PTXParser.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/MathExtras.h"

#include <map>

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

  /// Threads that leave the kernel early (KernelAnalysis::getEarlyExit)
  /// while its barriers wait for a thread count in the fused block: its
  /// exits branch to `drainLabel`, where leaving threads keep arriving at
  /// its block barrier (`barrier.red.or.pred`, voting false) until every
  /// thread of the part votes false there; its block barriers vote true
  /// (`livePred`). `drainBarrier` is the rewritten id and count.
  bool drain = false;
  std::string drainLabel, livePred, morePred;
  SmallVector<Attribute> drainBarrier;

  /// Replicated parts (replicas > 1): copy c of the part uses barrier ids
  /// `barrierBase + c * barrierIds + id` and, for each shared variable (by
  /// its name in the fused module; kDynamicSmemName for the dynamic array),
  /// the bytes at `stride * c` past the first copy's.
  int64_t barrierIds = 0;
  llvm::StringMap<int64_t> sharedStride;
  /// The entry's register holding the copy index (thread split), null in
  /// device functions, which compute it.
  RegisterAttr copyReg;
  /// Filled while rewriting one function or scope, declared and computed by
  /// emitPartView: a register per barrier id, and per shared variable its
  /// copy's address (`base`) and the offset of its copy (32 and 64 bits),
  /// each "" until used.
  struct CopyShared {
    std::string base, offset32, offset64;
  };
  std::map<int64_t, std::string> copyBarriers;
  llvm::StringMap<CopyShared> copyShared;
  PTXNamespace *copyNames = nullptr;
  /// The function's or scope's own `.shared` variables, moved first: the
  /// view's prologue, which takes their copies' addresses, goes after them.
  Operation *lastSharedVar = nullptr;
};

/// Names of the module-level variables this pass declares, reserved before
/// the parts' symbols are copied (which are renamed around them). Registers
/// and labels come from a PTXNamespace of the function, from `%__hf_` and
/// `$__hfuse_` stems.
constexpr StringLiteral kDynamicSmemName = "__hfuse_dynamic_smem";
constexpr StringLiteral kTicketCounterName = "__hfuse_tickets";
constexpr StringLiteral kTicketSharedName = "__hfuse_ticket";
/// sm_aware dispatch: one counter per SM id below kSMCounterEntries. PTX
/// says %smid may reach %nsmid, which may exceed the number of SMs, and need
/// not be dense; 1024 covers every GPU so far, and a larger id shares one
/// spare counter.
constexpr StringLiteral kSMCounterName = "__hfuse_sm_counters";
constexpr int64_t kSMCounterEntries = 1024;

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
  /// Thread split with replicated parts: the thread's copy of its part and
  /// the part's block it runs.
  RegisterAttr copy, partBlock;
  std::string dispatched, exit;
  /// units > 1: the end of the block's units (a ticket for dynamic
  /// dispatch, a block of its part for sm_aware) and the loop's head.
  RegisterAttr end;
  std::string unit;
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
  void emitRuntimeTicketMap(PTXBuilder &pb, PTXNamespace &names,
                            RegisterAttr ticket, RegisterAttr partReg,
                            RegisterAttr localReg);
  void emitShapeLoads(PTXBuilder &pb);
  void emitSMAwareDispatch(PTXBuilder &pb, const EntryNames &names);
  void emitUnitLoopStart(PTXBuilder &pb, const EntryNames &names);
  void emitUnitLoopEnd(PTXBuilder &pb, const EntryNames &names);
  int64_t getDispatchCounters() const;
  void emitPartView(PTXBuilder &pb, PTXNamespace &names, PartContext &part,
                    const llvm::StringSet<> &used,
                    const llvm::StringMap<std::string> &view,
                    RegisterAttr blockIndexReg);
  LogicalResult rewritePartCode(Operation *container, PartContext &part,
                                bool isEntryBody,
                                const llvm::StringMap<std::string> &view);
  LogicalResult rewriteSharedCopies(InstOp inst, PartContext &part,
                                    std::string &offsetKey);
  LogicalResult rewriteDrainedBarrier(InstOp inst, PartContext &part,
                                      bool isEntryBody, bool isReduce,
                                      bool wholeBlock,
                                      ArrayRef<Attribute> idCount);
  LogicalResult emitDrain(Operation *container, PartContext &part);
  void emitCopyRegisters(PTXBuilder &pb, PTXNamespace &names, PartContext &part,
                         RegisterAttr copy);
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
  /// Runtime shapes: per part, the parameters that pass its grid's x, y, z
  /// and its dynamic shared memory ("" where fixed), their indices (-1),
  /// and the entry's registers holding them, x * y and x * y * z.
  struct ShapeParams {
    std::string names[4];
    int64_t indices[4] = {-1, -1, -1, -1};
    RegisterAttr grid[3], gridXY, blocks, smem;
  };
  SmallVector<ShapeParams> shapes;
  SmallVector<bool> runtimeSmem;
  /// Module-level shared variables of replicated parts: the copies each is
  /// declared with.
  llvm::StringMap<int64_t> sharedVarCopies;
  int64_t dynamicSmemTotal = 0;
  uint64_t dynamicSmemAlign = 16;
  bool failedRewrite = false;
};

} // namespace

/// A shared variable's bytes, rounded up to its alignment: the distance
/// between its copies when it is declared once per replica.
template <typename VarLike>
static std::pair<int64_t, uint32_t> getCopyStride(VarLike var) {
  uint64_t element = getTypeSize(var.getType()) *
                     std::max<int64_t>(1, var.getVector().value_or(1));
  uint64_t size = element;
  for (int64_t dim : var.getDims())
    size *= dim;
  uint32_t align = var.getAlign().value_or(uint32_t(element));
  return {int64_t(llvm::alignTo(size, align)), align};
}

/// Declares `var` again as `copies` copies of `stride` bytes each.
template <typename VarLike>
static void declareCopies(VarLike var, int64_t stride, uint32_t align,
                          int64_t copies) {
  var.setAlign(align);
  var.setVectorAttr(IntegerAttr());
  var.setType(".b8");
  var.setDims(ArrayRef<int64_t>{stride * copies});
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
    for (Operation *clone : clones) {
      renameSymbolUses(clone, renames);
      clone->walk([&](LocOp locOp) {
        locOp.setFile(locOp.getFile() + fileOffsets[k]);
        locOp.removeExtraAttr();
      });
    }
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
  if (plan.runtimeShapes)
    return emitRuntimeTicketMap(pb, names, ticket, partReg, localReg);
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

/// emitTicketMap for a launch-agnostic kernel: the same map, with the
/// parts' block counts read from their grid parameters (emitShapeLoads), so
/// the number of whole periods and where each part's tail starts are
/// computed at run time.
void KernelFuser::emitRuntimeTicketMap(PTXBuilder &pb, PTXNamespace &names,
                                       RegisterAttr ticket,
                                       RegisterAttr partReg,
                                       RegisterAttr localReg) {
  int64_t period = 0;
  for (const PartPlan &part : plan.parts)
    period += part.ratio;
  auto declare = [&](StringRef type, StringRef stem) {
    return pb.reg(type, names.newName(stem));
  };
  // As in emitTicketMap, and the periods every part has blocks for, where
  // they end, where the current part's tail starts, a second scratch value.
  RegisterAttr q = declare(".b32", "%__hf_m_q"),
               m = declare(".b32", "%__hf_m_m"),
               u = declare(".b32", "%__hf_m_u"),
               ph = declare(".b32", "%__hf_m_ph"),
               lh = declare(".b32", "%__hf_m_lh"),
               pt = declare(".b32", "%__hf_m_pt"),
               lt = declare(".b32", "%__hf_m_lt"),
               x = declare(".b32", "%__hf_m_x"),
               y = declare(".b32", "%__hf_m_y"),
               periods = declare(".b32", "%__hf_m_periods"),
               headEnd = declare(".b32", "%__hf_m_head"),
               tailStart = declare(".b32", "%__hf_m_tail");
  RegisterAttr in = declare(".pred", "%__hf_m_in"),
               c = declare(".pred", "%__hf_m_c");
  for (auto [i, part] : llvm::enumerate(plan.parts)) {
    RegisterAttr dst = i == 0 ? periods : x;
    pb.inst("div").u(32).create({dst, shapes[i].blocks, part.ratio});
    if (i > 0)
      pb.inst("min").u(32).create({periods, periods, x});
  }
  pb.inst("mul").mod("lo").u(32).create({headEnd, periods, period});
  pb.inst("setp").mod("lt").u(32).create({in, ticket, headEnd});
  pb.inst("div").u(32).create({q, ticket, period});
  pb.inst("rem").u(32).create({m, ticket, period});
  pb.inst("mov").u(32).create({ph, 0});
  pb.inst("mad").mod("lo").u(32).create({lh, q, plan.parts[0].ratio, m});
  pb.inst("sub").u(32).create({u, ticket, headEnd});
  pb.inst("mov").u(32).create({pt, 0});
  pb.inst("mad").mod("lo").u(32).create({lt, periods, plan.parts[0].ratio, u});
  int64_t headStart = 0;
  for (auto [i, part] : llvm::enumerate(plan.parts)) {
    if (i > 0) {
      pb.inst("setp").mod("ge").u(32).create({c, m, headStart});
      pb.inst("selp").b(32).create({ph, int64_t(i), ph, c});
      pb.inst("mad").mod("lo").u(32).create({x, q, part.ratio, m});
      pb.inst("sub").u(32).create({x, x, headStart});
      pb.inst("selp").b(32).create({lh, x, lh, c});
      pb.inst("setp").mod("ge").u(32).create({c, u, tailStart});
      pb.inst("selp").b(32).create({pt, int64_t(i), pt, c});
      pb.inst("sub").u(32).create({x, u, tailStart});
      pb.inst("mad").mod("lo").u(32).create({x, periods, part.ratio, x});
      pb.inst("selp").b(32).create({lt, x, lt, c});
    }
    headStart += part.ratio;
    if (i + 1 == plan.parts.size())
      break;
    // The next part's tail starts after this part's blocks past the head.
    pb.inst("mul").mod("lo").u(32).create({y, periods, part.ratio});
    pb.inst("sub").u(32).create({y, shapes[i].blocks, y});
    if (i == 0)
      pb.inst("mov").u(32).create({tailStart, y});
    else
      pb.inst("add").u(32).create({tailStart, tailStart, y});
  }
  pb.inst("selp").b(32).create({partReg, ph, pt, in});
  pb.inst("selp").b(32).create({localReg, lh, lt, in});
}

/// Runtime shapes: loads every part's grid (and its dynamic shared memory,
/// where it is given at launch) from the entry's parameters into the
/// registers `shapes` names, with x * y and the part's block count.
void KernelFuser::emitShapeLoads(PTXBuilder &pb) {
  for (ShapeParams &shape : shapes) {
    for (int axis = 0; axis < 3; ++axis) {
      shape.grid[axis] =
          pb.reg(".b32", entryNames.newName("%__hf_grid" + Twine("xyz"[axis])));
      pb.inst("ld").mod("param").u(32).create(
          {shape.grid[axis], pb.addr(shape.names[axis])});
    }
    shape.gridXY = pb.reg(".b32", entryNames.newName("%__hf_gridxy"));
    shape.blocks = pb.reg(".b32", entryNames.newName("%__hf_blocks"));
    pb.inst("mul").mod("lo").u(32).create(
        {shape.gridXY, shape.grid[0], shape.grid[1]});
    pb.inst("mul").mod("lo").u(32).create(
        {shape.blocks, shape.gridXY, shape.grid[2]});
    if (!shape.names[3].empty()) {
      shape.smem = pb.reg(".b32", entryNames.newName("%__hf_smem"));
      pb.inst("ld").mod("param").u(32).create(
          {shape.smem, pb.addr(shape.names[3])});
    }
  }
}

/// The counters at the start of `__hfuse_tickets` that a launch takes work
/// from and that the last block resets: the ticket (dynamic dispatch) or
/// one per part (sm_aware). The count of finished blocks follows them.
int64_t KernelFuser::getDispatchCounters() const {
  return plan.strategy == FusionStrategy::SMAware ? plan.parts.size() : 1;
}

/// SM-aware dispatch (POD-Attention's): thread 0 counts the block on its
/// SM's counter, whose value modulo the period picks the part the SM is due
/// to run (`ratio[i]` slots of every period for part i, so each SM runs the
/// parts in the planned proportion), then takes `units` consecutive blocks
/// of that part from the part's counter. A part with no blocks left passes
/// the block on to the next part that has some: the fused grid has exactly
/// as many blocks as the parts need (getFusedGridBlocks), so every block
/// finds work, and each part's blocks run once whichever SM takes them. The
/// block learns its part, first block and, for units > 1, the end of its
/// blocks through shared memory.
void KernelFuser::emitSMAwareDispatch(PTXBuilder &pb, const EntryNames &names) {
  int64_t numParts = plan.parts.size(), period = 0;
  for (const PartPlan &part : plan.parts)
    period += part.ratio;
  auto declare = [&](StringRef type, StringRef stem) {
    return pb.reg(type, entryNames.newName(stem));
  };
  RegisterAttr smid = declare(".b32", "%__hf_smid"),
               slot = declare(".b32", "%__hf_slot"),
               blocks = declare(".b32", "%__hf_part_blocks"),
               tries = declare(".b32", "%__hf_tries"),
               offset = declare(".b64", "%__hf_offset"),
               counter = declare(".b64", "%__hf_counter");
  RegisterAttr c = declare(".pred", "%__hf_c");
  std::string grab = entryNames.newName("$__hfuse_grab").str();
  std::string found = entryNames.newName("$__hfuse_found").str();

  pb.inst("setp").mod("ne").u(32).create({names.skip, names.tid, 0});
  pb.inst("bra").guard(names.skip).create({pb.labelRef(names.dispatched)});
  // The SM's counter; an id past the table takes the spare counter after
  // the count of finished blocks.
  pb.inst("mov").u(32).create({smid, pb.sreg("%smid")});
  pb.inst("mov").u(64).create({counter, pb.sym(kSMCounterName)});
  pb.inst("mul").mod("wide").u(32).create({offset, smid, 4});
  pb.inst("add").u(64).create({counter, counter, offset});
  pb.inst("setp").mod("ge").u(32).create({c, smid, kSMCounterEntries});
  pb.inst("mov").u(64).guard(c).create({counter, pb.sym(kTicketCounterName)});
  pb.inst("add").u(64).guard(c).create({counter, counter, 4 * (numParts + 1)});
  pb.inst("atom")
      .mods({"global", "add"})
      .u(32)
      .create({slot, pb.addr(counter), 1});
  pb.inst("rem").u(32).create({slot, slot, period});
  pb.inst("mov").u(32).create({names.part, 0});
  int64_t start = 0;
  for (auto [i, part] : llvm::enumerate(plan.parts)) {
    if (i) {
      pb.inst("setp").mod("ge").u(32).create({c, slot, start});
      pb.inst("selp").b(32).create({names.part, int64_t(i), names.part, c});
    }
    start += part.ratio;
  }
  // Take `units` blocks of the part, or of the next one that has some.
  pb.inst("mov").u(32).create({tries, 0});
  pb.label(grab);
  pb.inst("mov").u(64).create({counter, pb.sym(kTicketCounterName)});
  pb.inst("mul").mod("wide").u(32).create({offset, names.part, 4});
  pb.inst("add").u(64).create({counter, counter, offset});
  pb.inst("atom")
      .mods({"global", "add"})
      .u(32)
      .create({names.blk, pb.addr(counter), plan.units});
  pb.inst("mov").u(32).create({blocks, plan.parts[0].getBlocks()});
  for (auto [i, part] : llvm::enumerate(llvm::drop_begin(plan.parts))) {
    pb.inst("setp").mod("eq").u(32).create({c, names.part, int64_t(i + 1)});
    pb.inst("selp").b(32).create({blocks, part.getBlocks(), blocks, c});
  }
  pb.inst("setp").mod("lt").u(32).create({c, names.blk, blocks});
  pb.inst("bra").guard(c).create({pb.labelRef(found)});
  pb.inst("add").u(32).create({names.part, names.part, 1});
  pb.inst("setp").mod("eq").u(32).create({c, names.part, numParts});
  pb.inst("selp").b(32).create({names.part, 0, names.part, c});
  pb.inst("add").u(32).create({tries, tries, 1});
  pb.inst("setp").mod("lt").u(32).create({c, tries, numParts});
  pb.inst("bra").guard(c).create({pb.labelRef(grab)});
  // Every part is done: only a grid larger than planned gets here. The
  // block runs no part.
  pb.inst("mov").u(32).create({names.part, numParts});
  pb.inst("mov").u(32).create({names.blk, 0});
  pb.inst("mov").u(32).create({blocks, 0});
  pb.label(found);
  pb.inst("st").mod("shared").u(32).create(
      {pb.addr(kTicketSharedName), names.part});
  pb.inst("st").mod("shared").u(32).create(
      {pb.addr(kTicketSharedName, 4), names.blk});
  if (plan.units > 1) {
    pb.inst("add").u(32).create({names.end, names.blk, plan.units});
    pb.inst("min").u(32).create({names.end, names.end, blocks});
    pb.inst("st").mod("shared").u(32).create(
        {pb.addr(kTicketSharedName, 8), names.end});
  }
  pb.label(names.dispatched);
  pb.inst("bar").mod("sync").create({0});
  pb.inst("ld").mod("shared").u(32).create(
      {names.part, pb.addr(kTicketSharedName)});
  pb.inst("ld").mod("shared").u(32).create(
      {names.blk, pb.addr(kTicketSharedName, 4)});
  if (plan.units > 1)
    pb.inst("ld").mod("shared").u(32).create(
        {names.end, pb.addr(kTicketSharedName, 8)});
}

/// units > 1: the head of the loop over the block's units. Dynamic dispatch
/// gave the block tickets [cta, cta + units), the last of which may be past
/// the parts' blocks; sm_aware dispatch gave it the end already.
void KernelFuser::emitUnitLoopStart(PTXBuilder &pb, const EntryNames &names) {
  if (plan.strategy == FusionStrategy::Dynamic) {
    int64_t total = 0;
    for (const PartPlan &part : plan.parts)
      total += part.getBlocks();
    pb.inst("add").u(32).create({names.end, names.cta, plan.units});
    pb.inst("min").u(32).create({names.end, names.end, total});
  }
  pb.label(names.unit);
}

/// units > 1: the loop's tail, after every part's end. The block waits for
/// all its threads before the next unit, which may reuse the shared memory
/// the last one used, at a barrier id no part uses (none is needed when no
/// part has shared memory or barriers); then it takes the next ticket (the
/// ticket map runs again at the head) or the next block of its part.
void KernelFuser::emitUnitLoopEnd(PTXBuilder &pb, const EntryNames &names) {
  int64_t barrierId = 0;
  bool needsBarrier = false;
  for (const KernelAnalysis &analysis : analyses) {
    barrierId = std::max(barrierId, analysis.getMaxBarrierId() + 1);
    needsBarrier |= analysis.getStaticSharedBytes() > 0 ||
                    !analysis.getDynamicShared().empty() ||
                    !analysis.getBarriers().empty();
  }
  if (needsBarrier)
    pb.inst("bar").mod("sync").create({barrierId});
  RegisterAttr next =
      plan.strategy == FusionStrategy::Dynamic ? names.cta : names.blk;
  pb.inst("add").u(32).create({next, next, 1});
  pb.inst("setp").mod("lt").u(32).create({names.skip, next, names.end});
  pb.inst("bra").guard(names.skip).create({pb.labelRef(names.unit)});
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
  // A replicated part: copy = (%tid.x - lo) / T, from the entry's register
  // in its scope, computed here in device functions.
  int64_t replicas = part.plan->replicas;
  RegisterAttr copy = part.copyReg;
  if (replicas > 1 && !copy &&
      (needsBlock || !part.copyBarriers.empty() || !part.copyShared.empty())) {
    copy = pb.reg(".b32", names.newName("%__hf_copy"));
    pb.inst("mov").u(32).create({copy, pb.sreg("%tid.x")});
    if (part.lo)
      pb.inst("sub").u(32).create({copy, copy, part.lo});
    pb.inst("div").u(32).create({copy, copy, part.plan->getThreads()});
  }
  if (replicas > 1)
    emitCopyRegisters(pb, names, part, copy);
  if (needsThread) {
    RegisterAttr localTid = pb.reg(".b32", names.newName("%__hf_local_tid"));
    // Special registers are only operands of mov and cvt.
    pb.inst("mov").u(32).create({localTid, pb.sreg("%tid.x")});
    if (part.lo)
      pb.inst("sub").u(32).create({localTid, localTid, part.lo});
    if (replicas > 1)
      pb.inst("rem").u(32).create(
          {localTid, localTid, part.plan->getThreads()});
    split(localTid, "tid", block);
  }
  if (needsBlock) {
    RegisterAttr blockIndex = blockIndexReg;
    if (!blockIndex) {
      blockIndex = pb.reg(".b32", names.newName("%__hf_local_cta"));
      switch (plan.strategy) {
      case FusionStrategy::Thread:
        pb.inst("mov").u(32).create({blockIndex, pb.sreg("%ctaid.x")});
        if (replicas > 1)
          pb.inst("mad").mod("lo").u(32).create(
              {blockIndex, blockIndex, replicas, copy});
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
      case FusionStrategy::SMAware:
        // The dispatch left it in the shared slot, after the part's index
        // (checkFusionPlan refuses device functions that read it when a
        // block runs several units).
        pb.inst("ld").mod("shared").u(32).create(
            {blockIndex, pb.addr(kTicketSharedName, 4)});
        break;
      }
    }
    if (plan.runtimeShapes) {
      // The part's grid is in registers (emitShapeLoads): x, y and z of any
      // launch, so every split divides.
      const ShapeParams &shape = shapes[part.index];
      if (needs("ctaid.x"))
        pb.inst("rem").u(32).create(
            {viewReg("ctaid.x"), blockIndex, shape.grid[0]});
      if (needs("ctaid.y")) {
        RegisterAttr y = viewReg("ctaid.y");
        pb.inst("div").u(32).create({y, blockIndex, shape.grid[0]});
        pb.inst("rem").u(32).create({y, y, shape.grid[1]});
      }
      if (needs("ctaid.z"))
        pb.inst("div").u(32).create(
            {viewReg("ctaid.z"), blockIndex, shape.gridXY});
    } else {
      split(blockIndex, "ctaid", grid);
    }
  }
  for (auto [i, axis] : llvm::enumerate(StringRef("xyz"))) {
    std::string suffix = "." + std::string(1, axis);
    if (needs("ntid" + suffix))
      pb.inst("mov").u(32).create({viewReg("ntid" + suffix), block[i]});
    if (needs("nctaid" + suffix))
      pb.inst("mov").u(32).create(
          {viewReg("nctaid" + suffix), plan.runtimeShapes
                                           ? Operand(shapes[part.index].grid[i])
                                           : Operand(grid[i])});
  }
  if (needs("dynamic_smem_size"))
    pb.inst("mov").u(32).create(
        {viewReg("dynamic_smem_size"),
         plan.runtimeShapes && runtimeSmem[part.index]
             ? Operand(shapes[part.index].smem)
             : Operand(std::max<int64_t>(part.plan->dynamicSmem, 0))});
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
  if (part.plan->replicas > 1) {
    // Function-scope shared variables (nvcc's demoted `__shared__`), once
    // per copy like the module's.
    Block *top = &container->getRegion(0).front();
    SmallVector<VarOp> vars;
    container->walk([&](VarOp var) {
      if (var.getSpace() == ".shared")
        vars.push_back(var);
    });
    part.lastSharedVar = nullptr;
    for (VarOp var : vars) {
      if (var->getBlock() != top)
        return var.emitError("cannot replicate kernel '")
               << part.plan->kernel << "': its shared variable '"
               << var.getName()
               << "' is declared in a nested scope; use replicas=1";
      auto [stride, align] = getCopyStride(var);
      part.sharedStride[var.getName()] = stride;
      declareCopies(var, stride, align, part.plan->replicas);
      if (part.lastSharedVar)
        var->moveAfter(part.lastSharedVar);
      else
        var->moveBefore(&top->front());
      part.lastSharedVar = var;
    }
  }
  if (isEntryBody && part.drain) {
    part.drainLabel = part.copyNames->newName("$__hf_drain").str();
    part.livePred = part.copyNames->newName("%__hf_live").str();
    part.morePred = part.copyNames->newName("%__hf_more").str();
    part.drainBarrier.clear();
  }
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
      inst.setPtxOperandsAttr(builder.getArrayAttr({LabelRefAttr::get(
          ctx, part.drain ? part.drainLabel : part.endLabel)}));
      continue;
    }
    // A replicated part's shared variables: each copy its own.
    std::string copyOffsetKey;
    if (part.plan->replicas > 1 &&
        failed(rewriteSharedCopies(inst, part, copyOffsetKey)))
      return failure();
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
    if (!copyOffsetKey.empty()) {
      // `mov`/`cvta` of a replicated shared variable's address: add the
      // copy's offset (rewriteSharedCopies checked the form).
      SmallVector<StringRef> types = inst.getTypeModifiers();
      bool wide = types.empty() || !types.back().ends_with("32");
      PartContext::CopyShared &regs = part.copyShared[copyOffsetKey];
      std::string &offset = wide ? regs.offset64 : regs.offset32;
      if (offset.empty())
        offset = part.copyNames->newName("%__hf_copy_off").str();
      builder.setInsertionPointAfter(inst);
      PTXBuilder pb(builder, inst.getLoc());
      auto dst = cast<RegisterAttr>(operands[0]);
      InstBuilder add = pb.inst("add").u(wide ? 64 : 32);
      if (RegisterAttr guard = inst.getGuardAttr())
        add.guard(guard, inst.getGuardNegated());
      add.create({dst, dst, pb.reg(offset)});
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
    if (plan.strategy == FusionStrategy::Thread && part.plan->replicas > 1) {
      // Each copy its own ids: a register that emitPartView computes.
      int64_t id = cast<IntImmAttr>(operands[first]).getValue();
      std::string &reg = part.copyBarriers[id];
      if (reg.empty())
        reg = part.copyNames->newName("%__hf_bar").str();
      operands[first] = RegisterAttr::get(ctx, reg);
    } else if (plan.strategy == FusionStrategy::Thread) {
      auto id = cast<IntImmAttr>(operands[first]);
      operands[first] = IntImmAttr::get(ctx, id.getValue() + part.barrierBase,
                                        /*hex=*/false);
    }
    int64_t partThreads = part.plan->getThreads();
    bool needsCount = plan.strategy == FusionStrategy::Thread ||
                      partThreads < part.fusedThreads;
    bool wholeBlock = operands.size() < withCount;
    if (wholeBlock && needsCount)
      operands.insert(operands.begin() + first + 1,
                      IntImmAttr::get(ctx, partThreads, /*hex=*/false));
    inst.setPtxOperandsAttr(builder.getArrayAttr(operands));
    if (part.drain && failed(rewriteDrainedBarrier(
                          inst, part, isEntryBody, isReduce, wholeBlock,
                          ArrayRef(operands).drop_front(first))))
      return failure();
  }
  if (isEntryBody && part.drain)
    return emitDrain(container, part);
  return success();
}

LogicalResult KernelFuser::rewriteDrainedBarrier(InstOp inst, PartContext &part,
                                                 bool isEntryBody,
                                                 bool isReduce, bool wholeBlock,
                                                 ArrayRef<Attribute> idCount) {
  auto refuse = [&](StringRef why) {
    return inst.emitError("cannot fuse kernel '")
           << part.plan->kernel
           << "' safely: " << part.analysis->getEarlyExit()->describe()
           << "; alone, threads that left count as arrived at its block "
              "barriers, but in the fused block they must keep arriving, "
              "and "
           << why
           << "; fuse it with a strategy that gives it whole blocks of its "
              "own size (interleave or dynamic, units=1)";
  };
  // A barrier with its own count (or an arrive) would see warps whose
  // leaving threads are kept at the drain: its `.aligned` form would count
  // them, a form that is not would not count them as the kernel alone did.
  if (!wholeBlock || inst.hasModifier("arrive"))
    return refuse("'" + inst.getFullOpcode() +
                  "' waits for a thread count of its own (or only arrives), "
                  "which warps with threads kept waiting elsewhere would not "
                  "reach as they do alone");
  if (!isEntryBody)
    return refuse("this barrier is in a device function");
  if (isReduce)
    return refuse("'" + inst.getFullOpcode() +
                  "' already reduces a value, which cannot carry whether "
                  "threads are still running");
  if (part.drainBarrier.empty())
    part.drainBarrier.assign(idCount.begin(), idCount.end());
  else if (part.drainBarrier.front() != idCount.front())
    return refuse("its block barriers use more than one id");
  OpBuilder builder(inst);
  PTXBuilder pb(builder, inst.getLoc());
  SmallVector<Attribute> operands{pb.reg(part.morePred)};
  llvm::append_range(operands, idCount);
  operands.push_back(pb.reg(part.livePred));
  // Not `.aligned`: a warp's leaving lanes arrive at the drain's barrier
  // while its others arrive here.
  InstBuilder red = pb.inst("barrier").mods({"red", "or"}).pred();
  if (RegisterAttr guard = inst.getGuardAttr())
    red.guard(guard, inst.getGuardNegated());
  red.create(operands);
  inst.erase();
  return success();
}

/// The drain of a part whose threads may leave early: `livePred` set at its
/// start, and at its end the loop where finished threads wait until no
/// thread of the part is still running.
///
///   $drain:
///     barrier.red.or.pred %more, id, count, !%live;
///     @%more bra $drain;
LogicalResult KernelFuser::emitDrain(Operation *container, PartContext &part) {
  // Its block barriers are all in device functions (which refuse it).
  if (part.drainBarrier.empty())
    return container->emitError("cannot fuse kernel '")
           << part.plan->kernel
           << "' safely: " << part.analysis->getEarlyExit()->describe()
           << "; its block barrier is in a device function, where gpu-opt "
              "cannot keep leaving threads arriving; fuse it with a strategy "
              "that gives it whole blocks of its own size (interleave or "
              "dynamic, units=1)";
  Block *body = &container->getRegion(0).front();
  OpBuilder builder(ctx);
  if (part.lastSharedVar)
    builder.setInsertionPointAfter(part.lastSharedVar);
  else
    builder.setInsertionPointToStart(body);
  PTXBuilder pb(builder, container->getLoc());
  RegisterAttr live = pb.reg(".pred", part.livePred);
  RegisterAttr more = pb.reg(".pred", part.morePred);
  pb.inst("mov").pred().create({live, 1});
  builder.setInsertionPointToEnd(body);
  pb.label(part.drainLabel);
  SmallVector<Attribute> operands{more};
  llvm::append_range(operands, part.drainBarrier);
  operands.push_back(pb.negate(live));
  pb.inst("barrier").mods({"red", "or"}).pred().create(operands);
  pb.inst("bra").guard(more).create({pb.labelRef(part.drainLabel)});
  return success();
}

/// A replicated part's instruction that names one of its shared variables
/// (static, or its dynamic array): `[var+8]` in a shared-space instruction
/// becomes `[%base+8]`, %base holding the thread's copy of the variable;
/// `mov`/`cvta` of the variable's address keep it and get the copy's offset
/// added (`offsetKey` names the variable then). Anything else is refused.
LogicalResult KernelFuser::rewriteSharedCopies(InstOp inst, PartContext &part,
                                               std::string &offsetKey) {
  auto copyKey = [&](Attribute leaf) -> std::string {
    auto sym = dyn_cast<FlatSymbolRefAttr>(leaf);
    if (!sym)
      return "";
    if (part.dynamicShared.contains(sym.getValue()))
      return kDynamicSmemName.str();
    StringRef name = sym.getValue();
    if (auto it = part.renames.find(name); it != part.renames.end())
      name = it->second;
    return part.sharedStride.count(name) ? name.str() : "";
  };
  auto refuse = [&](StringRef var) {
    return inst.emitError("cannot replicate kernel '")
           << part.plan->kernel << "': its shared variable '" << var
           << "' is used by '" << inst.getFullOpcode()
           << "', which gpu-opt cannot point at each copy's own (only "
              "shared-space addresses, mov and cvta); use replicas=1";
  };
  bool sharedSpace = llvm::any_of(inst.getModifiers(), [](Attribute mod) {
    StringRef m = cast<StringAttr>(mod).getValue();
    return m == "shared" || m.starts_with("shared::");
  });
  SmallVector<Attribute> operands(inst.getPtxOperands().getValue());
  bool changed = false;
  for (auto [i, operand] : llvm::enumerate(operands)) {
    if (auto addr = dyn_cast<AddressAttr>(operand)) {
      std::string key = copyKey(addr.getBase());
      if (key.empty())
        continue;
      if (!sharedSpace)
        return refuse(key);
      std::string &base = part.copyShared[key].base;
      if (base.empty())
        base = part.copyNames->newName("%__hf_copy_base").str();
      operand =
          AddressAttr::get(ctx, RegisterAttr::get(ctx, base), addr.getTerms(),
                           addr.getMinus(), addr.getIndices());
      changed = true;
      continue;
    }
    std::string found;
    walkOperandLeaves(operand, [&](Attribute leaf) {
      if (found.empty())
        found = copyKey(leaf);
    });
    if (found.empty())
      continue;
    StringRef opcode = inst.getOpcode();
    if ((opcode != "mov" && opcode != "cvta") || operands.size() != 2 ||
        i != 1 || !isa<RegisterAttr>(operands[0]) || !offsetKey.empty())
      return refuse(found);
    offsetKey = found;
  }
  if (changed)
    inst.setPtxOperandsAttr(ArrayAttr::get(ctx, operands));
  return success();
}

/// Declares and computes, at the builder's position, the registers a
/// replicated part's rewritten code reads: its barrier ids and its shared
/// variables' copies, from the copy index in `copy`.
void KernelFuser::emitCopyRegisters(PTXBuilder &pb, PTXNamespace &names,
                                    PartContext &part, RegisterAttr copy) {
  for (auto &[id, reg] : part.copyBarriers) {
    pb.reg(".b32", reg);
    pb.inst("mad").mod("lo").u(32).create(
        {pb.reg(reg), copy, part.barrierIds, part.barrierBase + id});
  }
  for (auto &entry : part.copyShared) {
    StringRef key = entry.getKey();
    PartContext::CopyShared &regs = entry.getValue();
    int64_t stride = part.sharedStride.lookup(key);
    std::string offset = regs.offset32;
    if (offset.empty())
      offset = names.newName("%__hf_copy_off").str();
    pb.reg(".b32", offset);
    pb.inst("mul").mod("lo").u(32).create({pb.reg(offset), copy, stride});
    if (!regs.offset64.empty()) {
      pb.reg(".b64", regs.offset64);
      pb.inst("cvt").u(64).u(32).create(
          {pb.reg(regs.offset64), pb.reg(offset)});
    }
    if (!regs.base.empty()) {
      pb.reg(".b32", regs.base);
      pb.inst("mov").u(32).create(
          {pb.reg(regs.base), FlatSymbolRefAttr::get(ctx, key)});
      pb.inst("add").u(32).create(
          {pb.reg(regs.base), pb.reg(regs.base), pb.reg(offset)});
      if (key == kDynamicSmemName && part.dynamicSmemOffset)
        pb.inst("add").u(32).create(
            {pb.reg(regs.base), pb.reg(regs.base), part.dynamicSmemOffset});
    }
  }
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
  // Runtime shapes: each part's grid, and its dynamic shared memory where
  // it is given at launch, as trailing `.u32` parameters.
  if (plan.runtimeShapes) {
    for (PartContext &part : parts) {
      ShapeParams &shape = shapes.emplace_back();
      for (int field = 0; field < 4; ++field) {
        if (field == 3 && !runtimeSmem[part.index])
          continue;
        static constexpr StringLiteral fields[] = {"grid_x", "grid_y", "grid_z",
                                                   "smem"};
        shape.names[field] = symbolNames
                                 .newName("__hfuse_part" + Twine(part.index) +
                                          "_" + fields[field])
                                 .str();
        shape.indices[field] = params.size();
        params.push_back(ParamDeclAttr::get(
            ctx, ".param", ".u32", shape.names[field], /*align=*/0, "",
            /*ptrAlign=*/0, /*arraySize=*/-1, /*isPtr=*/false));
      }
    }
  }
  // The cap the fused block allows (or a smaller one asked for), or with
  // per-part setmaxnreg budgets the launch count whose pool holds them all
  // (ptxas honours setmaxnreg only under `.maxnreg`).
  int64_t launchRegisters =
      getFusedRegisterCap(plan, layout.blockThreads, analyses);
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
      launchRegisters ? builder.getI32IntegerAttr(launchRegisters)
                      : IntegerAttr(),
      ArrayAttr());
  symbols[plan.name] = fusedEntry;
  Block *body = &fusedEntry.getBody().emplaceBlock();
  builder.setInsertionPointToEnd(body);
  PTXBuilder pb(builder, loc);

  // The entry's own registers and labels, fresh among the parts' names
  // (which the parts' scopes see).
  bool blockLevel = plan.strategy != FusionStrategy::Thread;
  bool dynamic = plan.strategy == FusionStrategy::Dynamic;
  bool smAware = plan.strategy == FusionStrategy::SMAware;
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
  if (dynamic || smAware) {
    names.done = newReg("%__hf_done");
    names.dispatched = entryNames.newName("$__hfuse_dispatched").str();
    names.exit = entryNames.newName("$__hfuse_exit").str();
  }
  if (plan.units > 1) {
    names.end = newReg("%__hf_units_end");
    names.unit = entryNames.newName("$__hfuse_unit").str();
  }

  // Which threads or blocks run which part.
  pb.reg(".b32", names.tid.getName());
  pb.reg(".b32", names.cta.getName());
  pb.reg(".pred", names.skip.getName());
  pb.inst("mov").u(32).create({names.tid, pb.sreg("%tid.x")});
  if (plan.runtimeShapes)
    emitShapeLoads(pb);
  if (blockLevel) {
    pb.reg(".b32", names.part.getName());
    pb.reg(".b32", names.blk.getName());
  }
  if (plan.units > 1)
    pb.reg(".b32", names.end.getName());
  if (dynamic) {
    // Thread 0 takes the block's ticket; the block learns it through shared
    // memory. Tickets hand out blocks in dispatch order whatever order the
    // hardware starts them in.
    pb.inst("setp").mod("ne").u(32).create({names.skip, names.tid, 0});
    pb.inst("bra").guard(names.skip).create({pb.labelRef(names.dispatched)});
    pb.inst("atom")
        .mods({"global", "add"})
        .u(32)
        .create({names.cta, pb.addr(kTicketCounterName), plan.units});
    pb.inst("st").mod("shared").u(32).create(
        {pb.addr(kTicketSharedName), names.cta});
    pb.label(names.dispatched);
    pb.inst("bar").mod("sync").create({0});
    pb.inst("ld").mod("shared").u(32).create(
        {names.cta, pb.addr(kTicketSharedName)});
  } else if (smAware) {
    emitSMAwareDispatch(pb, names);
  } else {
    pb.inst("mov").u(32).create({names.cta, pb.sreg("%ctaid.x")});
  }
  if (plan.units > 1)
    emitUnitLoopStart(pb, names);
  if (blockLevel && !smAware)
    emitTicketMap(pb, entryNames, names.cta, names.part, names.blk);

  int64_t fusedBlocks = 0;
  for (const PartPlan &p : plan.parts)
    fusedBlocks = std::max<int64_t>(
        fusedBlocks, llvm::divideCeil(p.getBlocks(), p.replicas));
  bool replicated = llvm::any_of(
      plan.parts, [](const PartPlan &p) { return p.replicas > 1; });
  if (!blockLevel && replicated) {
    names.copy = pb.reg(".b32", entryNames.newName("%__hf_copy"));
    names.partBlock = pb.reg(".b32", entryNames.newName("%__hf_part_cta"));
  }

  for (PartContext &part : parts) {
    // Skip the part in threads and blocks that do not run it: a list of
    // (comparison, register, bound) or-ed into one predicate.
    SmallVector<std::tuple<StringRef, RegisterAttr, Operand>> conditions;
    auto skipIf = [&]() {
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
      conditions.clear();
    };
    int64_t replicas = part.plan->replicas;
    int64_t hi = part.lo + replicas * part.plan->getThreads();
    // The part's block: the fused block's, or with replicas its copy's.
    RegisterAttr partBlock = names.cta;
    if (blockLevel) {
      conditions.push_back({"ne", names.part, part.index});
      if (hi < layout.blockThreads)
        conditions.push_back({"ge", names.tid, hi});
    } else {
      if (part.lo > 0)
        conditions.push_back({"lt", names.tid, part.lo});
      if (hi < layout.blockThreads)
        conditions.push_back({"ge", names.tid, hi});
      // Its own register budget, taken by all its warps (whole warpgroups)
      // before any skips a block: the other parts' setmaxnreg.inc wait for
      // the registers its setmaxnreg.dec gives back.
      int64_t budget = part.plan->setmaxnreg;
      if (budget && budget != launchRegisters) {
        skipIf();
        pb.inst("setmaxnreg")
            .mods({budget > launchRegisters ? "inc" : "dec", "sync", "aligned"})
            .u(32)
            .create({budget});
      }
      if (replicas > 1) {
        // copy = (tid - lo) / T; its block = fused block * replicas + copy.
        skipIf();
        if (part.lo)
          pb.inst("sub").u(32).create({names.copy, names.tid, part.lo});
        pb.inst("div").u(32).create({names.copy,
                                     part.lo ? names.copy : names.tid,
                                     part.plan->getThreads()});
        pb.inst("mad").mod("lo").u(32).create(
            {names.partBlock, names.cta, replicas, names.copy});
        partBlock = names.partBlock;
        part.copyReg = names.copy;
      }
      // Launch-agnostic: any part may have fewer blocks than another.
      if (plan.runtimeShapes)
        conditions.push_back({"ge", names.cta, shapes[part.index].blocks});
      else if (part.plan->getBlocks() < fusedBlocks * replicas)
        conditions.push_back({"ge", partBlock, part.plan->getBlocks()});
    }
    skipIf();

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
    if (dynamic || smAware) {
      scopeNames.add(names.done.getName());
      scopeNames.add(names.exit);
    }
    llvm::StringSet<> used = part.analysis->getSpecialRegistersOf(original);
    llvm::StringMap<std::string> view = getViewNames(used, scopeNames);
    // Rewrite the copy first, then put the view's prologue before it.
    part.copyNames = &scopeNames;
    if (failed(rewritePartCode(scope, part, /*isEntryBody=*/true, view)))
      failedRewrite = true;
    if (part.lastSharedVar)
      inner.setInsertionPointAfter(part.lastSharedVar);
    else
      inner.setInsertionPointToStart(scopeBody);
    emitPartView(partPb, scopeNames, part, used, view,
                 blockLevel ? names.blk : partBlock);
    builder.setInsertionPointAfter(scope);
    pb.label(part.endLabel);
  }
  if (plan.units > 1)
    emitUnitLoopEnd(pb, names);

  if (dynamic || smAware) {
    // The last block to finish resets the tickets for the next launch, so
    // no launch needs a memset first. acq_rel orders every block's ticket
    // before its count, and the reset after the last count. sm_aware
    // dispatch resets its parts' counters; its SM counters only choose a
    // part, which any value does as well (they wrap around).
    int64_t total = getFusedGridBlocks(plan);
    int64_t counters = getDispatchCounters();
    pb.reg(".b32", names.done.getName());
    // Launch-agnostic: the last ticket is the parts' blocks, less one.
    Operand last = total - 1;
    if (plan.runtimeShapes) {
      RegisterAttr lastReg =
          pb.reg(".b32", entryNames.newName("%__hf_last_ticket"));
      pb.inst("mov").u(32).create({lastReg, shapes[0].blocks});
      for (const ShapeParams &shape : llvm::drop_begin(shapes))
        pb.inst("add").u(32).create({lastReg, lastReg, shape.blocks});
      pb.inst("sub").u(32).create({lastReg, lastReg, 1});
      last = lastReg;
    }
    pb.inst("setp").mod("ne").u(32).create({names.skip, names.tid, 0});
    pb.inst("bra").guard(names.skip).create({pb.labelRef(names.exit)});
    pb.inst("atom")
        .mods({"acq_rel", "gpu", "global", "add"})
        .u(32)
        .create({names.done, pb.addr(kTicketCounterName, 4 * counters), 1});
    pb.inst("setp").mod("ne").u(32).create({names.skip, names.done, last});
    pb.inst("bra").guard(names.skip).create({pb.labelRef(names.exit)});
    for (int64_t i = 0; i <= counters; ++i)
      pb.inst("st")
          .mods({"relaxed", "gpu", "global"})
          .u(32)
          .create({pb.addr(kTicketCounterName, 4 * i), 0});
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
  runtimeSmem = getRuntimeSmemParts(plan, analysisPtrs);

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
  for (StringRef reserved :
       {kDynamicSmemName.str(), kTicketCounterName.str(),
        kTicketSharedName.str(), kSMCounterName.str(), plan.name}) {
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
    part.barrierIds = analysis.getMaxBarrierId() + 1;
    // Its block barriers wait for a thread count here: threads that leave
    // early must be kept arriving (units > 1 are refused by
    // checkFusionPlan).
    part.drain = analysis.getEarlyExit() &&
                 (plan.strategy == FusionStrategy::Thread ||
                  part.plan->getThreads() < layout.blockThreads);
    int64_t replicas = part.plan->replicas;
    if (plan.strategy == FusionStrategy::Thread)
      barrierBase += replicas * part.barrierIds;
    int64_t bytes = std::max<int64_t>(part.plan->dynamicSmem, 0);
    if (plan.strategy == FusionStrategy::Thread) {
      smemOffset = llvm::alignTo(smemOffset, 1024);
      part.dynamicSmemOffset = smemOffset;
      // A replicated part's copies each start 1024-aligned.
      if (replicas > 1) {
        part.sharedStride[kDynamicSmemName] = llvm::alignTo(bytes, 1024);
        smemOffset += (replicas - 1) * llvm::alignTo(bytes, 1024);
      }
      smemOffset += bytes;
      dynamicSmemTotal = smemOffset;
    } else {
      dynamicSmemTotal = std::max(dynamicSmemTotal, bytes);
    }
    part.renames = moduleRenames[moduleOfPart[i]];
    for (const auto &name : moduleDynamicShared[moduleOfPart[i]])
      part.dynamicShared.insert(name.getKey());
    part.endLabel = entryNames.newName("$__hfuse_end_" + Twine(i)).str();
    // A replicated part's static shared variables hold one copy per
    // replica: each is declared again as bytes, `replicas` times its size
    // rounded up to its alignment (with two replicated parts of one
    // module, as often as the larger asks).
    if (replicas > 1) {
      for (GlobalOp var : analysis.getStaticShared()) {
        StringRef name = var.getSymName();
        if (auto it = part.renames.find(name); it != part.renames.end())
          name = it->second;
        auto clone = dyn_cast_or_null<GlobalOp>(symbols.lookup(name));
        if (!clone)
          continue;
        auto [stride, align] = getCopyStride(var);
        int64_t &copies = sharedVarCopies[name];
        part.sharedStride[name] = stride;
        if (replicas > copies) {
          copies = replicas;
          declareCopies(clone, stride, align, copies);
        }
      }
    }
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
  if (plan.strategy == FusionStrategy::SMAware) {
    // The parts' counters, the count of finished blocks, the spare SM
    // counter; the SM counters; the part, first block and end of units.
    int64_t numParts = plan.parts.size();
    declare(kTicketCounterName, "", ".global", 4, ".u32", {numParts + 2});
    declare(kSMCounterName, "", ".global", 4, ".u32", {kSMCounterEntries});
    declare(kTicketSharedName, "", ".shared", 4, ".u32",
            {plan.units > 1 ? 3 : 2});
  }

  buildEntry();

  // Device functions see the part's view too.
  llvm::DenseSet<Operation *> rewritten, rewrittenForCopies;
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
      bool replicated = part.plan->replicas > 1;
      if (!rewritten.insert(func).second) {
        // Called by two parts of one module: one copy cannot serve both
        // views (nor a replicated part's copies and another part).
        if (!used.empty() || hasBarrier || part.dynamicSmemOffset ||
            replicated || rewrittenForCopies.contains(func)) {
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
      if (replicated)
        rewrittenForCopies.insert(func);
      PartContext calleeContext = part;
      calleeContext.renames.clear();
      PTXNamespace funcNames(func);
      llvm::StringMap<std::string> view = getViewNames(used, funcNames);
      // The function computes its copy index itself.
      calleeContext.copyReg = RegisterAttr();
      calleeContext.copyBarriers.clear();
      calleeContext.copyShared.clear();
      calleeContext.copyNames = &funcNames;
      if (failed(rewritePartCode(func, calleeContext, /*isEntryBody=*/false,
                                 view)))
        return cleanup();
      OpBuilder funcBuilder = OpBuilder::atBlockBegin(func.getBodyBlock());
      if (calleeContext.lastSharedVar)
        funcBuilder.setInsertionPointAfter(calleeContext.lastSharedVar);
      PTXBuilder pb(funcBuilder, func.getLoc());
      emitPartView(pb, funcNames, calleeContext, used, view, RegisterAttr());
    }
  }
  if (failedRewrite)
    return cleanup();

  // What the launch manifest and the probes need.
  SmallVector<FusionPartAttr> partInfos;
  int64_t paramIndex = 0;
  int64_t gridBlocks = 0;
  // Launch-agnostic: grids are defaults, [] where the plan has none.
  bool gridsKnown = llvm::all_of(
      plan.parts, [](const PartPlan &p) { return p.getBlocks() > 0; });
  SmallVector<int64_t> shapeParams;
  for (const ShapeParams &shape : shapes)
    shapeParams.append(std::begin(shape.indices), std::end(shape.indices));
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
        {part.lo, part.lo + part.plan->replicas * part.plan->getThreads()},
        part.plan->block,
        part.plan->getBlocks() > 0 ? ArrayRef<int64_t>(part.plan->grid)
                                   : ArrayRef<int64_t>(),
        part.dynamicSmemOffset, std::max<int64_t>(part.plan->dynamicSmem, 0),
        argMap, ratio, part.plan->replicas, part.plan->setmaxnreg));
  }
  // sm_aware dispatch and units > 1 launch fewer blocks than the parts have.
  if (gridsKnown)
    gridBlocks = getFusedGridBlocks(plan);
  setFusionInfo(fusedEntry,
                FusionInfoAttr::get(ctx, plan.strategy,
                                    gridsKnown
                                        ? SmallVector<int64_t>{gridBlocks, 1, 1}
                                        : SmallVector<int64_t>(),
                                    dynamicSmemTotal, partInfos, shapeParams));

  for (PTXModuleOp module : modules)
    module.erase();
  return fused;
}

FailureOr<PTXModuleOp> hfuse::buildFusedKernel(ModuleOp root,
                                               const FusionPlan &plan) {
  return KernelFuser(root, plan).run();
}
