//===- ManifestReader.cpp - Reading launch manifests ----------------------===//
//
// JSON through nlohmann-json (header only, so the runtime stays free of other
// libraries). Reading is strict: unknown keys and wrong types are errors that
// name the JSON path, because a manifest that is silently misread launches a
// kernel with wrong arguments. The runtime and the compiler's importer
// (gpu-opt --manifest-in) both read through here.
//
//===----------------------------------------------------------------------===//

#include "gpuopt/Runtime/ManifestReader.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <fstream>
#include <initializer_list>
#include <sstream>

using namespace gpuopt::runtime;
using json = nlohmann::json;

static bool isPowerOf2(uint64_t V) { return V && !(V & (V - 1)); }

namespace {
/// Reads one manifest; every error names the JSON path of the bad value.
class ManifestReader {
public:
  explicit ManifestReader(std::string Source) : Source(std::move(Source)) {}

  Status read(const json &Root, Manifest &M);

private:
  Status fail(const std::string &Path, const std::string &What) const {
    return Status::error(Source + ": " + Path + ": " + What);
  }

  static std::string member(const std::string &Path, const char *Key) {
    return Path.empty() ? Key : Path + "." + Key;
  }
  static std::string element(const std::string &Path, size_t I) {
    return Path + "[" + std::to_string(I) + "]";
  }

  Status expectObject(const json &J, const std::string &Path,
                      std::initializer_list<const char *> Keys) const;
  Status getUInt(const json &V, const std::string &Path, uint64_t &Out) const;
  Status getBool(const json &V, const std::string &Path, bool &Out) const;
  Status getString(const json &V, const std::string &Path,
                   std::string &Out) const;
  Status getDim3(const json &V, const std::string &Path, Dim3 &Out) const;
  Status getDim3OrRuntime(const json &V, const std::string &Path,
                          std::optional<Dim3> &Out) const;
  Status getUIntOrRuntime(const json &V, const std::string &Path,
                          std::optional<uint64_t> &Out) const;
  Status getArray(const json &Obj, const std::string &Path, const char *Key,
                  bool Required, const json *&Out) const;

  Status readParam(const json &J, const std::string &Path, ParamInfo &P) const;
  Status readLaunch(const json &J, const std::string &Path,
                    LaunchInfo &L) const;
  Status readResources(const json &J, const std::string &Path,
                       ResourceInfo &R) const;
  Status readFused(const json &J, const std::string &Path, FusedPart &F) const;
  Status readProbe(const json &J, const std::string &Path,
                   ProbeBuffer &P) const;
  Status readKernel(const json &J, const std::string &Path,
                    KernelInfo &K) const;
  /// Rejects Key in J when the manifest's version predates it, before
  /// expectObject would call it unknown.
  Status checkSince(const json &J, const std::string &Path, const char *Key,
                    uint64_t Since) const;

  std::string Source;
  /// The manifest_version being read.
  uint64_t ReadVersion = Manifest::CurrentVersion;
};
} // namespace

static const char *jsonTypeName(const json &V) {
  if (V.is_number_unsigned())
    return "an unsigned integer";
  if (V.is_number_integer())
    return "a negative integer";
  if (V.is_number_float())
    return "a number with a fraction";
  return V.type_name();
}

Status
ManifestReader::expectObject(const json &J, const std::string &Path,
                             std::initializer_list<const char *> Keys) const {
  if (!J.is_object())
    return fail(Path.empty() ? "(top level)" : Path,
                std::string("expected an object, got ") + jsonTypeName(J));
  for (const auto &Item : J.items()) {
    bool Known = std::any_of(Keys.begin(), Keys.end(),
                             [&](const char *K) { return Item.key() == K; });
    if (!Known) {
      std::string Allowed;
      for (const char *K : Keys)
        Allowed += std::string(Allowed.empty() ? "" : ", ") + K;
      return fail(member(Path, Item.key().c_str()),
                  "unknown key (expected one of: " + Allowed + ")");
    }
  }
  return Status::success();
}

Status ManifestReader::checkSince(const json &J, const std::string &Path,
                                  const char *Key, uint64_t Since) const {
  if (ReadVersion < Since && J.contains(Key))
    return fail(member(Path, Key), "new in manifest_version " +
                                       std::to_string(Since) +
                                       " (this manifest is version " +
                                       std::to_string(ReadVersion) + ")");
  return Status::success();
}

Status ManifestReader::getUInt(const json &V, const std::string &Path,
                               uint64_t &Out) const {
  if (!V.is_number_unsigned())
    return fail(Path, std::string("expected an unsigned integer, got ") +
                          jsonTypeName(V));
  Out = V.get<uint64_t>();
  return Status::success();
}

Status ManifestReader::getBool(const json &V, const std::string &Path,
                               bool &Out) const {
  if (!V.is_boolean())
    return fail(Path,
                std::string("expected true or false, got ") + jsonTypeName(V));
  Out = V.get<bool>();
  return Status::success();
}

Status ManifestReader::getString(const json &V, const std::string &Path,
                                 std::string &Out) const {
  if (!V.is_string())
    return fail(Path, std::string("expected a string, got ") + jsonTypeName(V));
  Out = V.get<std::string>();
  return Status::success();
}

Status ManifestReader::getDim3(const json &V, const std::string &Path,
                               Dim3 &Out) const {
  if (!V.is_array() || V.empty() || V.size() > 3)
    return fail(Path, "expected an array of 1 to 3 positive integers");
  uint64_t Dims[3] = {1, 1, 1};
  for (size_t I = 0; I < V.size(); ++I) {
    if (Status S = getUInt(V[I], element(Path, I), Dims[I]))
      return S;
    if (Dims[I] == 0)
      return fail(element(Path, I), "expected a positive integer, got 0");
  }
  Out = {Dims[0], Dims[1], Dims[2]};
  return Status::success();
}

Status ManifestReader::getDim3OrRuntime(const json &V, const std::string &Path,
                                        std::optional<Dim3> &Out) const {
  if (V.is_string()) {
    if (V.get<std::string>() != "runtime")
      return fail(Path, "expected \"runtime\" or an array of 1 to 3 positive "
                        "integers");
    Out.reset();
    return Status::success();
  }
  Dim3 D;
  if (Status S = getDim3(V, Path, D))
    return S;
  Out = D;
  return Status::success();
}

Status ManifestReader::getUIntOrRuntime(const json &V, const std::string &Path,
                                        std::optional<uint64_t> &Out) const {
  if (V.is_string()) {
    if (V.get<std::string>() != "runtime")
      return fail(Path, "expected \"runtime\" or an unsigned integer");
    Out.reset();
    return Status::success();
  }
  uint64_t U = 0;
  if (Status S = getUInt(V, Path, U))
    return S;
  Out = U;
  return Status::success();
}

Status ManifestReader::getArray(const json &Obj, const std::string &Path,
                                const char *Key, bool Required,
                                const json *&Out) const {
  Out = nullptr;
  auto It = Obj.find(Key);
  if (It == Obj.end()) {
    if (Required)
      return fail(member(Path, Key), "missing");
    return Status::success();
  }
  if (!It->is_array())
    return fail(member(Path, Key),
                std::string("expected an array, got ") + jsonTypeName(*It));
  Out = &*It;
  return Status::success();
}

/// Looks up a required member; yields a "missing" error naming its path.
#define REQUIRED(OBJ, PATH, KEY, VAR)                                          \
  auto VAR##It = (OBJ).find(KEY);                                              \
  if (VAR##It == (OBJ).end())                                                  \
    return fail(member(PATH, KEY), "missing");                                 \
  const json &VAR = *VAR##It

Status ManifestReader::readParam(const json &J, const std::string &Path,
                                 ParamInfo &P) const {
  if (Status S = expectObject(J, Path,
                              {"name", "type", "size", "align", "offset",
                               "kind", "space", "pointee_align"}))
    return S;
  REQUIRED(J, Path, "name", Name);
  if (Status S = getString(Name, member(Path, "name"), P.Name))
    return S;
  REQUIRED(J, Path, "type", Type);
  if (Status S = getString(Type, member(Path, "type"), P.Type))
    return S;
  std::optional<uint64_t> TypeSize = ptxTypeSize(P.Type);
  if (!TypeSize)
    return fail(member(Path, "type"),
                "'" + P.Type +
                    "' is not a PTX fundamental type (u32, f32, "
                    "b64 ...; no leading dot)");
  REQUIRED(J, Path, "size", Size);
  if (Status S = getUInt(Size, member(Path, "size"), P.Size))
    return S;
  REQUIRED(J, Path, "align", Align);
  if (Status S = getUInt(Align, member(Path, "align"), P.Align))
    return S;
  if (!isPowerOf2(P.Align))
    return fail(member(Path, "align"),
                "expected a power of two, got " + std::to_string(P.Align));
  REQUIRED(J, Path, "offset", Offset);
  if (Status S = getUInt(Offset, member(Path, "offset"), P.Offset))
    return S;
  REQUIRED(J, Path, "kind", Kind);
  std::string KindName;
  if (Status S = getString(Kind, member(Path, "kind"), KindName))
    return S;
  if (KindName == "scalar")
    P.Kind = ParamKind::Scalar;
  else if (KindName == "pointer")
    P.Kind = ParamKind::Pointer;
  else if (KindName == "bytes")
    P.Kind = ParamKind::Bytes;
  else
    return fail(member(Path, "kind"), "expected \"scalar\", \"pointer\" or "
                                      "\"bytes\", got \"" +
                                          KindName + "\"");
  if (auto It = J.find("space"); It != J.end())
    if (Status S = getString(*It, member(Path, "space"), P.Space))
      return S;
  if (auto It = J.find("pointee_align"); It != J.end())
    if (Status S = getUInt(*It, member(Path, "pointee_align"), P.PointeeAlign))
      return S;

  // The size must agree with the type and kind.
  switch (P.Kind) {
  case ParamKind::Scalar:
    if (P.Size != *TypeSize)
      return fail(member(Path, "size"),
                  std::to_string(P.Size) + " does not match type " + P.Type +
                      " (" + std::to_string(*TypeSize) + " bytes)");
    break;
  case ParamKind::Pointer:
    if (P.Size != 8 || *TypeSize != 8)
      return fail(member(Path, "size"),
                  "a pointer parameter is 8 bytes of type u64, s64 or b64");
    break;
  case ParamKind::Bytes:
    if (P.Size == 0 || P.Size % *TypeSize)
      return fail(member(Path, "size"),
                  std::to_string(P.Size) + " is not a positive multiple of " +
                      P.Type + " (" + std::to_string(*TypeSize) + " bytes)");
    break;
  }
  if (P.Kind != ParamKind::Pointer && (!P.Space.empty() || P.PointeeAlign))
    return fail(Path, "'space' and 'pointee_align' apply to pointers only");
  return Status::success();
}

Status ManifestReader::readLaunch(const json &J, const std::string &Path,
                                  LaunchInfo &L) const {
  if (Status S = checkSince(J, Path, "smem_optin", 5))
    return S;
  if (Status S = expectObject(
          J, Path,
          {"block", "grid", "dynamic_smem", "max_threads", "smem_optin"}))
    return S;
  if (auto It = J.find("block"); It != J.end())
    if (Status S = getDim3OrRuntime(*It, member(Path, "block"), L.Block))
      return S;
  if (auto It = J.find("grid"); It != J.end())
    if (Status S = getDim3OrRuntime(*It, member(Path, "grid"), L.Grid))
      return S;
  if (auto It = J.find("dynamic_smem"); It != J.end())
    if (Status S =
            getUIntOrRuntime(*It, member(Path, "dynamic_smem"), L.DynamicSmem))
      return S;
  if (auto It = J.find("max_threads"); It != J.end()) {
    Dim3 D;
    if (Status S = getDim3(*It, member(Path, "max_threads"), D))
      return S;
    L.MaxThreads = D;
  }
  if (auto It = J.find("smem_optin"); It != J.end())
    if (Status S = getBool(*It, member(Path, "smem_optin"), L.SmemOptin))
      return S;
  return Status::success();
}

Status ManifestReader::readResources(const json &J, const std::string &Path,
                                     ResourceInfo &R) const {
  if (Status S =
          expectObject(J, Path, {"registers", "static_smem", "local_bytes"}))
    return S;
  const std::pair<const char *, std::optional<uint64_t> *> Fields[] = {
      {"registers", &R.Registers},
      {"static_smem", &R.StaticSmem},
      {"local_bytes", &R.LocalBytes}};
  for (auto [Key, Slot] : Fields) {
    auto It = J.find(Key);
    if (It == J.end())
      continue;
    uint64_t V = 0;
    if (Status S = getUInt(*It, member(Path, Key), V))
      return S;
    *Slot = V;
  }
  return Status::success();
}

Status ManifestReader::readFused(const json &J, const std::string &Path,
                                 FusedPart &F) const {
  if (Status S = checkSince(J, Path, "ratio", 2))
    return S;
  if (Status S = checkSince(J, Path, "default_grid", 6))
    return S;
  if (Status S = checkSince(J, Path, "default_dynamic_smem", 6))
    return S;
  if (Status S = checkSince(J, Path, "replicas", 6))
    return S;
  if (Status S = checkSince(J, Path, "setmaxnreg", 6))
    return S;
  if (Status S =
          ReadVersion < 2
              ? expectObject(J, Path,
                             {"kernel", "module", "threads", "block", "grid",
                              "dynamic_smem_offset", "dynamic_smem", "arg_map"})
          : ReadVersion < 6
              ? expectObject(J, Path,
                             {"kernel", "module", "threads", "ratio", "block",
                              "grid", "dynamic_smem_offset", "dynamic_smem",
                              "arg_map"})
              : expectObject(J, Path,
                             {"kernel", "module", "threads", "ratio", "block",
                              "grid", "default_grid", "dynamic_smem_offset",
                              "dynamic_smem", "default_dynamic_smem", "arg_map",
                              "replicas", "setmaxnreg"}))
    return S;
  REQUIRED(J, Path, "kernel", Kernel);
  if (Status S = getString(Kernel, member(Path, "kernel"), F.Kernel))
    return S;
  if (auto It = J.find("module"); It != J.end())
    if (Status S = getString(*It, member(Path, "module"), F.Module))
      return S;
  REQUIRED(J, Path, "threads", Threads);
  std::string ThreadsPath = member(Path, "threads");
  if (!Threads.is_array() || Threads.size() != 2)
    return fail(ThreadsPath, "expected [lo, hi]");
  if (Status S = getUInt(Threads[0], element(ThreadsPath, 0), F.ThreadsLo))
    return S;
  if (Status S = getUInt(Threads[1], element(ThreadsPath, 1), F.ThreadsHi))
    return S;
  if (auto It = J.find("ratio"); It != J.end()) {
    uint64_t Ratio = 0;
    if (Status S = getUInt(*It, member(Path, "ratio"), Ratio))
      return S;
    F.Ratio = Ratio;
  }
  if (auto It = J.find("replicas"); It != J.end())
    if (Status S = getUInt(*It, member(Path, "replicas"), F.Replicas))
      return S;
  if (auto It = J.find("setmaxnreg"); It != J.end())
    if (Status S = getUInt(*It, member(Path, "setmaxnreg"), F.Setmaxnreg))
      return S;
  if (auto It = J.find("block"); It != J.end())
    if (Status S = getDim3OrRuntime(*It, member(Path, "block"), F.Block))
      return S;
  if (auto It = J.find("grid"); It != J.end())
    if (Status S = getDim3OrRuntime(*It, member(Path, "grid"), F.Grid))
      return S;
  if (auto It = J.find("default_grid"); It != J.end()) {
    Dim3 D;
    if (Status S = getDim3(*It, member(Path, "default_grid"), D))
      return S;
    F.DefaultGrid = D;
  }
  if (auto It = J.find("dynamic_smem_offset"); It != J.end())
    if (Status S = getUInt(*It, member(Path, "dynamic_smem_offset"),
                           F.DynamicSmemOffset))
      return S;
  if (auto It = J.find("default_dynamic_smem"); It != J.end()) {
    uint64_t V = 0;
    if (Status S = getUInt(*It, member(Path, "default_dynamic_smem"), V))
      return S;
    F.DefaultDynamicSmem = V;
  }
  if (auto It = J.find("dynamic_smem"); It != J.end())
    if (Status S =
            getUIntOrRuntime(*It, member(Path, "dynamic_smem"), F.DynamicSmem))
      return S;
  const json *Map = nullptr;
  if (Status S = getArray(J, Path, "arg_map", /*Required=*/true, Map))
    return S;
  std::string MapPath = member(Path, "arg_map");
  for (size_t I = 0; I < Map->size(); ++I) {
    uint64_t V = 0;
    if (Status S = getUInt((*Map)[I], element(MapPath, I), V))
      return S;
    F.ArgMap.push_back(V);
  }
  return Status::success();
}

Status ManifestReader::readProbe(const json &J, const std::string &Path,
                                 ProbeBuffer &P) const {
  if (Status S = checkSince(J, Path, "probe", 3))
    return S;
  if (Status S = checkSince(J, Path, "overflow_counter", 3))
    return S;
  if (Status S = checkSince(J, Path, "capacity_param", 4))
    return S;
  if (Status S = checkSince(J, Path, "slot_counts", 4))
    return S;
  if (Status S = checkSince(J, Path, "block_offset", 7))
    return S;
  Status Keys = Status::success();
  if (ReadVersion < 3)
    Keys = expectObject(
        J, Path,
        {"name", "param", "level", "capacity", "record_bytes", "fields"});
  else if (ReadVersion < 4)
    Keys = expectObject(J, Path,
                        {"name", "probe", "param", "level", "capacity",
                         "record_bytes", "overflow_counter", "fields"});
  else if (ReadVersion < 7)
    Keys = expectObject(J, Path,
                        {"name", "probe", "param", "level", "capacity",
                         "capacity_param", "record_bytes", "overflow_counter",
                         "slot_counts", "fields"});
  else
    Keys = expectObject(J, Path,
                        {"name", "probe", "param", "level", "capacity",
                         "capacity_param", "record_bytes", "overflow_counter",
                         "slot_counts", "fields", "block_offset"});
  if (Keys)
    return Keys;
  REQUIRED(J, Path, "name", Name);
  if (Status S = getString(Name, member(Path, "name"), P.Name))
    return S;
  if (auto It = J.find("probe"); It != J.end()) {
    if (Status S = getString(*It, member(Path, "probe"), P.Probe))
      return S;
    if (P.Probe.empty())
      return fail(member(Path, "probe"), "expected a non-empty string");
  }
  REQUIRED(J, Path, "param", Param);
  if (Status S = getUInt(Param, member(Path, "param"), P.Param))
    return S;
  REQUIRED(J, Path, "level", Level);
  std::string LevelName;
  if (Status S = getString(Level, member(Path, "level"), LevelName))
    return S;
  if (LevelName == "thread")
    P.Level = ProbeLevel::Thread;
  else if (LevelName == "warp")
    P.Level = ProbeLevel::Warp;
  else if (LevelName == "block")
    P.Level = ProbeLevel::Block;
  else
    return fail(member(Path, "level"),
                "expected \"thread\", \"warp\" or \"block\", got \"" +
                    LevelName + "\"");
  REQUIRED(J, Path, "capacity", Capacity);
  std::string CapacityPath = member(Path, "capacity");
  if (Capacity.is_string() && Capacity.get<std::string>() == "dynamic") {
    if (ReadVersion < 4)
      return fail(CapacityPath, "\"dynamic\" is new in manifest_version 4 "
                                "(this manifest is version " +
                                    std::to_string(ReadVersion) + ")");
    P.DynamicCapacity = true;
  } else if (ReadVersion >= 4 && !Capacity.is_number_unsigned()) {
    return fail(CapacityPath,
                std::string("expected an unsigned integer or \"dynamic\", "
                            "got ") +
                    (Capacity.is_string()
                         ? "\"" + Capacity.get<std::string>() + "\""
                         : std::string(jsonTypeName(Capacity))));
  } else if (Status S = getUInt(Capacity, CapacityPath, P.Capacity)) {
    return S;
  }
  if (auto It = J.find("capacity_param"); It != J.end()) {
    std::string ParamPath = member(Path, "capacity_param");
    if (!P.DynamicCapacity)
      return fail(ParamPath, "only a \"dynamic\" capacity is passed in a "
                             "parameter");
    if (Status S = getUInt(*It, ParamPath, P.CapacityParam))
      return S;
  } else if (P.DynamicCapacity) {
    return fail(member(Path, "capacity_param"),
                "missing (required when capacity is \"dynamic\")");
  }
  REQUIRED(J, Path, "record_bytes", RecordBytes);
  if (Status S =
          getUInt(RecordBytes, member(Path, "record_bytes"), P.RecordBytes))
    return S;
  if (auto It = J.find("overflow_counter"); It != J.end())
    if (Status S =
            getBool(*It, member(Path, "overflow_counter"), P.OverflowCounter))
      return S;
  if (auto It = J.find("slot_counts"); It != J.end())
    if (Status S = getBool(*It, member(Path, "slot_counts"), P.SlotCounts))
      return S;
  if (auto It = J.find("block_offset"); It != J.end()) {
    uint64_t Offset = 0;
    if (Status S = getUInt(*It, member(Path, "block_offset"), Offset))
      return S;
    P.BlockOffset = Offset;
  }
  const json *Fields = nullptr;
  if (Status S = getArray(J, Path, "fields", /*Required=*/true, Fields))
    return S;
  std::string FieldsPath = member(Path, "fields");
  for (size_t I = 0; I < Fields->size(); ++I) {
    const json &FJ = (*Fields)[I];
    std::string FPath = element(FieldsPath, I);
    if (Status S = expectObject(FJ, FPath, {"name", "type", "offset"}))
      return S;
    ProbeField F;
    REQUIRED(FJ, FPath, "name", FName);
    if (Status S = getString(FName, member(FPath, "name"), F.Name))
      return S;
    REQUIRED(FJ, FPath, "type", FType);
    if (Status S = getString(FType, member(FPath, "type"), F.Type))
      return S;
    if (!ptxTypeSize(F.Type))
      return fail(member(FPath, "type"),
                  "'" + F.Type + "' is not a PTX fundamental type");
    REQUIRED(FJ, FPath, "offset", FOffset);
    if (Status S = getUInt(FOffset, member(FPath, "offset"), F.Offset))
      return S;
    P.Fields.push_back(std::move(F));
  }
  return Status::success();
}

Status ManifestReader::readKernel(const json &J, const std::string &Path,
                                  KernelInfo &K) const {
  if (Status S = checkSince(J, Path, "fusion_strategy", 2))
    return S;
  if (Status S = checkSince(J, Path, "probe_occupancy", 5))
    return S;
  if (Status S = checkSince(J, Path, "shape_params", 6))
    return S;
  if (Status S = checkSince(J, Path, "probe_scratch", 7))
    return S;
  if (Status S =
          ReadVersion < 2 ? expectObject(J, Path,
                                         {"name", "params", "launch",
                                          "resources", "fused_from", "probes"})
          : ReadVersion < 5
              ? expectObject(J, Path,
                             {"name", "params", "launch", "resources",
                              "fusion_strategy", "fused_from", "probes"})
          : ReadVersion < 6
              ? expectObject(J, Path,
                             {"name", "params", "launch", "resources",
                              "fusion_strategy", "fused_from", "probes",
                              "probe_occupancy"})
          : ReadVersion < 7
              ? expectObject(J, Path,
                             {"name", "params", "launch", "resources",
                              "fusion_strategy", "fused_from", "shape_params",
                              "probes", "probe_occupancy"})
              : expectObject(J, Path,
                             {"name", "params", "launch", "resources",
                              "fusion_strategy", "fused_from", "shape_params",
                              "probes", "probe_scratch", "probe_occupancy"}))
    return S;
  REQUIRED(J, Path, "name", Name);
  if (Status S = getString(Name, member(Path, "name"), K.Name))
    return S;
  if (K.Name.empty())
    return fail(member(Path, "name"), "expected a non-empty string");
  const json *Params = nullptr;
  if (Status S = getArray(J, Path, "params", /*Required=*/true, Params))
    return S;
  std::string ParamsPath = member(Path, "params");
  for (size_t I = 0; I < Params->size(); ++I) {
    ParamInfo P;
    if (Status S = readParam((*Params)[I], element(ParamsPath, I), P))
      return S;
    K.Params.push_back(std::move(P));
  }
  if (auto It = J.find("launch"); It != J.end())
    if (Status S = readLaunch(*It, member(Path, "launch"), K.Launch))
      return S;
  if (auto It = J.find("resources"); It != J.end())
    if (Status S = readResources(*It, member(Path, "resources"), K.Resources))
      return S;
  if (auto It = J.find("fusion_strategy"); It != J.end()) {
    std::string StrategyPath = member(Path, "fusion_strategy");
    std::string StrategyName;
    if (Status S = getString(*It, StrategyPath, StrategyName))
      return S;
    if (StrategyName == "thread")
      K.Strategy = FusionStrategy::Thread;
    else if (StrategyName == "interleave")
      K.Strategy = FusionStrategy::Interleave;
    else if (StrategyName == "dynamic")
      K.Strategy = FusionStrategy::Dynamic;
    else if (StrategyName == "sm_aware")
      K.Strategy = FusionStrategy::SMAware;
    else
      return fail(StrategyPath, "expected \"thread\", \"interleave\", "
                                "\"dynamic\" or \"sm_aware\", got \"" +
                                    StrategyName + "\"");
  }
  const json *Fused = nullptr;
  if (Status S = getArray(J, Path, "fused_from", /*Required=*/false, Fused))
    return S;
  for (size_t I = 0; Fused && I < Fused->size(); ++I) {
    FusedPart F;
    if (Status S =
            readFused((*Fused)[I], element(member(Path, "fused_from"), I), F))
      return S;
    K.FusedFrom.push_back(std::move(F));
  }
  // Version 1 knew only thread ranges.
  if (ReadVersion < 2 && !K.FusedFrom.empty())
    K.Strategy = FusionStrategy::Thread;
  const json *Shapes = nullptr;
  if (Status S = getArray(J, Path, "shape_params", /*Required=*/false, Shapes))
    return S;
  for (size_t I = 0; Shapes && I < Shapes->size(); ++I) {
    std::string SPath = element(member(Path, "shape_params"), I);
    const json &SJ = (*Shapes)[I];
    if (Status S = expectObject(SJ, SPath, {"param", "part", "value"}))
      return S;
    ShapeParam SP;
    REQUIRED(SJ, SPath, "param", Param);
    if (Status S = getUInt(Param, member(SPath, "param"), SP.Param))
      return S;
    REQUIRED(SJ, SPath, "part", Part);
    if (Status S = getUInt(Part, member(SPath, "part"), SP.Part))
      return S;
    REQUIRED(SJ, SPath, "value", Value);
    std::string Field;
    if (Status S = getString(Value, member(SPath, "value"), Field))
      return S;
    if (Field == "grid_x")
      SP.Field = ShapeField::GridX;
    else if (Field == "grid_y")
      SP.Field = ShapeField::GridY;
    else if (Field == "grid_z")
      SP.Field = ShapeField::GridZ;
    else if (Field == "dynamic_smem")
      SP.Field = ShapeField::DynamicSmem;
    else
      return fail(member(SPath, "value"),
                  "expected \"grid_x\", \"grid_y\", \"grid_z\" or "
                  "\"dynamic_smem\", got \"" +
                      Field + "\"");
    K.ShapeParams.push_back(SP);
  }
  const json *Probes = nullptr;
  if (Status S = getArray(J, Path, "probes", /*Required=*/false, Probes))
    return S;
  for (size_t I = 0; Probes && I < Probes->size(); ++I) {
    ProbeBuffer P;
    if (Status S =
            readProbe((*Probes)[I], element(member(Path, "probes"), I), P))
      return S;
    K.Probes.push_back(std::move(P));
  }
  if (auto It = J.find("probe_scratch"); It != J.end()) {
    std::string SPath = member(Path, "probe_scratch");
    if (Status S =
            expectObject(*It, SPath, {"param", "bytes_per_block", "align"}))
      return S;
    ProbeScratch Sc;
    const std::pair<const char *, uint64_t *> Fields[] = {
        {"param", &Sc.Param},
        {"bytes_per_block", &Sc.BytesPerBlock},
        {"align", &Sc.Align}};
    for (auto [Key, Value] : Fields) {
      auto FI = It->find(Key);
      if (FI == It->end())
        return fail(member(SPath, Key), "missing");
      if (Status S = getUInt(*FI, member(SPath, Key), *Value))
        return S;
    }
    K.Scratch = Sc;
  }
  if (auto It = J.find("probe_occupancy"); It != J.end()) {
    std::string OPath = member(Path, "probe_occupancy");
    if (Status S = expectObject(*It, OPath,
                                {"before", "after", "block_threads",
                                 "registers_before", "registers_after",
                                 "cap_spill_bytes"}))
      return S;
    ProbeOccupancy O;
    const std::pair<const char *, uint64_t *> Fields[] = {
        {"before", &O.Before},
        {"after", &O.After},
        {"block_threads", &O.BlockThreads},
        {"registers_before", &O.RegistersBefore},
        {"registers_after", &O.RegistersAfter},
        {"cap_spill_bytes", &O.CapSpillBytes}};
    for (auto [Key, Value] : Fields) {
      auto FI = It->find(Key);
      if (FI == It->end())
        return fail(member(OPath, Key), "missing");
      if (Status S = getUInt(*FI, member(OPath, Key), *Value))
        return S;
    }
    K.Occupancy = O;
  }
  return Status::success();
}

Status ManifestReader::read(const json &Root, Manifest &M) {
  if (Status S =
          expectObject(Root, "", {"manifest_version", "module", "kernels"}))
    return S;
  REQUIRED(Root, std::string(), "manifest_version", Version);
  uint64_t V = 0;
  if (Status S = getUInt(Version, "manifest_version", V))
    return S;
  if (V < uint64_t(Manifest::OldestVersion) ||
      V > uint64_t(Manifest::NewestVersion)) {
    std::string Known = std::to_string(Manifest::OldestVersion);
    for (int I = Manifest::OldestVersion + 1; I <= Manifest::NewestVersion; ++I)
      Known +=
          (I == Manifest::NewestVersion ? " and " : ", ") + std::to_string(I);
    return fail(
        "manifest_version",
        "unsupported version " + std::to_string(V) +
            " (this runtime reads version" +
            (Manifest::OldestVersion < Manifest::NewestVersion ? "s " : " ") +
            Known + ")");
  }
  ReadVersion = V;

  REQUIRED(Root, std::string(), "module", Module);
  if (Status S = expectObject(Module, "module", {"path", "format", "target"}))
    return S;
  REQUIRED(Module, std::string("module"), "path", ModPath);
  if (Status S = getString(ModPath, "module.path", M.Module.Path))
    return S;
  REQUIRED(Module, std::string("module"), "format", ModFormat);
  if (Status S = getString(ModFormat, "module.format", M.Module.Format))
    return S;
  if (M.Module.Format != "ptx" && M.Module.Format != "cubin")
    return fail("module.format", "expected \"ptx\" or \"cubin\", got \"" +
                                     M.Module.Format + "\"");
  if (auto It = Module.find("target"); It != Module.end())
    if (Status S = getString(*It, "module.target", M.Module.Target))
      return S;

  const json *Kernels = nullptr;
  if (Status S = getArray(Root, "", "kernels", /*Required=*/true, Kernels))
    return S;
  for (size_t I = 0; I < Kernels->size(); ++I) {
    KernelInfo K;
    if (Status S = readKernel((*Kernels)[I], element("kernels", I), K))
      return S;
    M.Kernels.push_back(std::move(K));
  }
  return Status::success();
}

#undef REQUIRED

//===----------------------------------------------------------------------===//
// Entry points
//===----------------------------------------------------------------------===//

Expected<Manifest> gpuopt::runtime::parseManifest(std::string_view Text,
                                                  const std::string &Source) {
  json Root;
  try {
    Root = json::parse(Text.begin(), Text.end());
  } catch (const json::parse_error &E) {
    // Drop nlohmann's "[json.exception.parse_error.101] " prefix.
    std::string What = E.what();
    if (size_t Pos = What.find("] "); Pos != std::string::npos)
      What = What.substr(Pos + 2);
    return Status::error(Source + ": invalid JSON: " + What);
  }
  Manifest M;
  ManifestReader Reader(Source);
  if (Status S = Reader.read(Root, M))
    return S;
  if (Status S = validateManifest(M, Source))
    return S;
  return M;
}

Expected<Manifest> gpuopt::runtime::readManifest(const std::string &Path) {
  std::ifstream In(Path, std::ios::binary);
  if (!In)
    return Status::error(Path + ": cannot open the manifest");
  std::ostringstream SS;
  SS << In.rdbuf();
  return parseManifest(SS.str(), Path);
}
