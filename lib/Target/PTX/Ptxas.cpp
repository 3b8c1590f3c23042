//===- Ptxas.cpp - Assemble exported PTX with ptxas -----------------------===//
//
// Runs NVIDIA's ptxas as a subprocess on a temporary file; its diagnostics
// are passed on verbatim when it fails. With -v, its report of each
// function's registers, barriers, shared memory and spills is parsed for the
// fusion passes, which size a fused kernel by them.
//
//===----------------------------------------------------------------------===//

#include "gpuopt/Target/PTX/ExportPTX.h"

#include "mlir/IR/Diagnostics.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FileUtilities.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/Program.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"

#include <mutex>

#include <dlfcn.h>

using namespace mlir;
using namespace gpuopt;

/// The oldest CUDA release whose ptxas takes `version` (the inverse of
/// getMaxPTXVersionOfCuda), as "MAJOR.MINOR".
static std::string getCudaOfPTXVersion(PTXVersion version) {
  for (unsigned major = 11; major <= 14; ++major)
    for (unsigned minor = 0; minor <= 9; ++minor)
      if (!(getMaxPTXVersionOfCuda({major, minor}) < version))
        return std::to_string(major) + "." + std::to_string(minor);
  return "newer";
}

/// The folders that may hold Python packages with a ptxas in them: those
/// $GPUOPT_PYTHON_PATH names (the gpuopt package sets it to its sys.path),
/// then the folder that holds the package this library was loaded from
/// (site-packages/gpuopt/lib/libgpuopt.so in the wheel).
static std::vector<std::string> getPythonPackageFolders() {
  std::vector<std::string> folders;
  if (std::optional<std::string> paths =
          llvm::sys::Process::GetEnv("GPUOPT_PYTHON_PATH")) {
    llvm::SmallVector<llvm::StringRef> parts;
    llvm::StringRef(*paths).split(parts, ':', /*MaxSplit=*/-1,
                                  /*KeepEmpty=*/false);
    for (llvm::StringRef part : parts)
      folders.push_back(part.str());
  }
  Dl_info info;
  if (dladdr(reinterpret_cast<void *>(&getPythonPackageFolders), &info) &&
      info.dli_fname) {
    llvm::SmallString<256> library(info.dli_fname);
    if (!llvm::sys::fs::real_path(info.dli_fname, library))
      folders.push_back(llvm::sys::path::parent_path(
                            llvm::sys::path::parent_path(
                                llvm::sys::path::parent_path(library)))
                            .str());
  }
  return folders;
}

std::optional<std::string> gpuopt::findPtxas(const PtxasOptions &options) {
  if (!options.ptxasPath.empty())
    return options.ptxasPath;
  std::optional<std::string> env = llvm::sys::Process::GetEnv("PTXAS");
  if (env && !env->empty())
    return *env;
  // The CUDA toolkit.
  if (llvm::ErrorOr<std::string> found = llvm::sys::findProgramByName("ptxas"))
    return *found;
  for (const char *var : {"CUDA_HOME", "CUDA_PATH"}) {
    if (std::optional<std::string> home = llvm::sys::Process::GetEnv(var)) {
      llvm::SmallString<256> path(*home);
      llvm::sys::path::append(path, "bin", "ptxas");
      if (llvm::sys::fs::can_execute(path))
        return std::string(path);
    }
  }
  if (llvm::sys::fs::can_execute("/usr/local/cuda/bin/ptxas"))
    return std::string("/usr/local/cuda/bin/ptxas");
  // Triton's own (as Triton chooses it), then the ptxas of an installed
  // Python package: Triton's bundled one, NVIDIA's wheels.
  if (std::optional<std::string> triton =
          llvm::sys::Process::GetEnv("TRITON_PTXAS_PATH"))
    if (llvm::sys::fs::can_execute(*triton))
      return *triton;
  for (const std::string &folder : getPythonPackageFolders()) {
    for (llvm::StringRef relative :
         {"triton/backends/nvidia/bin/ptxas", "nvidia/cu13/bin/ptxas",
          "nvidia/cuda_nvcc/bin/ptxas"}) {
      llvm::SmallString<256> path(folder);
      llvm::sys::path::append(path, relative);
      if (llvm::sys::fs::can_execute(path))
        return std::string(path);
    }
  }
  return std::nullopt;
}

std::optional<gpuopt::PTXVersion> gpuopt::getPtxasMaxPTXVersion(
    llvm::StringRef ptxas) {
  static std::mutex mutex;
  static llvm::StringMap<std::optional<PTXVersion>> cache;
  std::lock_guard<std::mutex> lock(mutex);
  auto [it, inserted] = cache.try_emplace(ptxas);
  if (!inserted)
    return it->second;
  llvm::SmallString<128> logPath;
  if (llvm::sys::fs::createTemporaryFile("gpu-opt-ptxas", "version", logPath))
    return std::nullopt;
  llvm::FileRemover removeLog(logPath);
  std::optional<llvm::StringRef> redirects[] = {std::nullopt, logPath.str(),
                                                logPath.str()};
  llvm::StringRef args[] = {ptxas, "--version"};
  if (llvm::sys::ExecuteAndWait(ptxas, args, std::nullopt, redirects) != 0)
    return std::nullopt;
  auto buffer = llvm::MemoryBuffer::getFile(logPath);
  if (!buffer)
    return std::nullopt;
  std::optional<PTXVersion> release =
      parseCudaRelease((*buffer)->getBuffer());
  if (release)
    it->second = getMaxPTXVersionOfCuda(*release);
  return it->second;
}

std::optional<gpuopt::PTXVersion>
gpuopt::parseCudaRelease(llvm::StringRef versionText) {
  // "Cuda compilation tools, release 12.8, V12.8.93"
  size_t at = versionText.find("release ");
  if (at == llvm::StringRef::npos)
    return std::nullopt;
  llvm::StringRef rest = versionText.drop_front(at + 8);
  unsigned major = 0, minor = 0;
  if (rest.consumeInteger(10, major) || !rest.consume_front(".") ||
      rest.consumeInteger(10, minor))
    return std::nullopt;
  return PTXVersion{major, minor};
}

gpuopt::PTXVersion gpuopt::getMaxPTXVersionOfCuda(PTXVersion cuda) {
  // The PTX ISA each CUDA release introduced (the PTX ISA manual's release
  // notes): 11.y -> 7.y, 12.0-12.5 -> 8.0-8.5, 12.6 -> 8.5, 12.8 -> 8.7,
  // 12.9 -> 8.8, 13.y -> 9.y.
  if (cuda.major == 12) {
    if (cuda.minor <= 5)
      return {8, cuda.minor};
    if (cuda.minor <= 7)
      return {8, 5};
    return {8, cuda.minor - 1};
  }
  if (cuda.major >= 11)
    return {cuda.major - 4, cuda.minor};
  return {cuda.major - 4, 0};
}

std::optional<gpuopt::PTXVersion>
gpuopt::getPTXVersion(llvm::StringRef ptx) {
  // The first directive: ".version 8.7" (comments before it are allowed).
  size_t at = ptx.find(".version");
  if (at == llvm::StringRef::npos)
    return std::nullopt;
  llvm::StringRef rest = ptx.drop_front(at + 8).ltrim(" \t");
  unsigned major = 0, minor = 0;
  if (rest.consumeInteger(10, major) || !rest.consume_front(".") ||
      rest.consumeInteger(10, minor))
    return std::nullopt;
  return PTXVersion{major, minor};
}

/// `ptx` with its .version directive set to `version`.
static std::string withPTXVersion(llvm::StringRef ptx, PTXVersion version) {
  size_t at = ptx.find(".version");
  size_t end = ptx.find_first_of("\r\n", at);
  std::string result = ptx.take_front(at).str();
  result += ".version " + std::to_string(version.major) + "." +
            std::to_string(version.minor);
  result += ptx.drop_front(end == llvm::StringRef::npos ? ptx.size() : end);
  return result;
}

/// Runs ptxas on `ptx` with `options` and `moreArgs`, and returns the cubin;
/// `log`, when given, receives what ptxas printed.
static FailureOr<std::string> runPtxas(llvm::StringRef ptx,
                                       const PtxasOptions &options,
                                       llvm::ArrayRef<llvm::StringRef> moreArgs,
                                       Location loc,
                                       std::string *log = nullptr) {
  std::optional<std::string> ptxas = findPtxas(options);
  if (!ptxas)
    return emitError(loc, "ptxas not found: install the CUDA toolkit (or "
                          "NVIDIA's wheel: pip install nvidia-cuda-nvcc), "
                          "then pass --ptxas=<path>, set PTXAS or CUDA_HOME, "
                          "or put its bin directory on PATH"),
           failure();

  // A ptxas older than the PTX: the PTX with the .version it takes, which
  // assembles when the kernel uses nothing newer (ptxas says otherwise).
  std::string lowered;
  std::optional<PTXVersion> wanted = getPTXVersion(ptx);
  std::optional<PTXVersion> supported = getPtxasMaxPTXVersion(*ptxas);
  bool lowering = wanted && supported && *supported < *wanted;
  if (lowering) {
    lowered = withPTXVersion(ptx, *supported);
    ptx = lowered;
  }

  llvm::SmallString<128> input, output, logPath;
  for (auto [path, suffix] :
       {std::pair(&input, "ptx"), std::pair(&output, "cubin"),
        std::pair(&logPath, "log")}) {
    if (std::error_code ec =
            llvm::sys::fs::createTemporaryFile("gpu-opt", suffix, *path))
      return emitError(loc, "cannot create a temporary file: ") << ec.message(),
             failure();
  }
  llvm::FileRemover removeInput(input), removeOutput(output),
      removeLog(logPath);
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(input, ec);
    if (ec)
      return emitError(loc, "cannot write ") << input << ": " << ec.message(),
             failure();
    os << ptx;
  }

  std::vector<llvm::StringRef> args = {*ptxas, "-arch", options.chip,
                                       input,  "-o",    output};
  for (const std::string &arg : options.extraArgs)
    args.push_back(arg);
  llvm::append_range(args, moreArgs);
  std::optional<llvm::StringRef> redirects[] = {std::nullopt, logPath.str(),
                                                logPath.str()};
  std::string errorMessage;
  int rc = llvm::sys::ExecuteAndWait(*ptxas, args, /*Env=*/std::nullopt,
                                     redirects, /*SecondsToWait=*/0,
                                     /*MemoryLimit=*/0, &errorMessage);
  auto readLog = [&] {
    auto buffer = llvm::MemoryBuffer::getFile(logPath);
    return buffer ? (*buffer)->getBuffer().trim().str() : std::string();
  };
  if (rc < 0)
    return emitError(loc, "cannot run ") << *ptxas << ": " << errorMessage,
           failure();
  if (rc != 0 && lowering)
    return emitError(loc, "this PTX needs PTX ISA ")
               << wanted->major << "." << wanted->minor << ", newer than "
               << *ptxas << " takes (PTX ISA " << supported->major << "."
               << supported->minor
               << " at most); with its .version lowered to that, ptxas "
                  "failed:\n"
               << readLog()
               << "\nUse a ptxas of CUDA " << getCudaOfPTXVersion(*wanted)
               << " or newer (--ptxas=PATH or $PTXAS)",
           failure();
  if (rc != 0)
    return emitError(loc, "ptxas failed (exit code ") << rc << "):\n"
                                                      << readLog(),
           failure();
  auto cubin = llvm::MemoryBuffer::getFile(output, /*IsText=*/false);
  if (!cubin)
    return emitError(loc, "ptxas wrote no cubin: ")
               << cubin.getError().message(),
           failure();
  if (log)
    *log = readLog();
  return (*cubin)->getBuffer().str();
}

FailureOr<std::string> gpuopt::assembleWithPtxas(llvm::StringRef ptx,
                                                 const PtxasOptions &options,
                                                 Location loc) {
  return runPtxas(ptx, options, /*moreArgs=*/{}, loc);
}

/// An empty `options.chip` becomes the module's `.target`.
static LogicalResult setChipFromModule(ptx::PTXModuleOp module,
                                       PtxasOptions &options) {
  if (options.chip.empty())
    options.chip = module.getChip().str();
  if (options.chip.empty())
    return module.emitError("no target chip: the module has no .target; "
                            "pass --chip=sm_XX");
  return success();
}

FailureOr<std::string> gpuopt::assembleWithPtxas(ptx::PTXModuleOp module,
                                                 llvm::StringRef ptx,
                                                 PtxasOptions options) {
  if (failed(setChipFromModule(module, options)))
    return failure();
  return assembleWithPtxas(ptx, options, module.getLoc());
}

//===----------------------------------------------------------------------===//
// Resource report (ptxas -v)
//===----------------------------------------------------------------------===//

/// Reads the comma-separated figures of a `Used ...` line or a stack frame
/// line ("Used 28 registers, used 1 barriers, 128 bytes smem",
/// "0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads") into
/// `resources`. Figures it does not know (other constant banks, textures)
/// are skipped, so that a new ptxas field does not break the report.
static void parseFigures(llvm::StringRef line, KernelResources &resources) {
  llvm::SmallVector<llvm::StringRef> items;
  line.split(items, ',');
  for (llvm::StringRef item : items) {
    item = item.trim();
    if (!item.consume_front("Used "))
      item.consume_front("used ");
    uint64_t value;
    if (item.consumeInteger(10, value))
      continue;
    llvm::StringRef what = item.trim();
    if (what == "registers")
      resources.registers = value;
    else if (what == "barriers")
      resources.barriers = value;
    else if (what == "bytes smem")
      resources.sharedBytes = value;
    else if (what == "bytes cmem[0]")
      resources.constBytes = value;
    else if (what == "bytes stack frame")
      resources.localBytes = value;
    else if (what == "bytes spill stores")
      resources.spillStores = value;
    else if (what == "bytes spill loads")
      resources.spillLoads = value;
    else if (what == "bytes cumulative stack size")
      resources.cumulativeStackBytes = value;
  }
}

llvm::SmallVector<KernelResources>
gpuopt::parsePtxasVerboseOutput(llvm::StringRef output) {
  llvm::SmallVector<KernelResources> result;
  // The record that the figure lines after a header belong to.
  std::optional<size_t> current;
  auto find = [&](llvm::StringRef name) {
    for (auto [index, resources] : llvm::enumerate(result))
      if (resources.kernel == name)
        return index;
    result.emplace_back().kernel = name.str();
    return result.size() - 1;
  };

  llvm::SmallVector<llvm::StringRef> lines;
  output.split(lines, '\n');
  for (llvm::StringRef line : lines) {
    line = line.trim();
    // "ptxas info    : ..." (or "ptxas-blackwell info ...", Triton's second
    // ptxas); warnings and errors have other prefixes.
    llvm::StringRef info = line;
    if (info.consume_front("ptxas") &&
        (!info.consume_front("-") ||
         !(info = info.drop_while([](char c) { return llvm::isAlnum(c); }))
              .empty()) &&
        info.consume_front(" info")) {
      line = info.ltrim();
      if (!line.consume_front(":"))
        continue;
      line = line.trim();
      if (line.consume_front("Compiling entry function '")) {
        current = find(line.take_until([](char c) { return c == '\''; }));
        result[*current].isEntry = true;
      } else if (line.consume_front("Function properties for ")) {
        current = find(line.trim());
      } else if (line.starts_with("Used ") && current) {
        parseFigures(line, result[*current]);
      }
      continue;
    }
    // The stack frame line has no prefix; it follows "Function properties".
    if (current && line.contains(" bytes stack frame"))
      parseFigures(line, result[*current]);
  }
  return result;
}

FailureOr<llvm::SmallVector<KernelResources>>
gpuopt::getPtxasResources(llvm::StringRef ptx, const PtxasOptions &options,
                          Location loc) {
  std::string log;
  if (failed(runPtxas(ptx, options, {"-v"}, loc, &log)))
    return failure();
  return parsePtxasVerboseOutput(log);
}

FailureOr<llvm::SmallVector<KernelResources>>
gpuopt::getPtxasResources(ptx::PTXModuleOp module, PtxasOptions options) {
  if (failed(setChipFromModule(module, options)))
    return failure();
  // A module that calls functions defined elsewhere (relocatable device
  // code) links later: ptxas compiles it alone with -c, as nvcc -rdc does.
  if (llvm::any_of(module.getBodyBlock()->getOps<ptx::FuncOp>(),
                   [](ptx::FuncOp func) { return !func.hasBody(); }) &&
      !llvm::is_contained(options.extraArgs, "-c"))
    options.extraArgs.push_back("-c");
  std::string ptx;
  llvm::raw_string_ostream os(ptx);
  if (failed(exportPTX(module, os)))
    return failure();
  FailureOr<llvm::SmallVector<KernelResources>> reported =
      getPtxasResources(ptx, options, module.getLoc());
  if (failed(reported))
    return failure();

  llvm::SmallVector<KernelResources> entries;
  for (auto entry : module.getBodyBlock()->getOps<ptx::EntryOp>()) {
    if (!entry.hasBody())
      continue;
    auto it = llvm::find_if(*reported, [&](const KernelResources &resources) {
      return resources.isEntry && resources.kernel == entry.getSymName();
    });
    // A ptxas whose -v output reads differently must not yield zeros.
    if (it == reported->end())
      return entry.emitError("ptxas -v reported no resource usage for entry '")
                 << entry.getSymName() << "'",
             failure();
    entries.push_back(std::move(*it));
  }
  return entries;
}

FailureOr<llvm::StringMap<KernelResources>>
gpuopt::getPtxasEntryResources(ptx::PTXModuleOp module,
                               const PtxasOptions &options) {
  FailureOr<SmallVector<KernelResources>> report =
      getPtxasResources(module, options);
  if (failed(report))
    return failure();
  llvm::StringMap<KernelResources> byName;
  for (const KernelResources &k : *report)
    if (k.isEntry)
      byName[k.kernel] = k;
  return byName;
}
