//===- FusionConfig.h - Horizontal fusion configuration in YAML -*- C++ -*-===//
//
// What the horizontal fusion passes read about the kernels to fuse: which
// entries, how they are launched, and how to fuse them. Launch shapes are not
// in the PTX, so the user writes them in a YAML file:
//
//   name: ethash_blake2b
//   strategy: interleave    # auto | thread | interleave | dynamic | sm_aware
//   maxnreg: 96
//   kernels:
//     - name: ethash_like_search
//       module: ethash_like
//       block: 128            # or 16x4, 8x8x4, [128], [x, y], [x, y, z]
//       grid: 8192
//       ratio: 1
//     - name: blake2b_512
//       block: [256]
//       grid: [65536]
//       ratio: 8
//
// Every error is reported through the context's diagnostic engine at the
// offending YAML node (`file.yaml:LINE:COL: error: ...`).
//
//===----------------------------------------------------------------------===//

#ifndef GPUOPT_TRANSFORMS_HFUSE_FUSIONCONFIG_H
#define GPUOPT_TRANSFORMS_HFUSE_FUSIONCONFIG_H

#include "gpuopt/Dialect/GPUOpt/GPUOptAttributes.h"

#include "mlir/IR/Location.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Support/LLVM.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/SourceMgr.h"

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace gpuopt::hfuse {

/// The strategy a config names: one of the dialect's FusionStrategy values
/// (how the kernels share the fused kernel's blocks), or std::nullopt for
/// `auto` (the pass chooses from resources and profile times).
using ConfigStrategy = std::optional<FusionStrategy>;

/// "auto" (std::nullopt) or a FusionStrategy's name; failure otherwise.
mlir::FailureOr<ConfigStrategy> parseStrategy(llvm::StringRef name);
/// "auto" or the FusionStrategy's name.
llvm::StringRef stringifyStrategy(ConfigStrategy strategy);

/// One kernel to fuse.
struct KernelConfig {
  explicit KernelConfig(mlir::Location loc) : loc(loc) {}

  /// The `.entry` name (required).
  std::string name;
  /// The input module (file stem) the entry comes from; empty: any.
  std::string module;
  /// Block shape, for a kernel without `.reqntid`, written `128`, `16x4`,
  /// `8x8x4` or as a list `[16, 4]`; unwritten dimensions are 1.
  std::optional<std::array<int64_t, 3>> block;
  /// Grid shape; unwritten dimensions are 1.
  std::optional<std::array<int64_t, 3>> grid;
  /// Bytes of dynamic shared memory per block.
  std::optional<int64_t> dynamicSmem;
  /// The user's word that the kernel is correct with any 1-D block size,
  /// for a kernel the kernel analysis cannot show resizable (fusion then
  /// resizes it with a warning).
  bool resizable = false;
  /// Thread strategy: the threads of the fused block given to this kernel.
  /// A multiple of 32; other than the block size only for a kernel the
  /// kernel analysis shows resizable, or one marked `resizable`.
  std::optional<int64_t> threads;
  /// Where `threads` is written, for the pass's refusal of a resize.
  std::optional<mlir::Location> threadsLoc;
  /// Interleave and dynamic strategies: this kernel's blocks per period.
  std::optional<int64_t> ratio;
  /// Thread split: how many of its blocks one fused block runs side by side.
  std::optional<int64_t> replicas;
  /// Thread split on sm_90a: its registers per thread, taken with
  /// `setmaxnreg` (0: none).
  std::optional<int64_t> setmaxnreg;
  /// Measured time of the kernel alone (a profile), in milliseconds.
  std::optional<double> timeMs;
  /// Where the kernel's entry is written, for diagnostics.
  mlir::Location loc;

  /// Threads per block (x * y * z), if the block shape is known.
  std::optional<int64_t> getBlockThreads() const;
};

/// One fused kernel.
struct FusionConfig {
  explicit FusionConfig(mlir::Location loc) : loc(loc) {}

  /// Name of the fused kernel; empty: the pass makes one up.
  std::string name;
  ConfigStrategy strategy;
  /// Register cap (`.maxnreg`) of the fused kernel.
  std::optional<int64_t> maxnreg;
  /// Launch-agnostic: grids (and dynamic shared memory where the strategy
  /// allows) are parameters of the fused kernel (`runtime_shapes: true`).
  bool runtimeShapes = false;
  /// strategy auto: a decline is an error (`require: true`), not a remark.
  bool require = false;
  /// Dynamic and sm_aware dispatch: work units a fused block takes per
  /// ticket (`units:`).
  std::optional<int64_t> units;
  /// The kernels to fuse, at least two.
  std::vector<KernelConfig> kernels;
  /// Where the configuration starts (its top-level map).
  mlir::Location loc;
};

/// A launch shape written `128`, `16x4` or `64x128x2` (in `blocks=` and
/// `grids=`, and as `block:`/`grid:` values): its dimensions, the unwritten
/// ones 1; std::nullopt unless it is 1 to 3 integers joined by `x` (the
/// caller checks their range).
std::optional<std::array<int64_t, 3>> parseShape(llvm::StringRef text);

/// Parses and checks the fusion configuration in the main buffer of
/// `sourceMgr`. Errors are located at the buffer's identifier.
mlir::FailureOr<FusionConfig> parseFusionConfig(llvm::SourceMgr &sourceMgr,
                                                mlir::MLIRContext *ctx);

/// Reads and parses the fusion configuration in the file at `path`.
mlir::FailureOr<FusionConfig> readFusionConfig(llvm::StringRef path,
                                               mlir::MLIRContext *ctx);

} // namespace gpuopt::hfuse

#endif // GPUOPT_TRANSFORMS_HFUSE_FUSIONCONFIG_H
