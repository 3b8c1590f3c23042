//===- Manifest.cpp - Launch manifest types and their checks --------------===//
//
// What the manifest's types compute (probe buffer sizes, parameter bytes)
// and validateManifest, the checks the JSON types cannot make. Reading is in
// ManifestReader.cpp, writing in ManifestWriter.cpp.
//
//===----------------------------------------------------------------------===//

#include "gpuopt/Runtime/Manifest.h"
#include "gpuopt/Runtime/ProbeRecordLayout.h"

#include <algorithm>
#include <array>

using namespace gpuopt::runtime;

//===----------------------------------------------------------------------===//
// Small helpers
//===----------------------------------------------------------------------===//

std::string gpuopt::runtime::toString(const Dim3 &D) {
  return std::to_string(D.X) + "," + std::to_string(D.Y) + "," +
         std::to_string(D.Z);
}

const char *gpuopt::runtime::toString(ParamKind K) {
  switch (K) {
  case ParamKind::Scalar:
    return "scalar";
  case ParamKind::Pointer:
    return "pointer";
  case ParamKind::Bytes:
    return "bytes";
  }
  return "scalar";
}

const char *gpuopt::runtime::toString(FusionStrategy S) {
  switch (S) {
  case FusionStrategy::Thread:
    return "thread";
  case FusionStrategy::Interleave:
    return "interleave";
  case FusionStrategy::Dynamic:
    return "dynamic";
  case FusionStrategy::SMAware:
    return "sm_aware";
  }
  return "thread";
}

const char *gpuopt::runtime::toString(ShapeField F) {
  switch (F) {
  case ShapeField::GridX:
    return "grid_x";
  case ShapeField::GridY:
    return "grid_y";
  case ShapeField::GridZ:
    return "grid_z";
  case ShapeField::DynamicSmem:
    return "dynamic_smem";
  }
  return "grid_x";
}

const char *gpuopt::runtime::toString(ProbeLevel L) {
  switch (L) {
  case ProbeLevel::Thread:
    return "thread";
  case ProbeLevel::Warp:
    return "warp";
  case ProbeLevel::Block:
    return "block";
  }
  return "thread";
}

std::optional<uint64_t> gpuopt::runtime::ptxTypeSize(std::string_view T) {
  static const std::pair<const char *, uint64_t> Sizes[] = {
      {"u8", 1},  {"s8", 1},  {"b8", 1},    {"u16", 2},    {"s16", 2},
      {"b16", 2}, {"f16", 2}, {"bf16", 2},  {"u32", 4},    {"s32", 4},
      {"b32", 4}, {"f32", 4}, {"f16x2", 4}, {"bf16x2", 4}, {"u64", 8},
      {"s64", 8}, {"b64", 8}, {"f64", 8},   {"b128", 16}};
  for (const auto &[Name, Size] : Sizes)
    if (T == Name)
      return Size;
  return std::nullopt;
}

bool gpuopt::runtime::isPTXFloatType(std::string_view T) {
  return T == "f16" || T == "bf16" || T == "f32" || T == "f64" ||
         T == "f16x2" || T == "bf16x2";
}

static bool isPowerOf2(uint64_t V) { return V && !(V & (V - 1)); }

uint64_t ProbeBuffer::unitsPerBlock(const Dim3 &Block) const {
  switch (Level) {
  case ProbeLevel::Thread:
    return Block.count();
  case ProbeLevel::Warp:
    return (Block.count() + 31) / 32;
  case ProbeLevel::Block:
    return 1;
  }
  return 1;
}

uint64_t ProbeBuffer::slots(const Dim3 &Grid, const Dim3 &Block) const {
  return Grid.count() * unitsPerBlock(Block);
}

uint64_t ProbeBuffer::bufferBytes(const Dim3 &Grid, const Dim3 &Block) const {
  return slots(Grid, Block) * Capacity * RecordBytes;
}

// The buffer's parts, as the probe passes address them
// (ProbeRecordLayout.h).
static gpuopt::probe::BufferLayout getBufferLayout(const ProbeBuffer &P,
                                                   uint64_t Slots) {
  return gpuopt::probe::BufferLayout::get(Slots, P.Capacity, P.RecordBytes,
                                          P.SlotCounts, P.OverflowCounter);
}

uint64_t ProbeBuffer::countsOffset(const Dim3 &Grid, const Dim3 &Block) const {
  return getBufferLayout(*this, slots(Grid, Block)).CountsOffset;
}

uint64_t ProbeBuffer::overflowOffset(const Dim3 &Grid,
                                     const Dim3 &Block) const {
  return getBufferLayout(*this, slots(Grid, Block)).OverflowOffset;
}

uint64_t ProbeBuffer::totalBytes(const Dim3 &Grid, const Dim3 &Block) const {
  return getBufferLayout(*this, slots(Grid, Block)).TotalBytes;
}

uint64_t KernelInfo::paramBytes() const {
  uint64_t End = 0;
  for (const ParamInfo &P : Params)
    End = std::max(End, P.Offset + P.Size);
  return End;
}

const KernelInfo *Manifest::findKernel(std::string_view Name) const {
  for (const KernelInfo &K : Kernels)
    if (K.Name == Name)
      return &K;
  return nullptr;
}

bool ParamInfo::operator==(const ParamInfo &O) const {
  return Name == O.Name && Type == O.Type && Size == O.Size &&
         Align == O.Align && Offset == O.Offset && Kind == O.Kind &&
         Space == O.Space && PointeeAlign == O.PointeeAlign;
}
bool LaunchInfo::operator==(const LaunchInfo &O) const {
  return Block == O.Block && Grid == O.Grid && DynamicSmem == O.DynamicSmem &&
         MaxThreads == O.MaxThreads && SmemOptin == O.SmemOptin;
}
bool ResourceInfo::operator==(const ResourceInfo &O) const {
  return Registers == O.Registers && StaticSmem == O.StaticSmem &&
         LocalBytes == O.LocalBytes;
}
bool FusedPart::operator==(const FusedPart &O) const {
  return Kernel == O.Kernel && Module == O.Module && ThreadsLo == O.ThreadsLo &&
         ThreadsHi == O.ThreadsHi && Ratio == O.Ratio && Block == O.Block &&
         Grid == O.Grid && DynamicSmemOffset == O.DynamicSmemOffset &&
         DynamicSmem == O.DynamicSmem && ArgMap == O.ArgMap &&
         DefaultGrid == O.DefaultGrid &&
         DefaultDynamicSmem == O.DefaultDynamicSmem && Replicas == O.Replicas &&
         Setmaxnreg == O.Setmaxnreg;
}
bool ShapeParam::operator==(const ShapeParam &O) const {
  return Param == O.Param && Part == O.Part && Field == O.Field;
}
bool ProbeField::operator==(const ProbeField &O) const {
  return Name == O.Name && Type == O.Type && Offset == O.Offset;
}
bool ProbeBuffer::operator==(const ProbeBuffer &O) const {
  return Name == O.Name && Probe == O.Probe && Param == O.Param &&
         Level == O.Level && Capacity == O.Capacity &&
         DynamicCapacity == O.DynamicCapacity &&
         CapacityParam == O.CapacityParam && RecordBytes == O.RecordBytes &&
         OverflowCounter == O.OverflowCounter && SlotCounts == O.SlotCounts &&
         Fields == O.Fields && BlockOffset == O.BlockOffset;
}
bool ProbeScratch::operator==(const ProbeScratch &O) const {
  return Param == O.Param && BytesPerBlock == O.BytesPerBlock &&
         Align == O.Align;
}
bool ProbeOccupancy::operator==(const ProbeOccupancy &O) const {
  return Before == O.Before && After == O.After &&
         BlockThreads == O.BlockThreads &&
         RegistersBefore == O.RegistersBefore &&
         RegistersAfter == O.RegistersAfter && CapSpillBytes == O.CapSpillBytes;
}
bool KernelInfo::operator==(const KernelInfo &O) const {
  return Name == O.Name && Params == O.Params && Launch == O.Launch &&
         Resources == O.Resources && Strategy == O.Strategy &&
         FusedFrom == O.FusedFrom && ShapeParams == O.ShapeParams &&
         Probes == O.Probes && Scratch == O.Scratch && Occupancy == O.Occupancy;
}
bool ModuleInfo::operator==(const ModuleInfo &O) const {
  return Path == O.Path && Format == O.Format && Target == O.Target;
}
bool Manifest::operator==(const Manifest &O) const {
  return Module == O.Module && Kernels == O.Kernels;
}

//===----------------------------------------------------------------------===//
// Validation
//===----------------------------------------------------------------------===//

/// A launch-agnostic kernel's shape parameters: each a 4-byte integer
/// that no argument, probe buffer or capacity takes, each part's grid x, y
/// and z once, its dynamic shared memory exactly when that is "runtime";
/// defaults only for what is given at launch.
template <typename FailFn>
static Status validateShapeParams(const KernelInfo &K, const std::string &KPath,
                                  FailFn Fail) {
  bool Agnostic = !K.ShapeParams.empty();
  for (size_t FI = 0; FI < K.FusedFrom.size(); ++FI) {
    const FusedPart &F = K.FusedFrom[FI];
    std::string FPath = KPath + ".fused_from[" + std::to_string(FI) + "]";
    if (F.DefaultGrid && (!Agnostic || F.Grid))
      return Fail(FPath + ".default_grid",
                  "only a part whose grid is \"runtime\" in a kernel with "
                  "shape_params has a default");
    if (F.DefaultDynamicSmem && (!Agnostic || F.DynamicSmem))
      return Fail(FPath + ".default_dynamic_smem",
                  "only a part whose dynamic_smem is \"runtime\" in a kernel "
                  "with shape_params has a default");
  }
  if (!Agnostic)
    return Status::success();
  if (K.FusedFrom.empty())
    return Fail(KPath + ".shape_params",
                "only a fused kernel (fused_from) has shape parameters");
  if (K.Launch.Grid)
    return Fail(KPath + ".launch.grid",
                "expected \"runtime\": a kernel with shape_params is "
                "launched on a grid computed from its parts'");
  // Fields seen per part: grid x, y, z, dynamic shared memory.
  std::vector<std::array<bool, 4>> Seen(K.FusedFrom.size(),
                                        std::array<bool, 4>{});
  size_t RuntimeSmemParts = 0;
  for (size_t SI = 0; SI < K.ShapeParams.size(); ++SI) {
    const ShapeParam &SP = K.ShapeParams[SI];
    std::string SPath = KPath + ".shape_params[" + std::to_string(SI) + "]";
    if (SP.Param >= K.Params.size())
      return Fail(SPath + ".param", "parameter " + std::to_string(SP.Param) +
                                        " does not exist (the kernel has " +
                                        std::to_string(K.Params.size()) + ")");
    const ParamInfo &P = K.Params[SP.Param];
    if (P.Size != 4 || P.Kind != ParamKind::Scalar || isPTXFloatType(P.Type))
      return Fail(SPath + ".param", "parameter " + std::to_string(SP.Param) +
                                        " ('" + P.Name + "', ." + P.Type +
                                        ") is not a 4-byte integer");
    for (size_t J = 0; J < SI; ++J)
      if (K.ShapeParams[J].Param == SP.Param)
        return Fail(SPath + ".param", "parameter " + std::to_string(SP.Param) +
                                          " is already shape_params[" +
                                          std::to_string(J) + "]");
    for (size_t FI = 0; FI < K.FusedFrom.size(); ++FI)
      for (uint64_t A : K.FusedFrom[FI].ArgMap)
        if (A == SP.Param)
          return Fail(SPath + ".param",
                      "parameter " + std::to_string(SP.Param) +
                          " receives an argument of fused_from[" +
                          std::to_string(FI) + "]");
    for (size_t BI = 0; BI < K.Probes.size(); ++BI)
      if (K.Probes[BI].Param == SP.Param ||
          (K.Probes[BI].DynamicCapacity &&
           K.Probes[BI].CapacityParam == SP.Param))
        return Fail(SPath + ".param", "parameter " + std::to_string(SP.Param) +
                                          " is a parameter of probes[" +
                                          std::to_string(BI) + "]");
    if (SP.Part >= K.FusedFrom.size())
      return Fail(SPath + ".part", "part " + std::to_string(SP.Part) +
                                       " does not exist (the kernel has " +
                                       std::to_string(K.FusedFrom.size()) +
                                       ")");
    bool &Once = Seen[SP.Part][size_t(SP.Field)];
    if (Once)
      return Fail(SPath + ".value",
                  std::string("part ") + std::to_string(SP.Part) + "'s " +
                      toString(SP.Field) + " is already another parameter's");
    Once = true;
    if (SP.Field == ShapeField::DynamicSmem) {
      ++RuntimeSmemParts;
      if (K.FusedFrom[SP.Part].DynamicSmem)
        return Fail(SPath + ".value",
                    "fused_from[" + std::to_string(SP.Part) +
                        "].dynamic_smem is fixed, not \"runtime\"");
    }
  }
  for (size_t FI = 0; FI < K.FusedFrom.size(); ++FI) {
    const FusedPart &F = K.FusedFrom[FI];
    std::string FPath = KPath + ".fused_from[" + std::to_string(FI) + "]";
    if (F.Grid)
      return Fail(FPath + ".grid", "expected \"runtime\": the kernel takes "
                                   "its parts' grids in shape_params");
    for (size_t Field = 0; Field < 3; ++Field)
      if (!Seen[FI][Field])
        return Fail(KPath + ".shape_params",
                    "no parameter receives fused_from[" + std::to_string(FI) +
                        "]'s " + toString(ShapeField(Field)));
    if (!F.DynamicSmem && !Seen[FI][3])
      return Fail(FPath + ".dynamic_smem",
                  "\"runtime\" but no shape parameter receives it");
  }
  // Each part's size places the parts after it in a thread split.
  if (*K.Strategy == FusionStrategy::Thread && RuntimeSmemParts > 1)
    return Fail(KPath + ".shape_params",
                "under \"thread\" at most one part's dynamic_smem is given "
                "at launch, got " +
                    std::to_string(RuntimeSmemParts));
  return Status::success();
}

Expected<FusedLaunch> gpuopt::runtime::computeFusedLaunch(
    const KernelInfo &K, const std::vector<std::optional<Dim3>> &PartGrids,
    const std::vector<std::optional<uint64_t>> &PartSmem,
    const std::string &GridOption, const std::string &SmemOption) {
  size_t N = K.FusedFrom.size();
  std::string Kernel = "kernel '" + K.Name + "'";
  if (K.ShapeParams.empty() || !K.Strategy)
    return Status::error(Kernel + " is not a launch-agnostic fused kernel "
                                  "(no shape_params)");
  if (PartGrids.size() > N || PartSmem.size() > N)
    return Status::error(Kernel + " has " + std::to_string(N) +
                         " parts (0 to " + std::to_string(N - 1) + ")");
  std::vector<Dim3> Grids(N);
  std::vector<uint64_t> Smem(N, 0);
  // CUDA's grid limits, which each part's own launch obeyed.
  const uint64_t MaxDims[3] = {(uint64_t(1) << 31) - 1, 65535, 65535};
  for (size_t P = 0; P < N; ++P) {
    const FusedPart &F = K.FusedFrom[P];
    std::string Part =
        Kernel + ": part " + std::to_string(P) + " (" + F.Kernel + ")";
    std::optional<Dim3> G = P < PartGrids.size() ? PartGrids[P] : std::nullopt;
    if (G && F.Grid)
      return Status::error(Part + " has the fixed grid " + toString(*F.Grid) +
                           "; " + GridOption +
                           " applies to grids taken at "
                           "launch");
    if (!G)
      G = F.Grid ? F.Grid : F.DefaultGrid;
    if (!G)
      return Status::error(Part +
                           ": its grid is taken at launch and the "
                           "manifest has no default; give " +
                           GridOption + " " + std::to_string(P) + "=X[xY[xZ]]");
    uint64_t Dims[3] = {G->X, G->Y, G->Z};
    for (int D = 0; D < 3; ++D)
      if (Dims[D] == 0 || Dims[D] > MaxDims[D])
        return Status::error(Part + ": grid " + toString(*G) + ": dimension " +
                             "xyz"[D] + " must be between 1 and " +
                             std::to_string(MaxDims[D]));
    if (G->count() > UINT32_MAX)
      return Status::error(Part + ": grid " + toString(*G) + " has " +
                           std::to_string(G->count()) +
                           " blocks, more than a u32 counts");
    Grids[P] = *G;
    std::optional<uint64_t> S =
        P < PartSmem.size() ? PartSmem[P] : std::nullopt;
    if (S && F.DynamicSmem)
      return Status::error(Part + " has the fixed dynamic shared memory " +
                           std::to_string(*F.DynamicSmem) + "; " + SmemOption +
                           " applies to sizes taken at launch");
    if (!S)
      S = F.DynamicSmem ? F.DynamicSmem : F.DefaultDynamicSmem;
    if (!S)
      return Status::error(Part +
                           ": its dynamic shared memory is taken at "
                           "launch and the manifest has no default; "
                           "give " +
                           SmemOption + " " + std::to_string(P) + "=BYTES");
    if (*S > UINT32_MAX)
      return Status::error(Part + ": " + std::to_string(*S) +
                           " bytes of dynamic shared memory do not fit a u32");
    Smem[P] = *S;
  }
  FusedLaunch L;
  bool Thread = *K.Strategy == FusionStrategy::Thread;
  uint64_t Blocks = 0, Bytes = 0;
  for (size_t P = 0; P < N; ++P) {
    Blocks =
        Thread ? std::max(Blocks, Grids[P].count()) : Blocks + Grids[P].count();
    Bytes = std::max(Bytes, Thread ? K.FusedFrom[P].DynamicSmemOffset + Smem[P]
                                   : Smem[P]);
  }
  if (Blocks > MaxDims[0])
    return Status::error(Kernel + ": the parts' grids add up to " +
                         std::to_string(Blocks) + " fused blocks, more than " +
                         std::to_string(MaxDims[0]));
  L.Grid = {Blocks, 1, 1};
  L.DynamicSmem = K.Launch.DynamicSmem ? *K.Launch.DynamicSmem : Bytes;
  for (const ShapeParam &SP : K.ShapeParams) {
    const Dim3 &G = Grids[SP.Part];
    switch (SP.Field) {
    case ShapeField::GridX:
      L.ShapeValues.push_back(uint32_t(G.X));
      break;
    case ShapeField::GridY:
      L.ShapeValues.push_back(uint32_t(G.Y));
      break;
    case ShapeField::GridZ:
      L.ShapeValues.push_back(uint32_t(G.Z));
      break;
    case ShapeField::DynamicSmem:
      L.ShapeValues.push_back(uint32_t(Smem[SP.Part]));
      break;
    }
  }
  return L;
}

Status gpuopt::runtime::validateManifest(const Manifest &M,
                                         const std::string &Source) {
  std::string Prefix = Source.empty() ? "" : Source + ": ";
  auto Fail = [&](const std::string &Path, const std::string &What) {
    return Status::error(Prefix + Path + ": " + What);
  };
  for (size_t KI = 0; KI < M.Kernels.size(); ++KI) {
    const KernelInfo &K = M.Kernels[KI];
    std::string KPath = "kernels[" + std::to_string(KI) + "]";
    for (size_t J = 0; J < KI; ++J)
      if (M.Kernels[J].Name == K.Name)
        return Fail(KPath + ".name", "duplicate kernel '" + K.Name +
                                         "' (also kernels[" +
                                         std::to_string(J) + "])");

    uint64_t End = 0;
    for (size_t PI = 0; PI < K.Params.size(); ++PI) {
      const ParamInfo &P = K.Params[PI];
      std::string PPath = KPath + ".params[" + std::to_string(PI) + "]";
      if (!isPowerOf2(P.Align))
        return Fail(PPath + ".align",
                    "expected a power of two, got " + std::to_string(P.Align));
      if (P.Offset % P.Align)
        return Fail(PPath + ".offset", std::to_string(P.Offset) +
                                           " is not a multiple of align " +
                                           std::to_string(P.Align));
      if (P.Offset < End)
        return Fail(PPath + ".offset",
                    std::to_string(P.Offset) +
                        " overlaps the previous parameter, which ends at " +
                        std::to_string(End));
      End = P.Offset + P.Size;
    }
    // CUDA limits kernel parameters to 32764 bytes (4 KiB before Volta).
    if (End > 32764)
      return Fail(KPath + ".params", "parameters need " + std::to_string(End) +
                                         " bytes, more than CUDA's 32764");

    const LaunchInfo &L = K.Launch;
    if (L.Block && L.Block->count() > 1024)
      return Fail(KPath + ".launch.block",
                  toString(*L.Block) + " has more than 1024 threads");
    if (L.Block && L.MaxThreads && L.Block->count() > L.MaxThreads->count())
      return Fail(KPath + ".launch.block", toString(*L.Block) +
                                               " exceeds max_threads " +
                                               toString(*L.MaxThreads));
    // The opt-in raises the limit to a size the manifest must know.
    if (L.SmemOptin && (!L.DynamicSmem || !*L.DynamicSmem))
      return Fail(KPath + ".launch.smem_optin",
                  "true needs a fixed, non-zero dynamic_smem (the size to opt "
                  "in to)");

    if (!K.FusedFrom.empty() && !K.Strategy)
      return Fail(KPath + ".fusion_strategy",
                  "missing (required when fused_from is not empty)");
    if (K.FusedFrom.empty() && K.Strategy)
      return Fail(KPath + ".fusion_strategy", std::string("\"") +
                                                  toString(*K.Strategy) +
                                                  "\" without fused_from");
    for (size_t FI = 0; FI < K.FusedFrom.size(); ++FI) {
      const FusedPart &F = K.FusedFrom[FI];
      std::string FPath = KPath + ".fused_from[" + std::to_string(FI) + "]";
      // Under "thread", the parts share each block; otherwise each block
      // runs one part whole, from thread 0.
      bool Shared = *K.Strategy == FusionStrategy::Thread;
      if (F.ThreadsLo >= F.ThreadsHi)
        return Fail(FPath + ".threads", "expected lo < hi, got [" +
                                            std::to_string(F.ThreadsLo) + ", " +
                                            std::to_string(F.ThreadsHi) + ")");
      if (!Shared && F.ThreadsLo != 0)
        return Fail(FPath + ".threads[0]",
                    "expected 0, got " + std::to_string(F.ThreadsLo) +
                        " (under \"" + toString(*K.Strategy) +
                        "\" a fused block runs one part whole, from thread 0)");
      if (F.ThreadsLo % 32)
        return Fail(FPath + ".threads[0]",
                    std::to_string(F.ThreadsLo) +
                        " is not warp-aligned (a multiple of 32)");
      if (L.Block && F.ThreadsHi > L.Block->count())
        return Fail(FPath + ".threads[1]",
                    std::to_string(F.ThreadsHi) +
                        " is past the fused block's " +
                        std::to_string(L.Block->count()) + " threads");
      for (size_t G = 0; Shared && G < FI; ++G) {
        const FusedPart &O = K.FusedFrom[G];
        if (F.ThreadsLo < O.ThreadsHi && O.ThreadsLo < F.ThreadsHi)
          return Fail(FPath + ".threads",
                      "overlaps the threads of fused_from[" +
                          std::to_string(G) + "]");
      }
      if (F.Ratio && Shared)
        return Fail(FPath + ".ratio",
                    "only the \"interleave\" and \"dynamic\" strategies "
                    "take a ratio (this kernel's is \"thread\")");
      if (F.Ratio && *F.Ratio == 0)
        return Fail(FPath + ".ratio", "expected a positive integer, got 0");
      if (F.Replicas == 0)
        return Fail(FPath + ".replicas", "expected a positive integer, got 0");
      if ((F.Replicas != 1 || F.Setmaxnreg) && !Shared)
        return Fail(FPath + (F.Replicas != 1 ? ".replicas" : ".setmaxnreg"),
                    "only the \"thread\" strategy takes replicas and "
                    "setmaxnreg (this kernel's is \"" +
                        std::string(toString(*K.Strategy)) + "\")");
      if (F.Setmaxnreg &&
          (F.Setmaxnreg < 24 || F.Setmaxnreg > 256 || F.Setmaxnreg % 8))
        return Fail(FPath + ".setmaxnreg",
                    "expected a multiple of 8 within 24..256, got " +
                        std::to_string(F.Setmaxnreg));
      if (F.Block && F.Block->count() * F.Replicas != F.ThreadsHi - F.ThreadsLo)
        return Fail(FPath + ".block",
                    toString(*F.Block) +
                        (F.Replicas > 1
                             ? " x " + std::to_string(F.Replicas) + " replicas"
                             : std::string()) +
                        " does not have hi - lo = " +
                        std::to_string(F.ThreadsHi - F.ThreadsLo) + " threads");
      for (size_t AI = 0; AI < F.ArgMap.size(); ++AI)
        if (F.ArgMap[AI] >= K.Params.size())
          return Fail(FPath + ".arg_map[" + std::to_string(AI) + "]",
                      "parameter " + std::to_string(F.ArgMap[AI]) +
                          " does not exist (the kernel has " +
                          std::to_string(K.Params.size()) + ")");
    }

    if (Status S = validateShapeParams(K, KPath, Fail))
      return S;

    // Probe buffers in the kernel's last parameter (Triton's profile
    // scratch), each map at its offset per block.
    if (const std::optional<ProbeScratch> &Sc = K.Scratch) {
      std::string SPath = KPath + ".probe_scratch";
      if (K.Probes.empty())
        return Fail(SPath, "the kernel has no probes");
      if (Sc->Param >= K.Params.size())
        return Fail(SPath + ".param", "parameter " + std::to_string(Sc->Param) +
                                          " does not exist (the kernel has " +
                                          std::to_string(K.Params.size()) +
                                          ")");
      if (K.Params[Sc->Param].Size != 8)
        return Fail(SPath + ".param",
                    "parameter " + std::to_string(Sc->Param) + " ('" +
                        K.Params[Sc->Param].Name +
                        "') is not 8 bytes and cannot hold a buffer address");
      if (Sc->Align == 0 || (Sc->Align & (Sc->Align - 1)))
        return Fail(SPath + ".align", "expected a power of two, got " +
                                          std::to_string(Sc->Align));
      if (Sc->BytesPerBlock == 0 || Sc->BytesPerBlock % Sc->Align)
        return Fail(SPath + ".bytes_per_block",
                    "expected a positive multiple of align (" +
                        std::to_string(Sc->Align) + "), got " +
                        std::to_string(Sc->BytesPerBlock));
    }
    for (size_t BI = 0; BI < K.Probes.size(); ++BI) {
      const ProbeBuffer &P = K.Probes[BI];
      std::string BPath = KPath + ".probes[" + std::to_string(BI) + "]";
      if (P.Name.empty())
        return Fail(BPath + ".name", "expected a non-empty string");
      if (K.Scratch && !P.BlockOffset)
        return Fail(BPath, "missing block_offset (the kernel's probes lie "
                           "in its probe_scratch)");
      if (P.BlockOffset) {
        std::string OPath = BPath + ".block_offset";
        if (!K.Scratch)
          return Fail(OPath, "the kernel has no probe_scratch to hold it");
        if (P.Param != K.Scratch->Param)
          return Fail(BPath + ".param",
                      "parameter " + std::to_string(P.Param) +
                          " is not the probe_scratch parameter (" +
                          std::to_string(K.Scratch->Param) + ")");
        if (P.DynamicCapacity)
          return Fail(OPath, "a \"dynamic\" capacity cannot lie in the "
                             "probe_scratch, sized before the launch");
        if (*P.BlockOffset >= K.Scratch->BytesPerBlock)
          return Fail(OPath, std::to_string(*P.BlockOffset) +
                                 " is not below bytes_per_block (" +
                                 std::to_string(K.Scratch->BytesPerBlock) +
                                 ")");
        if (*P.BlockOffset % K.Scratch->Align)
          return Fail(OPath, std::to_string(*P.BlockOffset) +
                                 " is not a multiple of the scratch's align (" +
                                 std::to_string(K.Scratch->Align) + ")");
      }
      for (size_t J = 0; J < BI; ++J) {
        if (K.Probes[J].Name == P.Name)
          return Fail(BPath + ".name", "duplicate map '" + P.Name +
                                           "' (also probes[" +
                                           std::to_string(J) + "])");
        // The maps in the kernel's last parameter share it.
        if (K.Probes[J].Param == P.Param &&
            !(P.BlockOffset && K.Probes[J].BlockOffset))
          return Fail(BPath + ".param",
                      "parameter " + std::to_string(P.Param) +
                          " is already the buffer of probes[" +
                          std::to_string(J) + "]");
      }
      if (P.Param >= K.Params.size())
        return Fail(BPath + ".param", "parameter " + std::to_string(P.Param) +
                                          " does not exist (the kernel has " +
                                          std::to_string(K.Params.size()) +
                                          ")");
      if (K.Params[P.Param].Size != 8)
        return Fail(BPath + ".param",
                    "parameter " + std::to_string(P.Param) + " ('" +
                        K.Params[P.Param].Name +
                        "') is not 8 bytes and cannot hold a buffer address");
      if (!P.DynamicCapacity && P.Capacity == 0)
        return Fail(BPath + ".capacity", "expected a positive integer, got 0");
      if (P.DynamicCapacity) {
        std::string CPath = BPath + ".capacity_param";
        uint64_t CP = P.CapacityParam;
        if (CP >= K.Params.size())
          return Fail(CPath, "parameter " + std::to_string(CP) +
                                 " does not exist (the kernel has " +
                                 std::to_string(K.Params.size()) + ")");
        const ParamInfo &Param = K.Params[CP];
        if (Param.Size != 4 || Param.Kind == ParamKind::Pointer ||
            isPTXFloatType(Param.Type))
          return Fail(CPath, "parameter " + std::to_string(CP) + " ('" +
                                 Param.Name + "', ." + Param.Type + ", " +
                                 std::to_string(Param.Size) +
                                 " bytes) is not a 4-byte integer and "
                                 "cannot hold a u32 capacity");
        for (size_t J = 0; J < K.Probes.size(); ++J) {
          if (K.Probes[J].Param == CP)
            return Fail(CPath, "parameter " + std::to_string(CP) +
                                   " is the buffer of probes[" +
                                   std::to_string(J) + "]");
          if (J < BI && K.Probes[J].DynamicCapacity &&
              K.Probes[J].CapacityParam == CP)
            return Fail(CPath, "parameter " + std::to_string(CP) +
                                   " is already the capacity of probes[" +
                                   std::to_string(J) + "]");
        }
        if (!P.SlotCounts)
          return Fail(BPath + ".slot_counts",
                      "a \"dynamic\" capacity needs slot_counts: true (the "
                      "launcher sizes the buffer from them)");
        if (!P.OverflowCounter)
          return Fail(BPath + ".overflow_counter",
                      "a \"dynamic\" capacity needs overflow_counter: true");
      }
      if (P.RecordBytes == 0)
        return Fail(BPath + ".record_bytes",
                    "expected a positive integer, got 0");
      for (size_t FI = 0; FI < P.Fields.size(); ++FI) {
        const ProbeField &F = P.Fields[FI];
        std::string FPath = BPath + ".fields[" + std::to_string(FI) + "]";
        if (F.Name.empty())
          return Fail(FPath + ".name", "expected a non-empty string");
        for (size_t G = 0; G < FI; ++G)
          if (P.Fields[G].Name == F.Name)
            return Fail(FPath + ".name", "duplicate field '" + F.Name +
                                             "' (also fields[" +
                                             std::to_string(G) + "])");
        uint64_t Size = ptxTypeSize(F.Type).value_or(0);
        if (Size == 0)
          return Fail(FPath + ".type",
                      "'" + F.Type + "' is not a PTX fundamental type");
        if (F.Offset % Size)
          return Fail(FPath + ".offset",
                      std::to_string(F.Offset) + " is not aligned to the " +
                          std::to_string(Size) + "-byte " + F.Type);
        if (F.Offset + Size > P.RecordBytes)
          return Fail(FPath + ".offset", "field ends at byte " +
                                             std::to_string(F.Offset + Size) +
                                             ", past record_bytes " +
                                             std::to_string(P.RecordBytes));
      }
    }
    // What probing cost the kernel: fewer blocks, for more registers.
    if (const std::optional<ProbeOccupancy> &O = K.Occupancy) {
      std::string OPath = KPath + ".probe_occupancy";
      if (K.Probes.empty())
        return Fail(OPath, "the kernel has no probes");
      if (O->After >= O->Before)
        return Fail(OPath + ".after", std::to_string(O->After) +
                                          " is not below before (" +
                                          std::to_string(O->Before) + ")");
      if (O->BlockThreads == 0 || O->BlockThreads > 1024)
        return Fail(OPath + ".block_threads",
                    "expected 1 to 1024 threads, got " +
                        std::to_string(O->BlockThreads));
      if (O->RegistersAfter <= O->RegistersBefore)
        return Fail(OPath + ".registers_after",
                    std::to_string(O->RegistersAfter) +
                        " is not above registers_before (" +
                        std::to_string(O->RegistersBefore) + ")");
    }
  }
  return Status::success();
}
