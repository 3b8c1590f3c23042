//===- HFusePlan.cpp - Choose how to fuse kernels horizontally ------------===//
//
// `--hfuse-plan`: gathers the kernels and their launch shapes (options, YAML
// config, `.reqntid`), and either takes the strategy the user named or, for
// `strategy=auto`, builds every candidate (strategy x ratio x register cap),
// asks ptxas for its registers and shared memory, predicts its time with the
// occupancy and wave model of FusionModel.h, and keeps the fastest. Writes the
// plan attribute and a remark that says why.
//
//===----------------------------------------------------------------------===//

#include "gpuopt/Transforms/HFuse/FusionModel.h"
#include "gpuopt/Transforms/HFuse/FusionPlan.h"
#include "gpuopt/Transforms/HFuse/HFusePipeline.h"
#include "gpuopt/Transforms/HFuse/MeasureCandidates.h"
#include "gpuopt/Transforms/Passes.h"

#include "gpuopt/Analysis/KernelLookup.h"
#include "gpuopt/Dialect/GPUOpt/GPUOptDialect.h"
#include "gpuopt/Target/PTX/ExportPTX.h"
#include "gpuopt/Transforms/HFuse/FusionConfig.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

namespace gpuopt {
#define GEN_PASS_DEF_HFUSEPLAN
#include "gpuopt/Transforms/Passes.h.inc"
} // namespace gpuopt

using namespace mlir;
using namespace gpuopt;
using namespace gpuopt::hfuse;
using namespace gpuopt::ptx;

/// "256", "16x16", "64x128x2", each dimension positive.
static std::optional<Dim3> parseDims(StringRef text) {
  std::optional<Dim3> dims = parseShape(text);
  if (!dims || llvm::any_of(*dims, [](int64_t d) { return d <= 0; }))
    return std::nullopt;
  return dims;
}

static std::string formatDims(const Dim3 &d) {
  return llvm::formatv("{0}x{1}x{2}", d[0], d[1], d[2]).str();
}

namespace {

/// What the user said about one kernel, from options or the config.
struct KernelRequest {
  std::string module, kernel;
  std::optional<Dim3> block, grid;
  std::optional<int64_t> dynamicSmem, threads, ratio;
  std::optional<double> timeMs;
  bool resizable = false;
  Location loc;
  /// From profile=: blocks per SM alone and the occupancy sweep.
  int64_t blocksPerSM = 0;
  std::vector<std::pair<int64_t, double>> sweep;
  /// From profile=: the bytes it moves in global memory (-1: unknown).
  double bytes = -1;
  /// The entry the request names, once resolved (a profile may name it by
  /// its symbol instead of `kernel`).
  EntryOp entry;
  /// Where threads= gives this kernel's split, when it does.
  std::optional<Location> threadsLoc;
  /// Thread split: copies of its block per fused block, and its setmaxnreg
  /// budget (0: none).
  int64_t replicas = 1, setmaxnreg = 0;
};

struct HFusePlanPass : public gpuopt::impl::HFusePlanBase<HFusePlanPass> {
  using HFusePlanBase::HFusePlanBase;
  void runOnOperation() override;

  /// The flag option errors name: this pass's, or that of the pipeline
  /// that runs it with the user's options (`--hfuse`).
  std::string optionFlag;

private:
  LogicalResult gatherRequests(SmallVectorImpl<KernelRequest> &requests,
                               std::string &strategyName, int64_t &cap,
                               std::string &fusedName);
  LogicalResult readProfile(SmallVectorImpl<KernelRequest> &requests);
  /// The config's `runtime_shapes: true`.
  bool configRuntimeShapes = false;
  /// The config's `units:`.
  std::optional<int64_t> configUnits;
  /// The config's `require: true`.
  bool configRequire = false;
  /// Where the fused kernel is asked for: the config, the kernels= option,
  /// or the first kernel. Notes about the fusion as a whole point here.
  std::optional<Location> fusionLoc;
  Location getOptionLoc(StringRef option, unsigned column = 1) {
    return getPassOptionLoc(&getContext(),
                            optionFlag.empty() ? getArgument()
                                               : StringRef(optionFlag),
                            option, column);
  }
};

} // namespace

LogicalResult
HFusePlanPass::gatherRequests(SmallVectorImpl<KernelRequest> &requests,
                              std::string &strategyName, int64_t &cap,
                              std::string &fusedName) {
  ModuleOp root = getOperation();
  Location loc = root.getLoc();
  std::optional<Location> configLoc;
  strategyName = strategy;
  cap = maxnreg;
  fusedName = name;
  if (!config.empty()) {
    FailureOr<FusionConfig> parsed = readFusionConfig(config, &getContext());
    if (failed(parsed))
      return failure();
    configLoc = parsed->loc;
    strategyName = stringifyStrategy(parsed->strategy).str();
    if (parsed->maxnreg)
      cap = *parsed->maxnreg;
    configRuntimeShapes = parsed->runtimeShapes;
    configUnits = parsed->units;
    configRequire = parsed->require;
    if (!parsed->name.empty())
      fusedName = parsed->name;
    for (const KernelConfig &k : parsed->kernels) {
      KernelRequest request{k.module,      k.name,    k.block, k.grid,
                            k.dynamicSmem, k.threads, k.ratio, k.timeMs,
                            k.resizable,   k.loc};
      request.threadsLoc = k.threadsLoc;
      request.replicas = k.replicas.value_or(1);
      request.setmaxnreg = k.setmaxnreg.value_or(0);
      requests.push_back(request);
    }
  } else if (!kernels.empty()) {
    for (auto [i, k] : llvm::enumerate(kernels)) {
      Location itemLoc =
          getOptionLoc("kernels", getPassOptionColumn(kernels, i));
      KernelRequest request{"", "", {}, {}, {}, {}, {}, {}, false, itemLoc};
      auto [module, kernel] = splitModuleName(root, k);
      request.module = module.str();
      request.kernel = kernel.str();
      requests.push_back(request);
    }
  } else {
    for (auto module : root.getBody()->getOps<PTXModuleOp>())
      for (auto entry : module.getBodyBlock()->getOps<EntryOp>())
        if (entry.hasBody())
          requests.push_back(KernelRequest{module.getSymName().str(),
                                           entry.getSymName().str(),
                                           {},
                                           {},
                                           {},
                                           {},
                                           {},
                                           {},
                                           false,
                                           entry.getLoc()});
  }
  if (!config.empty())
    loc = *configLoc;
  else if (!kernels.empty())
    loc = getOptionLoc("kernels");
  else if (!requests.empty() && isa<UnknownLoc>(loc))
    loc = requests.front().loc;
  fusionLoc = loc;
  if (requests.size() < 2)
    return emitError(loc) << "horizontal fusion needs at least two kernels; "
                          << "found " << requests.size()
                          << " (give several PTX files, or kernels=)";
  // Options fill in what the config left out, kernel by kernel.
  auto checkCount = [&](size_t count, StringRef option) {
    if (count && count != requests.size())
      return emitError(getOptionLoc(option))
                 << "'" << option << "' lists " << count << " values for "
                 << requests.size() << " kernels",
             failure();
    return success();
  };
  if (failed(checkCount(blocks.size(), "blocks")) ||
      failed(checkCount(grids.size(), "grids")) ||
      failed(checkCount(smem.size(), "smem")) ||
      failed(checkCount(threads.size(), "threads")) ||
      failed(checkCount(ratio.size(), "ratio")) ||
      failed(checkCount(replicas.size(), "replicas")) ||
      failed(checkCount(setmaxnreg.size(), "setmaxnreg")) ||
      failed(checkCount(resizable.size(), "resizable")))
    return failure();
  for (auto [i, request] : llvm::enumerate(requests)) {
    if (!blocks.empty()) {
      request.block = parseDims(blocks[i]);
      if (!request.block)
        return emitError(getOptionLoc("blocks", getPassOptionColumn(blocks, i)))
               << "invalid block shape '" << blocks[i]
               << "' (expected X, XxY or XxYxZ)";
    }
    if (!grids.empty()) {
      request.grid = parseDims(grids[i]);
      if (!request.grid)
        return emitError(getOptionLoc("grids", getPassOptionColumn(grids, i)))
               << "invalid grid '" << grids[i]
               << "' (expected X, XxY or XxYxZ)";
    }
    if (!smem.empty())
      request.dynamicSmem = smem[i];
    // threads= alone resizes only what the kernel analysis proves
    // resizable; resizable= is the user's word for the rest.
    if (!threads.empty()) {
      request.threads = threads[i];
      request.threadsLoc =
          getOptionLoc("threads", getPassOptionColumn(threads, i));
    }
    if (!resizable.empty()) {
      std::optional<bool> value =
          llvm::StringSwitch<std::optional<bool>>(resizable[i])
              .Case("true", true)
              .Case("1", true)
              .Case("false", false)
              .Case("0", false)
              .Default(std::nullopt);
      if (!value)
        return emitError(
                   getOptionLoc("resizable", getPassOptionColumn(resizable, i)))
               << "'resizable' takes true or false per kernel, not '"
               << resizable[i] << "'";
      request.resizable = *value;
    }
    if (!ratio.empty())
      request.ratio = ratio[i];
    if (!replicas.empty()) {
      if (replicas[i] < 1)
        return emitError(
                   getOptionLoc("replicas", getPassOptionColumn(replicas, i)))
               << "'replicas' must be at least 1, not " << replicas[i];
      request.replicas = replicas[i];
    }
    if (!setmaxnreg.empty()) {
      int64_t n = setmaxnreg[i];
      if (n != 0 && (n < 24 || n > 256 || n % 8))
        return emitError(getOptionLoc("setmaxnreg",
                                      getPassOptionColumn(setmaxnreg, i)))
               << "'setmaxnreg' takes 0 (none) or a multiple of 8 within "
                  "24..256 per kernel, not "
               << n;
      request.setmaxnreg = n;
    }
  }
  return success();
}

/// Each kernel's time alone from a `gpu-run --json` report: its entry in
/// "kernels" whose "label" or "kernel" matches, with the times at fewer
/// blocks per SM where the report has them (`gpu-run --occupancy-sweep`).
LogicalResult
HFusePlanPass::readProfile(SmallVectorImpl<KernelRequest> &requests) {
  if (profile.empty())
    return success();
  Location loc = getOptionLoc("profile");
  auto buffer = llvm::MemoryBuffer::getFile(profile);
  if (!buffer)
    return emitError(loc) << "cannot read profile '" << profile
                          << "': " << buffer.getError().message();
  llvm::Expected<llvm::json::Value> json =
      llvm::json::parse((*buffer)->getBuffer());
  if (!json)
    return emitError(loc) << "profile '" << profile << "' is not JSON: "
                          << llvm::toString(json.takeError());
  const llvm::json::Array *entries = nullptr;
  if (auto *object = json->getAsObject())
    entries = object->getArray("kernels");
  if (!entries)
    return emitError(loc) << "profile '" << profile
                          << "' has no \"kernels\" array (expected a gpu-run "
                             "--json report)";
  for (KernelRequest &request : requests) {
    bool found = false;
    for (const llvm::json::Value &entry : *entries) {
      const llvm::json::Object *object = entry.getAsObject();
      if (!object)
        continue;
      std::optional<StringRef> label = object->getString("label");
      std::optional<StringRef> kernel = object->getString("kernel");
      auto names = [&](std::optional<StringRef> name) {
        return name == StringRef(request.kernel) ||
               name == request.entry.getSymName();
      };
      if (!names(label) && !names(kernel))
        continue;
      found = true;
      if (!request.timeMs)
        if (const llvm::json::Object *time = object->getObject("time"))
          if (std::optional<double> median = time->getNumber("median_ms"))
            request.timeMs = *median;
      if (std::optional<double> bytes = object->getNumber("bytes"))
        request.bytes = *bytes;
      const llvm::json::Object *occupancy = object->getObject("occupancy");
      if (!occupancy)
        break;
      request.blocksPerSM = occupancy->getInteger("blocks_per_sm").value_or(0);
      if (const llvm::json::Array *sweep = occupancy->getArray("sweep"))
        for (const llvm::json::Value &point : *sweep) {
          const llvm::json::Object *p = point.getAsObject();
          const llvm::json::Object *time = p ? p->getObject("time") : nullptr;
          std::optional<int64_t> blocks =
              p ? p->getInteger("blocks_per_sm") : std::nullopt;
          std::optional<double> median =
              time ? time->getNumber("median_ms") : std::nullopt;
          if (!blocks || !median || *blocks <= 0 || *median <= 0)
            return emitError(loc)
                   << "profile '" << profile << "': a sweep point of '"
                   << request.kernel
                   << "' lacks \"blocks_per_sm\" or \"time\".\"median_ms\"";
          request.sweep.push_back({*blocks, *median});
        }
      llvm::sort(request.sweep);
      break;
    }
    if (!request.timeMs)
      return emitError(loc) << "profile '" << profile << "' has no time for '"
                            << request.kernel << "'"
                            << (found ? ""
                                      : " (no entry with that label or "
                                        "kernel name)");
  }
  return success();
}

/// How to fuse by `best` although strategy=auto declines it: the options
/// that build it (Candidate::options(), the same as candidates-out= gives),
/// or, with a config (whose `strategy:` wins over the option), the keys to
/// write there.
static std::string describeForcing(const Candidate &best, bool fromConfig) {
  if (!fromConfig)
    return "pass " + best.options() +
           " (with the same kernels and shapes) instead of strategy=auto";
  const FusionPlan &plan = best.plan;
  std::string text;
  llvm::raw_string_ostream os(text);
  os << "write in the config strategy: "
     << stringifyFusionStrategy(plan.strategy);
  if (plan.maxnreg)
    os << ", maxnreg: " << plan.maxnreg;
  if (plan.units > 1)
    os << ", units: " << plan.units;
  os << " and per kernel, in order,";
  bool first = true;
  auto perKernel = [&](StringRef key, auto get, bool always) {
    if (!always && llvm::all_of(plan.parts, [&](const PartPlan &p) {
          return get(p) == get(PartPlan());
        }))
      return;
    os << (first ? " " : ", ") << key << ": ";
    first = false;
    llvm::interleave(
        plan.parts, os, [&](const PartPlan &p) { os << get(p); }, "/");
  };
  if (plan.strategy == FusionStrategy::Thread) {
    perKernel("threads", [](const PartPlan &p) { return p.getThreads(); },
              true);
    perKernel("replicas", [](const PartPlan &p) { return p.replicas; },
              false);
    perKernel("setmaxnreg", [](const PartPlan &p) { return p.setmaxnreg; },
              false);
  } else {
    perKernel("ratio", [](const PartPlan &p) { return p.ratio; }, true);
  }
  if (llvm::is_contained(best.resized, true)) {
    os << ", resizable: ";
    llvm::interleave(
        best.resized, os, [&](bool r) { os << (r ? "true" : "false"); }, "/");
  }
  return text;
}

/// Small integers proportional to the grids, so that every kernel's blocks
/// are spread over the whole run and the kernels finish together: each at
/// most 64.
static SmallVector<int64_t> fitRatio(ArrayRef<int64_t> blocks) {
  int64_t smallest = *llvm::min_element(blocks);
  SmallVector<int64_t> ratio;
  for (int64_t n : blocks)
    ratio.push_back(std::max<int64_t>(
        1, std::min<int64_t>(64, (n + smallest / 2) /
                                     std::max<int64_t>(smallest, 1))));
  return ratio;
}

void HFusePlanPass::runOnOperation() {
  ModuleOp root = getOperation();
  Location loc = root.getLoc();
  SmallVector<KernelRequest, 2> requests;
  std::string strategyName, fusedName;
  int64_t cap = -1;
  if (failed(gatherRequests(requests, strategyName, cap, fusedName)))
    return signalPassFailure();
  for (KernelRequest &request : requests) {
    FailureOr<EntryOp> entry =
        lookupKernel(root, request.module, request.kernel, request.loc);
    if (failed(entry))
      return signalPassFailure();
    request.entry = *entry;
  }
  if (failed(readProfile(requests)))
    return signalPassFailure();

  // The base plan: block shapes from the requests or `.reqntid`.
  FusionPlan base;
  base.name = fusedName;
  base.runtimeShapes = runtimeShapes || configRuntimeShapes;
  base.units = configUnits.value_or(units);
  // Remarks point at the first kernel: a module built from PTX files has no
  // location of its own.
  Location remarkLoc = loc;
  // Per kernel: whether auto may try other splits, why it may not be
  // resizable, and its own thread count (0: unknown).
  SmallVector<bool> mayResize;
  SmallVector<std::optional<ResizeBlocker>> resizeBlockers;
  SmallVector<int64_t> ownThreads;
  for (KernelRequest &request : requests) {
    // The plan names the entry by its symbol, whatever name the user gave.
    EntryOp entry = request.entry;
    PartPlan part;
    part.module = entry->getParentOfType<PTXModuleOp>().getSymName().str();
    part.kernel = entry.getSymName().str();
    if (base.parts.empty() && isa<UnknownLoc>(loc))
      remarkLoc = entry.getLoc();
    KernelAnalysis analysis(entry);
    if (request.block)
      part.block = *request.block;
    else if (auto required = analysis.getRequiredBlock())
      part.block = *required;
    std::optional<ResizeBlocker> blocker = analysis.getResizeBlocker();
    ownThreads.push_back(part.getThreads());
    if (request.threads && *request.threads != part.getThreads()) {
      if (blocker && !request.resizable) {
        InFlightDiagnostic diag =
            emitError(request.threadsLoc.value_or(request.loc))
            << "kernel '" << part.kernel << "' cannot be given "
            << *request.threads << " threads ";
        if (part.getThreads())
          diag << "instead of its block " << formatDims(part.block);
        else
          diag << "without its block (no .reqntid, no blocks=)";
        StringRef threadsKey = config.empty() ? "threads=" : "threads: ";
        diag << ": " << blocker->reason << "; give ";
        if (part.getThreads())
          diag << threadsKey << part.getThreads() << " (its block)";
        else
          diag << "its block (" << (config.empty() ? "blocks=" : "block:")
               << ") and as many threads";
        diag << ", or mark it resizable (resizable: true in the config, or "
                "resizable= on the command line) if it is correct with any "
                "1-D block size";
        diag.attachNote(blocker->op->getLoc())
            << "why '" << part.kernel << "' may not be resizable";
        return signalPassFailure();
      }
      part.block = {*request.threads, 1, 1};
    }
    if (request.grid) {
      part.grid = *request.grid;
    } else if (GPUKernelAttr gpuKernel = getGPUKernel(request.entry);
               gpuKernel && !gpuKernel.getGrid().empty()) {
      // A kernel lowered from a gpu.func states its grid there.
      llvm::copy(gpuKernel.getGrid(), part.grid.begin());
    }
    part.dynamicSmem = request.dynamicSmem.value_or(-1);
    if (request.ratio)
      part.ratio = *request.ratio;
    part.replicas = request.replicas;
    part.setmaxnreg = request.setmaxnreg;
    base.parts.push_back(part);
    // strategy=auto tries other splits for kernels the analysis shows
    // resizable or the user marked.
    mayResize.push_back(!blocker || request.resizable);
    resizeBlockers.push_back(std::move(blocker));
  }
  // A kernel resized on the user's word alone may compute something else.
  auto warnUnprovenResize = [&](const FusionPlan &plan) {
    for (auto [i, part] : llvm::enumerate(plan.parts)) {
      if (!resizeBlockers[i] || part.getThreads() == ownThreads[i])
        continue;
      InFlightDiagnostic diag =
          emitWarning(requests[i].threadsLoc.value_or(requests[i].loc))
          << "kernel '" << part.kernel << "' runs with " << part.getThreads()
          << " threads";
      if (ownThreads[i])
        diag << " instead of " << ownThreads[i];
      diag << " because it is marked resizable, but gpu-opt cannot show "
              "that it is: "
           << resizeBlockers[i]->reason
           << "; if it depends on its block size, the fused kernel computes "
              "wrong results";
      diag.attachNote(resizeBlockers[i]->op->getLoc())
          << "why '" << part.kernel << "' may not be resizable";
    }
  };
  if (base.name.empty()) {
    // From the names the kernels were written with, not their mangled
    // symbols: `tile_kernel_ops__scale_fused`.
    for (const PartPlan &part : base.parts) {
      std::string kernelName = getDemangledKernelName(part.kernel);
      for (char &c : kernelName)
        if (!llvm::isAlnum(c) && c != '_' && c != '$')
          c = '_';
      base.name += (base.name.empty() ? "" : "_") + kernelName;
    }
    base.name += "_fused";
  }
  bool ratiosGiven = llvm::all_of(
      requests, [](const KernelRequest &r) { return r.ratio.has_value(); });
  if (!ratiosGiven && llvm::all_of(base.parts, [](const PartPlan &p) {
        return p.getBlocks() > 0;
      })) {
    SmallVector<int64_t> grid;
    for (const PartPlan &part : base.parts)
      grid.push_back(part.getBlocks());
    for (auto [part, r] : llvm::zip(base.parts, fitRatio(grid)))
      part.ratio = r;
  }

  ModelOptions modelOptions;
  modelOptions.chip = chip;
  modelOptions.ptxas = ptxas;
  modelOptions.loc = fusionLoc;
  if (strategyName != "auto") {
    std::optional<FusionStrategy> chosen =
        symbolizeFusionStrategy(strategyName);
    if (!chosen) {
      emitError(getOptionLoc("strategy"))
          << "unknown fusion strategy '" << strategyName
          << "' (expected thread, interleave, dynamic, sm_aware or auto)";
      return signalPassFailure();
    }
    if (!measure.empty() || !measureArgs.empty()) {
      StringRef option = measure.empty() ? "measure-args" : "measure";
      emitError(getOptionLoc(option))
          << "'" << option
          << "' measures the candidates of strategy=auto; with "
          << "strategy=" << strategyName << " there is nothing to choose";
      return signalPassFailure();
    }
    base.strategy = *chosen;
    base.maxnreg = std::max<int64_t>(cap, 0);
    if (failed(checkFusionPlan(root, base, *fusionLoc)))
      return signalPassFailure();
    // The model would have found out that ptxas rejects the fused kernel
    // (too many registers for its block); a named strategy must too.
    FailureOr<bool> checked =
        checkPlanWithPtxas(root, base, modelOptions, *fusionLoc);
    if (failed(checked))
      return signalPassFailure();
    warnUnprovenResize(base);
    setHFusePlan(root, base.toAttr(&getContext()));
    InFlightDiagnostic remark =
        emitRemark(remarkLoc)
        << "hfuse: " << stringifyFusionStrategy(base.strategy)
        << " strategy as requested";
    if (!*checked)
      remark << "; not checked with ptxas, which may find that the fused "
                "block leaves too few registers";
    return;
  }

  // strategy=auto: evaluate every candidate with the model, in times when
  // every kernel has one, else in waves. The model needs launch shapes,
  // which a launch-agnostic kernel otherwise takes at launch.
  for (auto [request, part] : llvm::zip(requests, base.parts))
    if (base.runtimeShapes && part.getBlocks() <= 0) {
      emitError(request.loc)
          << "strategy=auto needs the grid of kernel '" << part.kernel
          << "' for its model, also with runtime shapes (where it is a "
             "default); give grids= (grid: in the config), or name a "
             "strategy";
      return signalPassFailure();
    }
  size_t timed = llvm::count_if(
      requests, [](const KernelRequest &r) { return r.timeMs.has_value(); });
  if (timed && timed < requests.size()) {
    const KernelRequest &untimed = *llvm::find_if(
        requests, [](const KernelRequest &r) { return !r.timeMs; });
    emitError(untimed.loc)
        << "kernel '" << untimed.kernel
        << "' has no time alone while other kernels have one: the model "
           "compares times, so give every kernel's (time_ms: in the config, "
           "or profile=) or none";
    return signalPassFailure();
  }
  // Unmeasured, the model fused losers on held-out pairs, in waves and with
  // the kernels' times alike (docs/results/heldout-h100.md,
  // heldout-2026-11-28-h100.md): unless a measurement decides or the user
  // accepts its estimate with min-gain, it only ranks.
  bool trustModel = minGain >= 0;
  if (!timed && trustModel)
    emitWarning(remarkLoc)
        << "hfuse: no profile: the model compares the kernels' numbers of "
           "waves instead of their times, so the choice is a guess; give "
           "profile=, a report of `gpu-run --spec KERNELS.json --json "
           "profile.json --occupancy-sweep` (docs/fusion.md, \"Profiles\")";
  SmallVector<KernelProfile> profiles;
  for (const KernelRequest &request : requests) {
    KernelProfile &p = profiles.emplace_back();
    p.timeMs = request.timeMs.value_or(-1.0);
    p.blocksPerSM = request.blocksPerSM;
    p.sweep = request.sweep;
    p.bytes = request.bytes;
  }
  // Measured choice (MeasureCandidates.h), 1 of 2: with measure= (or
  // measure-args=, the inputs without a run spec), find the
  // GPU and reuse a decision cached for these kernels, shapes and GPU.
  std::unique_ptr<CandidateMeasurement> measurement;
  std::string unmeasuredWhy = "no measure= run spec";
  if (!measure.empty() && !measureArgs.empty()) {
    emitError(getOptionLoc("measure-args"))
        << "give the inputs to measure on once: measure=RUN.json or "
           "measure-args=, not both";
    return signalPassFailure();
  }
  if (!measure.empty() || !measureArgs.empty()) {
    MeasureOptions measureOptions;
    measureOptions.runSpec = measure;
    measureOptions.argSpecs.assign(measureArgs.begin(), measureArgs.end());
    measureOptions.top = measureTop;
    measureOptions.cacheDir = cache;
    measureOptions.topLoc = getOptionLoc("measure-top");
    measureOptions.cacheLoc = getOptionLoc("cache");
    FailureOr<std::unique_ptr<CandidateMeasurement>> prepared =
        CandidateMeasurement::prepare(
            root, base, mayResize, profiles, cap, modelOptions, measureOptions,
            getOptionLoc(measure.empty() ? "measure-args" : "measure"));
    if (failed(prepared))
      return signalPassFailure();
    measurement = std::move(*prepared);
    unmeasuredWhy = measurement->unmeasuredReason().str();
    // With a GPU the model counts its SMs, not the chip table's.
    modelOptions.limits = measurement->deviceLimits();
    if (unmeasuredWhy.empty())
      if (std::optional<MeasuredDecision> cached = measurement->lookup(root)) {
        if (cached->fuse)
          warnUnprovenResize(cached->plan);
        if (failed(applyMeasuredDecision(root, *cached, remarkLoc,
                                         require || configRequire,
                                         !config.empty())))
          return signalPassFailure();
        return;
      }
  }
  // End of measured choice 1.
  FailureOr<std::vector<Candidate>> candidates =
      evaluateCandidates(root, base, mayResize, profiles, cap, modelOptions);
  if (failed(candidates))
    return signalPassFailure();
  numCandidates += candidates->size();
  if (!candidatesOut.empty())
    if (failed(writeCandidates(*candidates, candidatesOut, loc)))
      return signalPassFailure();
  const Candidate *best = nullptr;
  for (const Candidate &candidate : *candidates)
    if (candidate.feasible &&
        (!best || candidate.predictedMs < best->predictedMs))
      best = &candidate;
  // A decline is a remark, and the kernels stay apart (no plan: later
  // passes run on them as they are), unless the user requires fusion.
  bool requireFusion = require || configRequire;
  if (!best) {
    InFlightDiagnostic diag =
        (requireFusion ? emitError(remarkLoc) : emitRemark(remarkLoc))
        << "hfuse: not fusing: no way to fuse these kernels (the notes say "
           "why each candidate cannot be built)";
    if (!requireFusion)
      diag << "; the kernels stay apart; require=true makes this an error";
    for (const Candidate &candidate : *candidates)
      diag.attachNote() << candidate.describe() << ": " << candidate.reason;
    if (requireFusion)
      return signalPassFailure();
    return markAllAnalysesPreserved();
  }
  // Measured choice (MeasureCandidates.h), 2 of 2: with a GPU, the top
  // candidates are timed and checked, and measurement decides (min-gain is
  // the model's guard; measurement declines by its own threshold).
  if (measurement && measurement->unmeasuredReason().empty()) {
    FailureOr<MeasuredDecision> decision =
        measurement->measure(root, *candidates);
    if (failed(decision))
      return signalPassFailure();
    if (decision->fuse)
      warnUnprovenResize(decision->plan);
    if (failed(applyMeasuredDecision(root, *decision, remarkLoc, requireFusion,
                                     !config.empty())))
      return signalPassFailure();
    return;
  }
  // End of measured choice 2.
  double gain = minGain >= 0 ? double(minGain) : 0.10;
  if (!trustModel || best->predictedMs > best->baselineMs * (1.0 - gain)) {
    InFlightDiagnostic diag =
        (requireFusion ? emitError(remarkLoc) : emitRemark(remarkLoc));
    if (!trustModel)
      diag << "hfuse: not fusing: nothing measured the candidates, and the "
              "model's estimate alone only ranks them (best: "
           << best->describe() << ", predicted "
           << llvm::formatv("{0:f3}", best->predictedMs) << " " << best->unit
           << " vs " << llvm::formatv("{0:f3}", best->baselineMs) << " "
           << best->unit
           << " apart); measure the top candidates on a GPU "
              "(measure=RUN.json), or accept the estimate with min-gain=0.10";
    else
      diag << "hfuse: not fusing: no candidate is predicted to be "
           << llvm::formatv("{0:f0}", gain * 100)
           << "% faster than running the kernels apart (best: "
           << best->describe() << ", predicted "
           << llvm::formatv("{0:f3}", best->predictedMs) << " " << best->unit
           << " vs " << llvm::formatv("{0:f3}", best->baselineMs) << " "
           << best->unit << " apart)";
    if (!requireFusion)
      diag << "; the kernels stay apart";
    diag << "; to fuse by the best candidate anyway, "
         << describeForcing(*best, !config.empty());
    if (requireFusion) {
      diag << "; without require=true the kernels stay apart instead";
      return signalPassFailure();
    }
    diag << "; require=true makes a decline an error";
    return markAllAnalysesPreserved();
  }
  warnUnprovenResize(best->plan);
  setHFusePlan(root, best->plan.toAttr(&getContext()));
  emitRemark(remarkLoc)
      << "hfuse: chose " << best->describe()
      << (best->origin.empty() ? "" : " (" + best->origin + ")")
      << ": predicted " << llvm::formatv("{0:f3}", best->predictedMs) << " "
      << best->unit << " vs " << llvm::formatv("{0:f3}", best->baselineMs)
      << " " << best->unit << " apart ("
      << llvm::formatv("{0:f2}", best->baselineMs / best->predictedMs) << "x); "
      << best->explanation << "; " << candidates->size()
      << " candidates evaluated"
      << "; model's choice, unmeasured: no GPU measurement (" << unmeasuredWhy
      << ")";
}

std::unique_ptr<Pass> hfuse::createHFusePlanPass(HFusePlanOptions options,
                                                 StringRef flag) {
  auto pass = std::make_unique<HFusePlanPass>(std::move(options));
  pass->optionFlag = flag.str();
  return pass;
}
