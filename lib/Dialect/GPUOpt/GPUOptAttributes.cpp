//===- GPUOptAttributes.cpp - The gpuopt attributes and their checks ------===//
//
// The list syntax the attributes share, and each attribute's verifier: what
// the passes that read a decision rely on (shapes of three positive
// dimensions, ratios of at least 1, non-negative sizes and offsets).
//
//===----------------------------------------------------------------------===//

#include "gpuopt/Dialect/GPUOpt/GPUOptDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace gpuopt;

#include "gpuopt/Dialect/GPUOpt/GPUOptEnums.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "gpuopt/Dialect/GPUOpt/GPUOptAttributes.cpp.inc"

void GPUOptDialect::registerAttributes() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "gpuopt/Dialect/GPUOpt/GPUOptAttributes.cpp.inc"
      >();
}

FailureOr<SmallVector<int64_t>> gpuopt::detail::parseIntList(AsmParser &p) {
  SmallVector<int64_t> values;
  if (p.parseCommaSeparatedList(AsmParser::Delimiter::Square, [&] {
        return p.parseInteger(values.emplace_back());
      }))
    return failure();
  return values;
}

void gpuopt::detail::printIntList(AsmPrinter &p, ArrayRef<int64_t> values) {
  p << '[';
  llvm::interleaveComma(values, p);
  p << ']';
}

FailureOr<SmallVector<StringAttr>>
gpuopt::detail::parseStringList(AsmParser &p) {
  SmallVector<StringAttr> values;
  if (p.parseCommaSeparatedList(AsmParser::Delimiter::Square, [&] {
        std::string value;
        if (p.parseString(&value))
          return failure();
        values.push_back(p.getBuilder().getStringAttr(value));
        return success();
      }))
    return failure();
  return values;
}

void gpuopt::detail::printStringList(AsmPrinter &p,
                                     ArrayRef<StringAttr> values) {
  p << '[';
  llvm::interleaveComma(values, p, [&](StringAttr value) { p << value; });
  p << ']';
}

FailureOr<bool> gpuopt::detail::parseBool(AsmParser &p) {
  if (succeeded(p.parseOptionalKeyword("true")))
    return true;
  if (succeeded(p.parseOptionalKeyword("false")))
    return false;
  return p.emitError(p.getCurrentLocation(), "expected true or false");
}

using EmitErrorFn = function_ref<InFlightDiagnostic()>;

static LogicalResult checkNotEmpty(EmitErrorFn emitError, StringRef what,
                                   StringRef value) {
  if (value.empty())
    return emitError() << what << " must not be empty";
  return success();
}

static LogicalResult checkAtLeast(EmitErrorFn emitError, StringRef what,
                                  int64_t value, int64_t least) {
  if (value < least)
    return emitError() << what << " must be at least " << least << ", got "
                       << value;
  return success();
}

/// A block shape or grid: three positive dimensions.
static LogicalResult checkDims(EmitErrorFn emitError, StringRef what,
                               ArrayRef<int64_t> dims) {
  if (dims.size() != 3 || llvm::any_of(dims, [](int64_t d) { return d < 1; }))
    return emitError() << what << " must be 3 positive dimensions, got ["
                       << dims << "]";
  return success();
}

/// A part's copies per fused block, and its `setmaxnreg` budget: 0 (none),
/// or what the instruction takes (a multiple of 8 in 24..256).
static LogicalResult checkPartResources(EmitErrorFn emitError, int64_t replicas,
                                        int64_t setmaxnreg) {
  if (failed(checkAtLeast(emitError, "'replicas'", replicas, 1)))
    return failure();
  if (setmaxnreg != 0 &&
      (setmaxnreg < 24 || setmaxnreg > 256 || setmaxnreg % 8))
    return emitError() << "'setmaxnreg' must be 0 (none) or a multiple of 8 "
                          "within 24..256, got "
                       << setmaxnreg;
  return success();
}

LogicalResult HFusePartAttr::verify(EmitErrorFn emitError, StringRef kernel,
                                    StringRef module, ArrayRef<int64_t> block,
                                    ArrayRef<int64_t> grid, int64_t ratio,
                                    std::optional<int64_t> dynamicSmem,
                                    int64_t replicas, int64_t setmaxnreg) {
  // An empty grid is unknown: the plan's runtime_shapes takes it at launch.
  if (failed(checkNotEmpty(emitError, "'kernel'", kernel)) ||
      failed(checkDims(emitError, "'block'", block)) ||
      (!grid.empty() && failed(checkDims(emitError, "'grid'", grid))) ||
      failed(checkAtLeast(emitError, "'ratio'", ratio, 1)))
    return failure();
  if (dynamicSmem &&
      failed(checkAtLeast(emitError, "'dynamic_smem'", *dynamicSmem, 0)))
    return failure();
  return checkPartResources(emitError, replicas, setmaxnreg);
}

LogicalResult HFusePlanAttr::verify(EmitErrorFn emitError, StringRef name,
                                    FusionStrategy strategy, int64_t maxnreg,
                                    ArrayRef<HFusePartAttr> parts,
                                    bool runtimeShapes, int64_t units) {
  if (failed(checkNotEmpty(emitError, "'name'", name)))
    return failure();
  if (parts.size() < 2)
    return emitError() << "a fusion plan needs at least two parts, got "
                       << parts.size();
  if (!runtimeShapes)
    for (HFusePartAttr part : parts)
      if (part.getGrid().empty())
        return emitError() << "part '" << part.getKernel()
                           << "' has no grid; only a plan with "
                              "'runtime_shapes = true' takes grids at launch";
  // ptxas's range for .maxnreg.
  if (maxnreg != 0 && (maxnreg < 16 || maxnreg > 255))
    return emitError() << "'maxnreg' must be 0 (no cap) or within 16..255, got "
                       << maxnreg;
  if (failed(checkAtLeast(emitError, "'units'", units, 1)))
    return failure();
  // Only a block that takes its work from a counter can take several units.
  if (units > 1 && strategy != FusionStrategy::Dynamic &&
      strategy != FusionStrategy::SMAware)
    return emitError() << "'units' = " << units
                       << " needs strategy dynamic or sm_aware, not "
                       << stringifyFusionStrategy(strategy);
  return success();
}

LogicalResult FusionPartAttr::verify(
    EmitErrorFn emitError, StringRef kernel, StringRef module,
    ArrayRef<int64_t> threads, ArrayRef<int64_t> block, ArrayRef<int64_t> grid,
    int64_t dynamicSmemOffset, int64_t dynamicSmem, ArrayRef<int64_t> argMap,
    std::optional<int64_t> ratio, int64_t replicas, int64_t setmaxnreg) {
  if (failed(checkNotEmpty(emitError, "'kernel'", kernel)) ||
      failed(checkNotEmpty(emitError, "'module'", module)))
    return failure();
  if (threads.size() != 2 || threads[0] < 0 || threads[1] <= threads[0])
    return emitError() << "'threads' must be a range [first, end) of the "
                          "fused block's threads, got ["
                       << threads << "]";
  // An empty grid: none known, given at launch (runtime shapes).
  if (failed(checkDims(emitError, "'block'", block)) ||
      (!grid.empty() && failed(checkDims(emitError, "'grid'", grid))) ||
      failed(checkAtLeast(emitError, "'dynamic_smem_offset'", dynamicSmemOffset,
                          0)) ||
      failed(checkAtLeast(emitError, "'dynamic_smem'", dynamicSmem, 0)))
    return failure();
  for (int64_t arg : argMap)
    if (arg < 0)
      return emitError() << "'arg_map' holds parameter indices, got " << arg;
  if (ratio && failed(checkAtLeast(emitError, "'ratio'", *ratio, 1)))
    return failure();
  return checkPartResources(emitError, replicas, setmaxnreg);
}

LogicalResult FusionInfoAttr::verify(EmitErrorFn emitError,
                                     FusionStrategy strategy,
                                     ArrayRef<int64_t> grid,
                                     int64_t dynamicSmem,
                                     ArrayRef<FusionPartAttr> parts,
                                     ArrayRef<int64_t> shapeParams) {
  // Without shape parameters the grids are fixed; with them, defaults.
  bool runtimeShapes = !shapeParams.empty();
  if ((!runtimeShapes || !grid.empty()) &&
      failed(checkDims(emitError, "'grid'", grid)))
    return failure();
  if (failed(checkAtLeast(emitError, "'dynamic_smem'", dynamicSmem, 0)))
    return failure();
  if (parts.empty())
    return emitError() << "a fused kernel needs at least one part";
  if (runtimeShapes) {
    if (shapeParams.size() != 4 * parts.size())
      return emitError() << "'shape_params' has " << shapeParams.size()
                         << " entries; expected 4 per part (grid x, y, z "
                            "and dynamic shared memory), "
                         << 4 * parts.size();
    for (auto [i, param] : llvm::enumerate(shapeParams))
      if (param < (i % 4 == 3 ? -1 : 0))
        return emitError() << "'shape_params' entry " << i << " is " << param
                           << "; expected a parameter index"
                           << (i % 4 == 3 ? " or -1 (fixed)" : "");
  } else {
    for (FusionPartAttr part : parts)
      if (part.getGrid().empty())
        return emitError() << "part '" << part.getKernel()
                           << "' has no grid; only a fused kernel with "
                              "'shape_params' takes grids at launch";
  }
  return success();
}

LogicalResult ProbeFieldAttr::verify(EmitErrorFn emitError, StringRef name,
                                     StringRef type, int64_t offset) {
  if (failed(checkNotEmpty(emitError, "'name'", name)) ||
      failed(checkNotEmpty(emitError, "'type'", type)) ||
      failed(checkAtLeast(emitError, "'offset'", offset, 0)))
    return failure();
  return success();
}

LogicalResult ProbeMapAttr::verify(EmitErrorFn emitError, StringRef name,
                                   StringRef probe, int64_t param,
                                   ProbeLevel level, int64_t capacity,
                                   int64_t recordBytes,
                                   ArrayRef<ProbeFieldAttr> fields,
                                   std::optional<int64_t> capacityParam,
                                   std::optional<int64_t> blockOffset) {
  if (failed(checkNotEmpty(emitError, "'name'", name)) ||
      failed(checkNotEmpty(emitError, "'probe'", probe)) ||
      failed(checkAtLeast(emitError, "'param'", param, 0)) ||
      failed(checkAtLeast(emitError, "'record_bytes'", recordBytes, 1)))
    return failure();
  // A dynamic capacity is the runtime's: the map's own is 0.
  if (capacityParam) {
    if (failed(checkAtLeast(emitError, "'capacity_param'", *capacityParam, 0)))
      return failure();
    if (capacity != 0)
      return emitError() << "a map with a 'capacity_param' has capacity 0 (the "
                            "runtime chooses it), got "
                         << capacity;
  } else if (failed(checkAtLeast(emitError, "'capacity'", capacity, 1))) {
    return failure();
  }
  // A buffer in the last parameter is sized per block before the launch:
  // its capacity cannot wait for the runtime's.
  if (blockOffset) {
    if (failed(checkAtLeast(emitError, "'block_offset'", *blockOffset, 0)))
      return failure();
    if (capacityParam)
      return emitError() << "a map with a 'block_offset' (its buffer in the "
                            "kernel's last parameter) cannot have a "
                            "'capacity_param'";
  }
  if (fields.empty())
    return emitError() << "a record needs at least one field";
  for (ProbeFieldAttr field : fields)
    if (field.getOffset() >= recordBytes)
      return emitError() << "field '" << field.getName() << "' at offset "
                         << field.getOffset() << " is outside the record of "
                         << recordBytes << " bytes";
  return success();
}

LogicalResult ProbeScratchAttr::verify(EmitErrorFn emitError, int64_t param,
                                       int64_t bytesPerBlock, int64_t align) {
  if (failed(checkAtLeast(emitError, "'param'", param, 0)) ||
      failed(checkAtLeast(emitError, "'bytes_per_block'", bytesPerBlock, 1)))
    return failure();
  if (align < 1 || !llvm::isPowerOf2_64(align))
    return emitError() << "'align' must be a power of two, got " << align;
  if (bytesPerBlock % align)
    return emitError() << "'bytes_per_block' (" << bytesPerBlock
                       << ") must be a multiple of 'align' (" << align
                       << "), so that every block's buffers stay aligned";
  return success();
}

LogicalResult ProbeOccupancyAttr::verify(EmitErrorFn emitError,
                                         int64_t blockThreads, int64_t before,
                                         int64_t after, int64_t registersBefore,
                                         int64_t registersAfter,
                                         int64_t capSpillBytes) {
  if (blockThreads < 1 || blockThreads > 1024)
    return emitError() << "'block_threads' must be within 1..1024, got "
                       << blockThreads;
  if (failed(checkAtLeast(emitError, "'after'", after, 0)))
    return failure();
  if (before <= after)
    return emitError() << "'before' must be more blocks per SM than 'after' ("
                       << after << "), got " << before;
  if (failed(
          checkAtLeast(emitError, "'registers_before'", registersBefore, 0)) ||
      failed(checkAtLeast(emitError, "'registers_after'", registersAfter, 0)) ||
      failed(checkAtLeast(emitError, "'cap_spill_bytes'", capSpillBytes, 0)))
    return failure();
  return success();
}

LogicalResult PtxasResourcesAttr::verify(EmitErrorFn emitError,
                                         int64_t registers, int64_t sharedBytes,
                                         int64_t localBytes,
                                         int64_t spillStores,
                                         int64_t spillLoads) {
  if (failed(checkAtLeast(emitError, "'registers'", registers, 0)) ||
      failed(checkAtLeast(emitError, "'shared_bytes'", sharedBytes, 0)) ||
      failed(checkAtLeast(emitError, "'local_bytes'", localBytes, 0)) ||
      failed(checkAtLeast(emitError, "'spill_stores'", spillStores, 0)) ||
      failed(checkAtLeast(emitError, "'spill_loads'", spillLoads, 0)))
    return failure();
  return success();
}

LogicalResult ProbePlanAttr::verify(EmitErrorFn emitError,
                                    ArrayRef<StringAttr> specs, bool carryLocal,
                                    bool inlineExits, int64_t params,
                                    StringRef exitFunction, StringRef prefix,
                                    bool lastParam,
                                    PtxasResourcesAttr ptxasBefore) {
  if (specs.empty())
    return emitError() << "a probe plan needs at least one probe spec";
  for (StringAttr spec : specs)
    if (failed(checkNotEmpty(emitError, "a probe spec", spec.getValue())))
      return failure();
  // The probes' names are `PREFIXstem`, `%PREFIXstem` and `$PREFIXstem`:
  // the prefix starts a PTX identifier.
  auto isIdentifierChar = [](char c) {
    return llvm::isAlnum(c) || c == '_' || c == '$';
  };
  if (prefix.empty() ||
      !(llvm::isAlpha(prefix.front()) || prefix.front() == '_') ||
      !llvm::all_of(prefix, isIdentifierChar))
    return emitError() << "'prefix' must start a PTX identifier (a letter or "
                          "'_', then letters, digits, '_' or '$'), got '"
                       << prefix << "'";
  return checkAtLeast(emitError, "'params'", params, 0);
}

LogicalResult GPUKernelAttr::verify(EmitErrorFn emitError, StringRef module,
                                    StringRef func, ArrayRef<int64_t> paramArgs,
                                    ArrayRef<int64_t> paramFields,
                                    ArrayRef<int64_t> block,
                                    ArrayRef<int64_t> grid) {
  if (failed(checkNotEmpty(emitError, "'module'", module)) ||
      failed(checkNotEmpty(emitError, "'func'", func)))
    return failure();
  if (paramArgs.size() != paramFields.size())
    return emitError() << "'param_args' and 'param_fields' must have one "
                          "element per parameter, got "
                       << paramArgs.size() << " and " << paramFields.size();
  for (auto [arg, field] : llvm::zip(paramArgs, paramFields))
    if (arg < 0 || field < 0)
      return emitError() << "'param_args' and 'param_fields' hold indices, "
                            "got "
                         << arg << " and " << field;
  // Arguments come in order, each once: a memref's fields are adjacent.
  for (size_t i = 1; i < paramArgs.size(); ++i)
    if (paramArgs[i] != paramArgs[i - 1] &&
        paramArgs[i] != paramArgs[i - 1] + 1)
      return emitError() << "'param_args' must list the arguments in order, "
                            "got "
                         << paramArgs[i - 1] << " then " << paramArgs[i];
  if (!block.empty() && failed(checkDims(emitError, "'block'", block)))
    return failure();
  if (!grid.empty() && failed(checkDims(emitError, "'grid'", grid)))
    return failure();
  return success();
}
