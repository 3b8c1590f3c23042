//===- ResolveRunSpec.cpp - Checking a run spec before the GPU ------------===//
//
// Each kernel of a run spec against its manifest (given, or scanned from its
// PTX): which kernel, its launch configuration, its arguments against its
// parameters, its module variables against the PTX's declarations. All of
// it runs before a GPU is touched, so that a mistake costs no device time.
//
//===----------------------------------------------------------------------===//

#include "gpuopt/Runtime/ManifestReader.h"
#include "gpuopt/Runtime/PTXScanner.h"
#include "gpuopt/Runtime/ProbeRun.h"
#include "gpuopt/Runtime/RunSpec.h"

#include <cstdlib>
#include <cstring>
#include <cxxabi.h>
#include <filesystem>
#include <memory>

using namespace gpuopt::runtime;

static bool endsWith(const std::string &S, const char *Suffix) {
  size_t N = std::strlen(Suffix);
  return S.size() >= N && S.compare(S.size() - N, N, Suffix) == 0;
}

bool gpuopt::runtime::isBinaryModule(const std::string &Path) {
  return endsWith(Path, ".cubin") || endsWith(Path, ".fatbin");
}

static std::string dirName(const std::string &Path) {
  size_t Pos = Path.rfind('/');
  return Pos == std::string::npos ? "" : Path.substr(0, Pos + 1);
}

Expected<std::optional<Manifest>> gpuopt::runtime::manifestFor(KernelSpec &K) {
  if (!K.ManifestPath.empty()) {
    Expected<Manifest> M = readManifest(K.ManifestPath);
    if (!M)
      return M.takeStatus();
    if (K.ModulePath.empty()) {
      K.ModulePath = M->Module.Path;
      if (!K.ModulePath.empty() && K.ModulePath[0] != '/')
        K.ModulePath = dirName(K.ManifestPath) + K.ModulePath;
    }
    return std::optional<Manifest>(std::move(*M));
  }
  if (isBinaryModule(K.ModulePath))
    return std::optional<Manifest>();
  Expected<Manifest> M = scanPTXFile(K.ModulePath);
  if (!M)
    return M.takeStatus();
  return std::optional<Manifest>(std::move(*M));
}

static std::string kernelNames(const Manifest &M) {
  std::string Names;
  for (const KernelInfo &X : M.Kernels)
    Names += (Names.empty() ? "" : ", ") + X.Name;
  return Names;
}

Status gpuopt::runtime::resolveKernelSpec(KernelSpec &K) {
  Expected<std::optional<Manifest>> M = manifestFor(K);
  if (!M)
    return M.takeStatus();
  if (!*M) {
    if (K.KernelName.empty())
      return Status::error(K.ModulePath +
                           ": a cubin without manifest needs --kernel");
    K.Kernel.Name = K.KernelName;
  } else {
    const Manifest &Man = **M;
    if (Man.Kernels.empty())
      return Status::error(K.ModulePath + ": no kernel (.entry) in the module");
    const KernelInfo *KI = nullptr;
    if (!K.KernelName.empty()) {
      KI = Man.findKernel(K.KernelName);
      if (!KI)
        return Status::error(K.ModulePath + ": no kernel '" + K.KernelName +
                             "' (it has: " + kernelNames(Man) + ")");
    } else if (Man.Kernels.size() == 1) {
      KI = &Man.Kernels[0];
    } else {
      return Status::error(K.ModulePath + ": several kernels (" +
                           kernelNames(Man) + "); choose one with --kernel");
    }
    K.Kernel = *KI;
    K.HasLayout = true;
  }
  if (K.Label.empty())
    K.Label = K.Kernel.Name;

  std::string Kernel = "kernel '" + K.Label + "'";
  const LaunchInfo &L = K.Kernel.Launch;
  if (!K.Block)
    K.Block = L.Block;
  if (!K.Block)
    return Status::error(
        Kernel + ": its block shape is unknown (no " + ".reqntid" +
        (L.MaxThreads ? ", .maxntid " + toString(*L.MaxThreads) : "") +
        "); give --block");
  if (L.Block && *K.Block != *L.Block)
    return Status::error(Kernel + ": --block " + toString(*K.Block) +
                         " contradicts its required block " +
                         toString(*L.Block));
  if (L.MaxThreads && K.Block->count() > L.MaxThreads->count())
    return Status::error(Kernel + ": block " + toString(*K.Block) +
                         " exceeds its .maxntid " + toString(*L.MaxThreads));
  if (K.Block->count() > 1024)
    return Status::error(Kernel + ": block " + toString(*K.Block) +
                         " has more than 1024 threads");
  // A launch-agnostic fused kernel's launch comes from its parts'.
  if (!K.Kernel.ShapeParams.empty()) {
    if (K.Grid)
      return Status::error(Kernel + " takes its parts' grids at launch "
                                    "(shape_params); give each part's with "
                                    "--part-grid PART=X[xY[xZ]], not --grid");
    if (K.Smem)
      return Status::error(Kernel + " computes its dynamic shared memory "
                                    "from its parts'; give a part's with "
                                    "--part-smem PART=BYTES, not --smem");
    Expected<FusedLaunch> FL =
        computeFusedLaunch(K.Kernel, K.PartGrids, K.PartSmem);
    if (!FL)
      return FL.takeStatus();
    K.Grid = FL->Grid;
    K.Smem = FL->DynamicSmem;
    K.ShapeValues = FL->ShapeValues;
  } else if (!K.PartGrids.empty() || !K.PartSmem.empty()) {
    return Status::error(Kernel + ": --part-grid and --part-smem apply to a "
                                  "launch-agnostic fused kernel (a manifest "
                                  "with shape_params); give --grid and "
                                  "--smem");
  }
  if (!K.Grid)
    K.Grid = L.Grid;
  if (!K.Grid)
    return Status::error(Kernel + ": give --grid");
  if (K.Smem && L.DynamicSmem && *K.Smem < *L.DynamicSmem)
    return Status::error(
        Kernel + ": --smem " + std::to_string(*K.Smem) + " is less than the " +
        std::to_string(*L.DynamicSmem) +
        " bytes of dynamic shared memory its manifest gives "
        "(launch.dynamic_smem); give at least that, or leave --smem out");
  if (!K.Smem)
    K.Smem = L.DynamicSmem;
  if (!K.Smem)
    return Status::error(Kernel +
                         " names an .extern .shared array of its module; give "
                         "--smem with the bytes it needs");
  K.Config = {*K.Grid, *K.Block, *K.Smem};
  K.SmemOptin = L.SmemOptin && *K.Smem > 0;
  return Status::success();
}

std::string gpuopt::runtime::demangleVariable(const std::string &Name) {
  if (Name.rfind("_Z", 0) != 0)
    return "";
  int Status = 0;
  std::unique_ptr<char, void (*)(void *)> Out(
      abi::__cxa_demangle(Name.c_str(), nullptr, nullptr, &Status), std::free);
  return Status == 0 && Out ? std::string(Out.get()) : "";
}

Status gpuopt::runtime::checkKernelConsts(KernelSpec &K) {
  if (K.Consts.empty())
    return Status::success();
  // A cubin's variables are checked by the driver when they are set.
  if (isBinaryModule(K.ModulePath)) {
    for (ConstSpec &C : K.Consts)
      C.Symbol = C.Name;
    return Status::success();
  }
  std::vector<PTXVariable> Vars;
  if (Expected<Manifest> M = scanPTXFile(K.ModulePath, &Vars); !M)
    return M.takeStatus();
  std::string Kernel = "kernel '" + K.Label + "'";
  for (ConstSpec &C : K.Consts) {
    const PTXVariable *V = nullptr;
    for (const PTXVariable &X : Vars)
      if (X.Name == C.Name)
        V = &X;
    for (const PTXVariable &X : Vars)
      if (!V && demangleVariable(X.Name) == C.Name)
        V = &X;
    if (!V) {
      std::string List;
      for (const PTXVariable &X : Vars)
        List += (List.empty() ? "" : ", ") + X.Name + " (." + X.Space + ")";
      return Status::error(
          Kernel + ": --const " + C.Text + ": " + K.ModulePath +
          " declares no variable '" + C.Name + "' (" +
          (List.empty() ? std::string("it has no .const or .global "
                                      "variables")
                        : "its variables: " + List) +
          ")");
    }
    if (!V->Bytes)
      return Status::error(Kernel + ": --const " + C.Text + ": ." + V->Space +
                           " " + V->Name +
                           " has no size in the PTX (an .extern or unsized "
                           "array)");
    if (C.Value.bufferBytes() > *V->Bytes)
      return Status::error(
          Kernel + ": --const " + C.Text + ": " +
          std::to_string(C.Value.bufferBytes()) + " bytes, more than the " +
          std::to_string(*V->Bytes) + " of ." + V->Space + " " + V->Name +
          "; give at most " +
          std::to_string(*V->Bytes / elemSize(C.Value.Type)) + " elements");
    C.Symbol = V->Name;
    for (const ConstSpec &D : K.Consts)
      if (&D != &C && D.Symbol == C.Symbol)
        return Status::error(Kernel + ": --const " + C.Text + ": variable " +
                             C.Symbol + " is already set by --const " + D.Text);
  }
  return Status::success();
}

Status gpuopt::runtime::checkKernelArgs(KernelSpec &K) {
  const std::vector<ParamInfo> &Params = K.Kernel.Params;
  // Triton's launcher sizes the last parameter from the kernel's metadata;
  // gpu-run allocates only buffers of parameters of their own.
  if (K.Kernel.Scratch)
    return Status::error(
        "kernel '" + K.Label + "': its probes live in its last parameter (" +
        std::to_string(K.Kernel.Scratch->Param) +
        ", probe_scratch), allocated by Triton's launcher: run it through "
        "gpuopt.triton, or probe it with buffer=new-params to run it here");
  K.ArgParams.clear();
  size_t NumCapacities = 0;
  size_t NumShapes = 0;
  for (size_t I = 0; I < Params.size(); ++I) {
    if (capacityOfParam(K.Kernel, I))
      ++NumCapacities;
    else if (isShapeParam(K.Kernel, I))
      ++NumShapes;
    else if (!probeOfParam(K.Kernel, I))
      K.ArgParams.push_back(I);
  }
  std::string Kernel = "kernel '" + K.Label + "'";
  if (K.Args.size() != K.ArgParams.size()) {
    std::string List;
    for (size_t I = 0; I < Params.size(); ++I) {
      List += "\n  " + std::to_string(I) + ": " + Params[I].Name + " ." +
              Params[I].Type + " (" + std::to_string(Params[I].Size) +
              " bytes)";
      if (const ProbeBuffer *P = probeOfParam(K.Kernel, I))
        List += ": probe buffer '" + P->Name + "', allocated by gpu-run";
      else if (const ProbeBuffer *P = capacityOfParam(K.Kernel, I))
        List += ": probe capacity of '" + P->Name + "', set by gpu-run";
      else if (isShapeParam(K.Kernel, I))
        List += ": a part's launch shape, set by gpu-run";
    }
    if (NumShapes)
      return Status::error(
          Kernel + " has " + std::to_string(Params.size()) + " parameters, " +
          std::to_string(Params.size() - K.ArgParams.size()) +
          " of them set by gpu-run (its parts' launch shapes" +
          (NumShapes < Params.size() - K.ArgParams.size() ? " and probe "
                                                            "parameters"
                                                          : "") +
          "; give no --arg for them): expected " +
          std::to_string(K.ArgParams.size()) + " --arg, " +
          std::to_string(K.Args.size()) + " given; its parameters:" + List);
    size_t NumProbes = Params.size() - K.ArgParams.size();
    if (NumProbes == 0)
      return Status::error(Kernel + " has " + std::to_string(Params.size()) +
                           " parameters, " + std::to_string(K.Args.size()) +
                           " --arg given; its parameters:" + List);
    std::string Which;
    if (NumCapacities)
      Which = " of them probe parameters (buffers and capacities), which "
              "gpu-run sets itself (give no --arg for them)";
    else if (NumProbes == 1)
      Which = " of them a probe parameter, whose buffer gpu-run allocates "
              "itself (give no --arg for it)";
    else
      Which = " of them probe parameters, whose buffers gpu-run allocates "
              "itself (give no --arg for them)";
    return Status::error(Kernel + " has " + std::to_string(Params.size()) +
                         " parameters, " + std::to_string(NumProbes) + Which +
                         ": expected " + std::to_string(K.ArgParams.size()) +
                         " --arg, " + std::to_string(K.Args.size()) +
                         " given; its parameters:" + List);
  }
  for (size_t I = 0; I < K.Args.size(); ++I)
    if (Status S = checkArgAgainstParam(K.Args[I], Params[K.ArgParams[I]],
                                        unsigned(I)))
      return S;
  for (const auto &[Index, Path] : K.Outs)
    if (Index >= K.Args.size() || !K.Args[Index].isBuffer())
      return Status::error(Kernel + ": --out " + std::to_string(Index) + ":" +
                           Path + " does not name a buffer argument");
  for (unsigned Index : K.Resets)
    if (Index >= K.Args.size() || !K.Args[Index].isBuffer())
      return Status::error(Kernel + ": reset " + std::to_string(Index) +
                           " does not name a buffer argument");
  return Status::success();
}

Status gpuopt::runtime::resolveRunSpec(RunSpec &Spec) {
  for (KernelSpec &K : Spec.Kernels) {
    if (Status S = resolveKernelSpec(K))
      return S;
    if (K.HasLayout)
      if (Status S = checkKernelArgs(K))
        return S;
    if (Status S = checkKernelTrace(K))
      return S;
    if (Status S = checkKernelConsts(K))
      return S;
  }
  // Two traces into one directory would mix their files.
  auto TraceKey = [](const std::string &Dir) {
    std::filesystem::path P = std::filesystem::absolute(Dir).lexically_normal();
    return P.has_filename() ? P : P.parent_path();
  };
  std::vector<KernelSpec> &Ks = Spec.Kernels;
  for (size_t S = 0; S < Ks.size(); ++S)
    for (size_t T = 0; T < S && !Ks[S].TraceDir.empty(); ++T)
      if (!Ks[T].TraceDir.empty() &&
          TraceKey(Ks[S].TraceDir) == TraceKey(Ks[T].TraceDir))
        return Status::error("kernels '" + Ks[T].Label + "' and '" +
                             Ks[S].Label + "' both trace to " + Ks[S].TraceDir);
  for (GroupSpec &G : Spec.Groups)
    if (G.Name.empty())
      for (size_t M : G.Members)
        G.Name += (G.Name.empty() ? "" : "+") + Ks[M].Label;
  return Status::success();
}
