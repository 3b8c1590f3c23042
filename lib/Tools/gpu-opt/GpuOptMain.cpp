//===- GpuOptMain.cpp - The gpu-opt driver --------------------------------===//
//
// mlir-opt for GPU kernels, from PTX to PTX or cubin in one process, as a
// library (as MlirOptMain is mlir-opt's); tools/gpu-opt is its main:
//
//   gpu-opt in.ptx [passes] -o out.ptx
//   gpu-opt in.ptx [passes] -o out.cubin --chip=sm_90a
//   gpu-opt a.ptx b.ptx [passes] -o both.mlir    (one ptx.module per file)
//   gpu-opt in.ptx -o in.mlirbc; gpu-opt in.mlirbc [passes] --emit=ptx
//   gpu-opt in.mlir [passes]                       (as mlir-opt)
//
// PTX inputs are imported straight into the module the passes run on, and
// PTX or cubin is exported from it: no MLIR text in between. What is written
// is --emit=mlir|bytecode|ptx|cubin, or else follows the output file's
// extension (.ptx, .cubin, .mlirbc; anything else, and stdout, MLIR text).
// An explicit --emit wins over the extension.
//
// Several inputs become side-by-side ptx.modules in one builtin module, named
// after their files as gpu-translate names them. A .mlir/.mlirbc input among
// several is merged in: its top-level ops (its ptx.modules) join the others.
//
// One MLIR input with MLIR output goes through MlirOptMain unchanged, so
// --split-input-file and every other mlir-opt option behave as in mlir-opt.
// Output files are written only when everything succeeded, and never over an
// input.
//
//===----------------------------------------------------------------------===//

#include "gpuopt/Tools/gpu-opt/GpuOptMain.h"
#include "gpuopt/Conversion/Passes.h"
#include "gpuopt/InitAll.h"
#include "gpuopt/Target/PTX/ExportPTX.h"
#include "gpuopt/Target/PTX/ImportManifest.h"
#include "gpuopt/Target/PTX/ImportPTX.h"
#include "gpuopt/Tools/ToolSupport.h"
#include "gpuopt/Transforms/Passes.h"

#include "mlir/Bytecode/BytecodeWriter.h"
#include "mlir/Debug/CLOptionsSetup.h"
#include "mlir/Debug/Counter.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Support/Timing.h"
#include "mlir/Tools/ParseUtilities.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/ManagedStatic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"

using namespace mlir;
namespace cl = llvm::cl;

namespace {
enum class Emit { MLIR, Bytecode, PTX, Cubin };
} // namespace

/// gpu-opt's own command-line options. They are registered when gpuOptMain
/// first runs, not when the library is loaded, so that gpu-translate's
/// options (of the same names) can live in the same shared library
/// (libgpuopt.so of the self-contained build).
struct GpuOptCLOptions {
  cl::list<std::string> inputFilenames{cl::Positional,
                                       cl::desc("<input files>")};
  cl::opt<std::string> outputFilename{"o", cl::desc("Output filename"),
                                      cl::value_desc("filename"),
                                      cl::init("-")};
  cl::opt<Emit> emitKind{
      "emit",
      cl::desc("What to write (default: from the output file's extension: "
               ".ptx, .cubin, .mlirbc, otherwise MLIR text); wins over the "
               "extension"),
      cl::values(clEnumValN(Emit::MLIR, "mlir", "MLIR text"),
                 clEnumValN(Emit::Bytecode, "bytecode", "MLIR bytecode"),
                 clEnumValN(Emit::PTX, "ptx", "PTX of one ptx.module"),
                 clEnumValN(Emit::Cubin, "cubin",
                            "a cubin of one ptx.module, through ptxas"))};
  cl::opt<std::string> moduleName{
      "module", cl::desc("With PTX or cubin output: the ptx.module to export "
                         "when there are several")};
  gpuopt::PtxasCLOptions ptxasOptions;
  cl::opt<std::string> manifestFilename{
      "manifest",
      cl::desc("With PTX or cubin output to a file: also write the launch "
               "manifest (docs/manifest.md) of the exported module"),
      cl::value_desc("filename")};
  cl::list<std::string> manifestInFilenames{
      "manifest-in",
      cl::desc("The launch manifest written with a PTX input (by --manifest): "
               "restores what the PTX does not say, which kernels a fused "
               "kernel was fused from, for --probe and --manifest"),
      cl::value_desc("filename")};
  cl::opt<bool> printPtxas{
      "print-ptxas",
      cl::desc("Print the ptxas that cubin output runs (--ptxas, $PTXAS, the "
               "CUDA toolkit, then Triton's or NVIDIA's Python packages) and "
               "exit")};
  cl::opt<bool> printPtxasISA{
      "print-ptxas-isa",
      cl::desc("Print the newest PTX ISA that ptxas takes (e.g. 8.7) and "
               "exit; newer PTX is given that .version when it assembles so")};
};

static llvm::ManagedStatic<GpuOptCLOptions> clOptions;

/// LLVM's libraries register hundreds of options (code generation for every
/// target, profiling, Polly) when they are loaded, none of which reaches
/// anything gpu-opt does. Called before MLIR's options are registered, this
/// hides all of them but gpu-opt's own and --help, --version and --color, so
/// that --help lists gpu-opt's, MLIR's and the passes' options; --help-hidden
/// still lists everything.
static void hideLibraryOptions() {
  const cl::Option *own[] = {&clOptions->outputFilename,
                             &clOptions->emitKind,
                             &clOptions->moduleName,
                             &clOptions->manifestFilename,
                             &clOptions->printPtxas,
                             &clOptions->printPtxasISA,
                             std::addressof(clOptions->manifestInFilenames),
                             &clOptions->ptxasOptions.chip,
                             &clOptions->ptxasOptions.ptxasPath,
                             std::addressof(clOptions->ptxasOptions.extraArgs)};
  auto isGeneric = [](const cl::OptionCategory *category) {
    return category->getName() == "Generic Options" ||
           category->getName() == "Color Options";
  };
  for (auto &[name, option] : cl::getRegisteredOptions())
    if (!llvm::is_contained(own, option) &&
        llvm::none_of(option->Categories, isGeneric))
      option->setHiddenFlag(cl::Hidden);
}

/// --emit, else --emit-bytecode, else the output file's extension.
static Emit getEmitKind(const MlirOptMainConfig &config) {
  if (clOptions->emitKind.getNumOccurrences())
    return clOptions->emitKind;
  if (config.shouldEmitBytecode())
    return Emit::Bytecode;
  llvm::StringRef extension = llvm::sys::path::extension(clOptions->outputFilename);
  if (extension == ".ptx")
    return Emit::PTX;
  if (extension == ".cubin")
    return Emit::Cubin;
  if (extension == ".mlirbc")
    return Emit::Bytecode;
  return Emit::MLIR;
}

/// Options that only make sense with some outputs; reports the first misuse.
static LogicalResult checkOptions(Emit emit, const MlirOptMainConfig &config) {
  bool exported = emit == Emit::PTX || emit == Emit::Cubin;
  auto fail = [](const llvm::Twine &message) {
    llvm::errs() << "error: " << message << "\n";
    return failure();
  };
  if (config.shouldEmitBytecode() && emit != Emit::Bytecode)
    return fail("--emit-bytecode contradicts --emit");
  if (!clOptions->moduleName.empty() && !exported)
    return fail("--module goes with PTX or cubin output");
  if (!clOptions->manifestFilename.empty() && (!exported || clOptions->outputFilename == "-"))
    return fail("--manifest goes with PTX or cubin output to a file (-o)");
  return success();
}

/// --chip, --ptxas and --ptxas-option go with cubin output; --chip also
/// with MLIR input, whose gpu.module kernels it lowers.
static LogicalResult checkPtxasOptions(Emit emit, bool anyMLIR) {
  if (emit == Emit::Cubin ||
      (clOptions->ptxasOptions.ptxasPath.empty() && clOptions->ptxasOptions.extraArgs.empty() &&
       (clOptions->ptxasOptions.chip.empty() || anyMLIR)))
    return success();
  llvm::errs() << "error: --chip, --ptxas and --ptxas-option go with cubin "
                  "output (-o FILE.cubin or --emit=cubin); --chip also with "
                  "MLIR input, as the target of its gpu.module kernels\n";
  return failure();
}

/// True if `root` holds gpu.module kernels (gpuopt::hasGPUKernels).
static bool hasGPUKernels(Operation *root) {
  auto module = dyn_cast<ModuleOp>(root);
  return module && gpuopt::hasGPUKernels(module);
}

/// True if host code in `root` launches kernels: after the passes, it needs
/// them back as gpu.binary ops (--ptx-to-gpu-binary).
static bool hasKernelLaunches(Operation *root) {
  return root->walk([](gpu::LaunchFuncOp) { return WalkResult::interrupt(); })
      .wasInterrupted();
}

/// --gpu-to-ptx with the target of --chip.
static std::unique_ptr<Pass> createCapturePass() {
  gpuopt::GPUToPTXOptions options;
  options.chip = clOptions->ptxasOptions.chip;
  return gpuopt::createGPUToPTX(options);
}

/// The pipeline in `pm` as text.
static std::string getPipelineText(OpPassManager &pm) {
  std::string pipeline;
  llvm::raw_string_ostream os(pipeline);
  pm.printAsTextualPipeline(os);
  return pipeline;
}

/// True if `pipeline` runs one of gpu-opt's passes on PTX (fusion, probes,
/// the kernel analysis).
static bool runsPTXPasses(llvm::StringRef pipeline) {
  return llvm::any_of(
      llvm::ArrayRef<llvm::StringRef>{"hfuse", "probe",
                                      "print-kernel-analysis"},
      [&](llvm::StringRef name) { return pipeline.contains(name); });
}

/// Sets up the user's pipeline in `pm`, after --gpu-to-ptx when `capture`
/// and before --ptx-to-gpu-binary when `rebind`, unless the pipeline runs
/// them itself (with its own options), or, with `onlyForPTXPasses`, runs none
/// of gpu-opt's passes on PTX. Without a gpu.module or a launch, either pass
/// changes nothing.
static LogicalResult setupPipeline(PassManager &pm,
                                   const MlirOptMainConfig &config,
                                   bool capture, bool rebind,
                                   bool onlyForPTXPasses = false) {
  if (failed(config.setupPassPipeline(pm)))
    return failure();
  std::string pipeline = getPipelineText(pm);
  if (onlyForPTXPasses && !runsPTXPasses(pipeline))
    capture = rebind = false;
  capture &= !llvm::StringRef(pipeline).contains("gpu-to-ptx");
  rebind &= !llvm::StringRef(pipeline).contains("ptx-to-gpu-binary");
  if (capture) {
    pm.clear();
    pm.addPass(createCapturePass());
    if (failed(config.setupPassPipeline(pm)))
      return failure();
  }
  if (rebind)
    pm.addPass(gpuopt::createPTXToGPUBinary());
  return success();
}

/// True if the user gave option `name`, whatever its value: the one-process
/// path changes some of MLIR's defaults, and keeps them when asked.
static bool optionGiven(llvm::StringRef name) {
  llvm::DenseMap<llvm::StringRef, cl::Option *> &options =
      cl::getRegisteredOptions();
  auto it = options.find(name);
  return it != options.end() && it->second->getNumOccurrences() > 0;
}

/// Moves the top-level ops of an MLIR input (its ptx.modules, gpu.modules
/// and host code) and the attributes of its builtin module into `into`. A
/// symbol already in `into`, an attribute of another value, or a name of the
/// input's builtin module, which merging would drop, are errors.
static LogicalResult mergeMLIRInput(const llvm::MemoryBuffer &buffer,
                                    const ParserConfig &parserConfig,
                                    ModuleOp into) {
  // The parser reads the main buffer of a SourceMgr: give this one its own.
  // Diagnostics still find the text in the driver's SourceMgr by file name.
  auto sourceMgr = std::make_shared<llvm::SourceMgr>();
  sourceMgr->AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBuffer(buffer.getMemBufferRef()),
      llvm::SMLoc());
  OwningOpRef<ModuleOp> module =
      parseSourceFile<ModuleOp>(sourceMgr, parserConfig);
  if (!module)
    return failure();
  // Ops keep the locations they were created with, maybe in another file:
  // name the input being merged.
  llvm::StringRef file = buffer.getBufferIdentifier();
  // Attributes of the builtin module (gpu.container_module of host code)
  // join those of the merged module, unless an earlier input set another
  // value. A module's name has nowhere to go.
  if (module->getSymNameAttr())
    return module->emitError("cannot merge '")
               << file << "' with other inputs: its builtin module is named",
           failure();
  for (NamedAttribute attr : (*module)->getDiscardableAttrs()) {
    Attribute existing = into->getDiscardableAttr(attr.getName());
    if (existing && existing != attr.getValue())
      return module->emitError("cannot merge '")
                 << file << "': its builtin module's attribute '"
                 << attr.getName().getValue() << "' differs from an earlier "
                 << "input's",
             failure();
    into->setDiscardableAttr(attr.getName(), attr.getValue());
  }
  for (Operation &op : llvm::make_early_inc_range(*module->getBody())) {
    auto name = op.getAttrOfType<StringAttr>(SymbolTable::getSymbolAttrName());
    if (name && SymbolTable::lookupSymbolIn(into, name))
      return op.emitError("cannot merge '")
                 << file << "': symbol '" << name.getValue()
                 << "' is already defined by an earlier input",
             failure();
    op.moveBefore(into.getBody(), into.getBody()->end());
  }
  return success();
}

/// Reads every input into one root op: a single MLIR input as it is parsed,
/// as mlir-opt does; otherwise a builtin module with one ptx.module per PTX
/// input and the ops of each MLIR input, in command-line order.
static OwningOpRef<Operation *>
loadInputs(const std::shared_ptr<llvm::SourceMgr> &sourceMgr,
           MLIRContext &context, const MlirOptMainConfig &config,
           FallbackAsmResourceMap &resources, TimingScope &timing) {
  ParserConfig parserConfig(&context, config.shouldVerifyOnParsing(),
                            &resources);
  unsigned numInputs = sourceMgr->getNumBuffers();
  llvm::StringRef firstName =
      sourceMgr->getMemoryBuffer(1)->getBufferIdentifier();
  if (numInputs == 1 &&
      !gpuopt::looksLikePTX(sourceMgr->getMemoryBuffer(1)->getBuffer())) {
    TimingScope parseTiming = timing.nest("parse MLIR");
    return parseSourceFileForTool(sourceMgr, parserConfig,
                                  !config.shouldUseExplicitModule());
  }

  // One file: the module is located in it, as importPTX does.
  Location loc = numInputs == 1
                     ? Location(FileLineColLoc::get(&context, firstName,
                                                    /*line=*/0, /*column=*/0))
                     : Location(UnknownLoc::get(&context));
  OwningOpRef<ModuleOp> module(ModuleOp::create(loc));
  for (unsigned id = 1; id <= numInputs; ++id) {
    const llvm::MemoryBuffer *buffer = sourceMgr->getMemoryBuffer(id);
    if (gpuopt::looksLikePTX(buffer->getBuffer())) {
      TimingScope importTiming = timing.nest("import PTX");
      if (failed(gpuopt::importPTXBuffers(*sourceMgr, *module, id)))
        return nullptr;
      continue;
    }
    TimingScope parseTiming = timing.nest("parse MLIR");
    if (failed(mergeMLIRInput(*buffer, parserConfig, *module)))
      return nullptr;
  }
  return OwningOpRef<Operation *>(module.release());
}

/// Restores from each --manifest-in what its PTX input does not carry.
static LogicalResult importManifests(Operation *root, TimingScope &timing) {
  if (clOptions->manifestInFilenames.empty())
    return success();
  TimingScope manifestTiming = timing.nest("import manifests");
  auto module = dyn_cast<ModuleOp>(root);
  if (!module)
    return root->emitError("--manifest-in needs a builtin module of "
                           "ptx.modules, not '")
           << root->getName() << "'";
  for (const std::string &file : clOptions->manifestInFilenames) {
    std::string errorMessage;
    std::unique_ptr<llvm::MemoryBuffer> buffer =
        openInputFile(file, &errorMessage);
    if (!buffer)
      return emitError(UnknownLoc::get(root->getContext()))
             << "--manifest-in: " << errorMessage;
    if (failed(gpuopt::importLaunchManifest(module, *buffer)))
      return failure();
  }
  return success();
}

/// Writes `root` as MLIR text or bytecode, or exports one of its ptx.modules
/// as PTX or cubin (and its manifest, with --manifest).
static LogicalResult emitResult(Operation *root, Emit emit,
                                const MlirOptMainConfig &config,
                                FallbackAsmResourceMap &resources,
                                TimingScope &timing, std::string &result,
                                std::string &manifest) {
  llvm::raw_string_ostream os(result);
  if (emit == Emit::MLIR) {
    TimingScope outputTiming = timing.nest("output");
    AsmState asmState(root, OpPrintingFlags(), /*locationMap=*/nullptr,
                      &resources);
    root->print(os, asmState);
    os << '\n';
    return success();
  }
  if (emit == Emit::Bytecode) {
    TimingScope outputTiming = timing.nest("output");
    BytecodeWriterConfig writerConfig(resources);
    if (std::optional<int64_t> version = config.bytecodeVersionToEmit())
      writerConfig.setDesiredBytecodeVersion(*version);
    if (config.shouldElideResourceDataFromBytecode())
      writerConfig.setElideResourceDataFlag();
    return writeBytecodeToFile(root, os, writerConfig);
  }

  // Several modules (inputs whose kernels stay apart) are linked into one.
  OwningOpRef<gpuopt::ptx::PTXModuleOp> linked;
  FailureOr<gpuopt::ptx::PTXModuleOp> module =
      gpuopt::getPTXModuleToExport(root, clOptions->moduleName, linked);
  if (failed(module))
    return failure();
  gpuopt::ModuleOutputOptions options;
  options.cubin = emit == Emit::Cubin;
  options.ptxas = clOptions->ptxasOptions.get();
  options.outputPath = clOptions->outputFilename;
  options.manifestPath = clOptions->manifestFilename;
  return gpuopt::exportModule(*module, options, os, manifest, timing);
}

/// Inputs to `root`, the pass pipeline, `root` to the output: each phase is
/// timed on its own with --mlir-timing.
static LogicalResult compile(const std::shared_ptr<llvm::SourceMgr> &sourceMgr,
                             MLIRContext &context,
                             const MlirOptMainConfig &config, Emit emit,
                             std::string &result, std::string &manifest) {
  DefaultTimingManager timingManager;
  applyDefaultTimingManagerCLOptions(timingManager);
  TimingScope timing = timingManager.getRootScope();

  // Resources the project's dialects do not handle pass through unchanged.
  FallbackAsmResourceMap resources;
  OwningOpRef<Operation *> root =
      loadInputs(sourceMgr, context, config, resources, timing);
  if (!root || failed(importManifests(root.get(), timing)))
    return failure();

  // Everything runs on one thread, where attribute uniquing is cheaper
  // (docs/performance.md), unless --mlir-disable-threading says otherwise.
  if (optionGiven("mlir-disable-threading"))
    context.enableMultithreading();
  PassManager pm(root.get()->getName(), PassManager::Nesting::Implicit);
  pm.enableVerifier(config.shouldVerifyPasses());
  if (failed(applyPassManagerCLOptions(pm)))
    return failure();
  TimingScope passTiming = timing.nest("passes");
  pm.enableTiming(passTiming);
  // gpu.module kernels are lowered to PTX first; host code that launches
  // them gets them back as gpu.binary ops in MLIR output.
  bool rebind = hasKernelLaunches(root.get()) &&
                (emit == Emit::MLIR || emit == Emit::Bytecode);
  if (failed(setupPipeline(pm, config, hasGPUKernels(root.get()), rebind)) ||
      failed(pm.run(root.get())))
    return failure();
  passTiming.stop();

  LogicalResult emitted =
      emitResult(root.get(), emit, config, resources, timing, result, manifest);
  // The process ends once the output is written; freeing a large module op
  // by op takes as long as exporting it, so it is left to the exit (as
  // clang's -disable-free does).
  (void)root.release();
  return emitted;
}

/// The one-process path: PTX inputs, several inputs, or PTX, cubin or
/// bytecode output. Diagnostics are reported against the inputs' text, or
/// checked against their expected-* comments with --verify-diagnostics.
static LogicalResult
runOneProcess(std::vector<std::unique_ptr<llvm::MemoryBuffer>> inputs,
              DialectRegistry &registry, const MlirOptMainConfig &config,
              Emit emit, std::string &result, std::string &manifest) {
  auto sourceMgr = std::make_shared<llvm::SourceMgr>();
  for (std::unique_ptr<llvm::MemoryBuffer> &input : inputs)
    sourceMgr->AddNewSourceBuffer(std::move(input), llvm::SMLoc());

  MLIRContext context(registry, MLIRContext::Threading::DISABLED);
  context.allowUnregisteredDialects(config.shouldAllowUnregisteredDialects());
  // Diagnostics point at PTX lines; a dump of the generic op around them
  // (thousands of lines for a kernel) adds little, unless asked for.
  if (config.shouldVerifyDiagnostics() ||
      !optionGiven("mlir-print-op-on-diagnostic"))
    context.printOpOnDiagnostic(false);
  tracing::InstallDebugHandler installDebugHandler(context,
                                                   config.getDebugConfig());

  if (!config.shouldVerifyDiagnostics()) {
    SourceMgrDiagnosticHandler handler(*sourceMgr, &context);
    return compile(sourceMgr, context, config, emit, result, manifest);
  }
  SourceMgrDiagnosticVerifierHandler handler(*sourceMgr, &context,
                                             config.verifyDiagnosticsLevel());
  (void)compile(sourceMgr, context, config, emit, result, manifest);
  return handler.verify();
}

int gpuopt::gpuOptMain(int argc, char **argv) {
  hideLibraryOptions();
  DialectRegistry registry;
  gpuopt::registerAllDialects(registry);
  registerTransformsPasses();
  gpuopt::registerAllPasses();

  // What MlirOptMain's registerAndParseCLIOptions registers, but with a list
  // of inputs instead of its single positional input.
  MlirOptMainConfig::registerCLOptions(registry);
  registerAsmPrinterCLOptions();
  registerMLIRContextCLOptions();
  registerPassManagerCLOptions();
  registerDefaultTimingManagerCLOptions();
  tracing::DebugCounter::registerCLOptions();
  std::string helpHeader = "gpu-opt: optimizer for GPU kernels in PTX or "
                           "MLIR\nAvailable Dialects: ";
  llvm::raw_string_ostream helpStream(helpHeader);
  llvm::interleaveComma(registry.getDialectNames(), helpStream);
  cl::ParseCommandLineOptions(argc, argv, helpHeader);
  MlirOptMainConfig config = MlirOptMainConfig::createFromCLOptions();

  if (clOptions->printPtxas || clOptions->printPtxasISA) {
    std::optional<std::string> ptxas =
        gpuopt::findPtxas(clOptions->ptxasOptions.get());
    if (!ptxas) {
      llvm::errs() << "error: ptxas not found: install the CUDA toolkit, "
                      "Triton or NVIDIA's wheel (pip install "
                      "nvidia-cuda-nvcc), or pass --ptxas=<path>\n";
      return 1;
    }
    if (clOptions->printPtxas)
      llvm::outs() << *ptxas << "\n";
    if (clOptions->printPtxasISA) {
      std::optional<gpuopt::PTXVersion> isa =
          gpuopt::getPtxasMaxPTXVersion(*ptxas);
      if (!isa) {
        llvm::errs() << "error: " << *ptxas
                     << " --version names no CUDA release\n";
        return 1;
      }
      llvm::outs() << isa->major << "." << isa->minor << "\n";
    }
    return 0;
  }

  if (config.shouldShowDialects() || config.shouldListPasses())
    return asMainReturnCode(MlirOptMain(
        llvm::outs(), llvm::MemoryBuffer::getMemBuffer(""), registry, config));

  if (clOptions->inputFilenames.empty())
    clOptions->inputFilenames.push_back("-");
  Emit emit = getEmitKind(config);
  std::vector<std::string> allInputs(clOptions->inputFilenames.begin(),
                                     clOptions->inputFilenames.end());
  allInputs.insert(allInputs.end(), clOptions->manifestInFilenames.begin(),
                   clOptions->manifestInFilenames.end());
  if (failed(checkOptions(emit, config)) ||
      gpuopt::outputOverwritesInput(allInputs,
                                    {clOptions->outputFilename, clOptions->manifestFilename}))
    return 1;

  std::vector<std::unique_ptr<llvm::MemoryBuffer>> inputs;
  bool anyPTX = false, anyMLIR = false;
  for (const std::string &file : clOptions->inputFilenames) {
    std::string errorMessage;
    inputs.push_back(openInputFile(file, &errorMessage));
    if (!inputs.back()) {
      llvm::errs() << "error: " << errorMessage << "\n";
      return 1;
    }
    bool isPTX = gpuopt::looksLikePTX(inputs.back()->getBuffer());
    anyPTX |= isPTX;
    anyMLIR |= !isPTX;
  }
  if (failed(checkPtxasOptions(emit, anyMLIR)))
    return 1;

  // Produce everything in memory first: a failure leaves no output file.
  std::string result, manifest;
  if (inputs.size() == 1 && !anyPTX &&
      (emit == Emit::MLIR || emit == Emit::Bytecode)) {
    if (!clOptions->manifestInFilenames.empty()) {
      llvm::errs() << "error: --manifest-in goes with PTX input, or with PTX "
                      "or cubin output\n";
      return 1;
    }
    config.emitBytecode(emit == Emit::Bytecode);
    // gpu-opt's passes on PTX see gpu.module kernels once --gpu-to-ptx has
    // lowered them (a no-op without gpu.modules), and host code gets the
    // kernels back as gpu.binary ops afterwards (a no-op without launches).
    MlirOptMainConfig userConfig = config;
    config.setPassPipelineSetupFn([userConfig](PassManager &pm) {
      return setupPipeline(pm, userConfig, /*capture=*/true, /*rebind=*/true,
                           /*onlyForPTXPasses=*/true);
    });
    llvm::raw_string_ostream os(result);
    if (failed(MlirOptMain(os, std::move(inputs.front()), registry, config)))
      return 1;
  } else {
    if (!config.inputSplitMarker().empty()) {
      llvm::errs() << (anyPTX ? "error: --split-input-file does not apply to "
                                "PTX input\n"
                              : "error: --split-input-file takes one MLIR "
                                "input with MLIR output\n");
      return 1;
    }
    // MlirOptMain's own steps that this path does not repeat.
    if (!config.getIrdlFile().empty() || config.shouldVerifyRoundtrip() ||
        !config.getReproducerFilename().empty()) {
      llvm::errs() << "error: --irdl-file, --verify-roundtrip and "
                      "--mlir-generate-reproducer take one MLIR input with "
                      "MLIR output\n";
      return 1;
    }
    if (failed(runOneProcess(std::move(inputs), registry, config, emit, result,
                             manifest)))
      return 1;
  }

  std::vector<std::pair<llvm::StringRef, llvm::StringRef>> files = {
      {clOptions->outputFilename, result}};
  if (!clOptions->manifestFilename.empty())
    files.emplace_back(clOptions->manifestFilename, manifest);
  return failed(gpuopt::writeOutputFiles(files)) ? 1 : 0;
}
