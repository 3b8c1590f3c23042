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
#include "gpuopt/Transforms/Passes.h"

#include "gpuopt/Support/FusionConfig.h"
#include "gpuopt/Target/PTX/ExportPTX.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

namespace gpuopt {
#define GEN_PASS_DEF_HFUSEPLAN
#define GEN_PASS_DEF_HFUSE
#include "gpuopt/Transforms/Passes.h.inc"
} // namespace gpuopt

using namespace mlir;
using namespace gpuopt;
using namespace gpuopt::hfuse;
using namespace gpuopt::ptx;

/// "256", "16x16", "64x128x2".
static std::optional<Dim3> parseDims(StringRef text) {
  Dim3 dims = {1, 1, 1};
  SmallVector<StringRef, 3> fields;
  text.trim().split(fields, 'x');
  if (fields.empty() || fields.size() > 3)
    return std::nullopt;
  for (auto [i, field] : llvm::enumerate(fields))
    if (field.trim().getAsInteger(10, dims[i]) || dims[i] <= 0)
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
};

struct HFusePlanPass : public gpuopt::impl::HFusePlanBase<HFusePlanPass> {
  using HFusePlanBase::HFusePlanBase;
  void runOnOperation() override;

private:
  LogicalResult gatherRequests(SmallVectorImpl<KernelRequest> &requests,
                               std::string &strategyName, int64_t &cap,
                               std::string &fusedName);
  LogicalResult readProfile(SmallVectorImpl<KernelRequest> &requests);
};

} // namespace

LogicalResult
HFusePlanPass::gatherRequests(SmallVectorImpl<KernelRequest> &requests,
                              std::string &strategyName, int64_t &cap,
                              std::string &fusedName) {
  ModuleOp root = getOperation();
  Location loc = root.getLoc();
  strategyName = strategy;
  cap = maxnreg;
  fusedName = name;
  if (!config.empty()) {
    FailureOr<FusionConfig> parsed = readFusionConfig(config, &getContext());
    if (failed(parsed))
      return failure();
    strategyName = stringifyStrategy(parsed->strategy).str();
    if (parsed->maxnreg)
      cap = *parsed->maxnreg;
    if (!parsed->name.empty())
      fusedName = parsed->name;
    for (const KernelConfig &k : parsed->kernels) {
      KernelRequest request{k.module,      k.name,    k.block, k.grid,
                            k.dynamicSmem, k.threads, k.ratio, k.timeMs,
                            k.resizable,   k.loc};
      requests.push_back(request);
    }
  } else if (!kernels.empty()) {
    for (const std::string &k : kernels) {
      KernelRequest request{"", "", {}, {}, {}, {}, {}, {}, false, loc};
      auto [module, kernel] = StringRef(k).rsplit("::");
      if (kernel.empty())
        request.kernel = module.str();
      else {
        request.module = module.str();
        request.kernel = kernel.str();
      }
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
  if (requests.size() < 2)
    return emitError(loc) << "horizontal fusion needs at least two kernels; "
                          << "found " << requests.size()
                          << " (give several PTX files, or kernels=)";
  // Options fill in what the config left out, kernel by kernel.
  auto checkCount = [&](size_t count, StringRef option) {
    if (count && count != requests.size())
      return emitError(loc) << "'" << option << "' lists " << count
                            << " values for " << requests.size() << " kernels",
             failure();
    return success();
  };
  if (failed(checkCount(blocks.size(), "blocks")) ||
      failed(checkCount(grids.size(), "grids")) ||
      failed(checkCount(smem.size(), "smem")) ||
      failed(checkCount(threads.size(), "threads")) ||
      failed(checkCount(ratio.size(), "ratio")))
    return failure();
  for (auto [i, request] : llvm::enumerate(requests)) {
    if (!blocks.empty()) {
      request.block = parseDims(blocks[i]);
      if (!request.block)
        return emitError(loc) << "invalid block shape '" << blocks[i]
                              << "' (expected X, XxY or XxYxZ)";
    }
    if (!grids.empty()) {
      request.grid = parseDims(grids[i]);
      if (!request.grid)
        return emitError(loc) << "invalid grid '" << grids[i]
                              << "' (expected X, XxY or XxYxZ)";
    }
    if (!smem.empty())
      request.dynamicSmem = smem[i];
    if (!threads.empty()) {
      request.threads = threads[i];
      request.resizable = true;
    }
    if (!ratio.empty())
      request.ratio = ratio[i];
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
  Location loc = getOperation().getLoc();
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
      if (label != StringRef(request.kernel) &&
          kernel != StringRef(request.kernel))
        continue;
      found = true;
      if (!request.timeMs)
        if (const llvm::json::Object *time = object->getObject("time"))
          if (std::optional<double> median = time->getNumber("median_ms"))
            request.timeMs = *median;
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
  SmallVector<KernelRequest> requests;
  std::string strategyName, fusedName;
  int64_t cap = -1;
  if (failed(gatherRequests(requests, strategyName, cap, fusedName)) ||
      failed(readProfile(requests)))
    return signalPassFailure();

  // The base plan: block shapes from the requests or `.reqntid`.
  FusionPlan base;
  base.name = fusedName;
  // Remarks point at the first kernel: a module built from PTX files has no
  // location of its own.
  Location remarkLoc = loc;
  SmallVector<bool> resizable;
  for (KernelRequest &request : requests) {
    PartPlan part;
    part.module = request.module;
    part.kernel = request.kernel;
    FailureOr<EntryOp> entry = findPartKernel(root, part, request.loc);
    if (failed(entry))
      return signalPassFailure();
    part.module = (*entry)->getParentOfType<PTXModuleOp>().getSymName().str();
    if (base.parts.empty() && isa<UnknownLoc>(loc))
      remarkLoc = entry->getLoc();
    KernelAnalysis analysis(*entry);
    if (request.block)
      part.block = *request.block;
    else if (auto required = analysis.getRequiredBlock())
      part.block = *required;
    if (request.threads && *request.threads != part.getThreads()) {
      if (!request.resizable) {
        emitError(request.loc)
            << "kernel '" << part.kernel << "': a split of " << *request.threads
            << " threads differs from its block " << formatDims(part.block)
            << "; mark it resizable if it works with any block size";
        return signalPassFailure();
      }
      part.block = {*request.threads, 1, 1};
    }
    if (request.grid)
      part.grid = *request.grid;
    part.dynamicSmem = request.dynamicSmem.value_or(-1);
    if (request.ratio)
      part.ratio = *request.ratio;
    base.parts.push_back(part);
    resizable.push_back(request.resizable);
  }
  if (base.name.empty()) {
    for (const PartPlan &part : base.parts)
      base.name += (base.name.empty() ? "" : "_") + part.kernel;
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

  if (strategyName != "auto") {
    std::optional<FusionStrategy> chosen = parseFusionStrategy(strategyName);
    if (!chosen) {
      emitError(loc) << "unknown fusion strategy '" << strategyName
                     << "' (expected thread, interleave, dynamic or auto)";
      return signalPassFailure();
    }
    base.strategy = *chosen;
    base.maxnreg = std::max<int64_t>(cap, 0);
    if (failed(checkFusionPlan(root, base, loc)))
      return signalPassFailure();
    root->setAttr(kPlanAttrName, base.toAttr(&getContext()));
    emitRemark(remarkLoc) << "hfuse: " << stringifyFusionStrategy(base.strategy)
                          << " strategy as requested";
    return;
  }

  // strategy=auto: evaluate every candidate with the model.
  ModelOptions modelOptions;
  modelOptions.chip = chip;
  modelOptions.ptxas = ptxas;
  SmallVector<KernelProfile> profiles;
  for (const KernelRequest &request : requests) {
    KernelProfile &p = profiles.emplace_back();
    p.timeMs = request.timeMs.value_or(-1.0);
    p.blocksPerSM = request.blocksPerSM;
    p.sweep = request.sweep;
  }
  FailureOr<std::vector<Candidate>> candidates =
      evaluateCandidates(root, base, resizable, profiles, cap, modelOptions);
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
  if (!best) {
    InFlightDiagnostic diag = emitError(remarkLoc)
                              << "hfuse: no way to fuse these kernels";
    for (const Candidate &candidate : *candidates)
      diag.attachNote() << candidate.describe() << ": " << candidate.reason;
    return signalPassFailure();
  }
  if (best->predictedMs > best->baselineMs * (1.0 - minGain)) {
    emitError(remarkLoc)
        << "hfuse: not fusing: no candidate is predicted to be "
        << llvm::formatv("{0:f0}", minGain * 100)
        << "% faster than running the kernels apart (best: " << best->describe()
        << ", " << llvm::formatv("{0:f3}", best->predictedMs) << " vs apart "
        << llvm::formatv("{0:f3}", best->baselineMs)
        << " in model units); pass strategy=thread, interleave or "
           "dynamic to fuse anyway";
    return signalPassFailure();
  }
  root->setAttr(kPlanAttrName, best->plan.toAttr(&getContext()));
  emitRemark(remarkLoc) << "hfuse: chose " << best->describe() << ": predicted "
                        << llvm::formatv("{0:f3}", best->predictedMs) << " vs "
                        << llvm::formatv("{0:f3}", best->baselineMs)
                        << " apart ("
                        << llvm::formatv("{0:f2}",
                                         best->baselineMs / best->predictedMs)
                        << "x); " << best->explanation << "; "
                        << candidates->size() << " candidates evaluated";
}

namespace {
/// `--hfuse`: the two passes with one set of options.
struct HFusePass : public gpuopt::impl::HFuseBase<HFusePass> {
  using HFuseBase::HFuseBase;
  void runOnOperation() override {
    HFusePlanOptions options;
    options.config = config;
    options.strategy = strategy;
    options.kernels.assign(kernels.begin(), kernels.end());
    options.blocks.assign(blocks.begin(), blocks.end());
    options.grids.assign(grids.begin(), grids.end());
    options.smem.assign(smem.begin(), smem.end());
    options.threads.assign(threads.begin(), threads.end());
    options.ratio.assign(ratio.begin(), ratio.end());
    options.maxnreg = maxnreg;
    options.name = name;
    options.profile = profile;
    options.chip = chip;
    options.ptxas = ptxas;
    options.candidatesOut = candidatesOut;
    options.minGain = minGain;
    OpPassManager pm(ModuleOp::getOperationName());
    pm.addPass(createHFusePlan(options));
    pm.addPass(createHFuseApply());
    if (failed(runPipeline(pm, getOperation())))
      signalPassFailure();
  }
};
} // namespace
