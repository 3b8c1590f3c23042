//===- Ptxas.cpp - Assemble exported PTX with ptxas -----------------------===//
//
// Runs NVIDIA's ptxas as a subprocess on a temporary file; its diagnostics
// are passed on verbatim when it fails.
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

using namespace mlir;
using namespace gpuopt;

static std::optional<std::string> findPtxas(const PtxasOptions &options) {
  if (!options.ptxasPath.empty())
    return options.ptxasPath;
  if (std::optional<std::string> env = llvm::sys::Process::GetEnv("PTXAS"))
    return *env;
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
  return std::nullopt;
}

FailureOr<std::string> gpuopt::assembleWithPtxas(llvm::StringRef ptx,
                                                 const PtxasOptions &options,
                                                 Location loc) {
  std::optional<std::string> ptxas = findPtxas(options);
  if (!ptxas)
    return emitError(loc, "ptxas not found: pass --ptxas=<path>, set PTXAS "
                          "or CUDA_HOME, or put CUDA's bin directory on PATH"),
           failure();

  llvm::SmallString<128> input, output, log;
  for (auto [path, suffix] :
       {std::pair(&input, "ptx"), std::pair(&output, "cubin"),
        std::pair(&log, "log")}) {
    if (std::error_code ec =
            llvm::sys::fs::createTemporaryFile("gpu-opt", suffix, *path))
      return emitError(loc, "cannot create a temporary file: ") << ec.message(),
             failure();
  }
  llvm::FileRemover removeInput(input), removeOutput(output), removeLog(log);
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
  std::optional<llvm::StringRef> redirects[] = {std::nullopt, log.str(),
                                                log.str()};
  std::string errorMessage;
  int rc = llvm::sys::ExecuteAndWait(*ptxas, args, /*Env=*/std::nullopt,
                                     redirects, /*SecondsToWait=*/0,
                                     /*MemoryLimit=*/0, &errorMessage);
  auto readLog = [&] {
    auto buffer = llvm::MemoryBuffer::getFile(log);
    return buffer ? (*buffer)->getBuffer().trim().str() : std::string();
  };
  if (rc < 0)
    return emitError(loc, "cannot run ") << *ptxas << ": " << errorMessage,
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
  return (*cubin)->getBuffer().str();
}

FailureOr<std::string> gpuopt::assembleWithPtxas(ptx::PTXModuleOp module,
                                                 llvm::StringRef ptx,
                                                 PtxasOptions options) {
  if (options.chip.empty())
    options.chip = module.getChip().str();
  if (options.chip.empty())
    return module.emitError("no target chip: the module has no .target; "
                            "pass --chip=sm_XX"),
           failure();
  return assembleWithPtxas(ptx, options, module.getLoc());
}
