//===- RunReport.cpp - The results of a run as JSON -----------------------===//
//
// Keys in the order gpu-run has always written them; times in milliseconds.
//
//===----------------------------------------------------------------------===//

#include "gpuopt/Runtime/RunReport.h"

#include <nlohmann/json.hpp>

using namespace gpuopt::runtime;
using ojson = nlohmann::ordered_json;

const char *gpuopt::runtime::toString(GroupTiming::Mode M) {
  switch (M) {
  case GroupTiming::Mode::Alone:
    return "alone";
  case GroupTiming::Mode::Serial:
    return "serial";
  case GroupTiming::Mode::Concurrent:
    return "concurrent";
  case GroupTiming::Mode::Graph:
    return "graph";
  case GroupTiming::Mode::Also:
    return "also";
  }
  return "serial";
}

KernelReport KernelReport::of(const KernelSpec &K, const Function &Fn) {
  KernelReport R;
  R.Label = K.Label;
  R.Kernel = K.Kernel.Name;
  R.Module = K.ModulePath;
  R.Config = K.Config;
  R.Registers = Fn.Registers;
  R.StaticSmem = Fn.StaticSmem;
  R.LocalBytes = Fn.LocalBytes;
  R.TraceDir = K.TraceDir;
  return R;
}

GroupReport GroupReport::of(const RunSpec &Spec, const GroupSpec &G,
                            const GroupTiming &Timing) {
  GroupReport R;
  R.Name = G.Name;
  for (size_t M : G.Members)
    R.Kernels.push_back(Spec.Kernels[M].Label);
  R.Alone = G.Alone;
  for (const GroupTiming::Entry &E : Timing.Entries) {
    bool Single =
        E.M == GroupTiming::Mode::Alone || E.M == GroupTiming::Mode::Also;
    R.Entries.push_back(
        {E.M, Single ? Spec.Kernels[E.Kernel].Label : std::string(), E.Time});
  }
  return R;
}

static ojson statsJson(const Stats &S) {
  ojson J;
  J["median_ms"] = S.Median;
  J["min_ms"] = S.Min;
  J["max_ms"] = S.Max;
  J["mean_ms"] = S.Mean;
  J["spread"] = S.spread();
  J["samples_ms"] = S.Samples;
  return J;
}

static ojson dimJson(const Dim3 &D) { return ojson::array({D.X, D.Y, D.Z}); }

static ojson kernelJson(const KernelReport &K) {
  ojson KJ;
  KJ["label"] = K.Label;
  KJ["kernel"] = K.Kernel;
  KJ["module"] = K.Module;
  KJ["grid"] = dimJson(K.Config.Grid);
  KJ["block"] = dimJson(K.Config.Block);
  KJ["dynamic_smem"] = K.Config.DynamicSmem;
  KJ["registers"] = K.Registers;
  KJ["static_smem"] = K.StaticSmem;
  KJ["local_bytes"] = K.LocalBytes;
  if (K.Probed) {
    ojson Probes = ojson::array();
    for (const ProbeResult &P : K.Probes)
      Probes.push_back(
          {{"name", P.Name},
           {"probe", P.Probe.empty() ? ojson() : ojson(P.Probe)},
           {"capacity", P.Capacity},
           {"dynamic", P.Dynamic},
           {"overflow", P.Overflow ? ojson(*P.Overflow) : ojson()}});
    KJ["probes"] = Probes;
  }
  if (!K.TraceDir.empty())
    KJ["trace"] = K.TraceDir;
  if (K.Time)
    KJ["time"] = statsJson(*K.Time);
  if (K.Occupancy) {
    ojson J;
    J["blocks_per_sm"] = K.Occupancy->BlocksPerSM;
    J["sweep"] = ojson::array();
    for (const OccupancyPoint &P : K.Occupancy->Points)
      J["sweep"].push_back({{"blocks_per_sm", P.BlocksPerSM},
                            {"dynamic_smem", P.DynamicSmem},
                            {"time", statsJson(P.Time)}});
    KJ["occupancy"] = J;
  }
  return KJ;
}

static ojson compareJson(const RunComparison &C) {
  ojson CJ;
  CJ["module"] = C.Module;
  CJ["kernel"] = C.Kernel;
  CJ["buffers"] = ojson::array();
  for (const BufferComparison &B : C.Buffers) {
    const CompareResult &R = B.Result;
    CJ["buffers"].push_back({{"arg", B.Arg},
                             {"type", toString(B.Type)},
                             {"elements", R.Elements},
                             {"mismatches", R.Mismatches},
                             {"first_mismatch", R.FirstMismatch},
                             {"max_abs", R.MaxAbs},
                             {"max_rel", R.MaxRel},
                             {"rel_norm", R.RelNorm},
                             {"nan_mismatches", R.NaNMismatches},
                             {"bit_identical", R.bitIdentical()}});
  }
  CJ["bit_identical"] = C.BitIdentical;
  CJ["pass"] = C.Pass;
  return CJ;
}

static ojson groupJson(const GroupReport &G) {
  ojson GJ;
  GJ["name"] = G.Name;
  GJ["kernels"] = G.Kernels;
  if (G.Alone)
    GJ["alone"] = ojson::object();
  for (const GroupReport::Entry &E : G.Entries) {
    if (E.Mode == GroupTiming::Mode::Alone || E.Mode == GroupTiming::Mode::Also)
      GJ[toString(E.Mode)][E.Label] = statsJson(E.Time);
    else
      GJ[toString(E.Mode)] = statsJson(E.Time);
  }
  return GJ;
}

std::string gpuopt::runtime::writeRunReport(const RunReport &R) {
  const DeviceInfo &DI = R.Device;
  ojson Report;
  Report["device"] = {
      {"name", DI.Name},
      {"compute_capability",
       std::to_string(DI.ComputeMajor) + "." + std::to_string(DI.ComputeMinor)},
      {"multiprocessors", DI.Multiprocessors},
      {"l2_bytes", DI.L2Bytes},
      {"total_memory", DI.TotalMemory},
      {"driver_version", DI.DriverVersion}};
  Report["warmup"] = R.Warmup;
  Report["repeat"] = R.Repeat;
  Report["kernels"] = ojson::array();
  for (const KernelReport &K : R.Kernels)
    Report["kernels"].push_back(kernelJson(K));
  if (R.Compare)
    Report["compare"] = compareJson(*R.Compare);
  if (R.Timed) {
    Report["groups"] = ojson::array();
    for (const GroupReport &G : R.Groups)
      Report["groups"].push_back(groupJson(G));
  }
  return Report.dump(2) + "\n";
}
