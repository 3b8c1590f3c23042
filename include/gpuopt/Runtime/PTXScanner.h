//===- PTXScanner.h - Launch manifests from PTX entry headers ---*- C++ -*-===//
//
// gpu-run must run any PTX file, also one that comes with no manifest (nvcc
// or Triton output). The kernel headers carry what a launch needs: entry
// names, parameter types, alignments and array sizes (hence the parameter
// layout), and `.reqntid` / `.maxntid`. This scanner reads only those
// headers and skips bodies by brace matching, so it is self-contained (the
// runtime does not link the MLIR PTX importer) and fast on large files.
//
//===----------------------------------------------------------------------===//

#ifndef GPUOPT_RUNTIME_PTXSCANNER_H
#define GPUOPT_RUNTIME_PTXSCANNER_H

#include "gpuopt/Runtime/Manifest.h"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpuopt::runtime {

/// A module-scope variable that a launcher can fill (cuModuleGetGlobal_v2),
/// as the PTX declares it.
struct PTXVariable {
  std::string Name;
  /// "const" or "global".
  std::string Space;
  /// Its bytes; std::nullopt for an `.extern` or unsized array.
  std::optional<uint64_t> Bytes;
};

/// Builds a manifest for the `.entry` kernels of a PTX module. module.path is
/// Source, module.target the `.target` chip. Per kernel: parameters laid out
/// with their natural (or `.align`) alignment, kind "pointer" for `.ptr`
/// parameters and "bytes" for arrays; launch.block from `.reqntid` (else
/// "runtime"), launch.max_threads from `.maxntid`, launch.grid "runtime",
/// and launch.dynamic_smem "runtime" when the kernel names an `.extern
/// .shared` array of the module, itself or through a device function it
/// names (its size is the launcher's choice), else 0. With Variables, also
/// lists the module-scope `.const` and `.global` variables.
/// Errors read "<Source>:<line>:<col>: error: <what was expected>".
Expected<Manifest> scanPTX(std::string_view Text, const std::string &Source,
                           std::vector<PTXVariable> *Variables = nullptr);
/// Reads a PTX file and scans it.
Expected<Manifest> scanPTXFile(const std::string &Path,
                               std::vector<PTXVariable> *Variables = nullptr);

} // namespace gpuopt::runtime

#endif // GPUOPT_RUNTIME_PTXSCANNER_H
