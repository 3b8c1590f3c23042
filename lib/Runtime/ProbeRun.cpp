//===- ProbeRun.cpp - Probe buffers and traces of a run -------------------===//
//
// Sizing (the counting run for maps of dynamic capacity), allocating and
// reading back a probed kernel's record buffers, and writing them as a
// trace: NumPy files per map and a trace.json that python/gpuopt/trace.py
// reads.
//
//===----------------------------------------------------------------------===//

#include "gpuopt/Runtime/ProbeRun.h"
#include "gpuopt/Runtime/Npy.h"
#include "gpuopt/Runtime/Session.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>

using namespace gpuopt::runtime;
using ojson = nlohmann::ordered_json;

const ProbeBuffer *gpuopt::runtime::probeOfParam(const KernelInfo &K,
                                                 size_t Index) {
  for (const ProbeBuffer &P : K.Probes)
    if (P.Param == Index)
      return &P;
  return nullptr;
}

const ProbeBuffer *gpuopt::runtime::capacityOfParam(const KernelInfo &K,
                                                    size_t Index) {
  for (const ProbeBuffer &P : K.Probes)
    if (P.DynamicCapacity && P.CapacityParam == Index)
      return &P;
  return nullptr;
}

bool gpuopt::runtime::hasDynamicProbes(const KernelInfo &K) {
  return std::any_of(K.Probes.begin(), K.Probes.end(),
                     [](const ProbeBuffer &P) { return P.DynamicCapacity; });
}

Status gpuopt::runtime::checkTraceDir(const std::string &Dir) {
  namespace fs = std::filesystem;
  std::error_code EC;
  fs::file_status St = fs::status(Dir, EC);
  if (St.type() == fs::file_type::not_found)
    return Status::success();
  if (EC)
    return Status::error("--trace " + Dir + ": " + EC.message());
  if (St.type() != fs::file_type::directory)
    return Status::error("--trace " + Dir +
                         ": exists and is not a directory (gpu-run writes "
                         "a trace only into a new or empty one)");
  if (!fs::is_empty(Dir, EC) || EC)
    return Status::error("--trace " + Dir +
                         ": the directory is not empty (gpu-run writes a "
                         "trace only into a new or empty one, so that it "
                         "never overwrites files)");
  return Status::success();
}

Status gpuopt::runtime::checkKernelTrace(KernelSpec &K) {
  if (K.TraceDir.empty())
    return Status::success();
  std::string Kernel = "kernel '" + K.Label + "'";
  if (K.Kernel.Probes.empty())
    return Status::error(Kernel + ": --trace " + K.TraceDir +
                         ": the kernel has no probe buffers (its manifest "
                         "lists no \"probes\")");
  K.ProbeDescrs.clear();
  for (const ProbeBuffer &P : K.Kernel.Probes) {
    if (P.Name == "." || P.Name == ".." ||
        P.Name.find_first_of("/\\") != std::string::npos)
      return Status::error(Kernel + ": --trace: probe map '" + P.Name +
                           "' does not make a file name");
    Expected<std::string> Descr = npyRecordDescr(P.Fields, P.RecordBytes);
    if (!Descr)
      return Status::error(Kernel + ": --trace: probe map '" + P.Name +
                           "': " + Descr.status().message());
    K.ProbeDescrs.push_back(*Descr);
  }
  // MAP.counts.npy must not be another map's MAP.npy.
  for (const ProbeBuffer &P : K.Kernel.Probes)
    for (const ProbeBuffer &Q : K.Kernel.Probes)
      if (P.SlotCounts && Q.Name == P.Name + ".counts")
        return Status::error(Kernel + ": --trace: probe maps '" + P.Name +
                             "' (its slot counts) and '" + Q.Name +
                             "' would both write " + Q.Name + ".npy");
  return checkTraceDir(K.TraceDir);
}

/// Allocates a buffer or fails with What and the driver's error.
static Expected<DeviceBuffer> allocateFor(const Context &C, uint64_t Bytes,
                                          const std::string &What) {
  Expected<DeviceBuffer> B = DeviceBuffer::allocate(C, Bytes);
  if (!B)
    return Status::error(What + ": " + B.status().message());
  return B;
}

/// A*B*C, or std::nullopt when it does not fit 64 bits.
static std::optional<uint64_t> product(uint64_t A, uint64_t B, uint64_t C) {
  uint64_t AB = 0, ABC = 0;
  if (__builtin_mul_overflow(A, B, &AB) || __builtin_mul_overflow(AB, C, &ABC))
    return std::nullopt;
  return ABC;
}

/// Reads the slot counts of probe buffer PB (which has them) from B.
static Expected<std::vector<uint32_t>>
readCounts(const KernelSpec &K, const ProbeBuffer &PB, const DeviceBuffer &B) {
  const Dim3 &Grid = K.Config.Grid, &Block = K.Config.Block;
  std::vector<uint32_t> Counts(PB.slots(Grid, Block));
  if (Status S = B.download(Counts.data(), Counts.size() * sizeof(uint32_t),
                            PB.countsOffset(Grid, Block)))
    return S;
  return Counts;
}

Expected<std::vector<CountedMap>> gpuopt::runtime::countingRun(Session &S,
                                                               size_t Index) {
  KernelSpec &K = S.kernel(Index);
  const KernelRun &P = S.run(Index);
  const Context &C = S.context();
  const Dim3 &Grid = K.Config.Grid, &Block = K.Config.Block;
  std::string What = "kernel '" + K.Label + "': counting run";
  // Declared first, destroyed last: the launch's module outlives its
  // buffers' use.
  Expected<std::unique_ptr<Module>> Mod = Module::loadFile(C, K.ModulePath);
  if (!Mod)
    return Mod.takeStatus();
  if (Status St = S.setConsts(Index, **Mod))
    return St;
  Expected<Function> Fn = (*Mod)->getFunction(K.Kernel.Name);
  if (!Fn)
    return Fn.takeStatus();
  if (Status St = prepareDynamicSmem(C, *Fn, K.Config.DynamicSmem, K.SmemOptin))
    return St;
  std::vector<DeviceBuffer> Copies(K.Args.size());
  for (size_t I = 0; I < K.Args.size(); ++I) {
    if (!K.Args[I].isBuffer())
      continue;
    Expected<DeviceBuffer> B =
        allocateFor(C, P.Buffers[I].size(),
                    What + ": cannot copy argument " + std::to_string(I));
    if (!B)
      return B.takeStatus();
    Copies[I] = std::move(*B);
    if (Status St = Copies[I].copyFrom(P.Buffers[I]))
      return St;
  }
  std::vector<DeviceBuffer> Probes;
  for (ProbeBuffer &PB : K.Kernel.Probes) {
    if (PB.DynamicCapacity)
      PB.Capacity = 0; // Only the counts and the counter.
    Expected<DeviceBuffer> B = allocateFor(
        C, PB.totalBytes(Grid, Block), What + ": probe map '" + PB.Name + "'");
    if (!B)
      return B.takeStatus();
    Probes.push_back(std::move(*B));
    if (Status St = Probes.back().fill(0))
      return St;
  }
  Expected<std::unique_ptr<ArgPack>> Args =
      S.packArgs(Index, K.Kernel.Params, Copies, Probes, /*Probed=*/true);
  if (!Args)
    return Args.takeStatus();
  if (Status St = launch(C, *Fn, K.Config, **Args))
    return St;
  if (Status St = S.syncAfter(What + " failed"))
    return St;

  std::vector<CountedMap> Counted;
  for (size_t I = 0; I < K.Kernel.Probes.size(); ++I) {
    ProbeBuffer &PB = K.Kernel.Probes[I];
    if (!PB.DynamicCapacity)
      continue;
    Expected<std::vector<uint32_t>> Counts = readCounts(K, PB, Probes[I]);
    if (!Counts)
      return Counts.takeStatus();
    uint32_t Most = 0;
    for (uint32_t N : *Counts)
      Most = std::max(Most, N);
    PB.Capacity = Most;
    std::optional<uint64_t> Records =
        product(PB.slots(Grid, Block), Most, PB.RecordBytes);
    if (!Records || *Records > UINT64_MAX / 2)
      return Status::error("kernel '" + K.Label + "': probe map '" + PB.Name +
                           "' needs " + std::to_string(Most) +
                           " records per slot for " +
                           std::to_string(PB.slots(Grid, Block)) +
                           " slots of " + std::to_string(PB.RecordBytes) +
                           " bytes: more bytes than 64 bits count");
    Counted.push_back({PB.Name, Most, PB.totalBytes(Grid, Block)});
  }
  return Counted;
}

Status gpuopt::runtime::allocateProbes(Session &S, size_t Index) {
  const KernelSpec &K = S.kernel(Index);
  KernelRun &P = S.run(Index);
  const Context &C = S.context();
  const Dim3 &Grid = K.Config.Grid, &Block = K.Config.Block;
  P.Probes.clear();
  for (const ProbeBuffer &PB : K.Kernel.Probes) {
    uint64_t Bytes = PB.totalBytes(Grid, Block);
    if (!PB.DynamicCapacity) {
      Expected<DeviceBuffer> B = DeviceBuffer::allocate(C, Bytes);
      if (!B)
        return B.takeStatus();
      P.Probes.push_back(std::move(*B));
      continue;
    }
    std::string Need =
        "kernel '" + K.Label + "': probe map '" + PB.Name + "' needs " +
        std::to_string(PB.Capacity) + " records per slot (" +
        std::to_string(PB.slots(Grid, Block)) + " slots of " +
        std::to_string(PB.RecordBytes) +
        "-byte records): " + std::to_string(Bytes) + " bytes of buffer";
    Expected<uint64_t> Free = C.freeMemory();
    if (!Free)
      return Free.takeStatus();
    if (Bytes > *Free)
      return Status::error(Need + ", more than the " + std::to_string(*Free) +
                           " bytes of device memory free");
    Expected<DeviceBuffer> B =
        allocateFor(C, Bytes, Need + ", which cannot be allocated");
    if (!B)
      return B.takeStatus();
    P.Probes.push_back(std::move(*B));
  }
  return Status::success();
}

Expected<std::vector<ProbeResult>>
gpuopt::runtime::readProbes(Session &S, size_t Index, bool WithRecords) {
  const KernelSpec &K = S.kernel(Index);
  const KernelRun &P = S.run(Index);
  const Dim3 &Grid = K.Config.Grid, &Block = K.Config.Block;
  std::vector<ProbeResult> Results;
  for (size_t I = 0; I < K.Kernel.Probes.size(); ++I) {
    const ProbeBuffer &PB = K.Kernel.Probes[I];
    ProbeResult R;
    R.Name = PB.Name;
    R.Probe = PB.Probe;
    R.Slots = PB.slots(Grid, Block);
    R.Capacity = PB.Capacity;
    R.Dynamic = PB.DynamicCapacity;
    // The records only for a trace: they may be large.
    if (WithRecords) {
      R.Records.resize(PB.bufferBytes(Grid, Block));
      if (Status St = P.Probes[I].download(R.Records.data(), R.Records.size()))
        return St;
    }
    if (PB.OverflowCounter) {
      uint64_t Count = 0;
      if (Status St = P.Probes[I].download(&Count, sizeof(Count),
                                           PB.overflowOffset(Grid, Block)))
        return St;
      R.Overflow = Count;
    }
    Results.push_back(std::move(R));
  }
  return Results;
}

static ojson nullOr(const std::string &S) {
  return S.empty() ? ojson() : ojson(S);
}
static ojson nullOr(const std::optional<uint64_t> &V) {
  return V ? ojson(*V) : ojson();
}

Status gpuopt::runtime::writeTrace(Session &S, size_t Index,
                                   const std::vector<ProbeResult> &Probes) {
  namespace fs = std::filesystem;
  const KernelSpec &K = S.kernel(Index);
  const KernelRun &P = S.run(Index);
  const DeviceInfo &DI = S.context().info();
  const Dim3 &Grid = K.Config.Grid, &Block = K.Config.Block;
  // Checked before the launch; again in case it appeared since.
  if (Status St = checkTraceDir(K.TraceDir))
    return St;
  fs::path Dir(K.TraceDir);
  std::error_code EC;
  fs::create_directories(Dir, EC);
  if (EC)
    return Status::error("--trace " + K.TraceDir +
                         ": cannot create the directory: " + EC.message());
  fs::copy_file(K.ManifestPath, Dir / "manifest.json", EC);
  if (EC)
    return Status::error("--trace " + K.TraceDir +
                         ": cannot copy the manifest " + K.ManifestPath + ": " +
                         EC.message());
  ojson Maps = ojson::array();
  for (size_t I = 0; I < K.Kernel.Probes.size(); ++I) {
    const ProbeBuffer &PB = K.Kernel.Probes[I];
    const ProbeResult &R = Probes[I];
    std::vector<uint64_t> Shape = {Grid.count(), PB.unitsPerBlock(Block),
                                   PB.Capacity};
    std::string File = PB.Name + ".npy";
    if (Status St =
            writeNpy((Dir / File).string(), K.ProbeDescrs[I], PB.RecordBytes,
                     Shape, R.Records.data(), PB.bufferBytes(Grid, Block)))
      return St;
    ojson CountsFile;
    if (PB.SlotCounts) {
      Expected<std::vector<uint32_t>> Counts = readCounts(K, PB, P.Probes[I]);
      if (!Counts)
        return Counts.takeStatus();
      CountsFile = PB.Name + ".counts.npy";
      if (Status St =
              writeNpy((Dir / CountsFile.get<std::string>()).string(), "'<u4'",
                       sizeof(uint32_t), {Shape[0], Shape[1]}, Counts->data(),
                       Counts->size() * sizeof(uint32_t)))
        return St;
    }
    Maps.push_back({{"name", PB.Name},
                    {"probe", nullOr(PB.Probe)},
                    {"level", toString(PB.Level)},
                    {"capacity", PB.Capacity},
                    {"dynamic", PB.DynamicCapacity},
                    {"record_bytes", PB.RecordBytes},
                    {"shape", Shape},
                    {"file", File},
                    {"counts", CountsFile},
                    {"overflow", nullOr(R.Overflow)}});
  }
  ojson Trace;
  Trace["kernel"] = K.Kernel.Name;
  Trace["module"] = K.ModulePath;
  Trace["grid"] = ojson::array({Grid.X, Grid.Y, Grid.Z});
  Trace["block"] = ojson::array({Block.X, Block.Y, Block.Z});
  Trace["device"] = {
      {"name", DI.Name},
      {"multiprocessors", DI.Multiprocessors},
      {"compute_capability", std::to_string(DI.ComputeMajor) + "." +
                                 std::to_string(DI.ComputeMinor)}};
  Trace["maps"] = Maps;
  std::string TracePath = (Dir / "trace.json").string();
  std::ofstream Out(TracePath);
  if (!Out || !(Out << Trace.dump(2) << "\n"))
    return Status::error("cannot write " + TracePath);
  return Status::success();
}
