//===- PrintKernelAnalysis.cpp - Print what the kernel analysis found -----===//
//
// `--print-kernel-analysis`: one block of text per `.entry`, in the order of
// the input, so that lit tests can check the analysis fusion and probes share
// and users can see why a kernel is refused.
//
//===----------------------------------------------------------------------===//

#include "gpuopt/Analysis/KernelAnalysis.h"
#include "gpuopt/Analysis/Passes.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

namespace gpuopt {
#define GEN_PASS_DEF_PRINTKERNELANALYSIS
#include "gpuopt/Analysis/Passes.h.inc"
} // namespace gpuopt

using namespace mlir;
using namespace gpuopt;
using namespace gpuopt::ptx;

namespace {

/// "bar.sync", "barrier.cta.arrive.aligned": the opcode with its modifiers.
std::string mnemonic(InstOp inst) {
  std::string text = inst.getOpcode().str();
  for (Attribute modifier : inst.getModifiers())
    text += "." + cast<StringAttr>(modifier).getValue().str();
  return text;
}

std::string dims(const Dim3 &d) {
  return llvm::formatv("{0}x{1}x{2}", d[0], d[1], d[2]).str();
}

/// Prints each item's text once, in first-seen order, with " xN" when it
/// repeats; "none" without items.
template <typename Range, typename Fn>
void printList(llvm::raw_ostream &os, StringRef label, const Range &items,
               Fn print) {
  SmallVector<std::pair<std::string, unsigned>> texts;
  for (const auto &item : items) {
    std::string text;
    llvm::raw_string_ostream itemOs(text);
    print(itemOs, item);
    auto *it = llvm::find_if(texts, [&](auto &t) { return t.first == text; });
    if (it == texts.end())
      texts.push_back({text, 1});
    else
      ++it->second;
  }
  os << "  " << label << ": ";
  if (texts.empty())
    os << "none";
  llvm::interleave(
      texts, os,
      [&](const auto &t) {
        os << t.first;
        if (t.second > 1)
          os << " x" << t.second;
      },
      "; ");
  os << "\n";
}

void printAnalysis(const KernelAnalysis &a, llvm::raw_ostream &os) {
  os << "kernel " << a.getEntry().getSymName() << " (module "
     << a.getModule().getSymName() << ")\n";
  os << "  block: ";
  if (auto req = a.getRequiredBlock())
    os << "reqntid " << dims(*req);
  else if (auto max = a.getMaxBlock())
    os << "at most " << dims(*max) << " (maxntid; the launch decides)";
  else
    os << "unknown (the launch decides)";
  os << "\n";

  SmallVector<StringRef> sregs;
  for (const auto &entry : a.getSpecialRegisters())
    sregs.push_back(entry.getKey());
  llvm::sort(sregs);
  printList(os, "special registers", sregs,
            [](llvm::raw_ostream &os, StringRef name) { os << name; });

  printList(os, "barriers", a.getBarriers(),
            [](llvm::raw_ostream &os, const BarrierUse &b) {
              os << mnemonic(b.op) << " id ";
              if (b.dynamicId)
                os << "in a register";
              else
                os << *b.id;
              if (b.countOperand < 0)
                os << ", all threads";
              else if (b.dynamicCount)
                os << ", count in a register";
              else
                os << ", " << *b.count << " threads";
            });
  printList(os, "mbarriers", a.getMbarrierInits(),
            [](llvm::raw_ostream &os, const MbarrierInit &m) {
              os << "init ";
              if (m.count)
                os << *m.count << " arrivals";
              else
                os << "count in a register";
            });
  printList(os, "exits", a.getExits(),
            [](llvm::raw_ostream &os, const ExitUse &e) {
              os << mnemonic(e.op);
              if (e.inDeviceFunction)
                os << " in " << e.op->getParentOfType<FuncOp>().getSymName();
            });
  if (const std::optional<EarlyExit> &early = a.getEarlyExit())
    os << "  early exit: " << early->describe() << "\n";

  os << "  shared: static " << a.getStaticSharedBytes() << " bytes";
  if (!a.getStaticShared().empty()) {
    os << " (";
    llvm::interleaveComma(a.getStaticShared(), os,
                          [&](GlobalOp g) { os << g.getSymName(); });
    os << ")";
  }
  os << "; dynamic ";
  if (a.getDynamicShared().empty()) {
    os << "none";
  } else {
    llvm::interleaveComma(a.getDynamicShared(), os,
                          [&](GlobalOp g) { os << g.getSymName(); });
    os << ", aligned to " << a.getDynamicSharedAlign();
  }
  os << "\n";

  SmallVector<std::string> calls;
  for (FuncOp callee : a.getCallees())
    calls.push_back(callee.getSymName().str());
  for (const auto &entry : a.getExternalCallees())
    calls.push_back(entry.getKey().str() + " (external)");
  if (a.hasIndirectCalls())
    calls.push_back("indirect");
  printList(os, "calls", calls,
            [](llvm::raw_ostream &os, const std::string &c) { os << c; });

  SmallVector<std::string> features;
  if (a.usesWarpgroupInstructions())
    features.push_back("warpgroup instructions");
  if (!a.getSetmaxnreg().empty())
    features.push_back("setmaxnreg x" +
                       std::to_string(a.getSetmaxnreg().size()));
  if (a.usesClusters())
    features.push_back("clusters");
  if (a.usesGridSync())
    features.push_back("grid synchronisation");
  if (a.usesDynamicParallelism())
    features.push_back("dynamic parallelism");
  if (a.usesTMA())
    features.push_back("TMA");
  for (StringRef opcode : a.getUnknownOpcodes())
    features.push_back(("unknown instruction '" + opcode + "'").str());
  printList(os, "features", features,
            [](llvm::raw_ostream &os, const std::string &f) { os << f; });

  os << "  instructions: " << a.getInstructionCount() << ", global memory "
     << a.getGlobalMemoryInstructionCount() << ", tensor "
     << a.getTensorInstructionCount() << "\n";
  std::string hazard = a.getFusionHazard();
  os << "  fusion hazard: " << (hazard.empty() ? "none" : hazard) << "\n";
  // Whether a thread split may give it a 1-D block of another size.
  os << "  resizable: ";
  if (std::optional<ResizeBlocker> blocker = a.getResizeBlocker()) {
    os << "no: " << blocker->reason;
    if (auto loc = blocker->op->getLoc()->findInstanceOf<FileLineColLoc>())
      os << " (line " << loc.getLine() << ")";
  } else {
    os << "yes";
  }
  os << "\n";
}

struct PrintKernelAnalysisPass
    : public gpuopt::impl::PrintKernelAnalysisBase<PrintKernelAnalysisPass> {
  void runOnOperation() override {
    getOperation().walk([&](EntryOp entry) {
      if (entry.hasBody())
        printAnalysis(KernelAnalysis(entry), llvm::outs());
    });
    llvm::outs().flush();
    markAllAnalysesPreserved();
  }
};

} // namespace
