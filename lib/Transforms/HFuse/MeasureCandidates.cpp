//===- MeasureCandidates.cpp - Measure auto's top candidates --------------===//
//
// The GPU run of `--hfuse-plan strategy=auto measure=RUN.json`: the kernels
// apart and the top candidates are written as PTX (and the candidates'
// launch manifests) to a temporary folder, run once each through the
// runtime's Session on the run spec's inputs (the checked launch), their
// outputs compared bit for bit, then timed in the same interleaved rounds as
// the kernels apart serial, on two streams and as a CUDA graph. The decision
// is cached as JSON under a SHA-256 of everything it depends on.
//
//===----------------------------------------------------------------------===//

#include "gpuopt/Transforms/HFuse/MeasureCandidates.h"

#include "gpuopt/Analysis/KernelLookup.h"
#include "gpuopt/Dialect/GPUOpt/GPUOptDialect.h"
#include "gpuopt/Runtime/Compare.h"
#include "gpuopt/Runtime/Device.h"
#include "gpuopt/Runtime/ManifestWriter.h"
#include "gpuopt/Runtime/RunSpec.h"
#include "gpuopt/Runtime/Session.h"
#include "gpuopt/Target/PTX/ExportPTX.h"

#include "mlir/AsmParser/AsmParser.h"
#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/SHA256.h"
#include "llvm/Support/raw_ostream.h"

#include <cstring>
#include <ctime>

using namespace mlir;
using namespace gpuopt;
using namespace gpuopt::hfuse;
namespace rt = gpuopt::runtime;

/// What a cache entry says it is; entries of another format or version are
/// ignored.
static constexpr llvm::StringLiteral CacheFormat = "gpu-opt hfuse decision";
static constexpr int64_t CacheVersion = 1;

//===----------------------------------------------------------------------===//
// Small helpers
//===----------------------------------------------------------------------===//

std::string hfuse::sha256Hex(StringRef text) {
  std::array<uint8_t, 32> hash = llvm::SHA256::hash(ArrayRef<uint8_t>(
      reinterpret_cast<const uint8_t *>(text.data()), text.size()));
  return llvm::toHex(hash, /*LowerCase=*/true);
}

std::string hfuse::getDefaultCacheDir() {
  SmallString<256> dir;
  if (!llvm::sys::path::cache_directory(dir))
    return "";
  llvm::sys::path::append(dir, "gpu-opt", "hfuse");
  return std::string(dir);
}

DeviceLimits hfuse::getGPUDeviceLimits(const rt::DeviceInfo &info) {
  std::string chip =
      "sm_" + std::to_string(info.ComputeMajor * 10 + info.ComputeMinor);
  DeviceLimits limits = lookupDeviceLimits(chip).value_or(DeviceLimits());
  auto take = [](int64_t &field, int value) {
    if (value > 0)
      field = value;
  };
  take(limits.multiprocessors, info.Multiprocessors);
  take(limits.threadsPerSM, info.ThreadsPerMultiprocessor);
  take(limits.blocksPerSM, info.BlocksPerMultiprocessor);
  take(limits.registersPerSM, info.RegistersPerMultiprocessor);
  take(limits.sharedPerSM, info.SharedPerMultiprocessor);
  take(limits.sharedPerBlock, info.MaxSharedPerBlockOptin);
  // 0 is a value here (before compute capability 8.0), but also what a
  // driver that does not know the attribute leaves: only a known chip's
  // row can tell, and a reported value replaces it.
  take(limits.sharedReservedPerBlock, info.ReservedSharedPerBlock);
  return limits;
}

double MeasuredBaselines::bestMs() const {
  double best = -1;
  for (double t : {serialMs, concurrentMs, graphMs})
    if (t > 0 && (best < 0 || t < best))
      best = t;
  return best;
}

StringRef MeasuredBaselines::bestMode() const {
  double best = bestMs();
  if (best < 0)
    return "";
  if (best == serialMs)
    return "serial";
  if (best == concurrentMs)
    return "two streams";
  return "graph";
}

std::optional<size_t>
hfuse::chooseMeasured(const MeasuredBaselines &baselines,
                      ArrayRef<MeasuredCandidate> measured, double minSpeedup) {
  double apart = baselines.bestMs();
  if (apart <= 0)
    return std::nullopt;
  std::optional<size_t> fastest;
  for (auto [i, c] : llvm::enumerate(measured))
    if (c.verified && c.excluded.empty() && c.medianMs > 0 &&
        (!fastest || c.medianMs < measured[*fastest].medianMs))
      fastest = i;
  if (fastest && measured[*fastest].medianMs <= apart * (1.0 - minSpeedup))
    return fastest;
  return std::nullopt;
}

static std::string formatMs(double ms) {
  return llvm::formatv("{0:f3}", ms).str();
}

static std::string nowUTC() {
  std::time_t now = std::time(nullptr);
  std::tm utc;
  gmtime_r(&now, &utc);
  char text[32];
  std::strftime(text, sizeof(text), "%Y-%m-%dT%H:%M:%SZ", &utc);
  return text;
}

static std::string describePlan(const FusionPlan &plan) {
  Candidate c;
  c.plan = plan;
  return c.describe();
}

static llvm::json::Array dims(const Dim3 &d) {
  return llvm::json::Array{d[0], d[1], d[2]};
}

static bool sameDims(const Dim3 &plan, const rt::Dim3 &run) {
  return uint64_t(plan[0]) == run.X && uint64_t(plan[1]) == run.Y &&
         uint64_t(plan[2]) == run.Z;
}

static rt::Dim3 toRuntime(const Dim3 &d) {
  return rt::Dim3{uint64_t(d[0]), uint64_t(d[1]), uint64_t(d[2])};
}

/// `name` is how the run spec names the part's kernel: its symbol, its
/// function name without parameters, or that name's last component.
static bool namesKernel(StringRef name, StringRef symbol) {
  if (name == symbol)
    return true;
  std::string demangled = getDemangledKernelName(symbol);
  if (name == demangled)
    return true;
  size_t colons = StringRef(demangled).rfind("::");
  return colons != StringRef::npos &&
         name == StringRef(demangled).substr(colons + 2);
}

//===----------------------------------------------------------------------===//
// State
//===----------------------------------------------------------------------===//

struct CandidateMeasurement::State {
  FusionPlan base;
  /// The run spec as read, one kernel per part, in the plan's order.
  rt::RunSpec spec;
  /// Each part's module as PTX text, and the distinct modules.
  std::vector<std::string> partModule;
  llvm::StringMap<std::string> moduleText;
  /// The GPU, kept open from prepare() to the measurement.
  std::unique_ptr<rt::Context> gpu;
  /// A temporary folder for the PTX and manifests the runtime loads,
  /// removed with the state.
  SmallString<128> dir;

  ~State() {
    if (!dir.empty())
      llvm::sys::fs::remove_directories(dir);
  }
  /// Writes `text` to `name` in the folder; its path, or "" after an error
  /// at `loc`.
  std::string writeFile(StringRef name, StringRef text, Location loc) {
    SmallString<128> path(dir);
    llvm::sys::path::append(path, name);
    std::error_code ec;
    {
      llvm::raw_fd_ostream os(path, ec);
      if (!ec) {
        os << text;
        os.close();
        if (os.has_error())
          ec = os.error();
      }
    }
    if (ec) {
      emitError(loc) << "hfuse: cannot write '" << path
                     << "': " << ec.message();
      return "";
    }
    return std::string(path);
  }
};

/// What resolveRunSpec checks of one kernel, before any GPU is touched.
static rt::Status resolveKernel(rt::KernelSpec &k) {
  if (rt::Status status = rt::resolveKernelSpec(k))
    return status;
  if (k.HasLayout)
    if (rt::Status status = rt::checkKernelArgs(k))
      return status;
  return rt::checkKernelConsts(k);
}

/// The run spec of measure-args=: a kernel per text, its gpu-run `--arg`
/// specs separated by whitespace; the rest comes from the plan.
static LogicalResult readArgSpecs(ArrayRef<std::string> texts,
                                  rt::RunSpec &spec, Location loc) {
  for (auto [i, text] : llvm::enumerate(texts)) {
    rt::KernelSpec &k = spec.Kernels.emplace_back();
    SmallVector<StringRef> words;
    StringRef(text).split(words, ' ', /*MaxSplit=*/-1, /*KeepEmpty=*/false);
    for (StringRef word : words) {
      word = word.trim();
      if (word.empty())
        continue;
      rt::Expected<rt::ArgSpec> arg = rt::parseArgSpec(word.str());
      if (!arg)
        return emitError(loc) << "'measure-args', kernel " << i << ": "
                              << arg.status().message();
      k.Args.push_back(std::move(*arg));
    }
  }
  return success();
}

CandidateMeasurement::~CandidateMeasurement() = default;

std::string CandidateMeasurement::cachePath() const {
  if (key.empty() || cacheDir.empty())
    return "";
  SmallString<256> path(cacheDir);
  llvm::sys::path::append(path, key + ".json");
  return std::string(path);
}

FailureOr<std::unique_ptr<CandidateMeasurement>> CandidateMeasurement::prepare(
    ModuleOp root, const FusionPlan &base, ArrayRef<bool> resizable,
    ArrayRef<KernelProfile> profiles, int64_t cap, const ModelOptions &model,
    const MeasureOptions &options, Location loc) {
  std::unique_ptr<CandidateMeasurement> m(new CandidateMeasurement());
  m->options = options;
  m->loc = loc;
  m->state = std::make_unique<State>();
  State &s = *m->state;
  s.base = base;
  if (options.top < 1)
    return emitError(options.topLoc.value_or(loc))
               << "'measure-top' must be at least 1, not " << options.top,
           failure();

  // The run spec: its kernels are the plan's parts, in order. Its own
  // warmup and repeat override the search's defaults.
  s.spec.Warmup = 10;
  s.spec.Repeat = 30;
  // What messages call the inputs: the run spec, or measure-args=.
  bool fromArgs = !options.argSpecs.empty();
  std::string source =
      fromArgs ? "'measure-args'" : "run spec '" + options.runSpec + "'";
  if (fromArgs) {
    if (failed(readArgSpecs(options.argSpecs, s.spec, loc)))
      return failure();
  } else if (rt::Status status = rt::readRunSpec(options.runSpec, s.spec)) {
    return emitError(loc) << status.message(), failure();
  }
  if (s.spec.Kernels.size() != base.parts.size())
    return emitError(loc) << source
                          << (fromArgs ? " gives the arguments of " : " has ")
                          << s.spec.Kernels.size()
                          << (s.spec.Kernels.size() == 1 ? " kernel; "
                                                         : " kernels; ")
                          << base.parts.size()
                          << " are fused (give one per kernel, in the order "
                             "of the fused kernels)",
           failure();
  if (s.spec.Repeat == 0)
    return emitError(loc) << source
                          << " sets \"repeat\" to 0: nothing would be timed",
           failure();
  for (auto [i, part] : llvm::enumerate(base.parts)) {
    rt::KernelSpec &k = s.spec.Kernels[i];
    std::string which = llvm::formatv("{0}, kernel {1}", source, i).str();
    if (!k.KernelName.empty() && !namesKernel(k.KernelName, part.kernel))
      return emitError(loc)
                 << which << " is '" << k.KernelName << "', but fused kernel "
                 << i << " is '" << part.kernel
                 << "' (list the kernels in the fused order)",
             failure();
    if (part.getBlocks() > 0) {
      if (k.Grid && !sameDims(part.grid, *k.Grid))
        return emitError(loc)
                   << which << " ('" << part.kernel << "') has grid "
                   << rt::toString(*k.Grid) << ", but the plan fuses it with "
                   << rt::toString(toRuntime(part.grid)),
               failure();
      k.Grid = toRuntime(part.grid);
    }
    if (!k.Block && part.getThreads() > 0)
      k.Block = toRuntime(part.block);
    if (part.dynamicSmem >= 0) {
      if (k.Smem && *k.Smem != uint64_t(part.dynamicSmem))
        return emitError(loc)
                   << which << " ('" << part.kernel << "') has smem " << *k.Smem
                   << ", but the plan fuses it with " << part.dynamicSmem,
               failure();
      k.Smem = uint64_t(part.dynamicSmem);
    }
    if (k.Label.empty())
      k.Label = getDemangledKernelName(part.kernel);
    // The kernel is the one gpu-opt fuses, exported from its input.
    k.KernelName = part.kernel;
    k.ManifestPath.clear();
    k.Outs.clear();
    k.TraceDir.clear();
    k.TimeAlone = false;
  }

  // Each part's module as PTX text: what is run apart, and in the key.
  for (const PartPlan &part : base.parts) {
    FailureOr<ptx::EntryOp> entry = findPartKernel(root, part, loc);
    if (failed(entry))
      return failure();
    auto module = (*entry)->getParentOfType<ptx::PTXModuleOp>();
    std::string name = module.getSymName().str();
    if (!s.moduleText.count(name)) {
      std::string text;
      llvm::raw_string_ostream os(text);
      if (failed(exportPTX(module, os)))
        return failure();
      s.moduleText[name] = text;
    }
    s.partModule.push_back(name);
  }
  // The kernels apart, as the runtime will load them; their arguments are
  // checked against their parameters now, with or without a GPU.
  if (std::error_code ec =
          llvm::sys::fs::createUniqueDirectory("gpuopt-hfuse-measure", s.dir))
    return emitError(loc) << "hfuse: cannot create a temporary folder: "
                          << ec.message(),
           failure();
  llvm::StringMap<std::string> modulePaths;
  for (auto [i, name] : llvm::enumerate(s.partModule)) {
    std::string &path = modulePaths[name];
    if (path.empty()) {
      path = s.writeFile(llvm::formatv("apart{0}.ptx", i).str(),
                         s.moduleText[name], loc);
      if (path.empty())
        return failure();
    }
    rt::KernelSpec &k = s.spec.Kernels[i];
    k.ModulePath = path;
    if (rt::Status status = resolveKernel(k))
      return emitError(loc)
                 << source << ", kernel " << i << ": " << status.message(),
             failure();
  }

  if (options.cacheDir != "none") {
    m->cacheDir =
        options.cacheDir.empty() ? getDefaultCacheDir() : options.cacheDir;
    if (!m->cacheDir.empty() && llvm::sys::fs::exists(m->cacheDir) &&
        !llvm::sys::fs::is_directory(m->cacheDir))
      return emitError(options.cacheLoc.value_or(loc))
                 << "cache '" << m->cacheDir
                 << "' is not a folder (give cache=DIR, or "
                    "cache=none)",
             failure();
  }

  // The GPU; without one the model's choice stands.
  rt::Expected<std::unique_ptr<rt::Context>> gpu = rt::Context::create(0);
  if (!gpu) {
    m->unmeasured = gpu.status().message();
    return m;
  }
  s.gpu = std::move(*gpu);
  const rt::DeviceInfo &info = s.gpu->info();
  m->limits = getGPUDeviceLimits(info);

  // The key: everything the decision depends on.
  llvm::json::Object keyInputs;
  keyInputs["format"] = CacheFormat;
  keyInputs["version"] = CacheVersion;
  llvm::json::Array kernels;
  for (auto [part, module] : llvm::zip(base.parts, s.partModule))
    kernels.push_back(
        llvm::json::Object{{"module", module},
                           {"kernel", part.kernel},
                           {"ptx_sha256", sha256Hex(s.moduleText[module])}});
  keyInputs["kernels"] = std::move(kernels);
  llvm::json::Array parts;
  for (auto [i, part] : llvm::enumerate(base.parts)) {
    const KernelProfile &p = profiles[i];
    llvm::json::Array sweep;
    for (auto [blocks, ms] : p.sweep)
      sweep.push_back(llvm::json::Array{blocks, ms});
    parts.push_back(
        llvm::json::Object{{"block", dims(part.block)},
                           {"grid", dims(part.grid)},
                           {"ratio", part.ratio},
                           {"dynamic_smem", part.dynamicSmem},
                           {"replicas", part.replicas},
                           {"setmaxnreg", part.setmaxnreg},
                           {"resizable", i < resizable.size() && resizable[i]},
                           {"time_ms", p.timeMs},
                           {"bytes", p.bytes},
                           {"blocks_per_sm", p.blocksPerSM},
                           {"sweep", std::move(sweep)}});
  }
  keyInputs["parts"] = std::move(parts);
  keyInputs["plan"] = llvm::json::Object{
      {"name", base.name},   {"runtime_shapes", base.runtimeShapes},
      {"units", base.units}, {"maxnreg", cap},
      {"chip", model.chip},  {"top", options.top}};
  llvm::json::Array runs;
  for (const rt::KernelSpec &k : s.spec.Kernels) {
    llvm::json::Array args, consts, resets;
    for (const rt::ArgSpec &a : k.Args)
      args.push_back(a.Text);
    for (const rt::ConstSpec &c : k.Consts)
      consts.push_back(c.Text);
    for (unsigned i : k.Resets)
      resets.push_back(int64_t(i));
    runs.push_back(
        llvm::json::Object{{"grid", k.Grid ? rt::toString(*k.Grid) : ""},
                           {"block", k.Block ? rt::toString(*k.Block) : ""},
                           {"smem", k.Smem ? int64_t(*k.Smem) : -1},
                           {"args", std::move(args)},
                           {"consts", std::move(consts)},
                           {"resets", std::move(resets)}});
  }
  keyInputs["runs"] = std::move(runs);
  keyInputs["warmup"] = int64_t(s.spec.Warmup);
  keyInputs["repeat"] = int64_t(s.spec.Repeat);
  keyInputs["gpu"] = llvm::json::Object{
      {"name", info.Name},
      {"multiprocessors", info.Multiprocessors},
      {"compute_capability",
       llvm::formatv("{0}.{1}", info.ComputeMajor, info.ComputeMinor).str()},
      {"driver_version", info.DriverVersion}};
  std::string keyText;
  llvm::raw_string_ostream keyStream(keyText);
  keyStream << llvm::json::Value(std::move(keyInputs));
  m->key = sha256Hex(keyText);

  return m;
}

//===----------------------------------------------------------------------===//
// The cache
//===----------------------------------------------------------------------===//

static llvm::json::Object toJSON(const MeasuredBaselines &b) {
  llvm::json::Object o;
  if (b.serialMs > 0)
    o["serial"] = b.serialMs;
  if (b.concurrentMs > 0)
    o["two_streams"] = b.concurrentMs;
  if (b.graphMs > 0)
    o["graph"] = b.graphMs;
  return o;
}

static std::string planText(const FusionPlan &plan, MLIRContext *ctx) {
  std::string text;
  llvm::raw_string_ostream os(text);
  Attribute(plan.toAttr(ctx)).print(os);
  return text;
}

/// Writes `decision` as the entry of `key` at `path`: a temporary file,
/// then renamed over it, so that a reader never sees half an entry.
static std::string writeCacheEntry(StringRef path, StringRef key,
                                   const MeasuredDecision &decision,
                                   MLIRContext *ctx) {
  llvm::json::Object entry;
  entry["format"] = CacheFormat;
  entry["version"] = CacheVersion;
  entry["key"] = key;
  entry["gpu"] = decision.gpu;
  entry["created"] = decision.created;
  entry["decision"] = decision.fuse ? "fuse" : "decline";
  if (decision.fuse) {
    entry["plan"] = planText(decision.plan, ctx);
    entry["description"] = describePlan(decision.plan);
  }
  if (decision.fusedMs > 0)
    entry["fused_ms"] = decision.fusedMs;
  entry["best_baseline_ms"] = decision.baselines.bestMs();
  entry["baselines_ms"] = toJSON(decision.baselines);
  llvm::json::Array measured;
  for (const MeasuredCandidate &c : decision.measured) {
    llvm::json::Object o{{"description", c.description},
                         {"rank", int64_t(c.rank)},
                         {"verified", c.verified}};
    if (!c.options.empty())
      o["options"] = c.options;
    if (c.medianMs > 0)
      o["median_ms"] = c.medianMs;
    if (!c.excluded.empty())
      o["excluded"] = c.excluded;
    measured.push_back(std::move(o));
  }
  entry["measured"] = std::move(measured);

  StringRef dir = llvm::sys::path::parent_path(path);
  if (std::error_code ec = llvm::sys::fs::create_directories(dir))
    return "cannot create '" + dir.str() + "': " + ec.message();
  SmallString<256> temp;
  int fd = -1;
  if (std::error_code ec =
          llvm::sys::fs::createUniqueFile(path + ".tmp-%%%%%%%%", fd, temp))
    return "cannot create a file in '" + dir.str() + "': " + ec.message();
  {
    llvm::raw_fd_ostream os(fd, /*shouldClose=*/true);
    os << llvm::formatv("{0:2}", llvm::json::Value(std::move(entry))) << "\n";
    os.close();
    if (os.has_error()) {
      llvm::sys::fs::remove(temp);
      return "cannot write '" + temp.str().str() + "': " + os.error().message();
    }
  }
  if (std::error_code ec = llvm::sys::fs::rename(temp, path)) {
    llvm::sys::fs::remove(temp);
    return "cannot rename '" + temp.str().str() + "' to '" + path.str() +
           "': " + ec.message();
  }
  return "";
}

std::optional<MeasuredDecision> CandidateMeasurement::lookup(ModuleOp root) {
  std::string path = cachePath();
  if (path.empty() || !llvm::sys::fs::exists(path))
    return std::nullopt;
  auto ignore = [&](const Twine &why) -> std::optional<MeasuredDecision> {
    emitWarning(loc) << "hfuse: ignoring cache entry '" << path << "': " << why
                     << "; measuring again (the entry is left as it "
                     << "is: delete it to cache the new decision)";
    return std::nullopt;
  };
  auto buffer = llvm::MemoryBuffer::getFile(path);
  if (!buffer)
    return ignore("cannot read it: " + buffer.getError().message());
  llvm::Expected<llvm::json::Value> json =
      llvm::json::parse((*buffer)->getBuffer());
  if (!json)
    return ignore("not JSON: " + llvm::toString(json.takeError()));
  const llvm::json::Object *entry = json->getAsObject();
  if (!entry || entry->getString("format") != CacheFormat ||
      entry->getInteger("version") != CacheVersion)
    return ignore(llvm::formatv("not a version {0} entry of '{1}'",
                                CacheVersion, CacheFormat));
  if (entry->getString("key") != StringRef(key))
    return ignore("it holds the decision of another key");
  std::optional<StringRef> decision = entry->getString("decision");
  if (!decision || (*decision != "fuse" && *decision != "decline"))
    return ignore("\"decision\" is neither \"fuse\" nor \"decline\"");

  MeasuredDecision result;
  result.fromCache = true;
  result.cachePath = path;
  result.fuse = *decision == "fuse";
  result.gpu = entry->getString("gpu").value_or("").str();
  result.created = entry->getString("created").value_or("").str();
  result.fusedMs = entry->getNumber("fused_ms").value_or(-1);
  if (const llvm::json::Object *b = entry->getObject("baselines_ms")) {
    result.baselines.serialMs = b->getNumber("serial").value_or(-1);
    result.baselines.concurrentMs = b->getNumber("two_streams").value_or(-1);
    result.baselines.graphMs = b->getNumber("graph").value_or(-1);
  }
  if (result.baselines.bestMs() <= 0)
    return ignore("it has no measured time of the kernels apart "
                  "(\"baselines_ms\")");
  if (const llvm::json::Array *measured = entry->getArray("measured"))
    for (const llvm::json::Value &value : *measured) {
      const llvm::json::Object *o = value.getAsObject();
      if (!o)
        continue;
      MeasuredCandidate c;
      c.description = o->getString("description").value_or("").str();
      c.options = o->getString("options").value_or("").str();
      c.rank = size_t(o->getInteger("rank").value_or(0));
      c.medianMs = o->getNumber("median_ms").value_or(-1);
      c.verified = o->getBoolean("verified").value_or(false);
      c.excluded = o->getString("excluded").value_or("").str();
      result.measured.push_back(std::move(c));
    }
  if (!result.fuse)
    return result;

  // The plan must still be one this build accepts for these kernels.
  if (result.fusedMs <= 0)
    return ignore("a \"fuse\" decision without \"fused_ms\"");
  std::optional<StringRef> text = entry->getString("plan");
  if (!text)
    return ignore("a \"fuse\" decision without \"plan\"");
  MLIRContext *ctx = root.getContext();
  ctx->getOrLoadDialect<GPUOptDialect>();
  std::string parseError;
  Attribute attr;
  {
    ScopedDiagnosticHandler handler(ctx, [&](Diagnostic &diag) {
      if (parseError.empty())
        parseError = diag.str();
      return success();
    });
    attr = parseAttribute(*text, ctx);
  }
  auto planAttr = llvm::dyn_cast_or_null<HFusePlanAttr>(attr);
  if (!planAttr)
    return ignore("its \"plan\" is not a #gpuopt.hfuse_plan" +
                  (parseError.empty() ? "" : ": " + parseError));
  FusionPlan plan = FusionPlan::fromAttr(planAttr);
  const FusionPlan &base = state->base;
  bool sameKernels = plan.parts.size() == base.parts.size();
  for (size_t i = 0; sameKernels && i < plan.parts.size(); ++i)
    sameKernels = plan.parts[i].kernel == base.parts[i].kernel &&
                  plan.parts[i].module == base.parts[i].module;
  if (!sameKernels)
    return ignore("its plan fuses other kernels");
  std::string refusal;
  LogicalResult checked = failure();
  {
    ScopedDiagnosticHandler handler(ctx, [&](Diagnostic &diag) {
      if (refusal.empty())
        refusal = diag.str();
      return success();
    });
    checked = checkFusionPlan(root, plan, loc);
  }
  if (failed(checked))
    return ignore("its plan is refused: " + refusal);
  result.plan = std::move(plan);
  return result;
}

//===----------------------------------------------------------------------===//
// Measuring
//===----------------------------------------------------------------------===//

/// An argument for a fused parameter no original argument feeds (as
/// gpuopt.launch_args.extra_arg): a zeroed 4 KiB buffer for pointers and
/// 8-byte integers, raw zero bytes for aggregates, else a zero scalar.
static std::string extraArg(const rt::ParamInfo &param) {
  if (param.Kind == rt::ParamKind::Pointer || param.Type == "u64" ||
      param.Type == "b64" || param.Type == "s64")
    return "buf:u32:1024:zero";
  if (param.Kind == rt::ParamKind::Bytes)
    return "bytes:" + std::string(2 * param.Size, '0');
  std::string type = param.Type;
  if (type == "b8")
    type = "u8";
  else if (type == "b16")
    type = "u16";
  else if (type == "b32")
    type = "u32";
  return "scalar:" + type + ":0";
}

/// Part `index` of a fused kernel, which runs `kernel`: by index when the
/// names agree, else the first part of that kernel.
static const rt::FusedPart *findFusedPart(const rt::KernelInfo &fused,
                                          size_t index, StringRef kernel) {
  if (index < fused.FusedFrom.size() && fused.FusedFrom[index].Kernel == kernel)
    return &fused.FusedFrom[index];
  for (const rt::FusedPart &f : fused.FusedFrom)
    if (f.Kernel == kernel)
      return &f;
  return nullptr;
}

/// The fused kernel's arguments from its parts': original p's argument i
/// goes to parameter FusedFrom[p].ArgMap[i]. Parameters nothing feeds get
/// extraArg; shape and probe parameters are the launcher's.
static rt::Status mapFusedArgs(const rt::KernelInfo &fused,
                               ArrayRef<rt::KernelSpec> originals,
                               const FusionPlan &plan, rt::KernelSpec &out) {
  size_t numParams = fused.Params.size();
  std::vector<bool> launcherSets(numParams, false);
  for (const rt::ShapeParam &p : fused.ShapeParams)
    launcherSets[p.Param] = true;
  for (const rt::ProbeBuffer &p : fused.Probes) {
    launcherSets[p.Param] = true;
    if (p.DynamicCapacity)
      launcherSets[p.CapacityParam] = true;
  }
  std::vector<std::optional<rt::ArgSpec>> args(numParams);
  if (fused.FusedFrom.size() != plan.parts.size())
    return rt::Status::error(
        "the fused kernel has " + std::to_string(fused.FusedFrom.size()) +
        " parts, the plan " + std::to_string(plan.parts.size()));
  for (auto [p, part] : llvm::enumerate(plan.parts)) {
    const rt::FusedPart *from = findFusedPart(fused, p, part.kernel);
    if (!from)
      return rt::Status::error("the fused kernel has no part '" + part.kernel +
                               "'");
    const rt::KernelSpec &k = originals[p];
    if (from->ArgMap.size() != k.Args.size())
      return rt::Status::error("part '" + part.kernel + "' maps " +
                               std::to_string(from->ArgMap.size()) +
                               " parameters; the run spec "
                               "gives it " +
                               std::to_string(k.Args.size()) + " arguments");
    for (auto [i, a] : llvm::enumerate(k.Args)) {
      uint64_t fi = from->ArgMap[i];
      if (fi >= numParams || launcherSets[fi])
        return rt::Status::error("part '" + part.kernel + "': argument " +
                                 std::to_string(i) +
                                 " maps to a parameter the launcher sets");
      if (args[fi] && (args[fi]->Text != a.Text || a.isBuffer()))
        return rt::Status::error("fused parameter " + std::to_string(fi) +
                                 " receives both '" + args[fi]->Text +
                                 "' and '" + a.Text + "'");
      args[fi] = a;
    }
  }
  // Argument index of each parameter the launcher does not set.
  std::vector<unsigned> argIndex(numParams, 0);
  for (size_t fi = 0, next = 0; fi < numParams; ++fi)
    if (!launcherSets[fi])
      argIndex[fi] = next++;
  // State the run spec resets before every launch of a kernel apart is
  // reset before every launch of the fused one.
  for (auto [p, part] : llvm::enumerate(plan.parts)) {
    const rt::FusedPart *from = findFusedPart(fused, p, part.kernel);
    for (unsigned i : originals[p].Resets)
      if (i < from->ArgMap.size())
        out.Resets.push_back(argIndex[from->ArgMap[i]]);
  }
  for (size_t fi = 0; fi < numParams; ++fi) {
    if (launcherSets[fi])
      continue;
    if (!args[fi]) {
      rt::Expected<rt::ArgSpec> extra =
          rt::parseArgSpec(extraArg(fused.Params[fi]));
      if (!extra)
        return extra.takeStatus();
      args[fi] = std::move(*extra);
    }
    out.Args.push_back(std::move(*args[fi]));
  }
  for (const rt::KernelSpec &k : originals)
    for (const rt::ConstSpec &c : k.Consts)
      if (llvm::none_of(out.Consts, [&](const rt::ConstSpec &o) {
            return o.Name == c.Name;
          }))
        out.Consts.push_back(c);
  return rt::Status::success();
}

/// Compares buffer `a` with `b` (same size) in chunks: an empty string when
/// they are bit-identical, else how they differ.
static std::string compareDeviceBuffers(const rt::DeviceBuffer &a,
                                        const rt::DeviceBuffer &b,
                                        rt::ElemType type) {
  if (a.size() != b.size())
    return llvm::formatv("{0} bytes against {1}", a.size(), b.size()).str();
  uint64_t elem = rt::elemSize(type);
  uint64_t chunk = (uint64_t(64) << 20) / elem * elem;
  std::vector<uint8_t> x, y;
  uint64_t mismatches = 0, first = 0;
  for (uint64_t offset = 0; offset < a.size(); offset += chunk) {
    uint64_t n = std::min(chunk, a.size() - offset);
    x.resize(n);
    y.resize(n);
    if (rt::Status s = a.download(x.data(), n, offset))
      return s.message();
    if (rt::Status s = b.download(y.data(), n, offset))
      return s.message();
    if (std::memcmp(x.data(), y.data(), n) == 0)
      continue;
    rt::CompareResult r = rt::compareBuffers(type, x.data(), y.data(), n);
    if (!mismatches)
      first = offset / elem + r.FirstMismatch;
    mismatches += r.Mismatches;
  }
  if (!mismatches)
    return "";
  return llvm::formatv("{0} of {1} {2} elements differ, the first at {3}",
                       mismatches, a.size() / elem, rt::toString(type), first)
      .str();
}

FailureOr<MeasuredDecision>
CandidateMeasurement::measure(ModuleOp root, ArrayRef<Candidate> ranked) {
  State &s = *state;
  MLIRContext *ctx = root.getContext();
  MeasuredDecision decision;
  decision.gpu = s.gpu->info().Name;
  decision.evaluated = ranked.size();

  auto writeFile = [&](StringRef name, StringRef text) {
    return s.writeFile(name, text, loc);
  };
  size_t numParts = s.base.parts.size();
  std::vector<rt::KernelSpec> originals(s.spec.Kernels.begin(),
                                        s.spec.Kernels.end());

  // The top feasible candidates, built on copies of the input.
  std::vector<const Candidate *> chosen;
  for (const Candidate &c : ranked)
    if (c.feasible && chosen.size() < size_t(options.top))
      chosen.push_back(&c);
  std::vector<MeasuredCandidate> measured;
  std::vector<size_t> specIndex;
  for (auto [n, c] : llvm::enumerate(chosen)) {
    MeasuredCandidate &mc = measured.emplace_back();
    mc.description = c->describe();
    mc.options = c->options();
    mc.rank = n;
    specIndex.push_back(0);
    OwningOpRef<ModuleOp> copy = root.clone();
    std::string refusal;
    FailureOr<ptx::PTXModuleOp> fused = failure();
    std::string text;
    FailureOr<rt::Manifest> manifest = failure();
    {
      ScopedDiagnosticHandler handler(ctx, [&](Diagnostic &diag) {
        if (refusal.empty())
          refusal = diag.str();
        return success();
      });
      fused = buildFusedKernel(*copy, c->plan);
      if (succeeded(fused)) {
        llvm::raw_string_ostream os(text);
        if (succeeded(exportPTX(*fused, os)))
          manifest = buildLaunchManifest(
              *fused, llvm::formatv("cand{0}.ptx", n).str(), "ptx");
      }
    }
    if (failed(manifest)) {
      mc.excluded = "not built: " + refusal;
      continue;
    }
    std::string ptxPath =
        writeFile(llvm::formatv("cand{0}.ptx", n).str(), text);
    rt::ManifestWriteOptions writeOptions;
    writeOptions.Version =
        std::max(rt::Manifest::CurrentVersion, rt::oldestVersionFor(*manifest));
    std::string jsonPath =
        writeFile(llvm::formatv("cand{0}.json", n).str(),
                  rt::writeManifest(*manifest, writeOptions));
    if (ptxPath.empty() || jsonPath.empty())
      return failure();
    const rt::KernelInfo *kernel = manifest->findKernel(c->plan.name);
    rt::KernelSpec k;
    k.Label = llvm::formatv("cand{0}", n).str();
    k.ModulePath = ptxPath;
    k.ManifestPath = jsonPath;
    k.KernelName = c->plan.name;
    k.TimeAlone = false;
    rt::Status mapped = kernel
                            ? mapFusedArgs(*kernel, originals, c->plan, k)
                            : rt::Status::error("its manifest has no kernel '" +
                                                c->plan.name + "'");
    if (mapped) {
      mc.excluded = "its arguments: " + mapped.message();
      continue;
    }
    if (rt::Status status = resolveKernel(k)) {
      mc.excluded = status.message();
      continue;
    }
    specIndex.back() = s.spec.Kernels.size();
    s.spec.Kernels.push_back(std::move(k));
  }

  // Every kernel once on the run spec's inputs, then the candidates' outputs
  // against the kernels apart.
  rt::Expected<std::unique_ptr<rt::Session>> session =
      rt::Session::create(s.spec);
  if (!session)
    return emitError(loc) << "hfuse: " << session.status().message(), failure();
  rt::Session &run = **session;
  if (rt::Status status = run.open(s.gpu->info().Ordinal))
    return emitError(loc) << "hfuse: " << status.message(), failure();
  for (size_t i = 0; i < numParts; ++i)
    if (auto launched = run.launchChecked(i); !launched)
      return emitError(loc)
                 << "hfuse: running '" << s.spec.Kernels[i].Label
                 << "' apart failed: " << launched.status().message(),
             failure();
  std::vector<size_t> timed;
  for (auto [n, mc] : llvm::enumerate(measured)) {
    if (!mc.excluded.empty())
      continue;
    size_t ci = specIndex[n];
    if (auto launched = run.launchChecked(ci); !launched) {
      mc.excluded = "its run failed: " + launched.status().message();
      continue;
    }
    const rt::KernelSpec &k = s.spec.Kernels[ci];
    const rt::KernelInfo &fused = k.Kernel;
    for (size_t p = 0; p < numParts && mc.excluded.empty(); ++p) {
      const rt::FusedPart *from =
          findFusedPart(fused, p, s.base.parts[p].kernel);
      const rt::KernelSpec &orig = s.spec.Kernels[p];
      for (size_t i = 0; from && i < orig.Args.size() && mc.excluded.empty();
           ++i) {
        if (!orig.Args[i].isBuffer())
          continue;
        auto it = llvm::find(k.ArgParams, from->ArgMap[i]);
        if (it == k.ArgParams.end()) {
          mc.excluded = "argument map of '" + orig.Label + "'";
          break;
        }
        size_t j = it - k.ArgParams.begin();
        std::string diff = compareDeviceBuffers(
            run.run(p).Buffers[i], run.run(ci).Buffers[j], orig.Args[i].Type);
        if (!diff.empty())
          mc.excluded = llvm::formatv("outputs differ from the kernels apart: "
                                      "'{0}' argument {1}: {2}",
                                      orig.Label, i, diff)
                            .str();
      }
    }
    if (mc.excluded.empty()) {
      mc.verified = true;
      timed.push_back(n);
    }
  }

  // Timing: the kernels apart in every mode the driver offers and each
  // checked candidate alone, round by round.
  rt::GroupSpec group;
  group.Name = "measure";
  for (size_t i = 0; i < numParts; ++i)
    group.Members.push_back(i);
  group.Serial = true;
  group.Concurrent = numParts > 1;
  group.Graph = s.gpu->driver().api().cuGraphCreate != nullptr;
  for (size_t n : timed)
    group.Also.push_back(specIndex[n]);
  s.spec.Groups = {group};
  if (rt::Status status = run.startTiming())
    return emitError(loc) << "hfuse: " << status.message(), failure();
  rt::Expected<rt::GroupTiming> timing = run.timeGroup(group);
  if (!timing)
    return emitError(loc) << "hfuse: timing the candidates failed: "
                          << timing.status().message(),
           failure();
  for (const rt::GroupTiming::Entry &e : timing->Entries) {
    using Mode = rt::GroupTiming::Mode;
    double ms = e.Time.Median;
    switch (e.M) {
    case Mode::Serial:
      decision.baselines.serialMs = ms;
      break;
    case Mode::Concurrent:
      decision.baselines.concurrentMs = ms;
      break;
    case Mode::Graph:
      decision.baselines.graphMs = ms;
      break;
    case Mode::Also:
      for (auto [n, mc] : llvm::enumerate(measured))
        if (specIndex[n] == e.Kernel)
          mc.medianMs = ms;
      break;
    case Mode::Alone:
      break;
    }
  }

  std::optional<size_t> winner =
      chooseMeasured(decision.baselines, measured, options.minSpeedup);
  decision.created = nowUTC();
  if (winner) {
    decision.fuse = true;
    decision.plan = chosen[*winner]->plan;
    decision.predicted = *chosen[*winner];
    decision.fusedMs = measured[*winner].medianMs;
  } else {
    for (const MeasuredCandidate &mc : measured)
      if (mc.verified && mc.medianMs > 0 &&
          (decision.fusedMs < 0 || mc.medianMs < decision.fusedMs))
        decision.fusedMs = mc.medianMs;
  }
  decision.measured = std::move(measured);

  // Cache it, unless an entry is there already (one that lookup() refused:
  // it is left as it is).
  std::string path = cachePath();
  if (path.empty()) {
    decision.notCached = "cache=none";
  } else if (llvm::sys::fs::exists(path)) {
    decision.notCached = "'" + path + "' exists";
  } else {
    std::string error = writeCacheEntry(path, key, decision, ctx);
    if (error.empty())
      decision.cachePath = path;
    else {
      decision.notCached = error;
      emitWarning(loc) << "hfuse: cannot cache the decision: " << error;
    }
  }
  return decision;
}

//===----------------------------------------------------------------------===//
// The remark
//===----------------------------------------------------------------------===//

static std::string describeBaselines(const MeasuredBaselines &b) {
  std::string text;
  auto add = [&](StringRef name, double ms) {
    if (ms > 0)
      text += (text.empty() ? "" : ", ") + name.str() + " " + formatMs(ms);
  };
  add("serial", b.serialMs);
  add("two streams", b.concurrentMs);
  add("graph", b.graphMs);
  return text;
}

LogicalResult hfuse::applyMeasuredDecision(ModuleOp root,
                                           const MeasuredDecision &decision,
                                           Location loc, bool require,
                                           bool fromConfig) {
  double apart = decision.baselines.bestMs();
  std::string where =
      decision.gpu.empty() ? std::string("the GPU") : "'" + decision.gpu + "'";
  std::string cacheText;
  if (decision.fromCache)
    cacheText =
        "cached decision from '" + decision.cachePath + "'" +
        (decision.created.empty() ? ""
                                  : " (measured " + decision.created + ")") +
        "; the model was not run";
  else if (!decision.cachePath.empty())
    cacheText = "cached in '" + decision.cachePath + "'";
  else
    cacheText = "not cached: " + decision.notCached;
  size_t timed =
      llvm::count_if(decision.measured,
                     [](const MeasuredCandidate &c) { return c.medianMs > 0; });
  std::string counted =
      decision.fromCache
          ? "measured on " + where
          : llvm::formatv("{0} of {1} candidates measured on {2} ({3} timed)",
                          decision.measured.size(), decision.evaluated, where,
                          timed)
                .str();

  if (!decision.fuse) {
    // The fastest candidate whose outputs were checked: what fuses anyway.
    const MeasuredCandidate *fastest = nullptr;
    for (const MeasuredCandidate &c : decision.measured)
      if (c.verified && c.medianMs > 0 &&
          (!fastest || c.medianMs < fastest->medianMs))
        fastest = &c;
    InFlightDiagnostic diag =
        (require ? emitError(loc) : emitRemark(loc))
        << "hfuse: not fusing: no candidate measured is 1% faster than "
           "running the kernels apart (best apart: "
        << formatMs(apart) << " ms, " << decision.baselines.bestMode();
    if (fastest)
      diag << "; fastest checked candidate: " << fastest->description << ", "
           << formatMs(fastest->medianMs) << " ms";
    diag << "); " << counted << "; " << cacheText;
    if (!require)
      diag << "; the kernels stay apart";
    if (fastest && !fastest->options.empty()) {
      diag << "; to fuse by the fastest checked candidate anyway, pass "
           << fastest->options
           << " (with the same kernels and shapes) instead of strategy=auto";
      if (fromConfig)
        diag << " (with config=, write them as its keys: strategy: and the "
                "kernels' keys of those names)";
    } else if (fastest) {
      diag << "; to fuse by the fastest checked candidate anyway, name its "
              "strategy and split or ratio ("
           << fastest->description << ")";
    } else {
      diag << "; no candidate's outputs were checked bit-identical to the "
              "kernels apart, so none is offered to fuse by";
    }
    diag << (require ? "; without require=true the kernels stay apart instead"
                     : "; require=true makes a decline an error");
    for (const MeasuredCandidate &c : decision.measured) {
      Diagnostic &note = diag.attachNote();
      note << c.description << ": ";
      if (c.medianMs > 0)
        note << formatMs(c.medianMs) << " ms";
      else
        note << "not timed";
      if (!c.excluded.empty())
        note << " (left out: " << c.excluded << ")";
    }
    return failure(require);
  }

  setHFusePlan(root, decision.plan.toAttr(root.getContext()));
  InFlightDiagnostic remark = emitRemark(loc);
  remark << "hfuse: chose " << describePlan(decision.plan);
  if (decision.predicted) {
    const Candidate &c = *decision.predicted;
    remark << (c.origin.empty() ? "" : " (" + c.origin + ")") << ": predicted "
           << llvm::formatv("{0:f3}", c.predictedMs) << " " << c.unit << " vs "
           << llvm::formatv("{0:f3}", c.baselineMs) << " " << c.unit
           << " apart ("
           << llvm::formatv("{0:f2}", c.baselineMs / c.predictedMs) << "x); "
           << c.explanation;
  }
  remark << (decision.predicted ? "; measured " : ": measured ")
         << formatMs(decision.fusedMs) << " ms vs " << formatMs(apart)
         << " ms apart (" << llvm::formatv("{0:f2}", apart / decision.fusedMs)
         << "x; apart: " << describeBaselines(decision.baselines)
         << "), outputs bit-identical to the kernels apart";
  for (const MeasuredCandidate &c : decision.measured)
    if (c.description == describePlan(decision.plan) && c.rank > 0)
      remark << "; the model ranked it " << c.rank + 1;
  remark << "; " << counted << "; " << cacheText;
  return success();
}
