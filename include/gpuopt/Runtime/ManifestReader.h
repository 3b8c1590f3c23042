//===- ManifestReader.h - Reading launch manifests --------------*- C++ -*-===//
//
// The one reader of launch manifest JSON (docs/manifest.md), shared by the
// runtime and the compiler's importer: strict, every error naming the JSON
// path of the offending value.
//
//===----------------------------------------------------------------------===//

#ifndef GPUOPT_RUNTIME_MANIFESTREADER_H
#define GPUOPT_RUNTIME_MANIFESTREADER_H

#include "gpuopt/Runtime/Manifest.h"

#include <string>
#include <string_view>

namespace gpuopt::runtime {

/// Parses and validates manifest JSON. Errors read
/// "<Source>: <json.path>: <what>", e.g.
/// "m.json: kernels[0].params[2].size: expected an unsigned integer", and
/// for text that is not JSON "<Source>: invalid JSON: parse error at line
/// L, column C: ...".
Expected<Manifest> parseManifest(std::string_view Text,
                                 const std::string &Source = "manifest");
/// Reads and parses a manifest file.
Expected<Manifest> readManifest(const std::string &Path);

} // namespace gpuopt::runtime

#endif // GPUOPT_RUNTIME_MANIFESTREADER_H
