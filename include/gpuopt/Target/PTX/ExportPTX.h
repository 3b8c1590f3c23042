//===- ExportPTX.h - The ptx dialect to .ptx text and cubins ----*- C++ -*-===//

#ifndef GPUOPT_TARGET_PTX_EXPORTPTX_H
#define GPUOPT_TARGET_PTX_EXPORTPTX_H

#include "gpuopt/Runtime/Manifest.h"
#include "ptx/IR/PTX.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "mlir/Support/Timing.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <optional>
#include <string>
#include <vector>

namespace gpuopt {

/// Prints `module` as a .ptx file.
mlir::LogicalResult exportPTX(ptx::PTXModuleOp module, llvm::raw_ostream &os);

/// Finds the ptx.module to export under `root`: the one named `name`, or the
/// only one when `name` is empty. Reports an error on `root` otherwise.
mlir::FailureOr<ptx::PTXModuleOp> findPTXModule(mlir::Operation *root,
                                                llvm::StringRef name);

/// Links `modules` into one new ptx.module named `name`, as one PTX file
/// holds them: the same `.target` (without `debug`) and address size, the
/// newest `.version`; every statement of each module in order, `.file`
/// indices renumbered, debug sections dropped (as a fused kernel drops
/// them); a declaration both modules make once; a clash of module-private
/// symbols (no `.visible`/`.weak`/`.common` linkage, not an `.entry`)
/// resolved by renaming the later one and its uses. Fails with an error on
/// `root`'s location naming what cannot be linked: other targets, two
/// entries or externally visible symbols of one name, a renamed symbol that
/// initializer or directive text names.
mlir::FailureOr<mlir::OwningOpRef<ptx::PTXModuleOp>>
linkPTXModules(llvm::ArrayRef<ptx::PTXModuleOp> modules, llvm::StringRef name,
               mlir::Location loc);

/// The ptx.module a tool exports from `root`: the one named `name`, the only
/// one, or, with no name and several, all of them linked into one
/// (linkPTXModules), owned by `linked`. So several inputs whose kernels stay
/// apart (a fusion that declined, probes of two files) still make one PTX
/// file. Reports an error on `root` when there is none, or when the modules
/// cannot be linked (saying why, and that --module=<name> picks one).
mlir::FailureOr<ptx::PTXModuleOp>
getPTXModuleToExport(mlir::Operation *root, llvm::StringRef name,
                     mlir::OwningOpRef<ptx::PTXModuleOp> &linked);

/// The launch manifest (docs/manifest.md) of `module` once written to
/// `modulePath` in `format` ("ptx" or "cubin"): each kernel's parameter
/// layout and launch bounds, as the runtime's struct (the runtime's writer
/// writes it). Fails, with an error on the kernel, for a parameter without
/// a fixed layout.
mlir::FailureOr<runtime::Manifest>
buildLaunchManifest(ptx::PTXModuleOp module, llvm::StringRef modulePath,
                    llvm::StringRef format);

/// The launch manifest of `module` as the tools write it (JSON indented by
/// two, final newline), for a module written to `outputPath` in `format` and
/// a manifest written to `manifestPath`: `module.path` is the output's file
/// name when both are in the same folder, else its absolute path.
mlir::FailureOr<std::string> printLaunchManifest(ptx::PTXModuleOp module,
                                                 llvm::StringRef outputPath,
                                                 llvm::StringRef manifestPath,
                                                 llvm::StringRef format);

struct PtxasOptions {
  /// ptxas to run; empty: $PTXAS, then PATH, then $CUDA_HOME/bin.
  std::string ptxasPath;
  /// -arch value; empty: the module's `.target`.
  std::string chip;
  std::vector<std::string> extraArgs;
};

/// Assembles PTX text with ptxas and returns the cubin. Errors (ptxas missing
/// or failing, with its message) are reported at `loc`.
mlir::FailureOr<std::string> assembleWithPtxas(llvm::StringRef ptx,
                                               const PtxasOptions &options,
                                               mlir::Location loc);

/// Assembles `ptx`, the export of `module`, with ptxas; an empty
/// `options.chip` becomes the module's `.target`. Errors are reported on the
/// module.
mlir::FailureOr<std::string> assembleWithPtxas(ptx::PTXModuleOp module,
                                               llvm::StringRef ptx,
                                               PtxasOptions options);

/// The ptxas to run: `options.ptxasPath`, else $PTXAS; the CUDA toolkit's
/// (PATH, $CUDA_HOME/bin, $CUDA_PATH/bin, /usr/local/cuda/bin); then one
/// that a Python package brings: $TRITON_PTXAS_PATH, Triton's bundled ptxas
/// (triton/backends/nvidia/bin), NVIDIA's wheels (nvidia/cu13/bin,
/// nvidia/cuda_nvcc/bin), looked for in the folders $GPUOPT_PYTHON_PATH
/// names and in the one that holds the gpuopt package this library came
/// with. std::nullopt when there is none.
std::optional<std::string> findPtxas(const PtxasOptions &options);

/// A PTX ISA version or a CUDA release: MAJOR.MINOR.
struct PTXVersion {
  unsigned major = 0;
  unsigned minor = 0;
  bool operator<(const PTXVersion &other) const {
    return major != other.major ? major < other.major : minor < other.minor;
  }
};

/// The `.version` of PTX text, if it has one.
std::optional<PTXVersion> getPTXVersion(llvm::StringRef ptx);
/// The CUDA release in `ptxas --version`'s output ("release 12.8").
std::optional<PTXVersion> parseCudaRelease(llvm::StringRef versionText);
/// The newest PTX ISA the ptxas of a CUDA release takes (12.8: 8.7).
PTXVersion getMaxPTXVersionOfCuda(PTXVersion cuda);
/// The newest PTX ISA `ptxas` takes (asked once per path); std::nullopt when
/// it does not say. runPtxas lowers a newer .version to it, and says which
/// ptxas is needed when the kernel does not assemble so.
std::optional<PTXVersion> getPtxasMaxPTXVersion(llvm::StringRef ptxas);

/// What ptxas reports (`-v`) about one function it compiled: the resources
/// that bound how many blocks of a kernel fit on an SM.
struct KernelResources {
  std::string kernel;
  /// An `.entry`; otherwise a `.func` that ptxas compiled on its own (with
  /// -g or -c, or one it did not inline), which has only the stack and spill
  /// figures.
  bool isEntry = false;
  unsigned registers = 0;
  unsigned barriers = 0;
  /// Static shared memory per block.
  uint64_t sharedBytes = 0;
  /// Stack frame per thread (local memory), spills included.
  uint64_t localBytes = 0;
  uint64_t spillStores = 0, spillLoads = 0;
  /// Stack of the function and the functions it calls.
  uint64_t cumulativeStackBytes = 0;
  /// Constant bank 0 (parameters; printed by ptxas before CUDA 13).
  uint64_t constBytes = 0;
};

/// Parses what `ptxas -v` prints: one record per function, in ptxas's order,
/// entries marked. Lines it does not know are skipped.
llvm::SmallVector<KernelResources>
parsePtxasVerboseOutput(llvm::StringRef output);

/// Runs `ptxas -v` on PTX text and returns every function it reports (see
/// parsePtxasVerboseOutput). Errors are reported at `loc`.
mlir::FailureOr<llvm::SmallVector<KernelResources>>
getPtxasResources(llvm::StringRef ptx, const PtxasOptions &options,
                  mlir::Location loc);

/// Exports `module` and runs `ptxas -v` on it (an empty `options.chip`
/// becomes the module's `.target`): one record per defined `.entry`, in the
/// module's order. Errors are reported on the module, or on an entry ptxas
/// said nothing about.
mlir::FailureOr<llvm::SmallVector<KernelResources>>
getPtxasResources(ptx::PTXModuleOp module, PtxasOptions options);

/// getPtxasResources of `module`'s entries, by kernel name.
mlir::FailureOr<llvm::StringMap<KernelResources>>
getPtxasEntryResources(ptx::PTXModuleOp module, const PtxasOptions &options);

/// How a tool writes one ptx.module: PTX text, or a cubin through ptxas,
/// with its launch manifest when `manifestPath` is set.
struct ModuleOutputOptions {
  bool cubin = false;
  PtxasOptions ptxas;
  /// Where the output and the manifest will be written (the manifest names
  /// the output relative to itself); no manifest when `manifestPath` is empty.
  std::string outputPath, manifestPath;
};

/// Exports `module` to `os` as PTX or a cubin, and prints its manifest into
/// `manifest`; `timing` gets the nested phases "export PTX" and "ptxas".
mlir::LogicalResult exportModule(ptx::PTXModuleOp module,
                                 const ModuleOutputOptions &options,
                                 llvm::raw_ostream &os, std::string &manifest,
                                 mlir::TimingScope &timing);

} // namespace gpuopt

#endif // GPUOPT_TARGET_PTX_EXPORTPTX_H
