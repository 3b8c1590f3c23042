//===- PTXToGPUBinary.cpp - Captured kernels back to gpu.binary -----------===//
//
// `--ptx-to-gpu-binary` closes the loop that `--gpu-to-ptx` opens: host code
// launches the kernels of a `gpu.module @B`, which the capture replaced by a
// `gpu.binary @B` and a `ptx.module @B_ptx` that gpu-opt then fused
// (`--hfuse`) and rewrote. This pass gives the host code binaries of what the
// ptx.modules now hold, and replaces the launches of the kernels a fused
// kernel was made of by one launch of the fused kernel, so that MLIR's
// `--gpu-to-llvm` lowers the result as it would have lowered the original.
//
// Merging launches is only sound when the fused kernel runs exactly what
// the launches ran: each part launched once, with the shapes it was fused
// for, its operands becoming the parameters its arg_map names, and nothing
// in between that could observe that the kernels now run together. What
// cannot be checked is refused, with what to change.
//
//===----------------------------------------------------------------------===//

#include "GPUObject.h"
#include "gpuopt/Conversion/Passes.h"
#include "gpuopt/Dialect/GPUOpt/GPUOptAttributes.h"
#include "gpuopt/Dialect/GPUOpt/GPUOptDialect.h"
#include "gpuopt/Target/PTX/ExportPTX.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/ADT/StringSet.h"

namespace gpuopt {
#define GEN_PASS_DEF_PTXTOGPUBINARY
#include "gpuopt/Conversion/Passes.h.inc"
} // namespace gpuopt

using namespace mlir;
using namespace gpuopt;

/// The fix for a launch of a probed kernel, which host code cannot make.
static constexpr llvm::StringLiteral kProbedFix =
    "; the probe buffers are parameters that the host code does not pass: "
    "write the PTX or a cubin with its launch manifest (--manifest) and run "
    "it with gpu-run instead";

namespace {

/// The launches of the kernels one fused entry was made of, by part.
struct FusedLaunches {
  ptx::EntryOp entry;
  FusionInfoAttr info;
  SmallVector<SmallVector<gpu::LaunchFuncOp, 1>> parts;
};

struct PTXToGPUBinaryPass
    : public gpuopt::impl::PTXToGPUBinaryBase<PTXToGPUBinaryPass> {
  using Base::Base;

  void runOnOperation() override;

private:
  /// The `#gpu.object` of `module`: its PTX, or ptxas's cubin of it.
  FailureOr<gpu::ObjectAttr> buildObject(ptx::PTXModuleOp module);
  /// Checks that the part launches of `fused` can become one launch.
  LogicalResult checkFusedLaunches(FusedLaunches &fused);
  /// Replaces the part launches of `fused` by one launch of the fused entry,
  /// in the gpu.binary named `binaryName`.
  void launchFused(FusedLaunches &fused, StringAttr binaryName);
};

} // namespace

/// `[x, y, z]` of `dims`, missing trailing dimensions being 1.
static std::array<int64_t, 3> getDim3(ArrayRef<int64_t> dims) {
  std::array<int64_t, 3> dim3 = {1, 1, 1};
  for (auto [index, dim] : llvm::enumerate(dims.take_front(3)))
    dim3[index] = dim;
  return dim3;
}

static std::optional<int64_t> getConstant(Value value) {
  APInt constant;
  if (value && matchPattern(value, m_ConstantInt(&constant)))
    return constant.getSExtValue();
  return std::nullopt;
}

/// The constant values of `dims` (nullopt where not a constant).
static std::array<std::optional<int64_t>, 3>
getConstants(gpu::KernelDim3 dims) {
  return {getConstant(dims.x), getConstant(dims.y), getConstant(dims.z)};
}

static std::string formatDims(ArrayRef<std::optional<int64_t>> dims) {
  std::string text = "(";
  llvm::raw_string_ostream os(text);
  llvm::interleaveComma(dims, os, [&](std::optional<int64_t> dim) {
    if (dim)
      os << *dim;
    else
      os << "?";
  });
  os << ")";
  return text;
}

static std::string formatDims(ArrayRef<int64_t> dims) {
  SmallVector<std::optional<int64_t>, 3> optional(dims.begin(), dims.end());
  return formatDims(optional);
}

/// The PTX parameters that MLIR's (not bare-pointer) calling convention
/// makes of `operands`; nullopt for an unranked memref.
static std::optional<int64_t> countParams(ValueRange operands) {
  int64_t params = 0;
  for (Type type : operands.getTypes()) {
    if (auto memref = dyn_cast<MemRefType>(type))
      params += 3 + 2 * memref.getRank();
    else if (isa<UnrankedMemRefType>(type))
      return std::nullopt;
    else
      params += 1;
  }
  return params;
}

FailureOr<gpu::ObjectAttr>
PTXToGPUBinaryPass::buildObject(ptx::PTXModuleOp module) {
  MLIRContext *context = &getContext();
  std::string text;
  llvm::raw_string_ostream os(text);
  if (failed(exportPTX(module, os)))
    return failure();

  std::string targetChip = module.getChip().str();
  auto kind = gpu::CompilationTarget::Assembly;
  if (format == "bin") {
    PtxasOptions options;
    options.ptxasPath = ptxas;
    options.chip = chip;
    FailureOr<std::string> cubin = assembleWithPtxas(module, text, options);
    if (failed(cubin))
      return failure();
    text = std::move(*cubin);
    kind = gpu::CompilationTarget::Binary;
    if (!chip.empty())
      targetChip = chip;
  }
  if (targetChip.empty())
    return module.emitError("ptx.module '")
           << module.getSymName()
           << "' has no .target, which its gpu.binary's #nvvm.target needs; "
              "give it one, or pass chip= with format=bin";

  // `.version 8.0` is the PTX ISA of feature `+ptx80`.
  std::string features;
  if (StringRef version = module.getVersion(); !version.empty()) {
    features = "+ptx";
    llvm::copy_if(version, std::back_inserter(features),
                  [](char c) { return c != '.'; });
  }
  auto target = NVVM::NVVMTargetAttr::get(
      context, /*optLevel=*/3, "nvptx64-nvidia-cuda", targetChip, features);
  return getGPUObject(target, kind, text);
}

LogicalResult PTXToGPUBinaryPass::checkFusedLaunches(FusedLaunches &fused) {
  StringRef fusedName = fused.entry.getSymName();
  ArrayRef<FusionPartAttr> parts = fused.info.getParts();
  // Some launch of a part, to report on.
  gpu::LaunchFuncOp anyLaunch;
  for (SmallVector<gpu::LaunchFuncOp, 1> &launches : fused.parts) {
    if (!launches.empty()) {
      anyLaunch = launches.front();
      break;
    }
  }

  if (isProbed(fused.entry))
    return anyLaunch.emitError("cannot launch kernel '")
           << anyLaunch.getKernelName().getValue() << "' as part of '"
           << fusedName << "': '" << fusedName << "' is probed" << kProbedFix;

  // One launch per part, all in one block.
  for (auto [part, launches] : llvm::zip_equal(parts, fused.parts)) {
    if (launches.empty())
      return anyLaunch.emitError("cannot launch kernel '")
             << anyLaunch.getKernelName().getValue() << "' as part of '"
             << fusedName << "': its part '" << part.getKernel() << "' (of '"
             << part.getModule()
             << "') is not launched here, and the fused kernel runs every "
                "part; "
                "launch every kernel it was fused from, or fuse only "
                "kernels that are launched together (--hfuse kernels=)";
    if (launches.size() > 1) {
      InFlightDiagnostic diag =
          launches[1].emitError("kernel '")
          << part.getKernel() << "' is launched more than once, but it is "
          << "fused into '" << fusedName
          << "', which runs it once; fuse kernels that are each launched "
             "once, or leave it unfused";
      diag.attachNote(launches[0].getLoc()) << "first launch here";
      return diag;
    }
    if (launches[0]->getBlock() != anyLaunch->getBlock()) {
      InFlightDiagnostic diag =
          launches[0].emitError("cannot launch kernel '")
          << part.getKernel() << "' as part of '" << fusedName
          << "': the launches of its parts are in different blocks; launch "
             "them next to each other";
      diag.attachNote(anyLaunch.getLoc()) << "another part launched here";
      return diag;
    }
  }

  // Each launch as the part was fused for.
  SmallVector<gpu::LaunchFuncOp> launches;
  SmallVector<int64_t> argMaps;
  for (auto [part, partLaunches] : llvm::zip_equal(parts, fused.parts)) {
    gpu::LaunchFuncOp launch = partLaunches.front();
    launches.push_back(launch);
    llvm::append_range(argMaps, part.getArgMap());
    auto refuse = [&, part = part]() {
      return launch.emitError("cannot launch kernel '")
             << part.getKernel() << "' as part of '" << fusedName << "': ";
    };
    if (launch.getAsyncToken() || !launch.getAsyncDependencies().empty())
      return refuse() << "the launch is asynchronous; the fused kernel is "
                         "launched synchronously at the place of the last "
                         "part launch, so launch its parts without async "
                         "tokens";
    if (launch.hasClusterSize())
      return refuse() << "the launch has a cluster size, which fusion does "
                         "not keep; launch it without clusters";

    std::array<std::optional<int64_t>, 3> grid =
        getConstants(launch.getGridSizeOperandValues());
    std::array<std::optional<int64_t>, 3> block =
        getConstants(launch.getBlockSizeOperandValues());
    std::optional<int64_t> smem = int64_t(0);
    if (Value size = launch.getDynamicSharedMemorySize())
      smem = getConstant(size);
    std::array<int64_t, 3> partGrid = getDim3(part.getGrid());
    std::array<int64_t, 3> partBlock = getDim3(part.getBlock());
    auto equals = [](ArrayRef<std::optional<int64_t>> values,
                     ArrayRef<int64_t> expected) {
      return llvm::all_of(llvm::zip_equal(values, expected), [](auto pair) {
        return std::get<0>(pair) == std::get<1>(pair);
      });
    };
    if (!equals(grid, partGrid) || !equals(block, partBlock) ||
        smem != part.getDynamicSmem()) {
      return refuse()
             << "it is launched with grid " << formatDims(grid) << ", block "
             << formatDims(block) << " and dynamic shared memory "
             << (smem ? std::to_string(*smem) : "?")
             << ", but was fused for grid " << formatDims(partGrid)
             << ", block " << formatDims(partBlock)
             << " and dynamic shared memory " << part.getDynamicSmem()
             << " ('?': not a constant); launch it with those constants, or "
                "fuse it for this launch: the gpu.func's known_grid_size and "
                "known_block_size, or --hfuse's grids= and blocks=";
    }

    std::optional<int64_t> params = countParams(launch.getKernelOperands());
    if (!params)
      return refuse() << "an operand is an unranked memref, whose PTX "
                         "parameters are unknown; pass a ranked memref";
    if (*params != int64_t(part.getArgMap().size()))
      return refuse() << "its operands make " << *params
                      << " PTX parameters (a memref of rank r makes 3 + 2r), "
                         "but the part takes "
                      << part.getArgMap().size()
                      << "; launch it with the arguments of its gpu.func";
  }

  // The parts run at the same time: a buffer two of them take may be
  // written by one and read by the other, which running them apart ordered.
  // Which parameters a kernel writes is not known here, so any shared memref
  // is refused.
  llvm::DenseMap<Value, size_t> bufferPart;
  for (auto [index, launch] : llvm::enumerate(launches)) {
    for (Value operand : launch.getKernelOperands()) {
      if (!isa<BaseMemRefType>(operand.getType()))
        continue;
      auto [it, inserted] = bufferPart.try_emplace(operand, index);
      if (inserted || it->second == index)
        continue;
      InFlightDiagnostic diag =
          launch.emitError("cannot launch '")
          << fusedName << "' in place of the launches of its parts: parts '"
          << parts[it->second].getKernel() << "' and '"
          << parts[index].getKernel()
          << "' both take the same buffer, and fused they run at the same "
             "time, so one may read what the other writes; fuse only kernels "
             "whose launches take distinct buffers";
      diag.attachNote(launches[it->second].getLoc())
          << "part '" << parts[it->second].getKernel() << "' launched here";
      return diag;
    }
  }

  // The operands, concatenated in part order, are the fused parameters.
  size_t numParams = fused.entry.getParams().size();
  if (argMaps.size() != numParams ||
      llvm::any_of(llvm::enumerate(argMaps), [](auto indexed) {
        return int64_t(indexed.index()) != indexed.value();
      }))
    return anyLaunch.emitError("cannot launch kernel '")
           << anyLaunch.getKernelName().getValue() << "' as part of '"
           << fusedName << "': its parts' arg_maps are not its " << numParams
           << " parameters in order, so the parts' operands in order "
              "cannot be its arguments; fuse with --hfuse, which keeps "
              "each part's parameters in order";

  // Nothing in between may see that the kernels now run together.
  llvm::sort(launches, [](gpu::LaunchFuncOp a, gpu::LaunchFuncOp b) {
    return a->isBeforeInBlock(b);
  });
  SmallPtrSet<Operation *, 4> partLaunches;
  for (gpu::LaunchFuncOp launch : launches)
    partLaunches.insert(launch);
  for (Operation *op = launches.front()->getNextNode();
       op != launches.back().getOperation(); op = op->getNextNode()) {
    if (partLaunches.contains(op))
      continue;
    std::optional<SmallVector<MemoryEffects::EffectInstance>> effects =
        getEffectsRecursively(op);
    if (effects && llvm::all_of(*effects, [](const auto &effect) {
          return isa<MemoryEffects::Allocate>(effect.getEffect());
        }))
      continue;
    InFlightDiagnostic diag =
        op->emitError("cannot launch '")
        << fusedName << "' in place of the launches of its parts: this op "
        << (effects ? "accesses" : "may access")
        << " memory between them, so it may read what the first kernel "
           "wrote or write what the last one reads; move it before the "
           "first or after the last launch";
    diag.attachNote(launches.front().getLoc()) << "first part launch here";
    diag.attachNote(launches.back().getLoc()) << "last part launch here";
    return diag;
  }

  if (!fused.entry.getReqntid())
    return anyLaunch.emitError("cannot launch '")
           << fusedName
           << "': the fused kernel has no .reqntid, so its block is "
              "unknown; fuse with --hfuse, which sets it";
  return success();
}

void PTXToGPUBinaryPass::launchFused(FusedLaunches &fused,
                                     StringAttr binaryName) {
  MLIRContext *context = &getContext();
  SmallVector<gpu::LaunchFuncOp> launches;
  SmallVector<Value> operands;
  SmallVector<Location> locs;
  for (SmallVector<gpu::LaunchFuncOp, 1> &partLaunches : fused.parts) {
    gpu::LaunchFuncOp launch = partLaunches.front();
    launches.push_back(launch);
    llvm::append_range(operands, launch.getKernelOperands());
    locs.push_back(launch.getLoc());
  }
  gpu::LaunchFuncOp last = *llvm::max_element(
      launches, [](gpu::LaunchFuncOp a, gpu::LaunchFuncOp b) {
        return a->isBeforeInBlock(b);
      });

  OpBuilder builder(last);
  Location loc = FusedLoc::get(context, locs);
  DenseMap<int64_t, Value> indices;
  auto constants = [&](ArrayRef<int64_t> dims) {
    auto index = [&](int64_t value) {
      Value &constant = indices[value];
      if (!constant)
        constant = arith::ConstantIndexOp::create(builder, loc, value);
      return constant;
    };
    std::array<int64_t, 3> dim3 = getDim3(dims);
    return gpu::KernelDim3{index(dim3[0]), index(dim3[1]), index(dim3[2])};
  };
  gpu::KernelDim3 grid = constants(fused.info.getGrid());
  SmallVector<int64_t, 3> reqntid(*fused.entry.getReqntid());
  gpu::KernelDim3 block = constants(reqntid);
  Value smem;
  if (int64_t size = fused.info.getDynamicSmem())
    smem =
        arith::ConstantIntOp::create(builder, loc, builder.getI32Type(), size);
  auto kernel = SymbolRefAttr::get(
      binaryName, {FlatSymbolRefAttr::get(fused.entry.getSymNameAttr())});
  gpu::LaunchFuncOp::create(builder, loc, kernel, grid, block, smem, operands);
  for (gpu::LaunchFuncOp launch : launches)
    launch.erase();
  ++numFusedLaunches;
}

void PTXToGPUBinaryPass::runOnOperation() {
  ModuleOp root = getOperation();
  MLIRContext *context = &getContext();
  if (format != "assembly" && format != "bin") {
    emitError(UnknownLoc::get(context),
              "--ptx-to-gpu-binary option 'format': expected assembly or "
              "bin, got '")
        << format << "'";
    return signalPassFailure();
  }
  if (!chip.empty() && format != "bin") {
    emitError(UnknownLoc::get(context),
              "--ptx-to-gpu-binary option 'chip' applies to format=bin "
              "only: PTX is compiled for the GPU it is loaded on");
    return signalPassFailure();
  }

  // The fused kernel and part that each captured kernel became.
  DenseMap<std::pair<StringRef, StringRef>, std::pair<ptx::EntryOp, unsigned>>
      partOf;
  llvm::StringSet<> capturedModules;
  bool ambiguous = false;
  root.walk([&](ptx::EntryOp entry) {
    FusionInfoAttr info = getFusionInfo(entry);
    if (!info)
      return WalkResult::advance();
    for (auto [index, part] : llvm::enumerate(info.getParts())) {
      capturedModules.insert(part.getModule());
      auto [it, inserted] = partOf.try_emplace(
          {part.getModule(), part.getKernel()}, entry, unsigned(index));
      if (!inserted) {
        entry.emitError("kernel '")
            << part.getKernel() << "' of '" << part.getModule()
            << "' is a part of both '" << it->second.first.getSymName()
            << "' and '" << entry.getSymName()
            << "', so its launches cannot be told apart; fuse it once";
        ambiguous = true;
        return WalkResult::interrupt();
      }
    }
    return WalkResult::advance();
  });
  if (ambiguous)
    return signalPassFailure();
  for (auto module : root.getOps<ptx::PTXModuleOp>())
    capturedModules.insert(module.getSymName());

  // Sort the launches of captured kernels: unfused ones keep their binary,
  // fused ones are grouped by fused kernel.
  SmallVector<gpu::LaunchFuncOp> launches;
  root.walk([&](gpu::LaunchFuncOp launch) { launches.push_back(launch); });
  // Captured ptx.modules with launched kernels, and their binaries.
  llvm::MapVector<Operation *, gpu::BinaryOp> regenerated;
  llvm::SetVector<Operation *> binaries;
  llvm::MapVector<Operation *, FusedLaunches> fusedLaunches;
  for (gpu::LaunchFuncOp launch : launches) {
    StringRef binaryName = launch.getKernelModuleName().getValue();
    StringRef kernelName = launch.getKernelName().getValue();
    auto binary = dyn_cast_or_null<gpu::BinaryOp>(
        SymbolTable::lookupSymbolIn(root, launch.getKernelModuleName()));
    std::string capturedName = getCapturedModuleName(binaryName);
    if (!binary || !capturedModules.contains(capturedName))
      continue;
    binaries.insert(binary);

    auto captured = dyn_cast_or_null<ptx::PTXModuleOp>(
        SymbolTable::lookupSymbolIn(root, capturedName));
    ptx::EntryOp entry;
    if (captured)
      entry = dyn_cast_or_null<ptx::EntryOp>(
          SymbolTable::lookupSymbolIn(captured, kernelName));
    if (entry) {
      if (isProbed(entry)) {
        launch.emitError("cannot launch kernel '")
            << kernelName << "' from a gpu.binary: it is probed" << kProbedFix;
        return signalPassFailure();
      }
      regenerated[captured] = binary;
      continue;
    }

    auto part = partOf.find({StringRef(capturedName), kernelName});
    if (part == partOf.end()) {
      launch.emitError("cannot launch kernel '")
          << kernelName << "': gpu-opt captured gpu.module '" << binaryName
          << "' into ptx.module '" << capturedName
          << "', which no longer holds it, and no fused kernel was made of "
             "it; keep the kernel, or drop its launch";
      return signalPassFailure();
    }
    auto [fusedEntry, index] = part->second;
    // Its launch would be computed from the parts' grids at run time.
    if (!getFusionInfo(fusedEntry).getShapeParams().empty()) {
      launch.emitError("cannot launch kernel '")
          << kernelName << "' through fused kernel '" << fusedEntry.getSymName()
          << "': it takes its parts' grids at launch (runtime shapes), "
             "which merging launches does not compute; fuse without "
             "runtime-shapes";
      return signalPassFailure();
    }
    FusedLaunches &fused = fusedLaunches[fusedEntry];
    if (!fused.entry) {
      fused.entry = fusedEntry;
      fused.info = getFusionInfo(fusedEntry);
      fused.parts.resize(fused.info.getParts().size());
    }
    fused.parts[index].push_back(launch);
  }

  for (FusedLaunches &fused : llvm::make_second_range(fusedLaunches))
    if (failed(checkFusedLaunches(fused)))
      return signalPassFailure();

  // The binaries, before anything changes: ptxas may fail.
  llvm::MapVector<Operation *, gpu::ObjectAttr> objects;
  for (Operation *module : regenerated.keys())
    objects[module] = {};
  for (Operation *entry : fusedLaunches.keys())
    objects[entry->getParentOfType<ptx::PTXModuleOp>()] = {};
  for (auto &[module, object] : objects) {
    FailureOr<gpu::ObjectAttr> built =
        buildObject(cast<ptx::PTXModuleOp>(module));
    if (failed(built))
      return signalPassFailure();
    object = *built;
  }

  // A fused kernel in a captured module is launched from that module's
  // binary.
  for (FusedLaunches &fused : llvm::make_second_range(fusedLaunches)) {
    auto module = fused.entry->getParentOfType<ptx::PTXModuleOp>();
    gpu::BinaryOp binary = regenerated.lookup(module);
    launchFused(fused,
                binary ? binary.getSymNameAttr() : module.getSymNameAttr());
  }

  // A captured module's binary takes its kernels; a fused kernel's module
  // becomes a binary of the same name.
  for (auto [module, object] : objects) {
    auto ptxModule = cast<ptx::PTXModuleOp>(module);
    ArrayAttr objectsAttr = ArrayAttr::get(context, {object});
    if (auto binary = regenerated.lookup(module)) {
      binary.setObjectsAttr(objectsAttr);
    } else {
      OpBuilder builder(ptxModule);
      gpu::BinaryOp::create(builder, ptxModule.getLoc(), ptxModule.getSymName(),
                            /*offloadingHandler=*/nullptr, objectsAttr);
    }
    ptxModule.erase();
    ++numBinaries;
  }

  // Binaries whose kernels all went into fused ones.
  for (Operation *binary : binaries)
    if (SymbolTable::symbolKnownUseEmpty(binary, root))
      binary->erase();
}
