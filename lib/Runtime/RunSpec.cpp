//===- RunSpec.cpp - Reading run specs ------------------------------------===//
//
// The JSON run spec (gpu-run --spec) and the option texts it shares with
// gpu-run's command line (--const, --out). Reading is strict, as for
// manifests: an unknown key is an error naming its JSON path.
//
//===----------------------------------------------------------------------===//

#include "gpuopt/Runtime/RunSpec.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <initializer_list>
#include <map>

using namespace gpuopt::runtime;
using json = nlohmann::json;

Expected<uint64_t> gpuopt::runtime::parseUnsignedOption(const std::string &Text,
                                                        const char *What) {
  char *End = nullptr;
  errno = 0;
  unsigned long long V = std::strtoull(Text.c_str(), &End, 0);
  if (Text.empty() || Text[0] == '-' || *End || errno)
    return Status::error(std::string(What) +
                         ": expected an unsigned integer, got '" + Text + "'");
  return uint64_t(V);
}

Status gpuopt::runtime::addOutSpec(KernelSpec &K, const std::string &Text) {
  size_t Colon = Text.find(':');
  if (Colon == std::string::npos || Colon == 0 || Colon + 1 == Text.size())
    return Status::error("--out: expected INDEX:PATH, got '" + Text + "'");
  Expected<uint64_t> Index =
      parseUnsignedOption(Text.substr(0, Colon), "--out");
  if (!Index)
    return Index.takeStatus();
  K.Outs.push_back({unsigned(*Index), Text.substr(Colon + 1)});
  return Status::success();
}

/// PART=VALUE of --part-grid and --part-smem: the part and the value's text.
static Expected<std::pair<size_t, std::string>>
splitPartSpec(const std::string &Text, const char *Option,
              const char *Expected) {
  size_t Eq = Text.find('=');
  if (Eq == std::string::npos || Eq == 0 || Eq + 1 == Text.size())
    return Status::error(std::string(Option) + ": expected " + Expected +
                         ", got '" + Text + "'");
  gpuopt::runtime::Expected<uint64_t> Part =
      parseUnsignedOption(Text.substr(0, Eq), Option);
  if (!Part)
    return Part.takeStatus();
  if (*Part > 64)
    return Status::error(std::string(Option) + ": part " +
                         std::to_string(*Part) + " is past any fused kernel's");
  return std::make_pair(size_t(*Part), Text.substr(Eq + 1));
}

Status gpuopt::runtime::addPartGridSpec(KernelSpec &K,
                                        const std::string &Text) {
  auto Spec = splitPartSpec(Text, "--part-grid", "PART=X[xY[xZ]]");
  if (!Spec)
    return Spec.takeStatus();
  std::string Dims = Spec->second;
  for (char &C : Dims)
    if (C == 'x')
      C = ',';
  Expected<Dim3> Grid = parseDim3(Dims);
  if (!Grid)
    return Status::error("--part-grid " + Text + ": " +
                         Grid.status().message());
  if (K.PartGrids.size() <= Spec->first)
    K.PartGrids.resize(Spec->first + 1);
  if (K.PartGrids[Spec->first])
    return Status::error("--part-grid " + Text + ": part " +
                         std::to_string(Spec->first) +
                         "'s grid is given twice");
  K.PartGrids[Spec->first] = *Grid;
  return Status::success();
}

Status gpuopt::runtime::addPartSmemSpec(KernelSpec &K,
                                        const std::string &Text) {
  auto Spec = splitPartSpec(Text, "--part-smem", "PART=BYTES");
  if (!Spec)
    return Spec.takeStatus();
  Expected<uint64_t> Bytes = parseUnsignedOption(Spec->second, "--part-smem");
  if (!Bytes)
    return Bytes.takeStatus();
  if (K.PartSmem.size() <= Spec->first)
    K.PartSmem.resize(Spec->first + 1);
  if (K.PartSmem[Spec->first])
    return Status::error("--part-smem " + Text + ": part " +
                         std::to_string(Spec->first) +
                         "'s dynamic shared memory is given twice");
  K.PartSmem[Spec->first] = *Bytes;
  return Status::success();
}

bool gpuopt::runtime::isShapeParam(const KernelInfo &K, size_t Index) {
  for (const ShapeParam &SP : K.ShapeParams)
    if (SP.Param == Index)
      return true;
  return false;
}

Expected<ConstSpec> gpuopt::runtime::parseConstSpec(const std::string &Text,
                                                    const std::string &Where) {
  // NAME ends at the first ':' followed by an element type and ':', so that
  // a C++ name (ns::coeffs) may hold colons.
  size_t Colon = Text.find(':');
  while (Colon != std::string::npos) {
    size_t Next = Text.find(':', Colon + 1);
    if (Colon > 0 && Next != std::string::npos &&
        parseElemType(
            std::string_view(Text).substr(Colon + 1, Next - Colon - 1)))
      break;
    Colon = Next;
  }
  if (Colon == std::string::npos)
    return Status::error(Where + " '" + Text +
                         "': expected NAME:TYPE:COUNT:INIT, TYPE " +
                         "one of u8 s8 u16 s16 u32 s32 u64 s64 f16 bf16 f32 "
                         "f64");
  ConstSpec C;
  C.Name = Text.substr(0, Colon);
  C.Text = Text;
  Expected<ArgSpec> A = parseArgSpec("buf:" + Text.substr(Colon + 1));
  if (!A) {
    // "argument 'buf:...': what" names a text the user did not write.
    std::string What = A.status().message();
    if (size_t Pos = What.find("': "); Pos != std::string::npos)
      What = What.substr(Pos + 3);
    return Status::error(Where + " '" + Text + "': " + What);
  }
  if (A->Initial == ArgSpec::Init::Out)
    return Status::error(
        Where + " '" + Text +
        "': 'out' marks a kernel output, and a variable filled before the "
        "launch is an input: use zero, fill:V, random:SEED or file:PATH");
  C.Value = std::move(*A);
  return C;
}

namespace {
/// Reads one run spec; every error names the file and the JSON path.
class RunSpecReader {
public:
  RunSpecReader(std::string Source, RunSpec &Spec)
      : Source(std::move(Source)), Spec(Spec) {}

  Status read(const json &Root);

private:
  Status fail(const std::string &Path, const std::string &What) const {
    return Status::error(Source + ": " + Path + ": " + What);
  }
  Status getUInt(const json &V, const std::string &Path, uint64_t &Out) const;
  Status getString(const json &V, const std::string &Path,
                   std::string &Out) const;
  Status getDim3(const json &V, const std::string &Path,
                 std::optional<Dim3> &Out) const;
  Status expectKeys(const json &V, const std::string &Path,
                    std::initializer_list<const char *> Allowed) const;
  Status readKernel(const json &KJ, const std::string &P, KernelSpec &K) const;
  Status readGroup(const json &GJ, const std::string &P, GroupSpec &G) const;
  Status getLabel(const json &V, const std::string &Path, size_t &Out) const;

  std::string Source;
  RunSpec &Spec;
  /// The kernels read so far, by label (or kernel name).
  std::map<std::string, size_t> ByLabel;
};
} // namespace

Status RunSpecReader::getUInt(const json &V, const std::string &Path,
                              uint64_t &Out) const {
  if (!V.is_number_unsigned())
    return fail(Path, "expected an unsigned integer");
  Out = V.get<uint64_t>();
  return Status::success();
}

Status RunSpecReader::getString(const json &V, const std::string &Path,
                                std::string &Out) const {
  if (!V.is_string())
    return fail(Path, "expected a string");
  Out = V.get<std::string>();
  return Status::success();
}

Status RunSpecReader::getDim3(const json &V, const std::string &Path,
                              std::optional<Dim3> &Out) const {
  if (!V.is_array() || V.empty() || V.size() > 3)
    return fail(Path, "expected an array of 1 to 3 positive integers");
  uint64_t D[3] = {1, 1, 1};
  for (size_t I = 0; I < V.size(); ++I) {
    if (Status S = getUInt(V[I], Path + "[" + std::to_string(I) + "]", D[I]))
      return S;
    if (!D[I])
      return fail(Path, "dimensions must be positive");
  }
  Out = Dim3{D[0], D[1], D[2]};
  return Status::success();
}

Status
RunSpecReader::expectKeys(const json &V, const std::string &Path,
                          std::initializer_list<const char *> Allowed) const {
  if (!V.is_object())
    return fail(Path, "expected an object");
  for (const auto &Item : V.items())
    if (std::none_of(Allowed.begin(), Allowed.end(),
                     [&](const char *K) { return Item.key() == K; }))
      return fail(Path + "." + Item.key(), "unknown key");
  return Status::success();
}

Status RunSpecReader::getLabel(const json &V, const std::string &Path,
                               size_t &Out) const {
  std::string L;
  if (Status S = getString(V, Path, L))
    return S;
  auto It = ByLabel.find(L);
  if (It == ByLabel.end())
    return fail(Path, "no kernel labelled '" + L + "'");
  Out = It->second;
  return Status::success();
}

Status RunSpecReader::readKernel(const json &KJ, const std::string &P,
                                 KernelSpec &K) const {
  if (Status S = expectKeys(KJ, P,
                            {"label", "module", "kernel", "manifest", "grid",
                             "block", "smem", "part_grids", "part_smem", "args",
                             "consts", "out", "trace", "time_alone", "reset"}))
    return S;
  if (!KJ.contains("module"))
    return fail(P + ".module", "missing");
  if (Status S = getString(KJ["module"], P + ".module", K.ModulePath))
    return S;
  const std::pair<const char *, std::string *> Strings[] = {
      {"label", &K.Label},
      {"kernel", &K.KernelName},
      {"manifest", &K.ManifestPath}};
  for (auto [Key, Out] : Strings)
    if (KJ.contains(Key))
      if (Status S = getString(KJ[Key], P + "." + Key, *Out))
        return S;
  if (KJ.contains("grid"))
    if (Status S = getDim3(KJ["grid"], P + ".grid", K.Grid))
      return S;
  if (KJ.contains("block"))
    if (Status S = getDim3(KJ["block"], P + ".block", K.Block))
      return S;
  if (KJ.contains("smem")) {
    uint64_t Smem = 0;
    if (Status S = getUInt(KJ["smem"], P + ".smem", Smem))
      return S;
    K.Smem = Smem;
  }
  // Launch-agnostic fused kernels: {"PART": [x, y, z] or "XxY"} and
  // {"PART": BYTES}.
  if (KJ.contains("part_grids")) {
    if (!KJ["part_grids"].is_object())
      return fail(P + ".part_grids", "expected an object {\"PART\": GRID}");
    for (const auto &Item : KJ["part_grids"].items()) {
      std::string GP = P + ".part_grids." + Item.key();
      std::optional<Dim3> Grid;
      if (Item.value().is_string()) {
        if (Status S = addPartGridSpec(K, Item.key() + "=" +
                                              Item.value().get<std::string>()))
          return fail(GP, S.message());
        continue;
      }
      if (Status S = getDim3(Item.value(), GP, Grid))
        return S;
      if (Status S = addPartGridSpec(K, Item.key() + "=" + toString(*Grid)))
        return fail(GP, S.message());
    }
  }
  if (KJ.contains("part_smem")) {
    if (!KJ["part_smem"].is_object())
      return fail(P + ".part_smem", "expected an object {\"PART\": BYTES}");
    for (const auto &Item : KJ["part_smem"].items()) {
      std::string SP = P + ".part_smem." + Item.key();
      uint64_t Bytes = 0;
      if (Status S = getUInt(Item.value(), SP, Bytes))
        return S;
      if (Status S =
              addPartSmemSpec(K, Item.key() + "=" + std::to_string(Bytes)))
        return fail(SP, S.message());
    }
  }
  if (KJ.contains("args")) {
    const json &Args = KJ["args"];
    if (!Args.is_array())
      return fail(P + ".args", "expected an array of argument specs");
    for (size_t J = 0; J < Args.size(); ++J) {
      std::string AP = P + ".args[" + std::to_string(J) + "]";
      std::string Text;
      if (Status S = getString(Args[J], AP, Text))
        return S;
      Expected<ArgSpec> A = parseArgSpec(Text);
      if (!A)
        return fail(AP, A.status().message());
      K.Args.push_back(std::move(*A));
    }
  }
  if (KJ.contains("consts")) {
    const json &Consts = KJ["consts"];
    if (!Consts.is_array())
      return fail(P + ".consts", "expected an array of NAME:TYPE:COUNT:INIT");
    for (size_t J = 0; J < Consts.size(); ++J) {
      std::string CP = P + ".consts[" + std::to_string(J) + "]";
      std::string Text;
      if (Status S = getString(Consts[J], CP, Text))
        return S;
      Expected<ConstSpec> C = parseConstSpec(Text, Source + ": " + CP);
      if (!C)
        return C.takeStatus();
      K.Consts.push_back(std::move(*C));
    }
  }
  if (KJ.contains("trace")) {
    if (Status S = getString(KJ["trace"], P + ".trace", K.TraceDir))
      return S;
    if (K.TraceDir.empty())
      return fail(P + ".trace", "expected a directory, got \"\"");
  }
  if (KJ.contains("time_alone")) {
    if (!KJ["time_alone"].is_boolean())
      return fail(P + ".time_alone", "expected true or false");
    K.TimeAlone = KJ["time_alone"].get<bool>();
  }
  if (KJ.contains("reset")) {
    const json &R = KJ["reset"];
    if (!R.is_array())
      return fail(P + ".reset", "expected an array of argument indices");
    for (size_t J = 0; J < R.size(); ++J) {
      if (!R[J].is_number_unsigned())
        return fail(P + ".reset[" + std::to_string(J) + "]",
                    "expected an argument index");
      K.Resets.push_back(R[J].get<unsigned>());
    }
  }
  if (KJ.contains("out")) {
    if (!KJ["out"].is_object())
      return fail(P + ".out", "expected an object {\"INDEX\": \"PATH\"}");
    for (const auto &Item : KJ["out"].items()) {
      std::string Path;
      if (Status S = getString(Item.value(), P + ".out." + Item.key(), Path))
        return S;
      if (Status S = addOutSpec(K, Item.key() + ":" + Path))
        return S;
    }
  }
  return Status::success();
}

Status RunSpecReader::readGroup(const json &GJ, const std::string &P,
                                GroupSpec &G) const {
  if (Status S = expectKeys(GJ, P, {"name", "kernels", "modes", "also"}))
    return S;
  if (!GJ.contains("kernels") || !GJ["kernels"].is_array() ||
      GJ["kernels"].empty())
    return fail(P + ".kernels", "expected a non-empty array of kernel labels");
  for (size_t J = 0; J < GJ["kernels"].size(); ++J) {
    size_t K = 0;
    if (Status S = getLabel(GJ["kernels"][J],
                            P + ".kernels[" + std::to_string(J) + "]", K))
      return S;
    G.Members.push_back(K);
  }
  if (GJ.contains("also")) {
    if (!GJ["also"].is_array())
      return fail(P + ".also", "expected an array of kernel labels");
    for (size_t J = 0; J < GJ["also"].size(); ++J) {
      std::string AP = P + ".also[" + std::to_string(J) + "]";
      size_t K = 0;
      if (Status S = getLabel(GJ["also"][J], AP, K))
        return S;
      if (std::find(G.Also.begin(), G.Also.end(), K) != G.Also.end())
        return fail(AP, "'" + GJ["also"][J].get<std::string>() +
                            "' is already listed");
      G.Also.push_back(K);
    }
  }
  if (GJ.contains("name"))
    if (Status S = getString(GJ["name"], P + ".name", G.Name))
      return S;
  if (!GJ.contains("modes")) {
    G.Serial = G.Concurrent = true;
    return Status::success();
  }
  if (!GJ["modes"].is_array())
    return fail(P + ".modes", "expected an array");
  for (size_t J = 0; J < GJ["modes"].size(); ++J) {
    std::string MP = P + ".modes[" + std::to_string(J) + "]";
    std::string M;
    if (Status S = getString(GJ["modes"][J], MP, M))
      return S;
    if (M == "alone")
      G.Alone = true;
    else if (M == "serial")
      G.Serial = true;
    else if (M == "concurrent")
      G.Concurrent = true;
    else if (M == "graph")
      G.Graph = true;
    else
      return fail(MP, "expected \"alone\", \"serial\", \"concurrent\" or "
                      "\"graph\"");
  }
  return Status::success();
}

Status RunSpecReader::read(const json &Root) {
  if (Status S = expectKeys(Root, "(top level)",
                            {"warmup", "repeat", "kernels", "groups"}))
    return S;
  const std::pair<const char *, unsigned *> Counts[] = {
      {"warmup", &Spec.Warmup}, {"repeat", &Spec.Repeat}};
  for (auto [Key, Out] : Counts) {
    if (!Root.contains(Key))
      continue;
    uint64_t V = 0;
    if (Status S = getUInt(Root[Key], Key, V))
      return S;
    *Out = unsigned(V);
  }
  if (!Root.contains("kernels") || !Root["kernels"].is_array())
    return fail("kernels", "expected an array of kernel specs");
  const json &Kernels = Root["kernels"];
  for (size_t I = 0; I < Kernels.size(); ++I) {
    std::string P = "kernels[" + std::to_string(I) + "]";
    KernelSpec K;
    if (Status S = readKernel(Kernels[I], P, K))
      return S;
    std::string Label = K.Label.empty() ? K.KernelName : K.Label;
    if (!Label.empty() && !ByLabel.emplace(Label, Spec.Kernels.size()).second)
      return fail(P + ".label", "duplicate label '" + Label + "'");
    Spec.Kernels.push_back(std::move(K));
  }
  if (!Root.contains("groups"))
    return Status::success();
  if (!Root["groups"].is_array())
    return fail("groups", "expected an array");
  for (size_t I = 0; I < Root["groups"].size(); ++I) {
    GroupSpec G;
    if (Status S = readGroup(Root["groups"][I],
                             "groups[" + std::to_string(I) + "]", G))
      return S;
    Spec.Groups.push_back(std::move(G));
  }
  return Status::success();
}

Status gpuopt::runtime::readRunSpec(const std::string &Path, RunSpec &Spec) {
  std::ifstream In(Path);
  if (!In)
    return Status::error(Path + ": cannot open the run spec");
  json Root;
  try {
    Root = json::parse(In);
  } catch (const json::exception &E) {
    return Status::error(Path + ": invalid JSON: " + E.what());
  }
  return RunSpecReader(Path, Spec).read(Root);
}

Status gpuopt::runtime::readRunSpecText(const std::string &Text,
                                        const std::string &Name,
                                        RunSpec &Spec) {
  json Root;
  try {
    Root = json::parse(Text);
  } catch (const json::exception &E) {
    return Status::error(Name + ": invalid JSON: " + E.what());
  }
  return RunSpecReader(Name, Spec).read(Root);
}
