//===- ManifestWriter.h - Writing launch manifests --------------*- C++ -*-===//
//
// The one writer of launch manifest JSON (docs/manifest.md), shared by the
// runtime (gpu-run --print-manifest) and the compiler's exporter
// (gpu-translate --manifest).
//
//===----------------------------------------------------------------------===//

#ifndef GPUOPT_RUNTIME_MANIFESTWRITER_H
#define GPUOPT_RUNTIME_MANIFESTWRITER_H

#include "gpuopt/Runtime/Manifest.h"

#include <string>

namespace gpuopt::runtime {

struct ManifestWriteOptions {
  /// The manifest_version written; 0 is Manifest::CurrentVersion. Keys
  /// newer than it are the caller's to avoid (oldestVersionFor).
  int Version = 0;
  /// Every object's keys in byte order, as the compiler has always written
  /// them; otherwise in schema order.
  bool SortKeys = false;
};

/// The oldest version that describes M: 1, 2 with fused kernels, 3 with
/// probed ones, 4 with a map of dynamic capacity, 5 with a kernel that needs
/// the shared memory opt-in or has a probe_occupancy.
int oldestVersionFor(const Manifest &M);

/// Serialises a manifest as JSON indented by 2, ending in a newline,
/// leaving out the keys whose values are the defaults.
std::string writeManifest(const Manifest &M,
                          const ManifestWriteOptions &Opts = {});

} // namespace gpuopt::runtime

#endif // GPUOPT_RUNTIME_MANIFESTWRITER_H
