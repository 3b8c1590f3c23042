//===- GPUToPTX.cpp - gpu.module kernels to the ptx dialect ---------------===//
//
// `--gpu-to-ptx` captures the kernels an ML compiler hands over as a
// `gpu.module`: MLIR's NVVM lowering and LLVM's NVPTX backend turn it into
// PTX in this process, and the PTX is imported into a `ptx.module` of the
// same name, so that fusion and probes exist once (on PTX) and ptxas
// allocates registers for a fused kernel as a whole.
//
// What the lowering would lose is kept: each kernel's `ptx.entry` records
// the gpu.func arguments its parameters pass (#gpuopt.gpu_kernel), and a
// `known_block_size` becomes `.reqntid` instead of NVVM's `.maxntid`.
//
//===----------------------------------------------------------------------===//

#include "GPUObject.h"
#include "gpuopt/Conversion/Passes.h"
#include "gpuopt/Dialect/GPUOpt/GPUOptDialect.h"
#include "gpuopt/Target/PTX/ExportPTX.h"
#include "gpuopt/Target/PTX/ImportPTX.h"
#include "gpuopt/Transforms/Passes.h"

#include "mlir/Conversion/GPUToNVVM/GPUToNVVMPass.h"
#include "mlir/Conversion/IndexToLLVM/IndexToLLVM.h"
#include "mlir/Conversion/NVGPUToNVVM/NVGPUToNVVM.h"
#include "mlir/Conversion/NVVMToLLVM/NVVMToLLVM.h"
#include "mlir/Conversion/Passes.h"
#include "mlir/Conversion/ReconcileUnrealizedCasts/ReconcileUnrealizedCasts.h"
#include "mlir/Conversion/SCFToControlFlow/SCFToControlFlow.h"
#include "mlir/Conversion/VectorToSCF/VectorToSCF.h"
#include "mlir/Dialect/GPU/IR/CompilationInterfaces.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/TargetParser/Triple.h"

namespace gpuopt {
#define GEN_PASS_DEF_GPUTOPTX
#include "gpuopt/Conversion/Passes.h.inc"
} // namespace gpuopt

using namespace mlir;
using namespace gpuopt;

/// The chip when neither the option nor the gpu.module names one.
static constexpr llvm::StringLiteral kDefaultChip = "sm_90a";

namespace {

/// What the PTX of one kernel will not say about its gpu.func.
struct KernelSignature {
  std::string name;
  /// The gpu.func's location, which diagnostics about the kernel show.
  Location loc;
  SmallVector<int64_t> paramArgs, paramFields;
  SmallVector<int64_t> block, grid;
};

struct GPUToPTXPass : public gpuopt::impl::GPUToPTXBase<GPUToPTXPass> {
  using Base::Base;

  void getDependentDialects(DialectRegistry &registry) const override {
    Base::getDependentDialects(registry);
    // The nested lowering's passes load their dialects before it runs.
    OpPassManager pm(gpu::GPUModuleOp::getOperationName());
    buildLowering(pm);
    pm.getDependentDialects(registry);
  }

  void runOnOperation() override;

private:
  /// MLIR's NVVM lowering of one gpu.module's contents, as its
  /// gpu-lower-to-nvvm-pipeline runs it, without the host side.
  void buildLowering(OpPassManager &pm) const;
  /// Lowers `gpuModule`, linking libdevice from `toolkit` (none if empty).
  LogicalResult capture(gpu::GPUModuleOp gpuModule, StringRef toolkit);
};

} // namespace

void GPUToPTXPass::buildLowering(OpPassManager &pm) const {
  pm.addPass(createConvertNVGPUToNVVMPass());
  pm.addPass(createConvertVectorToSCFPass());
  pm.addPass(createSCFToControlFlowPass());
  pm.addPass(createConvertNVVMToLLVMPass());
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  ConvertIndexToLLVMPassOptions indexOptions;
  indexOptions.indexBitwidth = indexBitwidth;
  pm.addPass(createConvertIndexToLLVMPass(indexOptions));
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  ConvertGpuOpsToNVVMOpsOptions nvvmOptions;
  nvvmOptions.indexBitwidth = indexBitwidth;
  pm.addPass(createConvertGpuOpsToNVVMOps(nvvmOptions));
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
}

/// Each PTX parameter's argument and field, as MLIR's default (not bare
/// pointer) calling convention passes the kernel's arguments: a memref of
/// rank r as its descriptor's 3 + 2r fields, anything else as one.
static LogicalResult mapParams(gpu::GPUFuncOp kernel,
                               KernelSignature &signature) {
  for (auto [index, type] :
       llvm::enumerate(kernel.getFunctionType().getInputs())) {
    int64_t fields = 1;
    if (auto memref = dyn_cast<MemRefType>(type)) {
      fields = 3 + 2 * memref.getRank();
    } else if (isa<UnrankedMemRefType>(type)) {
      return kernel.emitError("kernel '")
             << kernel.getName() << "': argument " << index
             << " is an unranked memref, which gpu-opt cannot map to PTX "
                "parameters; give it a ranked memref type";
    }
    for (int64_t field = 0; field < fields; ++field) {
      signature.paramArgs.push_back(index);
      signature.paramFields.push_back(field);
    }
  }
  return success();
}

/// The CUDA toolkit whose libdevice gpu.func math functions link, or an
/// empty string when there is none.
static std::string findLibdeviceToolkit(StringRef cudaPath) {
  SmallVector<std::string> candidates;
  if (!cudaPath.empty())
    candidates.push_back(cudaPath.str());
  for (const char *var : {"CUDA_ROOT", "CUDA_HOME", "CUDA_PATH"})
    if (std::optional<std::string> home = llvm::sys::Process::GetEnv(var))
      candidates.push_back(*home);
  // ptxas's toolkit: BIN/ptxas, with symbolic links resolved.
  if (std::optional<std::string> ptxas = findPtxas(PtxasOptions())) {
    SmallString<256> real;
    if (!llvm::sys::fs::real_path(*ptxas, real))
      candidates.push_back(
          llvm::sys::path::parent_path(llvm::sys::path::parent_path(real))
              .str());
  }
  candidates.push_back("/usr/local/cuda");
  for (const std::string &candidate : candidates) {
    SmallString<256> libdevice(candidate);
    llvm::sys::path::append(libdevice, "nvvm", "libdevice", "libdevice.10.bc");
    if (llvm::sys::fs::exists(libdevice))
      return candidate;
    // An explicit path without libdevice is not silently replaced.
    if (!cudaPath.empty())
      return "";
  }
  return "";
}

/// The PTX ISA version LLVM's NVPTX backend writes for `chip` without
/// features, the lowest the chip allows: the `.version` of an empty module.
static FailureOr<unsigned> getLowestPTXVersion(Location loc, StringRef chip) {
  MLIRContext *context = loc.getContext();
  OpBuilder builder(context);
  OwningOpRef<ModuleOp> scratch = ModuleOp::create(loc);
  builder.setInsertionPointToEnd(scratch->getBody());
  auto target = NVVM::NVVMTargetAttr::get(context, /*optLevel=*/0,
                                          "nvptx64-nvidia-cuda", chip);
  auto empty = gpu::GPUModuleOp::create(builder, loc, "empty",
                                        builder.getArrayAttr({target}));
  std::optional<SmallVector<char, 0>> ptx =
      cast<gpu::TargetAttrInterface>(target).serializeToObject(
          empty,
          gpu::TargetOptions({}, {}, {}, {}, gpu::CompilationTarget::Assembly));
  StringRef text = ptx ? StringRef(ptx->data(), ptx->size()) : "";
  size_t at = text.find(".version ");
  unsigned major = 0, minor = 0;
  if (at == StringRef::npos ||
      text.substr(at + 9).split('.').first.getAsInteger(10, major) ||
      text.substr(at + 9)
          .split('.')
          .second.take_while(llvm::isDigit)
          .getAsInteger(10, minor))
    return emitError(loc, "LLVM's NVPTX backend wrote no PTX for ") << chip,
           failure();
  return major * 10 + minor;
}

/// Checks `chip` and `features` against LLVM's NVPTX backend, which would
/// ignore an unknown chip or feature with a warning (and write code for
/// another chip) and abort on a PTX version too old for the chip.
static LogicalResult checkTarget(Location loc, StringRef chip,
                                 StringRef features) {
  static bool initialized = [] {
    LLVMInitializeNVPTXTargetInfo();
    LLVMInitializeNVPTXTarget();
    LLVMInitializeNVPTXTargetMC();
    return true;
  }();
  (void)initialized;
  llvm::Triple triple("nvptx64-nvidia-cuda");
  std::string error;
  const llvm::Target *target =
      llvm::TargetRegistry::lookupTarget(triple, error);
  if (!target)
    return emitError(loc, "LLVM has no NVPTX backend: ") << error;
  std::unique_ptr<llvm::MCSubtargetInfo> generic(
      target->createMCSubtargetInfo(triple, "", ""));
  if (!generic->isCPUStringValid(chip)) {
    InFlightDiagnostic diag = emitError(loc, "unknown chip '")
                              << chip << "' for LLVM's NVPTX backend; known: ";
    llvm::interleaveComma(
        llvm::map_range(generic->getAllProcessorDescriptions(),
                        [](const llvm::SubtargetSubTypeKV &kv) {
                          return StringRef(kv.Key);
                        }),
        diag);
    return diag;
  }
  auto ptxVersion = [](StringRef feature) {
    unsigned version = 0;
    if (!feature.consume_front("ptx") || feature.getAsInteger(10, version))
      return 0u;
    return version;
  };
  SmallVector<StringRef> list;
  features.split(list, ',', /*MaxSplit=*/-1, /*KeepEmpty=*/false);
  for (StringRef feature : list) {
    StringRef name = feature.trim();
    if (!name.consume_front("+") && !name.consume_front("-"))
      return emitError(loc, "feature '")
             << feature << "' needs a '+' or '-', e.g. +" << name;
    if (!llvm::any_of(
            generic->getAllProcessorFeatures(),
            [&](const llvm::SubtargetFeatureKV &kv) { return name == kv.Key; }))
      return emitError(loc, "unknown feature '")
             << feature << "' for LLVM's NVPTX backend";
    unsigned version = ptxVersion(name);
    if (!feature.trim().starts_with("+") || !version)
      continue;
    FailureOr<unsigned> needed = getLowestPTXVersion(loc, chip);
    if (failed(needed))
      return failure();
    if (version < *needed)
      return emitError(loc, "")
             << chip << " needs PTX ISA " << *needed / 10 << "." << *needed % 10
             << " or later, but the features ask for " << version / 10 << "."
             << version % 10 << "; give +ptx" << *needed
             << " or later, or no ptx feature";
  }
  return success();
}

/// The chip and features to lower `gpuModule` for.
static NVVM::NVVMTargetAttr getTarget(gpu::GPUModuleOp gpuModule,
                                      StringRef chip, StringRef features,
                                      int optLevel) {
  NVVM::NVVMTargetAttr attached;
  if (ArrayAttr targets = gpuModule.getTargetsAttr())
    for (Attribute target : targets)
      if ((attached = dyn_cast<NVVM::NVVMTargetAttr>(target)))
        break;
  if (chip.empty() && attached) {
    chip = attached.getChip();
    if (features.empty())
      features = attached.getFeatures();
  }
  if (chip.empty())
    chip = kDefaultChip;
  // Empty features: LLVM's NVPTX backend takes the lowest PTX ISA version
  // the chip needs.
  return NVVM::NVVMTargetAttr::get(gpuModule.getContext(), optLevel,
                                   "nvptx64-nvidia-cuda", chip, features);
}

LogicalResult GPUToPTXPass::capture(gpu::GPUModuleOp gpuModule,
                                    StringRef toolkit) {
  MLIRContext *context = &getContext();
  std::string moduleName = gpuModule.getName().str();

  // What the lowering loses: arguments behind parameters, launch shapes.
  SmallVector<KernelSignature, 2> signatures;
  for (auto kernel : gpuModule.getOps<gpu::GPUFuncOp>()) {
    if (!kernel.isKernel())
      continue;
    KernelSignature &signature =
        signatures.emplace_back(KernelSignature{{}, kernel.getLoc()});
    signature.name = kernel.getName().str();
    if (failed(mapParams(kernel, signature)))
      return failure();
    if (std::optional<ArrayRef<int32_t>> block = kernel.getKnownBlockSize())
      signature.block.assign(block->begin(), block->end());
    if (std::optional<ArrayRef<int32_t>> grid = kernel.getKnownGridSize())
      signature.grid.assign(grid->begin(), grid->end());
  }
  if (signatures.empty())
    return success();

  NVVM::NVVMTargetAttr target = getTarget(gpuModule, chip, features, optLevel);
  if (failed(checkTarget(gpuModule.getLoc(), target.getChip(),
                         target.getFeatures())))
    return failure();
  gpuModule.setTargetsAttr(ArrayAttr::get(context, {target}));

  OpPassManager pm(gpu::GPUModuleOp::getOperationName());
  buildLowering(pm);
  if (failed(runPipeline(pm, gpuModule)))
    return gpuModule.emitError("lowering gpu.module '")
           << moduleName << "' to NVVM failed";

  // NVVM lowers known_block_size to .maxntid, a bound; the kernel analysis
  // needs the exact block, .reqntid (PTX allows one of the two).
  StringRef maxntid = NVVM::NVVMDialect::getMaxntidAttrName();
  StringRef reqntid = NVVM::NVVMDialect::getReqntidAttrName();
  for (auto func : gpuModule.getOps<LLVM::LLVMFuncOp>()) {
    const KernelSignature *signature =
        llvm::find_if(signatures, [&](const KernelSignature &s) {
          return s.name == func.getName();
        });
    if (signature == signatures.end() || signature->block.empty())
      continue;
    if (Attribute bound = func->getAttr(maxntid)) {
      func->removeAttr(maxntid);
      func->setAttr(reqntid, bound);
    }
  }

  // gpu.dynamic_shared_memory lowers to an internal, zero-length workgroup
  // global, which the NVPTX backend writes as a one-byte `.shared` variable
  // of the kernel; CUDA's form, which the kernel analysis and fusion know as
  // dynamic shared memory, is an `.extern .shared` array.
  for (auto global : gpuModule.getOps<LLVM::GlobalOp>()) {
    auto array = dyn_cast<LLVM::LLVMArrayType>(global.getType());
    if (global.getAddrSpace() ==
            static_cast<unsigned>(NVVM::NVVMMemorySpace::Shared) &&
        array && array.getNumElements() == 0)
      global.setLinkage(LLVM::Linkage::External);
  }

  // Math functions are calls into libdevice; without it they would stay
  // unresolved calls that ptxas rejects.
  if (toolkit.empty()) {
    SmallVector<StringRef> missing;
    for (auto func : gpuModule.getOps<LLVM::LLVMFuncOp>())
      if (func.isExternal() && func.getName().starts_with("__nv_"))
        missing.push_back(func.getName());
    if (!missing.empty()) {
      InFlightDiagnostic diag = gpuModule.emitError("gpu.module '")
                                << moduleName << "' calls ";
      llvm::interleaveComma(missing, diag);
      return diag << " from CUDA's libdevice, which was not found"
                  << (cudaPath.empty()
                          ? ""
                          : (" in cuda-path=" + cudaPath.getValue()))
                  << ": install the CUDA toolkit, or give its folder (with "
                     "nvvm/libdevice/libdevice.10.bc) as cuda-path= or "
                     "$CUDA_HOME";
    }
  }

  // LLVM's NVPTX backend, in this process.
  auto targetInterface = cast<gpu::TargetAttrInterface>(target);
  gpu::TargetOptions options(toolkit, /*librariesToLink=*/{},
                             /*cmdOptions=*/{}, /*elfSection=*/{},
                             gpu::CompilationTarget::Assembly);
  std::optional<SmallVector<char, 0>> ptx;
  {
    // Without a toolkit the kernels call nothing from libdevice (checked
    // above), but MLIR's serializer still looks for it in its default CUDA
    // path and reports that it is missing, then goes on without it: that
    // report is dropped, every other diagnostic passes.
    ScopedDiagnosticHandler dropLibdeviceLookup(
        context, [&](Diagnostic &diagnostic) {
          std::string message = diagnostic.str();
          return success(toolkit.empty() &&
                         (StringRef(message).starts_with("LibDevice path:") ||
                          StringRef(message).starts_with("CUDA path:")));
        });
    ptx = targetInterface.serializeToObject(gpuModule, options);
  }
  if (!ptx)
    return gpuModule.emitError("LLVM's NVPTX backend could not lower "
                               "gpu.module '")
           << moduleName << "' to PTX for " << target.getChip();

  // The PTX replaces the gpu.module, under its name. When host code
  // launches its kernels, a gpu.binary of the PTX takes the name instead, so
  // that the host code stays valid (and runnable) until --ptx-to-gpu-binary
  // rewrites it, and the ptx.module is named after it.
  ModuleOp root = getOperation();
  Location gpuModuleLoc = gpuModule.getLoc();
  std::string ptxModuleName = moduleName;
  OpBuilder builder(gpuModule);
  std::optional<SymbolTable::UseRange> uses =
      SymbolTable::getSymbolUses(gpuModule.getNameAttr(), root);
  if (!uses || !uses->empty()) {
    ptxModuleName = getCapturedModuleName(moduleName);
    if (SymbolTable::lookupSymbolIn(root, ptxModuleName))
      return gpuModule.emitError("cannot capture gpu.module '")
             << moduleName << "': its PTX would be named '" << ptxModuleName
             << "', which is already a symbol";
    gpu::ObjectAttr object =
        getGPUObject(target, gpu::CompilationTarget::Assembly,
                     StringRef(ptx->data(), ptx->size()));
    gpu::BinaryOp::create(builder, gpuModuleLoc, moduleName, Attribute(),
                          builder.getArrayAttr({object}));
  }

  // Diagnostics about the PTX point at lines of the lowered text.
  llvm::SourceMgr sourceMgr;
  unsigned bufferId = sourceMgr.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBufferCopy(StringRef(ptx->data(), ptx->size()),
                                           moduleName + ".gpu-to-ptx.ptx"),
      llvm::SMLoc());
  Operation *next = gpuModule->getNextNode();
  gpuModule.erase();
  FailureOr<ptx::PTXModuleOp> ptxModule =
      importPTX(sourceMgr, bufferId, root, ptxModuleName);
  if (failed(ptxModule))
    return emitError(gpuModuleLoc, "the PTX that LLVM's NVPTX backend wrote "
                                   "for gpu.module '")
           << moduleName << "' could not be imported";
  if (next)
    (*ptxModule)->moveBefore(next);

  for (const KernelSignature &signature : signatures) {
    auto entry = dyn_cast_or_null<ptx::EntryOp>(
        SymbolTable::lookupSymbolIn(*ptxModule, signature.name));
    if (!entry)
      return emitError(gpuModuleLoc, "kernel '")
             << signature.name << "' of gpu.module '" << moduleName
             << "' is not an .entry of the PTX it was lowered to";
    size_t params = entry.getParams().size();
    if (params != signature.paramArgs.size())
      return emitError(gpuModuleLoc, "kernel '")
             << signature.name << "' was lowered to " << params
             << " PTX parameters, but its arguments make "
             << signature.paramArgs.size();
    // Each op is located at its gpu.func and its line of the lowered PTX:
    // diagnostics show the first, the user's source.
    entry->walk([&](Operation *op) {
      op->setLoc(FusedLoc::get(context, {signature.loc, op->getLoc()}));
    });
    setGPUKernel(entry,
                 GPUKernelAttr::get(context, moduleName, signature.name,
                                    signature.paramArgs, signature.paramFields,
                                    signature.block, signature.grid));
    ++numKernels;
  }
  return success();
}

bool gpuopt::hasGPUKernels(ModuleOp module) {
  for (auto gpuModule : module.getOps<gpu::GPUModuleOp>())
    for (auto func : gpuModule.getOps<gpu::GPUFuncOp>())
      if (func.isKernel())
        return true;
  return false;
}

void GPUToPTXPass::runOnOperation() {
  if (optLevel < 0 || optLevel > 3) {
    emitError(getPassOptionLoc(&getContext(), getArgument(), "opt-level"),
              "expected 0 to 3, got ")
        << optLevel.getValue();
    return signalPassFailure();
  }
  SmallVector<gpu::GPUModuleOp> gpuModules(
      getOperation().getOps<gpu::GPUModuleOp>());
  if (gpuModules.empty())
    return;
  std::string toolkit = findLibdeviceToolkit(cudaPath);
  for (gpu::GPUModuleOp gpuModule : gpuModules)
    if (failed(capture(gpuModule, toolkit)))
      return signalPassFailure();
}
