//===- FusionConfig.cpp - Horizontal fusion configuration in YAML ---------===//
//
// Reads the fusion configuration with yaml-cpp and checks it against the
// schema before any pass sees it, so that a mistake is reported at the line
// that holds it, with what to write instead, rather than as a refusal deep
// inside the fusion.
//
//===----------------------------------------------------------------------===//

#include "gpuopt/Transforms/HFuse/FusionConfig.h"

#include "YamlSchema.h"

#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/MemoryBuffer.h"

#include <yaml-cpp/yaml.h>

#include <cmath>
#include <limits>

using namespace mlir;
using namespace gpuopt;
using namespace gpuopt::hfuse;

FailureOr<ConfigStrategy> hfuse::parseStrategy(StringRef name) {
  if (name == "auto")
    return ConfigStrategy();
  if (std::optional<FusionStrategy> strategy = symbolizeFusionStrategy(name))
    return ConfigStrategy(*strategy);
  return failure();
}

StringRef hfuse::stringifyStrategy(ConfigStrategy strategy) {
  return strategy ? stringifyFusionStrategy(*strategy) : "auto";
}

std::optional<int64_t> KernelConfig::getBlockThreads() const {
  if (!block)
    return std::nullopt;
  return (*block)[0] * (*block)[1] * (*block)[2];
}

namespace {

constexpr std::array<StringRef, 7> configKeys = {
    "name",  "strategy", "maxnreg", "runtime_shapes",
    "units", "require",  "kernels"};
constexpr std::array<StringRef, 11> kernelKeys = {
    "name",    "module", "block",   "grid",     "dynamic_smem", "resizable",
    "threads", "ratio",  "time_ms", "replicas", "setmaxnreg"};

/// CUDA's limits on block and grid dimensions.
constexpr int64_t maxBlockThreads = 1024;
constexpr std::array<int64_t, 3> maxBlockDims = {1024, 1024, 64};
constexpr std::array<int64_t, 3> maxGridDims = {(int64_t(1) << 31) - 1, 65535,
                                                65535};
/// ptxas raises a smaller `.maxnreg` to 24 and ignores a larger one than 255.
constexpr int64_t minMaxnreg = 24, maxMaxnreg = 255;

/// Checks one YAML document against the schema; every error is emitted at
/// the node that is wrong.
class ConfigParser : public YamlSchemaReader {
public:
  using YamlSchemaReader::YamlSchemaReader;

  FailureOr<FusionConfig> parse(StringRef text);

private:
  LogicalResult parseKernel(const YAML::Node &node, ConfigStrategy strategy,
                            KernelConfig &kernel);
  LogicalResult checkKernel(const KernelConfig &kernel, const YAML::Node &node,
                            ConfigStrategy strategy,
                            const llvm::StringMap<Location> &locs);
  FailureOr<std::array<int64_t, 3>> parseDims(const Field &field,
                                              ArrayRef<int64_t> maxDims);
};

} // namespace

FailureOr<std::array<int64_t, 3>>
ConfigParser::parseDims(const Field &field, ArrayRef<int64_t> maxDims) {
  std::array<int64_t, 3> dims = {1, 1, 1};
  // `16x4` and `64x128x2`, as on the command line (`blocks=16x4`).
  if (isPlainScalar(field.value) &&
      StringRef(field.value.Scalar()).contains('x')) {
    StringRef text = StringRef(field.value.Scalar()).trim();
    auto invalid = [&] {
      emitError(getLoc(field))
          << "'" << field.key
          << "' must be an integer, XxY or XxYxZ (as 16x4), or a list of 1 "
             "to 3 integers, not '"
          << text << "'";
      return failure();
    };
    std::optional<std::array<int64_t, 3>> shape = parseShape(text);
    if (!shape)
      return invalid();
    for (auto [i, dim] : llvm::enumerate(*shape))
      if (dim < 1 || dim > maxDims[i]) {
        emitError(getLoc(field)) << "'" << field.key << "' dimension "
                                 << "xyz"[i] << " must be between 1 and "
                                 << maxDims[i] << ", not " << dim;
        return failure();
      }
    return *shape;
  }
  if (field.value.IsScalar()) {
    FailureOr<int64_t> x = parseInt(field, 1, maxDims[0]);
    if (failed(x))
      return failure();
    dims[0] = *x;
    return dims;
  }
  if (!field.value.IsSequence() || field.value.size() < 1 ||
      field.value.size() > 3)
    return emitError(getLoc(field))
               << "'" << field.key
               << "' must be an integer, XxY or XxYxZ (as 16x4), or a list "
                  "of 1 to 3 integers ([x], [x, y] or [x, y, z]), not "
               << (field.value.IsSequence()
                       ? "a list of " + std::to_string(field.value.size())
                       : describeKind(field.value).str()),
           failure();
  for (auto [i, element] : llvm::enumerate(field.value)) {
    FailureOr<int64_t> dim = parseInt(field, element, 1, maxDims[i]);
    if (failed(dim))
      return failure();
    dims[i] = *dim;
  }
  return dims;
}

LogicalResult ConfigParser::parseKernel(const YAML::Node &node,
                                        ConfigStrategy strategy,
                                        KernelConfig &kernel) {
  if (!node.IsMap())
    return emitError(getLoc(node))
               << "each kernel must be a map such as '- name: my_kernel', "
                  "not "
               << describeKind(node)
               << " (known keys: " << llvm::join(kernelKeys, ", ") << ")",
           failure();
  llvm::StringMap<Location> locs;
  LogicalResult result =
      forEachField(node, kernelKeys, "in a kernel", [&](const Field &field) {
        locs.try_emplace(field.key, getLoc(field));
        StringRef key = field.key;
        if (key == "name" || key == "module") {
          FailureOr<std::string> text = parseString(field);
          if (failed(text))
            return failure();
          (key == "name" ? kernel.name : kernel.module) = std::move(*text);
          return success();
        }
        if (key == "block" || key == "grid") {
          FailureOr<std::array<int64_t, 3>> dims =
              parseDims(field, key == "block" ? ArrayRef(maxBlockDims)
                                              : ArrayRef(maxGridDims));
          if (failed(dims))
            return failure();
          (key == "block" ? kernel.block : kernel.grid) = *dims;
          return success();
        }
        if (key == "resizable") {
          FailureOr<bool> value = parseBool(field);
          if (failed(value))
            return failure();
          kernel.resizable = *value;
          return success();
        }
        if (key == "time_ms") {
          FailureOr<double> value = parsePositiveDouble(field);
          if (failed(value))
            return failure();
          kernel.timeMs = *value;
          return success();
        }
        if (key == "setmaxnreg") {
          FailureOr<int64_t> value = parseInt(field, 0, 256);
          if (failed(value))
            return failure();
          if (*value != 0 && (*value < 24 || *value % 8))
            return emitError(getLoc(field))
                       << "'setmaxnreg' must be 0 (none) or a multiple of 8 "
                          "within 24..256, not "
                       << *value,
                   failure();
          kernel.setmaxnreg = *value;
          return success();
        }
        if (key == "replicas") {
          FailureOr<int64_t> value = parseInt(field, 1, 32);
          if (failed(value))
            return failure();
          kernel.replicas = *value;
          return success();
        }
        FailureOr<int64_t> value =
            key == "dynamic_smem"
                ? parseInt(field, 0, std::numeric_limits<int64_t>::max())
            : key == "threads"
                ? parseInt(field, 1, maxBlockThreads)
                : parseInt(field, 1, std::numeric_limits<int64_t>::max());
        if (failed(value))
          return failure();
        (key == "dynamic_smem" ? kernel.dynamicSmem
         : key == "threads"    ? kernel.threads
                               : kernel.ratio) = *value;
        return success();
      });
  if (failed(result))
    return failure();
  if (auto it = locs.find("threads"); it != locs.end())
    kernel.threadsLoc = it->second;
  return checkKernel(kernel, node, strategy, locs);
}

/// Checks what involves several keys of one kernel.
LogicalResult ConfigParser::checkKernel(const KernelConfig &kernel,
                                        const YAML::Node &node,
                                        ConfigStrategy strategy,
                                        const llvm::StringMap<Location> &locs) {
  if (kernel.name.empty())
    return emitError(getLoc(node))
               << "kernel has no 'name': write its .entry name, as in "
                  "'- name: my_kernel'",
           failure();
  std::optional<int64_t> blockThreads = kernel.getBlockThreads();
  if (blockThreads && *blockThreads > maxBlockThreads)
    return emitError(locs.at("block"))
               << "block of " << *blockThreads << " threads; a block has at "
               << "most " << maxBlockThreads << " threads",
           failure();
  if (kernel.resizable && kernel.block &&
      ((*kernel.block)[1] != 1 || (*kernel.block)[2] != 1))
    return emitError(locs.at("block"))
               << "a resizable kernel takes any 1-D block: write its block "
                  "as one number, or drop 'resizable: true'",
           failure();
  if (kernel.threads) {
    int64_t threads = *kernel.threads;
    Location loc = locs.at("threads");
    if (strategy == FusionStrategy::Interleave ||
        strategy == FusionStrategy::Dynamic ||
        strategy == FusionStrategy::SMAware)
      return emitError(loc)
                 << "'threads' splits a block between kernels; "
                    "it applies to strategy 'thread' or 'auto', "
                    "not '"
                 << stringifyStrategy(strategy) << "' (which uses 'ratio')",
             failure();
    if (threads % 32 != 0)
      return emitError(loc)
                 << "'threads' must be a multiple of 32 (whole warps), not "
                 << threads << ": try " << llvm::alignTo(threads, 32),
             failure();
    // Whether a split other than the block is safe is the kernel
    // analysis's to decide (or the user's, with `resizable: true`).
  }
  for (StringRef key : {"replicas", "setmaxnreg"})
    if (locs.count(key) && (strategy == FusionStrategy::Interleave ||
                            strategy == FusionStrategy::Dynamic ||
                            strategy == FusionStrategy::SMAware))
      return emitError(locs.at(key))
                 << "'" << key
                 << "' applies to the thread split (strategy 'thread' or "
                    "'auto'), where a fused block holds every kernel's "
                    "threads, not to '"
                 << stringifyStrategy(strategy) << "'",
             failure();
  if (kernel.ratio && strategy == FusionStrategy::Thread)
    return emitError(locs.at("ratio"))
               << "'ratio' sets a kernel's share of the blocks; it applies "
                  "to strategy 'interleave', 'dynamic', 'sm_aware' or "
                  "'auto', not "
                  "'thread' (which uses 'threads')",
           failure();
  return success();
}

FailureOr<FusionConfig> ConfigParser::parse(StringRef text) {
  std::vector<YAML::Node> documents;
  try {
    documents = YAML::LoadAll(text.str());
  } catch (const YAML::Exception &e) {
    return emitError(getLoc(e.mark)) << "invalid YAML: " << e.msg, failure();
  }
  std::string keyList = llvm::join(configKeys, ", ");
  if (documents.empty() || documents.front().IsNull())
    return emitError(getLoc(YAML::Mark()))
               << "empty fusion config: write a map with keys " << keyList,
           failure();
  if (documents.size() > 1)
    return emitError(getLoc(documents[1]))
               << "one fusion config per file: remove this second document "
                  "(after '---') or put it in a file of its own",
           failure();
  const YAML::Node &root = documents.front();
  if (!root.IsMap())
    return emitError(getLoc(root))
               << "the fusion config must be a map with keys " << keyList
               << ", not " << describeKind(root),
           failure();

  FusionConfig config(getLoc(root));
  std::optional<Field> kernelsField, unitsField;
  LogicalResult result = forEachField(
      root, configKeys, "in the fusion config",
      [&](const Field &field) -> LogicalResult {
        if (field.key == "name") {
          FailureOr<std::string> name = parseString(field);
          if (failed(name))
            return failure();
          // It becomes the fused `.entry`'s name.
          if (!isPTXIdentifier(*name))
            return emitError(getLoc(field))
                       << "'name' must be a PTX identifier "
                          "(letters, digits, '_' and '$', not "
                          "starting with a digit), not '"
                       << *name << "'",
                   failure();
          config.name = std::move(*name);
        } else if (field.key == "strategy") {
          FailureOr<ConfigStrategy> strategy = failure();
          if (field.value.IsScalar())
            strategy = parseStrategy(field.value.Scalar());
          if (failed(strategy))
            return emitError(getLoc(field))
                       << "unknown strategy"
                       << (field.value.IsScalar()
                               ? " '" + field.value.Scalar() + "'"
                               : std::string())
                       << ": write auto, thread, interleave, "
                          "dynamic or sm_aware",
                   failure();
          config.strategy = *strategy;
        } else if (field.key == "maxnreg") {
          FailureOr<int64_t> maxnreg = parseInt(field, minMaxnreg, maxMaxnreg);
          if (failed(maxnreg))
            return failure();
          config.maxnreg = *maxnreg;
        } else if (field.key == "runtime_shapes") {
          FailureOr<bool> value = parseBool(field);
          if (failed(value))
            return failure();
          config.runtimeShapes = *value;
        } else if (field.key == "require") {
          FailureOr<bool> value = parseBool(field);
          if (failed(value))
            return failure();
          config.require = *value;
        } else if (field.key == "units") {
          FailureOr<int64_t> value =
              parseInt(field, 1, std::numeric_limits<int32_t>::max());
          if (failed(value))
            return failure();
          config.units = *value;
          unitsField = field;
        } else {
          // Kernels are read once the strategy is known.
          kernelsField = field;
        }
        return success();
      });
  if (failed(result))
    return failure();

  if (unitsField && *config.units > 1 && config.strategy &&
      *config.strategy != FusionStrategy::Dynamic &&
      *config.strategy != FusionStrategy::SMAware)
    return emitError(getLoc(*unitsField))
               << "'units' is how many blocks of the kernels a fused block "
                  "takes per ticket; it applies to strategy 'dynamic', "
                  "'sm_aware' or 'auto', not '"
               << stringifyStrategy(config.strategy) << "'",
           failure();
  if (!kernelsField)
    return emitError(config.loc) << "the fusion config has no 'kernels': "
                                    "list the kernels to fuse, at least 2",
           failure();
  const YAML::Node &kernels = kernelsField->value;
  if (!kernels.IsSequence())
    return emitError(getLoc(*kernelsField))
               << "'kernels' must be a list of kernels ('- name: ...'), not "
               << describeKind(kernels),
           failure();
  if (kernels.size() < 2)
    return emitError(getLoc(*kernelsField))
               << "a fusion needs at least 2 kernels, not " << kernels.size()
               << ": list every kernel to fuse under 'kernels'",
           failure();

  for (const YAML::Node &node : kernels) {
    KernelConfig kernel(getLoc(node));
    if (failed(parseKernel(node, config.strategy, kernel)))
      return failure();
    for (const KernelConfig &other : config.kernels) {
      if (other.name != kernel.name || other.module != kernel.module)
        continue;
      InFlightDiagnostic diag = emitError(kernel.loc)
                                << "kernel '" << kernel.name << "'";
      if (!kernel.module.empty())
        diag << " of module '" << kernel.module << "'";
      diag << " is listed twice: list each kernel once, or name their "
              "modules with 'module' when two files have the same entry";
      diag.attachNote(other.loc) << "first listed here";
      return failure();
    }
    config.kernels.push_back(std::move(kernel));
  }

  // A thread split puts every part in one block.
  if (config.strategy == FusionStrategy::Thread) {
    int64_t total = 0;
    bool known = true;
    for (const KernelConfig &kernel : config.kernels) {
      std::optional<int64_t> part = kernel.threads;
      if (!part)
        part = kernel.getBlockThreads();
      // A block shape from `.reqntid` is checked by the pass.
      known = known && part.has_value();
      total += part.value_or(0);
    }
    if (known && total > maxBlockThreads)
      return emitError(getLoc(kernelsField->keyNode))
                 << "the kernels' thread ranges add up to " << total
                 << " threads, more than a block's " << maxBlockThreads
                 << ": give resizable kernels fewer 'threads', or use "
                    "strategy 'interleave'",
             failure();
  }
  return config;
}

FailureOr<FusionConfig> hfuse::parseFusionConfig(llvm::SourceMgr &sourceMgr,
                                                 MLIRContext *ctx) {
  const llvm::MemoryBuffer *buffer =
      sourceMgr.getMemoryBuffer(sourceMgr.getMainFileID());
  return ConfigParser(ctx, buffer->getBufferIdentifier())
      .parse(buffer->getBuffer());
}

FailureOr<FusionConfig> hfuse::readFusionConfig(StringRef path,
                                                MLIRContext *ctx) {
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> buffer =
      llvm::MemoryBuffer::getFile(path, /*IsText=*/true);
  if (!buffer)
    return emitError(UnknownLoc::get(ctx))
               << "cannot read fusion config '" << path
               << "': " << buffer.getError().message(),
           failure();
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(std::move(*buffer), llvm::SMLoc());
  return parseFusionConfig(sourceMgr, ctx);
}

std::optional<std::array<int64_t, 3>> hfuse::parseShape(StringRef text) {
  std::array<int64_t, 3> dims = {1, 1, 1};
  SmallVector<StringRef, 3> fields;
  text.trim().split(fields, 'x');
  if (fields.empty() || fields.size() > 3)
    return std::nullopt;
  for (auto [i, field] : llvm::enumerate(fields))
    if (field.trim().getAsInteger(10, dims[i]))
      return std::nullopt;
  return dims;
}
