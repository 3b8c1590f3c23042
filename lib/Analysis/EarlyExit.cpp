//===- EarlyExit.cpp - Threads that leave before their block's barrier ---===//
//
// A control-flow graph of the entry's body (statements in program order, cut
// at labels, after control transfers and around barriers), its
// post-dominators, a divergence taint iterated with control dependence, and
// two reachability facts per node: whether an exit is reachable with no
// barrier on the way, and whether a barrier is reachable at all.
//
//===----------------------------------------------------------------------===//

#include "gpuopt/Analysis/EarlyExit.h"

#include "ptx/IR/PTXOpcodes.h"

#include "llvm/ADT/BitVector.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FormatVariadic.h"

using namespace mlir;
using namespace gpuopt;
using namespace gpuopt::ptx;

namespace {

/// A node of the graph: a run of statements entered only at its first and
/// left only after its last. A barrier is a node of its own; a guarded
/// barrier is a decision node (the guard) whose successors are the barrier
/// and what follows it.
struct Node {
  SmallVector<InstOp> insts;
  SmallVector<unsigned> succs;
  /// Leaves the kernel (`ret`, `exit`) on one of its ways out.
  InstOp exit;
  /// The barrier it is, when it is one.
  InstOp barrier;
  /// The instruction whose predicate picks among `succs` (or the exit), when
  /// there is a choice.
  InstOp decision;
  /// An indirect branch: its successors are not known.
  bool indirect = false;
};

/// Special registers every thread of a block reads alike.
bool isUniformSpecialRegister(StringRef name) {
  name.consume_front("%");
  for (StringRef prefix :
       {"ctaid", "nctaid", "ntid", "nsmid", "nwarpid", "gridid", "envreg",
        "dynamic_smem_size", "total_smem_size", "aggr_smem_size",
        "cluster_ctaid", "cluster_nctaid", "cluster_ctarank",
        "cluster_nctarank", "clusterid", "nclusterid", "is_explicit_cluster",
        "current_graph_exec"})
    if (name.starts_with(prefix))
      return true;
  return false;
}

class EarlyExitFinder {
public:
  EarlyExitFinder(EntryOp entry, function_ref<bool(InstOp)> isBarrier)
      : entry(entry), isBarrier(isBarrier) {}

  std::optional<EarlyExit> run();

private:
  void buildGraph();
  void computePostDominators();
  void propagateDivergence();
  bool isDivergentOperand(Attribute leaf) const;
  bool producesDivergentValue(InstOp inst) const;
  bool isDivergentDecision(const Node &node) const;
  /// The first exit on a path from `from` with no barrier on the way, or
  /// (`wantExit` false) the first barrier on a path from `from` that does
  /// not pass `stop`.
  InstOp findOnPath(unsigned from, bool wantExit,
                    std::optional<unsigned> stop = std::nullopt) const;
  /// The immediate post-dominator of node `x`; nullopt for the virtual
  /// exit.
  std::optional<unsigned> getImmediatePostDominator(unsigned x) const;

  EntryOp entry;
  function_ref<bool(InstOp)> isBarrier;
  std::vector<Node> nodes;
  /// Post-dominator sets; index nodes.size() is the virtual exit.
  std::vector<llvm::BitVector> postDominators;
  llvm::StringSet<> params;
  llvm::StringSet<> divergentRegisters;
  llvm::BitVector divergentNodes;
};

} // namespace

void EarlyExitFinder::buildGraph() {
  llvm::StringMap<unsigned> labels;
  SmallVector<std::pair<unsigned, StringRef>> branches;
  // The node statements go into; it is open, and what falls into it already
  // has its edge.
  unsigned current = 0;
  nodes.emplace_back();
  auto addNode = [&](bool fallsIn) {
    nodes.emplace_back();
    unsigned id = nodes.size() - 1;
    if (fallsIn)
      nodes[current].succs.push_back(id);
    current = id;
    return id;
  };
  entry->walk<WalkOrder::PreOrder>([&](Operation *op) {
    if (auto label = dyn_cast<LabelOp>(op)) {
      if (!nodes[current].insts.empty())
        addNode(/*fallsIn=*/true);
      labels[label.getName()] = current;
      return;
    }
    auto inst = dyn_cast<InstOp>(op);
    if (!inst)
      return;
    bool guarded = static_cast<bool>(inst.getGuardAttr());
    if (isBarrier(inst)) {
      if (guarded) {
        // The guard decides between the barrier and what follows it.
        unsigned test = current;
        nodes[test].decision = inst;
        unsigned barrier = addNode(/*fallsIn=*/true);
        nodes[barrier].barrier = inst;
        nodes[barrier].insts.push_back(inst);
        unsigned next = addNode(/*fallsIn=*/true);
        nodes[test].succs.push_back(next);
        return;
      }
      if (!nodes[current].insts.empty())
        addNode(/*fallsIn=*/true);
      nodes[current].barrier = inst;
      nodes[current].insts.push_back(inst);
      addNode(/*fallsIn=*/true);
      return;
    }
    Node &node = nodes[current];
    node.insts.push_back(inst);
    switch (getOpcodeKind(inst.getOpcode())) {
    case OpcodeKind::Branch:
      if (inst.getOpcode() == "brx") {
        node.indirect = true;
        node.decision = inst;
        addNode(/*fallsIn=*/false);
        return;
      }
      for (Attribute operand : inst.getPtxOperands())
        if (auto label = dyn_cast<LabelRefAttr>(operand))
          branches.push_back({current, label.getName()});
      if (guarded)
        node.decision = inst;
      addNode(/*fallsIn=*/guarded);
      return;
    case OpcodeKind::Return:
    case OpcodeKind::Exit:
      node.exit = inst;
      if (guarded)
        node.decision = inst;
      addNode(/*fallsIn=*/guarded);
      return;
    case OpcodeKind::Trap:
      addNode(/*fallsIn=*/guarded);
      return;
    default:
      return;
    }
  });
  for (auto [from, label] : branches) {
    // A label outside the entry's body does not exist in PTX (the parser
    // refuses it).
    auto it = labels.find(label);
    if (it != labels.end() &&
        !llvm::is_contained(nodes[from].succs, it->second))
      nodes[from].succs.push_back(it->second);
  }
}

void EarlyExitFinder::computePostDominators() {
  unsigned n = nodes.size();
  unsigned exitId = n;
  postDominators.assign(n + 1, llvm::BitVector(n + 1, true));
  postDominators[exitId].reset();
  postDominators[exitId].set(exitId);
  // Nodes that leave the graph (exits, traps, ends) reach the virtual exit.
  auto succsOf = [&](unsigned i) {
    SmallVector<unsigned> succs(nodes[i].succs);
    if (nodes[i].exit || succs.empty() || nodes[i].indirect)
      succs.push_back(exitId);
    return succs;
  };
  for (bool changed = true; changed;) {
    changed = false;
    for (unsigned i = n; i-- > 0;) {
      llvm::BitVector set(n + 1, true);
      for (unsigned s : succsOf(i))
        set &= postDominators[s];
      set.set(i);
      if (set != postDominators[i]) {
        postDominators[i] = std::move(set);
        changed = true;
      }
    }
  }
}

bool EarlyExitFinder::isDivergentOperand(Attribute leaf) const {
  if (auto sreg = dyn_cast<SpecialRegisterAttr>(leaf))
    return !isUniformSpecialRegister(sreg.getName());
  if (auto reg = dyn_cast<RegisterAttr>(leaf))
    return divergentRegisters.contains(reg.getBaseName());
  return false;
}

bool EarlyExitFinder::producesDivergentValue(InstOp inst) const {
  StringRef opcode = inst.getOpcode();
  const OpcodeInfo *info = lookupOpcode(opcode);
  if (!info)
    return true;
  OpcodeKind kind = info->kind;
  if (kind == OpcodeKind::Load) {
    // The kernel's parameters, constant and read-only memory hold one value
    // per address for the whole launch; other memory may be written by
    // another thread between two threads' loads.
    StringRef space = inst.getStateSpace();
    bool readOnly =
        space == "const" || inst.hasModifier("nc") || opcode == "ldu" ||
        (space.starts_with("param") &&
         llvm::any_of(inst.getPtxOperands(), [&](Attribute a) {
           auto addr = dyn_cast<AddressAttr>(a);
           auto sym = addr ? dyn_cast<FlatSymbolRefAttr>(addr.getBase())
                           : FlatSymbolRefAttr();
           return sym && params.contains(sym.getValue());
         }));
    return !readOnly;
  }
  if (info->hasEffect(MemoryEffect) || info->hasEffect(SyncEffect) ||
      info->hasEffect(StateEffect) || info->hasEffect(ControlEffect))
    return true;
  return false;
}

void EarlyExitFinder::propagateDivergence() {
  divergentNodes.resize(nodes.size());
  for (bool changed = true; changed;) {
    changed = false;
    // Values: from operands, guards, producers and divergent control.
    for (bool valuesChanged = true; valuesChanged;) {
      valuesChanged = false;
      for (auto [id, node] : llvm::enumerate(nodes)) {
        for (InstOp inst : node.insts) {
          ArrayAttr operands = inst.getPtxOperands();
          std::optional<unsigned> written = getDefinedOperand(
              lookupOpcode(inst.getOpcode()), operands.size(),
              [&](StringRef modifier) { return inst.hasModifier(modifier); });
          if (!written || *written >= operands.size())
            continue;
          bool divergent =
              divergentNodes.test(id) || producesDivergentValue(inst) ||
              (inst.getGuardAttr() && isDivergentOperand(inst.getGuardAttr()));
          for (auto [i, operand] : llvm::enumerate(operands)) {
            if (divergent)
              break;
            if (i == *written)
              continue;
            walkOperandLeaves(operand, [&](Attribute leaf) {
              divergent |= isDivergentOperand(leaf);
            });
          }
          if (!divergent)
            continue;
          walkOperandLeaves(operands[*written], [&](Attribute leaf) {
            if (auto reg = dyn_cast<RegisterAttr>(leaf))
              valuesChanged |=
                  divergentRegisters.insert(reg.getBaseName()).second;
          });
        }
      }
    }
    // Control: what runs under a divergent decision, up to its
    // post-dominator, writes divergent values.
    unsigned n = nodes.size();
    for (unsigned x = 0; x < n; ++x) {
      if (!isDivergentDecision(nodes[x]))
        continue;
      llvm::BitVector strict = postDominators[x];
      strict.reset(x);
      for (unsigned s : nodes[x].succs) {
        llvm::BitVector dependent = postDominators[s];
        dependent.reset(strict);
        dependent.resize(n);
        llvm::BitVector before = divergentNodes;
        divergentNodes |= dependent;
        changed |= before != divergentNodes;
      }
      if (nodes[x].indirect) {
        llvm::BitVector before = divergentNodes;
        divergentNodes.set();
        changed |= before != divergentNodes;
      }
    }
  }
}

bool EarlyExitFinder::isDivergentDecision(const Node &node) const {
  if (node.indirect)
    return true;
  if (!node.decision)
    return false;
  // `bra.uni`: the producer asserts every thread takes it alike.
  InstOp decision = node.decision;
  if (decision.hasModifier("uni"))
    return false;
  RegisterAttr guard = decision.getGuardAttr();
  return guard && isDivergentOperand(guard);
}

std::optional<unsigned>
EarlyExitFinder::getImmediatePostDominator(unsigned x) const {
  llvm::BitVector strict = postDominators[x];
  strict.reset(x);
  for (unsigned p : strict.set_bits())
    if (p < nodes.size() && postDominators[p] == strict)
      return p;
  return std::nullopt;
}

InstOp EarlyExitFinder::findOnPath(unsigned from, bool wantExit,
                                   std::optional<unsigned> stop) const {
  llvm::BitVector seen(nodes.size());
  SmallVector<unsigned> work{from};
  while (!work.empty()) {
    unsigned id = work.pop_back_val();
    if (seen.test(id) || id == stop)
      continue;
    seen.set(id);
    const Node &node = nodes[id];
    if (wantExit && node.barrier)
      continue;
    if (!wantExit && node.barrier)
      return node.barrier;
    if (wantExit && node.exit)
      return node.exit;
    llvm::append_range(work, node.succs);
  }
  return InstOp();
}

std::optional<EarlyExit> EarlyExitFinder::run() {
  for (Attribute attr : entry.getParams())
    params.insert(cast<ParamDeclAttr>(attr).getName());
  buildGraph();
  bool anyBarrier =
      llvm::any_of(nodes, [](const Node &n) { return n.barrier; });
  bool anyExit = llvm::any_of(nodes, [](const Node &n) { return n.exit; });
  if (!anyBarrier || !anyExit)
    return std::nullopt;
  computePostDominators();
  propagateDivergence();

  for (auto [x, node] : llvm::enumerate(nodes)) {
    if (!isDivergentDecision(node))
      continue;
    // The ways out of the decision: its successors, and leaving the kernel
    // for a guarded `ret`/`exit`. Threads of one way may leave it (with no
    // barrier on the way, however far) while the others wait at a barrier
    // before they meet again at the decision's post-dominator: past it,
    // later decisions are checked on their own.
    InstOp exitHere =
        node.exit && node.decision == node.exit ? node.exit : InstOp();
    std::optional<unsigned> meet = getImmediatePostDominator(x);
    SmallVector<std::pair<InstOp, InstOp>> ways; // (exit, barrier) per way
    if (exitHere)
      ways.push_back({exitHere, InstOp()});
    for (unsigned s : node.succs)
      ways.push_back({findOnPath(s, /*wantExit=*/true),
                      findOnPath(s, /*wantExit=*/false, meet)});
    if (node.indirect) {
      // Unknown targets: any exit and any barrier.
      InstOp anyExitOp, anyBarrierOp;
      for (const Node &other : nodes) {
        anyExitOp = anyExitOp ? anyExitOp : other.exit;
        anyBarrierOp = anyBarrierOp ? anyBarrierOp : other.barrier;
      }
      return EarlyExit{anyExitOp, node.decision, anyBarrierOp};
    }
    for (auto [i, leaving] : llvm::enumerate(ways))
      for (auto [j, staying] : llvm::enumerate(ways))
        if (i != j && leaving.first && staying.second)
          return EarlyExit{leaving.first, node.decision, staying.second};
  }
  // A barrier reached under divergent control may release threads that
  // arrived from different ways; one of them may then leave while the
  // others go on to another barrier.
  for (auto [b, node] : llvm::enumerate(nodes)) {
    if (!node.barrier || !divergentNodes.test(b) || node.succs.empty())
      continue;
    InstOp leave = findOnPath(node.succs.front(), /*wantExit=*/true);
    if (!leave)
      continue;
    for (const Node &other : nodes)
      if (other.barrier && other.barrier != node.barrier)
        return EarlyExit{leave, node.barrier, other.barrier};
  }
  return std::nullopt;
}

static std::string describeInst(InstOp inst) {
  std::string text;
  if (RegisterAttr guard = inst.getGuardAttr())
    text += "@" + std::string(inst.getGuardNegated() ? "!" : "") +
            guard.getName().str() + " ";
  text += inst.getFullOpcode();
  if (auto loc = dyn_cast<FileLineColLoc>(inst.getLoc()))
    return llvm::formatv("'{0}' (line {1})", text, loc.getLine()).str();
  return "'" + text + "'";
}

std::string EarlyExit::describe() const {
  return "threads leaving at " + describeInst(exit) + " part at " +
         describeInst(divergence) + " from threads that go on to " +
         describeInst(barrier);
}

std::optional<EarlyExit>
gpuopt::findEarlyExit(EntryOp entry, function_ref<bool(InstOp)> isBarrier) {
  return EarlyExitFinder(entry, isBarrier).run();
}
