//===- ProbePlan.cpp - Decide what to probe and how -----------------------===//
//
// `--probe-plan`: reads and checks the probe specs, chooses the kernels
// (`kernels=`, else every `.entry` with a body), checks that each can be
// probed (a fused kernel's parts are known; it is not probed already),
// warns about instruction points of a spec file that match nothing, chooses
// the prefix of the names the probes add to each kernel (one none of its
// names starts with), lays out each map's records and adds its buffer
// parameter (or, with buffer=last-param, places every map's buffer in the
// kernel's last parameter, per block of the grid), and records the
// decisions on the kernel: `gpuopt.probes` (the manifest's `probes`),
// `gpuopt.probe_scratch` with buffer=last-param (the manifest's
// `probe_scratch`) and `gpuopt.probe_plan` (the specs, the prefix, and,
// for keep-occupancy, what ptxas reports for the kernel before probing,
// which only this pass can ask).
//
//===----------------------------------------------------------------------===//

#include "gpuopt/Analysis/KernelLookup.h"
#include "gpuopt/Dialect/GPUOpt/GPUOptAttributes.h"
#include "gpuopt/Dialect/GPUOpt/GPUOptDialect.h"
#include "gpuopt/Transforms/Passes.h"
#include "gpuopt/Transforms/Probe/ProbeAccess.h"
#include "gpuopt/Transforms/Probe/ProbeSteps.h"
#include "ptx/IR/PTXNamespace.h"

#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/ADT/StringExtras.h"

namespace gpuopt {
#define GEN_PASS_DEF_PROBEPLAN
#include "gpuopt/Transforms/Passes.h.inc"
} // namespace gpuopt

using namespace mlir;
using namespace gpuopt;
using namespace gpuopt::ptx;
using namespace gpuopt::probe;

/// Diagnostics about options name the flag users write.
static constexpr StringLiteral kPipelineName = "probe";

LogicalResult probe::planKernel(EntryOp entry, ArrayRef<CheckedProbe> probes,
                                ProbePlan plan) {
  FailureOr<FusedParts> parts = getFusedParts(entry);
  if (failed(parts))
    return failure();
  if (isProbed(entry))
    return entry.emitError() << "kernel '" << entry.getSymName()
                             << "' is probed already: give every probe to "
                                "one --probe (--probe=a,b)";
  FailureOr<std::vector<MapLayout>> maps =
      layoutMaps(entry, probes, *parts, ProbeNames(plan.prefix));
  if (failed(maps))
    return failure();
  std::optional<ProbeScratch> scratch;
  if (plan.lastParam) {
    FailureOr<ProbeScratch> placed = placeInLastParam(entry, *maps);
    if (failed(placed))
      return failure();
    scratch = *placed;
  }
  plan.params = entry.getParams().size();
  attachProbeMaps(entry, *maps, scratch);
  setProbePlan(entry, plan);
  return success();
}

/// Warns about each instruction point of a spec file that matches no
/// instruction of some of `entries`: a misspelt opcode or modifier otherwise
/// shows only as records that stay zero. Built-in probes list every
/// instruction they might count, so theirs are not reported.
static void warnUnmatchedPoints(ArrayRef<EntryOp> entries,
                                ArrayRef<CheckedProbe> probes) {
  // Each kernel's own instructions, as --probe-insert sees them.
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

/// The prefix of the probes' names in `entry` (ProbeNames): `__pr_` when no
/// name of the kernel (nested scopes included) or of its module (globals,
/// functions: the exit function is the module's) starts with it or with
/// `__probe_` (the buffer parameters' names under it), bare or after `%` or
/// `$`; else the first of `__pr1_`, `__pr2_`, ... that none starts with.
static std::string chooseNamePrefix(EntryOp entry) {
  PTXNamespace names(entry);
  if (auto module = entry->getParentOfType<PTXModuleOp>())
    for (Operation &op : *module.getBodyBlock()) {
      if (isa<EntryOp, FuncOp>(op))
        names.add(SymbolTable::getSymbolName(&op).getValue());
      else
        names.add(&op);
    }
  auto taken = [&](StringRef prefix) {
    return llvm::any_of(ArrayRef<StringRef>{"", "%", "$"},
                        [&](StringRef sigil) {
                          return names.containsPrefix((sigil + prefix).str());
                        });
  };
  if (!taken(kDefaultProbePrefix) && !taken(ProbeNames().buffer("")))
    return kDefaultProbePrefix.str();
  StringRef stem = StringRef(kDefaultProbePrefix).drop_back();
  for (unsigned n = 1;; ++n) {
    std::string prefix = (stem + Twine(n) + "_").str();
    if (!taken(prefix))
      return prefix;
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
struct ProbePlanPass : public gpuopt::impl::ProbePlanBase<ProbePlanPass> {
  using ProbePlanBase::ProbePlanBase;

  /// `--probe-plan=block_sched,my.yaml` as well as the pass-option form
  /// `--probe-plan="specs=block_sched"`.
  LogicalResult initializeOptions(
      StringRef options,
      function_ref<LogicalResult(const Twine &)> errorHandler) override {
    if (!options.empty() && !options.contains('='))
      return ProbePlanBase::initializeOptions(("specs=" + options).str(),
                                              errorHandler);
    return ProbePlanBase::initializeOptions(options, errorHandler);
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
      Location loc = getPassOptionLoc(&getContext(), kPipelineName, "kernels",
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
    if (getFusionInfo(entry) || !looksFused(entry))
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
    FailureOr<std::vector<CheckedProbe>> probes =
        loadProbes(specs, /*carryLocal=*/false, ProbeNames(), ctx);
    if (failed(probes))
      return signalPassFailure();
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
    warnUnmatchedPoints(entries, *probes);
    // Each kernel's registers before probing, per module: two modules may
    // have kernels of the same name (Triton names every softmax kernel
    // alike).
    llvm::DenseMap<Operation *, llvm::StringMap<KernelResources>>
        resourcesBefore;
    if (keepOccupancy) {
      PtxasOptions ptxasOptions;
      ptxasOptions.ptxasPath = ptxas;
      ptxasOptions.chip = chip;
      SmallVector<PTXModuleOp> modules;
      for (EntryOp entry : entries) {
        auto module = entry->getParentOfType<PTXModuleOp>();
        if (!llvm::is_contained(modules, module))
          modules.push_back(module);
      }
      for (PTXModuleOp module : modules) {
        FailureOr<llvm::StringMap<KernelResources>> report =
            getPtxasEntryResources(module, ptxasOptions);
        if (failed(report)) {
          module.emitError() << "probe: keep-occupancy needs ptxas's resource "
                                "report (see above); pass keep-occupancy=false "
                                "to probe without it";
          return signalPassFailure();
        }
        resourcesBefore[module] = std::move(*report);
      }
    }
    for (EntryOp entry : entries) {
      ProbePlan plan;
      plan.specs.assign(specs.begin(), specs.end());
      plan.prefix = chooseNamePrefix(entry);
      plan.lastParam = buffer == BufferPlace::LastParam;
      if (keepOccupancy) {
        plan.before =
            resourcesBefore.lookup(entry->getParentOfType<PTXModuleOp>())
                .lookup(entry.getSymName());
        plan.before->kernel = entry.getSymName().str();
        plan.before->isEntry = true;
      }
      if (failed(planKernel(entry, *probes, std::move(plan))))
        return signalPassFailure();
      ++numProbed;
    }
  }
};
} // namespace
