//===- ManifestWriter.cpp - Writing launch manifests ----------------------===//
//
// The one writer of manifest JSON: gpu-run --print-manifest writes the
// current version in schema order; the compiler's exporter (gpu-translate
// --manifest) the oldest version that describes the module, keys sorted.
// Keys whose values are the defaults are left out, so that a manifest
// written as an older version holds no newer keys.
//
//===----------------------------------------------------------------------===//

#include "gpuopt/Runtime/ManifestWriter.h"

#include <nlohmann/json.hpp>

#include <algorithm>

using namespace gpuopt::runtime;
using json = nlohmann::json;
using ojson = nlohmann::ordered_json;

// Written into an ordered_json for schema order, into a json (whose objects
// are std::maps) for sorted keys.
template <typename J> static J dimToJson(const Dim3 &D) {
  return J::array({D.X, D.Y, D.Z});
}

template <typename J> static J dimOrRuntime(const std::optional<Dim3> &D) {
  return D ? dimToJson<J>(*D) : J("runtime");
}

template <typename J> static J uintOrRuntime(const std::optional<uint64_t> &V) {
  return V ? J(*V) : J("runtime");
}

int gpuopt::runtime::oldestVersionFor(const Manifest &M) {
  int Version = Manifest::OldestVersion;
  for (const KernelInfo &K : M.Kernels) {
    if (!K.FusedFrom.empty())
      Version = std::max(Version, 2);
    for (const ProbeBuffer &P : K.Probes)
      Version = std::max(Version, P.DynamicCapacity ? 4 : 3);
    if (K.Launch.SmemOptin || K.Occupancy)
      Version = std::max(Version, 5);
    if (!K.ShapeParams.empty())
      Version = std::max(Version, 6);
    for (const FusedPart &F : K.FusedFrom)
      if (F.Replicas != 1 || F.Setmaxnreg)
        Version = std::max(Version, 6);
    if (K.Scratch)
      Version = std::max(Version, 7);
    for (const ProbeBuffer &P : K.Probes)
      if (P.BlockOffset)
        Version = std::max(Version, 7);
  }
  return Version;
}

template <typename J> static J toJson(const Manifest &M, int Version) {
  J Root;
  Root["manifest_version"] = Version;
  J Mod;
  Mod["path"] = M.Module.Path;
  Mod["format"] = M.Module.Format;
  if (!M.Module.Target.empty())
    Mod["target"] = M.Module.Target;
  Root["module"] = Mod;
  J Kernels = J::array();
  for (const KernelInfo &K : M.Kernels) {
    J KJ;
    KJ["name"] = K.Name;
    J Params = J::array();
    for (const ParamInfo &P : K.Params) {
      J PJ;
      PJ["name"] = P.Name;
      PJ["type"] = P.Type;
      PJ["size"] = P.Size;
      PJ["align"] = P.Align;
      PJ["offset"] = P.Offset;
      PJ["kind"] = toString(P.Kind);
      if (!P.Space.empty())
        PJ["space"] = P.Space;
      if (P.PointeeAlign)
        PJ["pointee_align"] = P.PointeeAlign;
      Params.push_back(PJ);
    }
    KJ["params"] = Params;
    J Launch;
    Launch["block"] = dimOrRuntime<J>(K.Launch.Block);
    Launch["grid"] = dimOrRuntime<J>(K.Launch.Grid);
    Launch["dynamic_smem"] = uintOrRuntime<J>(K.Launch.DynamicSmem);
    if (K.Launch.MaxThreads)
      Launch["max_threads"] = dimToJson<J>(*K.Launch.MaxThreads);
    if (K.Launch.SmemOptin)
      Launch["smem_optin"] = true;
    KJ["launch"] = Launch;
    const ResourceInfo &R = K.Resources;
    if (R.Registers || R.StaticSmem || R.LocalBytes) {
      J RJ;
      if (R.Registers)
        RJ["registers"] = *R.Registers;
      if (R.StaticSmem)
        RJ["static_smem"] = *R.StaticSmem;
      if (R.LocalBytes)
        RJ["local_bytes"] = *R.LocalBytes;
      KJ["resources"] = RJ;
    }
    if (K.Strategy)
      KJ["fusion_strategy"] = toString(*K.Strategy);
    if (!K.FusedFrom.empty()) {
      J Fused = J::array();
      for (const FusedPart &F : K.FusedFrom) {
        J FJ;
        FJ["kernel"] = F.Kernel;
        if (!F.Module.empty())
          FJ["module"] = F.Module;
        FJ["threads"] = J::array({F.ThreadsLo, F.ThreadsHi});
        if (F.Ratio)
          FJ["ratio"] = *F.Ratio;
        if (F.Block)
          FJ["block"] = dimToJson<J>(*F.Block);
        FJ["grid"] = dimOrRuntime<J>(F.Grid);
        if (F.DefaultGrid)
          FJ["default_grid"] = dimToJson<J>(*F.DefaultGrid);
        FJ["dynamic_smem_offset"] = F.DynamicSmemOffset;
        FJ["dynamic_smem"] = uintOrRuntime<J>(F.DynamicSmem);
        if (F.DefaultDynamicSmem)
          FJ["default_dynamic_smem"] = *F.DefaultDynamicSmem;
        FJ["arg_map"] = F.ArgMap;
        if (F.Replicas != 1)
          FJ["replicas"] = F.Replicas;
        if (F.Setmaxnreg)
          FJ["setmaxnreg"] = F.Setmaxnreg;
        Fused.push_back(FJ);
      }
      KJ["fused_from"] = Fused;
    }
    if (!K.ShapeParams.empty()) {
      J Shapes = J::array();
      for (const ShapeParam &SP : K.ShapeParams) {
        J SJ;
        SJ["param"] = SP.Param;
        SJ["part"] = SP.Part;
        SJ["value"] = toString(SP.Field);
        Shapes.push_back(SJ);
      }
      KJ["shape_params"] = Shapes;
    }
    if (!K.Probes.empty()) {
      J Probes = J::array();
      for (const ProbeBuffer &P : K.Probes) {
        J PJ;
        PJ["name"] = P.Name;
        if (!P.Probe.empty())
          PJ["probe"] = P.Probe;
        PJ["param"] = P.Param;
        PJ["level"] = toString(P.Level);
        if (P.DynamicCapacity) {
          PJ["capacity"] = "dynamic";
          PJ["capacity_param"] = P.CapacityParam;
        } else {
          PJ["capacity"] = P.Capacity;
        }
        PJ["record_bytes"] = P.RecordBytes;
        if (P.OverflowCounter)
          PJ["overflow_counter"] = true;
        if (P.SlotCounts)
          PJ["slot_counts"] = true;
        J Fields = J::array();
        for (const ProbeField &F : P.Fields) {
          J FJ;
          FJ["name"] = F.Name;
          FJ["type"] = F.Type;
          FJ["offset"] = F.Offset;
          Fields.push_back(FJ);
        }
        PJ["fields"] = Fields;
        if (P.BlockOffset)
          PJ["block_offset"] = *P.BlockOffset;
        Probes.push_back(PJ);
      }
      KJ["probes"] = Probes;
    }
    if (const std::optional<ProbeScratch> &Sc = K.Scratch) {
      J SJ;
      SJ["param"] = Sc->Param;
      SJ["bytes_per_block"] = Sc->BytesPerBlock;
      SJ["align"] = Sc->Align;
      KJ["probe_scratch"] = SJ;
    }
    if (const std::optional<ProbeOccupancy> &O = K.Occupancy) {
      J OJ;
      OJ["before"] = O->Before;
      OJ["after"] = O->After;
      OJ["block_threads"] = O->BlockThreads;
      OJ["registers_before"] = O->RegistersBefore;
      OJ["registers_after"] = O->RegistersAfter;
      OJ["cap_spill_bytes"] = O->CapSpillBytes;
      KJ["probe_occupancy"] = OJ;
    }
    Kernels.push_back(KJ);
  }
  Root["kernels"] = Kernels;
  return Root;
}

std::string gpuopt::runtime::writeManifest(const Manifest &M,
                                           const ManifestWriteOptions &Opts) {
  // A manifest that needs a newer version than the current one is written
  // as that.
  int Version = Opts.Version ? Opts.Version
                             : std::max(int(Manifest::CurrentVersion),
                                        oldestVersionFor(M));
  if (Opts.SortKeys)
    return toJson<json>(M, Version).dump(2) + "\n";
  return toJson<ojson>(M, Version).dump(2) + "\n";
}
