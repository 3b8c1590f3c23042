//===- Manifest.h - Launch manifests ----------------------------*- C++ -*-===//
//
// A launch manifest is the contract between the compiler and whatever runs
// its output: which module, which kernels, how their parameters are laid
// out, how they are launched, and (for fused or probed kernels) how the
// original kernels' arguments map onto the new ones and which parameters are
// probe buffers of which layout. It is JSON so that Python and other tools
// read it without this library. docs/manifest.md is the schema's reference;
// ManifestReader.h and ManifestWriter.h read and write it.
//
//===----------------------------------------------------------------------===//

#ifndef GPUOPT_RUNTIME_MANIFEST_H
#define GPUOPT_RUNTIME_MANIFEST_H

#include "gpuopt/Runtime/Status.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpuopt::runtime {

/// A CUDA grid or block shape.
struct Dim3 {
  uint64_t X = 1, Y = 1, Z = 1;
  uint64_t count() const { return X * Y * Z; }
  bool operator==(const Dim3 &O) const {
    return X == O.X && Y == O.Y && Z == O.Z;
  }
  bool operator!=(const Dim3 &O) const { return !(*this == O); }
};
std::string toString(const Dim3 &D);

enum class ParamKind {
  Scalar,  ///< A value of a PTX fundamental type.
  Pointer, ///< A 64-bit address (PTX `.ptr`, or known from the source).
  Bytes,   ///< An aggregate passed by value (`.align A .b8 name[N]`).
};
const char *toString(ParamKind K);

/// One kernel parameter and its place in the parameter buffer.
struct ParamInfo {
  std::string Name;
  /// PTX type without the dot: "u32", "f32", "b8" ...
  std::string Type;
  uint64_t Size = 0;
  uint64_t Align = 0;
  uint64_t Offset = 0;
  ParamKind Kind = ParamKind::Scalar;
  /// For pointers, the state space pointed to ("global" ...); may be empty.
  std::string Space;
  /// For pointers, the alignment of the pointee (`.ptr .align N`), or 0.
  uint64_t PointeeAlign = 0;

  bool operator==(const ParamInfo &O) const;
};

/// How a kernel is launched. std::nullopt means "given at run time".
struct LaunchInfo {
  std::optional<Dim3> Block;
  std::optional<Dim3> Grid;
  std::optional<uint64_t> DynamicSmem;
  /// The `.maxntid` bound, when the kernel declares one.
  std::optional<Dim3> MaxThreads;
  /// The static shared memory and DynamicSmem (which is then fixed) exceed
  /// 48 KiB together: the launcher must raise the function's
  /// CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES to DynamicSmem first
  /// (manifest version 5: "smem_optin").
  bool SmemOptin = false;

  bool operator==(const LaunchInfo &O) const;
};

/// Resource usage reported by ptxas or the driver, when known.
struct ResourceInfo {
  std::optional<uint64_t> Registers;
  std::optional<uint64_t> StaticSmem;
  std::optional<uint64_t> LocalBytes;

  bool operator==(const ResourceInfo &O) const;
};

/// How a horizontally fused kernel divides its blocks among the original
/// kernels (manifest version 2: "fusion_strategy").
enum class FusionStrategy {
  /// Every fused block runs every part, each on its own thread range.
  Thread,
  /// Each fused block runs one part whole, chosen by the block index: each
  /// dispatch period of sum(ratio) blocks gives part p ratio[p] of them.
  Interleave,
  /// Each fused block runs one part whole, chosen at run time in the
  /// proportions of the ratios.
  Dynamic,
  /// Each fused block runs one part whole, chosen at run time by its SM's
  /// counter in the proportions of the ratios, per SM.
  SMAware,
};
const char *toString(FusionStrategy S);

/// One original kernel of a horizontally fused kernel (reserved for the
/// fusion passes; see docs/manifest.md).
struct FusedPart {
  std::string Kernel;
  /// The module the kernel came from, when known.
  std::string Module;
  /// The fused block's threads [ThreadsLo, ThreadsHi) run this kernel. For
  /// the interleave and dynamic strategies ThreadsLo is 0: a block runs one
  /// part whole, so the parts' ranges overlap.
  uint64_t ThreadsLo = 0, ThreadsHi = 0;
  /// Interleave and dynamic strategies: this part's share of each dispatch
  /// period (positive); absent means 1.
  std::optional<uint64_t> Ratio;
  /// The kernel's own block shape (its thread count is ThreadsHi - ThreadsLo).
  std::optional<Dim3> Block;
  /// The kernel's own grid; fused blocks past it skip this part. Absent
  /// ("runtime") in a launch-agnostic kernel, which takes it in its shape
  /// parameters.
  std::optional<Dim3> Grid;
  /// Launch-agnostic kernels: the grid and dynamic shared memory the
  /// launcher uses when given none (manifest version 6: "default_grid",
  /// "default_dynamic_smem"); only where Grid and DynamicSmem are absent.
  std::optional<Dim3> DefaultGrid;
  std::optional<uint64_t> DefaultDynamicSmem;
  /// Where this kernel's dynamic shared memory starts in the fused kernel's,
  /// and how much it needs.
  uint64_t DynamicSmemOffset = 0;
  std::optional<uint64_t> DynamicSmem;
  /// ArgMap[i] is the fused kernel's parameter that receives the original
  /// kernel's parameter i.
  std::vector<uint64_t> ArgMap;
  /// Thread split (manifest version 6: "replicas", "setmaxnreg"): how many
  /// of its blocks a fused block runs side by side (copy c on threads
  /// [ThreadsLo + c * T, ThreadsLo + (c + 1) * T) as its block `fused block
  /// * Replicas + c`), and the registers per thread its warps take with
  /// setmaxnreg (0: none).
  uint64_t Replicas = 1;
  uint64_t Setmaxnreg = 0;

  bool operator==(const FusedPart &O) const;
};

/// What a shape parameter of a launch-agnostic fused kernel receives: a
/// dimension of a part's grid, or its dynamic shared memory in bytes.
enum class ShapeField { GridX, GridY, GridZ, DynamicSmem };
const char *toString(ShapeField F);

/// A `.u32` parameter of a launch-agnostic fused kernel that the launcher
/// sets from a part's launch (manifest version 6: "shape_params").
struct ShapeParam {
  uint64_t Param = 0;
  /// Index into the kernel's FusedFrom.
  uint64_t Part = 0;
  ShapeField Field = ShapeField::GridX;

  bool operator==(const ShapeParam &O) const;
};

enum class ProbeLevel { Thread, Warp, Block };
const char *toString(ProbeLevel L);

struct ProbeField {
  std::string Name;
  /// PTX type without the dot.
  std::string Type;
  uint64_t Offset = 0;

  bool operator==(const ProbeField &O) const;
};

/// One probe record buffer, which the probe pass adds as a kernel parameter
/// and the launcher allocates and zeroes (docs/manifest.md, "probes").
struct ProbeBuffer {
  /// The record map, e.g. "blocks"; unique in its kernel.
  std::string Name;
  /// The probe spec that defined the map, e.g. "block_sched"; may be empty
  /// (manifest version 3: "probe").
  std::string Probe;
  /// The kernel parameter that receives the buffer's address.
  uint64_t Param = 0;
  ProbeLevel Level = ProbeLevel::Thread;
  /// Records per thread, warp or block. For a DynamicCapacity map, the
  /// capacity the launcher chose (0 until it sized the buffer).
  uint64_t Capacity = 0;
  /// The capacity is not known before the kernel runs (manifest version 4:
  /// "capacity": "dynamic"): the launcher chooses it, by a counting run, and
  /// passes it in parameter CapacityParam.
  bool DynamicCapacity = false;
  /// For a DynamicCapacity map, the 4-byte (u32) kernel parameter that
  /// receives the capacity (manifest version 4: "capacity_param"); unused
  /// otherwise.
  uint64_t CapacityParam = 0;
  uint64_t RecordBytes = 0;
  /// The buffer ends with a u64 that counts the records the kernel dropped
  /// because their slots were full (manifest version 3:
  /// "overflow_counter").
  bool OverflowCounter = false;
  /// After the records comes a u32 per slot: how many records the slot's
  /// writer tried to save, dropped ones included (manifest version 4:
  /// "slot_counts"; required by DynamicCapacity).
  bool SlotCounts = false;
  std::vector<ProbeField> Fields;
  /// The buffer lies in the kernel's last parameter (the kernel's
  /// ProbeScratch, Param its parameter), at the grid's blocks times this
  /// many bytes from its address (manifest version 7: "block_offset").
  std::optional<uint64_t> BlockOffset;

  /// Slot owners per block: the block's threads, ceil(threads / 32) warps,
  /// or 1.
  uint64_t unitsPerBlock(const Dim3 &Block) const;
  /// Slots of the launch: grid blocks * unitsPerBlock.
  uint64_t slots(const Dim3 &Grid, const Dim3 &Block) const;
  /// The records: grid blocks * unitsPerBlock * capacity * record bytes.
  uint64_t bufferBytes(const Dim3 &Grid, const Dim3 &Block) const;
  /// Where the slot counts lie (when SlotCounts): the records' bytes
  /// rounded up to a multiple of 8.
  uint64_t countsOffset(const Dim3 &Grid, const Dim3 &Block) const;
  /// Where the overflow counter lies (when OverflowCounter): after the
  /// records rounded up to a multiple of 8 and, with SlotCounts, the counts
  /// (4 bytes a slot) rounded up to a multiple of 8.
  uint64_t overflowOffset(const Dim3 &Grid, const Dim3 &Block) const;
  /// The whole buffer: overflowOffset, plus 8 bytes for the overflow
  /// counter when there is one.
  uint64_t totalBytes(const Dim3 &Grid, const Dim3 &Block) const;
  bool operator==(const ProbeBuffer &O) const;
};

/// Every probe buffer of a kernel lies in one parameter of its own, its
/// last (Triton's profile scratch), which the launcher allocates as
/// BytesPerBlock times the grid's blocks, at a multiple of Align, and
/// zeroes (manifest version 7: "probe_scratch"). Each map's buffer starts
/// at the grid's blocks times its BlockOffset and is laid out as a buffer
/// of its own.
struct ProbeScratch {
  uint64_t Param = 0;
  uint64_t BytesPerBlock = 0;
  uint64_t Align = 0;

  bool operator==(const ProbeScratch &O) const;
};

/// What probing cost a kernel's occupancy, when keeping it would have made
/// ptxas spill: the probe pass kept the registers the probes need (manifest
/// version 5: "probe_occupancy").
struct ProbeOccupancy {
  /// Blocks per SM before and after probing, for blocks of BlockThreads
  /// threads (the launch's block when the kernel fixes one, else the size
  /// that loses most).
  uint64_t Before = 0, After = 0, BlockThreads = 0;
  /// Registers per thread before and after probing.
  uint64_t RegistersBefore = 0, RegistersAfter = 0;
  /// The bytes ptxas spilled with the registers capped to keep Before.
  uint64_t CapSpillBytes = 0;

  bool operator==(const ProbeOccupancy &O) const;
};

struct KernelInfo {
  std::string Name;
  std::vector<ParamInfo> Params;
  LaunchInfo Launch;
  ResourceInfo Resources;
  /// Present exactly when FusedFrom is not empty. A version 1 manifest,
  /// which has no "fusion_strategy", reads as Thread.
  std::optional<FusionStrategy> Strategy;
  std::vector<FusedPart> FusedFrom;
  /// Not empty for a launch-agnostic fused kernel: its launch is computed
  /// from its parts' (computeFusedLaunch).
  std::vector<ShapeParam> ShapeParams;
  std::vector<ProbeBuffer> Probes;
  /// Set when the probe buffers lie in the kernel's last parameter.
  std::optional<ProbeScratch> Scratch;
  /// Set when probing lowered the kernel's occupancy.
  std::optional<ProbeOccupancy> Occupancy;

  /// Size of the packed parameter buffer (end of the last parameter).
  uint64_t paramBytes() const;
  bool operator==(const KernelInfo &O) const;
};

struct ModuleInfo {
  /// The PTX or cubin file; a relative path is relative to the manifest.
  std::string Path;
  /// "ptx" or "cubin".
  std::string Format;
  /// The chip, e.g. "sm_90a"; may be empty.
  std::string Target;

  bool operator==(const ModuleInfo &O) const;
};

struct Manifest {
  /// The version writeManifest writes by default (or the oldest that
  /// describes the manifest, when newer); readers accept OldestVersion to
  /// NewestVersion (docs/manifest.md, "Versioning").
  static constexpr int CurrentVersion = 5;
  static constexpr int NewestVersion = 7;
  static constexpr int OldestVersion = 1;
  ModuleInfo Module;
  std::vector<KernelInfo> Kernels;

  const KernelInfo *findKernel(std::string_view Name) const;
  bool operator==(const Manifest &O) const;
};

/// Checks what the JSON types cannot: layout (offsets aligned, in order, not
/// overlapping), the fusion strategy and its thread ranges and ratios,
/// argument maps in range, and probe buffers (parameters in range, 8 bytes
/// and distinct; names unique; fields inside the record; a dynamic
/// capacity's parameter in range, 4 bytes, not another map's buffer or
/// capacity, with slot counts and an overflow counter).
/// Errors name the JSON path of the offending value, after "Source: " when
/// Source is not empty.
Status validateManifest(const Manifest &M, const std::string &Source = "");

/// The launch of a launch-agnostic fused kernel, from its parts' launches.
struct FusedLaunch {
  Dim3 Grid;
  uint64_t DynamicSmem = 0;
  /// Each shape parameter's value, in the order of KernelInfo::ShapeParams.
  std::vector<uint32_t> ShapeValues;
};

/// Computes the launch of K (with ShapeParams) from each part's grid and
/// dynamic shared memory, by FusedFrom index; a part given none takes its
/// manifest default. The fused grid is 1-D: under "thread" the most blocks
/// of any part, otherwise the sum of the parts' blocks; the dynamic shared
/// memory is the fixed launch's, or under "thread" the largest offset plus
/// size of any part, otherwise the largest part's (docs/manifest.md). Errors
/// name the part; `Option` is how the caller's user gives a part's grid and
/// shared memory (e.g. "--part-grid"), for the message.
Expected<FusedLaunch>
computeFusedLaunch(const KernelInfo &K,
                   const std::vector<std::optional<Dim3>> &PartGrids,
                   const std::vector<std::optional<uint64_t>> &PartSmem,
                   const std::string &GridOption = "--part-grid",
                   const std::string &SmemOption = "--part-smem");

/// Size and alignment of a PTX fundamental type name ("u32", "f16x2", "b64"
/// ...); std::nullopt if the name is not one.
std::optional<uint64_t> ptxTypeSize(std::string_view Type);
/// True for the floating-point PTX types (f16, bf16, f32, f64, and pairs).
bool isPTXFloatType(std::string_view Type);

} // namespace gpuopt::runtime

#endif // GPUOPT_RUNTIME_MANIFEST_H
