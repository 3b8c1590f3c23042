//===- Session.cpp - Running and timing a run spec on a GPU ---------------===//
//
// The session's device state, the checked launch of each kernel, outputs,
// and timing alone and in groups. Probe buffers are ProbeRun.cpp's, the
// comparison CompareRun.cpp's, the occupancy sweep OccupancySweep.cpp's.
//
//===----------------------------------------------------------------------===//

#include "gpuopt/Runtime/Session.h"

#include <algorithm>
#include <cstring>
#include <fstream>

using namespace gpuopt::runtime;

Expected<std::unique_ptr<Session>> Session::create(RunSpec &Spec) {
  std::unique_ptr<Session> S(new Session(Spec));
  S->Runs.resize(Spec.Kernels.size());
  std::map<std::string, std::shared_ptr<const std::vector<uint8_t>>> Filled;
  for (size_t I = 0; I < Spec.Kernels.size(); ++I) {
    const KernelSpec &K = Spec.Kernels[I];
    KernelRun &R = S->Runs[I];
    R.HostInit.resize(K.Args.size());
    for (size_t J = 0; J < K.Args.size(); ++J) {
      const ArgSpec &A = K.Args[J];
      if (!A.isBuffer() || A.Initial == ArgSpec::Init::Zero ||
          A.Initial == ArgSpec::Init::Out)
        continue;
      auto &Shared = Filled[A.Text];
      if (!Shared) {
        auto Data = std::make_shared<std::vector<uint8_t>>();
        if (Status St = initHostBuffer(A, *Data))
          return St;
        Shared = std::move(Data);
      }
      R.HostInit[J] = Shared;
    }
    for (const ConstSpec &C : K.Consts) {
      R.ConstInit.emplace_back();
      if (Status St = initHostBuffer(C.Value, R.ConstInit.back()))
        return Status::error("kernel '" + K.Label + "': --const " + C.Text +
                             ": " + St.message());
    }
  }
  return S;
}

Status Session::open(int Ordinal) {
  Expected<std::unique_ptr<Context>> C = Context::create(Ordinal);
  if (!C)
    return C.takeStatus();
  Ctx = std::move(*C);
  return Status::success();
}

Status Session::open(CudaDriver &D, int Ordinal) {
  Expected<std::unique_ptr<Context>> C = Context::create(D, Ordinal);
  if (!C)
    return C.takeStatus();
  Ctx = std::move(*C);
  return Status::success();
}

Status Session::setConsts(size_t I, const Module &M) const {
  const KernelSpec &K = Spec.Kernels[I];
  const std::vector<std::vector<uint8_t>> &Init = Runs[I].ConstInit;
  for (size_t J = 0; J < K.Consts.size(); ++J)
    if (Status S =
            M.setGlobal(K.Consts[J].Symbol, Init[J].data(), Init[J].size()))
      return Status::error("kernel '" + K.Label + "': --const " +
                           K.Consts[J].Text + ": " + S.message());
  return Status::success();
}

Expected<const Function *> Session::getFunction(const std::string &Path,
                                                const std::string &Name,
                                                size_t I) {
  const KernelSpec &K = Spec.Kernels[I];
  std::string Key = K.Consts.empty() ? Path : Path + "\n" + std::to_string(I);
  auto It = Modules.find(Key);
  if (It == Modules.end()) {
    Expected<std::unique_ptr<Module>> M = Module::loadFile(*Ctx, Path);
    if (!M)
      return M.takeStatus();
    It = Modules.emplace(Key, std::move(*M)).first;
    if (Status S = setConsts(I, *It->second))
      return S;
  }
  Expected<Function> Fn = It->second->getFunction(Name);
  if (!Fn)
    return Fn.takeStatus();
  Functions.push_back(std::make_unique<Function>(std::move(*Fn)));
  return static_cast<const Function *>(Functions.back().get());
}

Status Session::initialiseArgs(size_t I) {
  const KernelSpec &K = Spec.Kernels[I];
  KernelRun &R = Runs[I];
  for (size_t J = 0; J < K.Args.size(); ++J) {
    const ArgSpec &A = K.Args[J];
    if (!A.isBuffer())
      continue;
    Status S = Status::success();
    switch (A.Initial) {
    case ArgSpec::Init::Zero:
      S = R.Buffers[J].fill(0);
      break;
    case ArgSpec::Init::Out:
      S = R.Buffers[J].fill(0xFF);
      break;
    default:
      S = R.Buffers[J].upload(R.HostInit[J]->data(), R.HostInit[J]->size());
      break;
    }
    if (S)
      return S;
  }
  return Status::success();
}

Status Session::initialise(size_t I) {
  for (const DeviceBuffer &B : Runs[I].Probes)
    if (Status S = B.fill(0))
      return S;
  return initialiseArgs(I);
}

Expected<std::unique_ptr<ArgPack>>
Session::packArgs(size_t I, const std::vector<ParamInfo> &Params,
                  const std::vector<DeviceBuffer> &Buffers,
                  const std::vector<DeviceBuffer> &Probes, bool Probed) const {
  const KernelSpec &K = Spec.Kernels[I];
  auto Pack = std::make_unique<ArgPack>(Params);
  for (size_t J = 0; J < K.Args.size(); ++J) {
    const ArgSpec &A = K.Args[J];
    unsigned Index = unsigned(Probed ? K.ArgParams[J] : J);
    Status S = Status::success();
    if (A.isBuffer() || (A.K == ArgSpec::Kind::Null && Index < Params.size() &&
                         Params[Index].Kind == ParamKind::Bytes)) {
      // An aggregate parameter gets the address in its first 8 bytes
      // (checkArgAgainstParam).
      CUdeviceptr Ptr = A.isBuffer() ? Buffers[J].ptr() : 0;
      std::vector<uint8_t> Raw(
          std::max<uint64_t>(Index < Params.size() ? Params[Index].Size : 8,
                             sizeof(Ptr)),
          0);
      std::memcpy(Raw.data(), &Ptr, sizeof(Ptr));
      S = Pack->set(Index, Raw.data(), Raw.size());
    } else {
      S = Pack->set(Index, A.Value.data(), A.Value.size());
    }
    if (S)
      return S;
  }
  // A launch-agnostic kernel's parts' shapes.
  for (size_t J = 0; Probed && J < K.ShapeValues.size(); ++J) {
    uint32_t Value = K.ShapeValues[J];
    if (Status S = Pack->set(unsigned(K.Kernel.ShapeParams[J].Param), &Value,
                             sizeof(Value)))
      return S;
  }
  for (size_t J = 0; Probed && J < K.Kernel.Probes.size(); ++J) {
    const ProbeBuffer &PB = K.Kernel.Probes[J];
    CUdeviceptr Ptr = Probes[J].ptr();
    if (Status S = Pack->set(unsigned(PB.Param), &Ptr, sizeof(Ptr)))
      return S;
    if (PB.DynamicCapacity) {
      uint32_t Capacity = uint32_t(PB.Capacity);
      if (Status S = Pack->set(unsigned(PB.CapacityParam), &Capacity,
                               sizeof(Capacity)))
        return S;
    }
  }
  return Pack;
}

Status Session::syncAfter(const std::string &What) const {
  if (Status S = Ctx->synchronize())
    return Status::error(What + ": " + S.message());
  return Status::success();
}

Expected<std::vector<CountedMap>> Session::launchChecked(size_t I) {
  KernelSpec &K = Spec.Kernels[I];
  KernelRun &R = Runs[I];
  Expected<const Function *> Fn = getFunction(K.ModulePath, K.Kernel.Name, I);
  if (!Fn)
    return Fn.takeStatus();
  R.Fn = *Fn;
  if (!K.HasLayout) {
    Expected<std::vector<ParamInfo>> Params = queryParamLayout(*Ctx, *R.Fn);
    if (!Params)
      return Params.takeStatus();
    K.Kernel.Params = std::move(*Params);
    K.HasLayout = true;
    if (Status S = checkKernelArgs(K))
      return S;
  }
  if (Status S =
          prepareDynamicSmem(*Ctx, *R.Fn, K.Config.DynamicSmem, K.SmemOptin))
    return S;
  R.Buffers.resize(K.Args.size());
  for (size_t J = 0; J < K.Args.size(); ++J) {
    if (!K.Args[J].isBuffer())
      continue;
    Expected<DeviceBuffer> B =
        DeviceBuffer::allocate(*Ctx, K.Args[J].bufferBytes());
    if (!B)
      return B.takeStatus();
    R.Buffers[J] = std::move(*B);
  }
  if (Status S = initialiseArgs(I))
    return S;
  // Dynamic probe maps are sized by a counting run on copies of the
  // initialised arguments, before their buffers exist.
  std::vector<CountedMap> Counted;
  if (hasDynamicProbes(K.Kernel)) {
    Expected<std::vector<CountedMap>> C = countingRun(*this, I);
    if (!C)
      return C.takeStatus();
    Counted = std::move(*C);
  }
  if (Status S = allocateProbes(*this, I))
    return S;
  for (const DeviceBuffer &B : R.Probes)
    if (Status S = B.fill(0))
      return S;
  Expected<std::unique_ptr<ArgPack>> Args =
      packArgs(I, K.Kernel.Params, R.Buffers, R.Probes, /*Probed=*/true);
  if (!Args)
    return Args.takeStatus();
  R.Args = std::move(*Args);
  if (Status S = launch(*Ctx, *R.Fn, K.Config, *R.Args))
    return S;
  if (Status S = syncAfter("kernel '" + K.Label + "' failed"))
    return S;
  return Counted;
}

Expected<uint64_t> Session::writeOutput(size_t I, unsigned Arg,
                                        const std::string &Path) {
  const DeviceBuffer &B = Runs[I].Buffers[Arg];
  std::vector<uint8_t> Host(B.size());
  if (Status S = B.download(Host.data(), Host.size()))
    return S;
  std::ofstream Out(Path, std::ios::binary);
  if (!Out || !Out.write(reinterpret_cast<const char *>(Host.data()),
                         std::streamsize(Host.size())))
    return Status::error("cannot write " + Path);
  return uint64_t(Host.size());
}

Status Session::startTiming() {
  size_t NumStreams = 1;
  for (const GroupSpec &G : Spec.Groups)
    NumStreams = std::max(NumStreams, G.Members.size());
  for (size_t I = 0; I < NumStreams; ++I) {
    Expected<std::unique_ptr<Stream>> S = Stream::create(*Ctx);
    if (!S)
      return S.takeStatus();
    OwnedStreams.push_back(std::move(*S));
    Streams.push_back(OwnedStreams.back().get());
  }
  return Status::success();
}

LaunchItem Session::item(size_t I) const {
  LaunchItem Item{Runs[I].Fn, Spec.Kernels[I].Config, Runs[I].Args.get(), {}};
  for (unsigned J : Spec.Kernels[I].Resets)
    Item.Resets.push_back(
        {Runs[I].Buffers[J].ptr(), Spec.Kernels[I].Args[J].bufferBytes()});
  return Item;
}

Expected<Stats> Session::timeAlone(size_t I) {
  Expected<Stats> St = gpuopt::runtime::timeGroup(
      *Ctx, {item(I)}, GroupMode::Serial, Streams, Spec.Warmup, Spec.Repeat);
  if (!St)
    return St;
  if (Status S = syncAfter("timing kernel '" + Spec.Kernels[I].Label + "'"))
    return S;
  return St;
}

Expected<GroupTiming> Session::timeGroup(const GroupSpec &G) {
  std::vector<LaunchItem> Items;
  for (size_t M : G.Members)
    Items.push_back(item(M));
  // All modes of a group in interleaved rounds, so that they compare.
  GroupTiming Result;
  std::vector<TimedEntry> Entries;
  using Mode = GroupTiming::Mode;
  auto Add = [&](TimedEntry E, Mode M, size_t Kernel) {
    Entries.push_back(std::move(E));
    Result.Entries.push_back({M, Kernel, Stats()});
  };
  if (G.Alone)
    for (size_t M : G.Members)
      Add({{item(M)}, GroupMode::Serial}, Mode::Alone, M);
  if (G.Serial)
    Add({Items, GroupMode::Serial}, Mode::Serial, 0);
  if (G.Concurrent)
    Add({Items, GroupMode::Concurrent}, Mode::Concurrent, 0);
  if (G.Graph)
    Add({Items, GroupMode::Graph}, Mode::Graph, 0);
  for (size_t M : G.Also)
    Add({{item(M)}, GroupMode::Serial}, Mode::Also, M);
  if (Entries.empty())
    return Result;
  Expected<std::vector<Stats>> All =
      timeInterleaved(*Ctx, Entries, Streams, Spec.Warmup, Spec.Repeat);
  if (!All)
    return All.takeStatus();
  if (Status S = syncAfter("timing group '" + G.Name + "'"))
    return S;
  for (size_t E = 0; E < Entries.size(); ++E)
    Result.Entries[E].Time = std::move((*All)[E]);
  return Result;
}
