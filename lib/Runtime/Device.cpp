//===- Device.cpp - Contexts, buffers, modules and launches ---------------===//
//
// Each wrapper checks every driver call; destructors ignore errors, since a
// failed free after a failed kernel would only hide the first error.
//
//===----------------------------------------------------------------------===//

#include "gpuopt/Runtime/Device.h"

#include <algorithm>
#include <cstring>
#include <fstream>
#include <iterator>

using namespace gpuopt::runtime;

//===----------------------------------------------------------------------===//
// Context
//===----------------------------------------------------------------------===//

Expected<std::unique_ptr<Context>> Context::create(int Ordinal) {
  Expected<CudaDriver *> D = CudaDriver::get();
  if (!D)
    return D.status();
  return create(**D, Ordinal);
}

Expected<DeviceInfo> gpuopt::runtime::queryDevice(int Ordinal) {
  Expected<CudaDriver *> D = CudaDriver::get();
  if (!D)
    return D.status();
  return queryDevice(**D, Ordinal);
}

Expected<DeviceInfo> gpuopt::runtime::queryDevice(CudaDriver &D, int Ordinal) {
  const CudaDriverAPI &A = D.api();
  CUresult Init = A.cuInit(0);
  if (Init == CUDA_ERROR_NO_DEVICE)
    return Status::error("no CUDA device: cuInit failed: " + D.describe(Init));
  if (Status S = D.check(Init, "cuInit"))
    return S;

  int Count = 0;
  GPUOPT_CU_CHECK(D, cuDeviceGetCount, &Count);
  if (Count == 0)
    return Status::error("no CUDA device: the driver " + D.libraryName() +
                         " lists none");
  if (Ordinal < 0 || Ordinal >= Count)
    return Status::error("no CUDA device " + std::to_string(Ordinal) +
                         " (the driver lists " + std::to_string(Count) + ")");

  DeviceInfo Info;
  Info.Ordinal = Ordinal;
  CUdevice Device = 0;
  GPUOPT_CU_CHECK(D, cuDeviceGet, &Device, Ordinal);
  char Name[256] = {0};
  GPUOPT_CU_CHECK(D, cuDeviceGetName, Name, int(sizeof(Name) - 1), Device);
  Info.Name = Name;
  const std::pair<int, int *> Attrs[] = {
      {CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, &Info.ComputeMajor},
      {CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, &Info.ComputeMinor},
      {CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, &Info.Multiprocessors},
      {CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
       &Info.MaxSharedPerBlockOptin},
      {CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, &Info.L2Bytes},
      {CU_DEVICE_ATTRIBUTE_CLOCK_RATE, &Info.ClockKHz}};
  for (auto [Attr, Slot] : Attrs)
    GPUOPT_CU_CHECK(D, cuDeviceGetAttribute, Slot, Attr, Device);
  // Only the occupancy sweep and the fusion model need these; older drivers
  // may not know them.
  const std::pair<int, int *> OptionalAttrs[] = {
      {CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR,
       &Info.SharedPerMultiprocessor},
      {CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK,
       &Info.ReservedSharedPerBlock},
      {CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR,
       &Info.ThreadsPerMultiprocessor},
      {CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR,
       &Info.BlocksPerMultiprocessor},
      {CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR,
       &Info.RegistersPerMultiprocessor}};
  for (auto [Attr, Slot] : OptionalAttrs)
    if (A.cuDeviceGetAttribute(Slot, Attr, Device) != CUDA_SUCCESS)
      *Slot = 0;
  size_t Total = 0;
  GPUOPT_CU_CHECK(D, cuDeviceTotalMem_v2, &Total, Device);
  Info.TotalMemory = Total;
  GPUOPT_CU_CHECK(D, cuDriverGetVersion, &Info.DriverVersion);
  return Info;
}

Expected<std::unique_ptr<Context>> Context::create(CudaDriver &D, int Ordinal) {
  Expected<DeviceInfo> Info = queryDevice(D, Ordinal);
  if (!Info)
    return Info.status();
  std::unique_ptr<Context> C(new Context());
  C->D = &D;
  C->Info = std::move(*Info);
  const CudaDriverAPI &A = D.api();
  GPUOPT_CU_CHECK(D, cuDeviceGet, &C->Device, Ordinal);
  GPUOPT_CU_CHECK(D, cuDevicePrimaryCtxRetain, &C->Ctx, C->Device);
  if (Status S = D.check(A.cuCtxSetCurrent(C->Ctx), "cuCtxSetCurrent")) {
    A.cuDevicePrimaryCtxRelease_v2(C->Device);
    C->Ctx = nullptr;
    return S;
  }
  return C;
}

Context::~Context() {
  if (Ctx) {
    D->api().cuCtxSynchronize();
    D->api().cuDevicePrimaryCtxRelease_v2(Device);
  }
}

Status Context::synchronize() const {
  GPUOPT_CU_CHECK(*D, cuCtxSynchronize);
  return Status::success();
}

Expected<uint64_t> Context::freeMemory() const {
  size_t Free = 0, Total = 0;
  GPUOPT_CU_CHECK(*D, cuMemGetInfo_v2, &Free, &Total);
  return uint64_t(Free);
}

//===----------------------------------------------------------------------===//
// DeviceBuffer
//===----------------------------------------------------------------------===//

Expected<DeviceBuffer> DeviceBuffer::allocate(const Context &C,
                                              uint64_t Bytes) {
  DeviceBuffer B;
  B.Ctx = &C;
  B.Bytes = Bytes;
  CUresult R = C.driver().api().cuMemAlloc_v2(&B.Ptr, Bytes ? Bytes : 1);
  if (R != CUDA_SUCCESS)
    return Status::error("cuMemAlloc_v2 of " + std::to_string(Bytes) +
                         " bytes failed: " + C.driver().describe(R));
  return B;
}

DeviceBuffer &DeviceBuffer::operator=(DeviceBuffer &&O) noexcept {
  if (this != &O) {
    if (Ptr)
      Ctx->driver().api().cuMemFree_v2(Ptr);
    Ctx = O.Ctx;
    Ptr = O.Ptr;
    Bytes = O.Bytes;
    O.Ptr = 0;
    O.Bytes = 0;
  }
  return *this;
}

DeviceBuffer::~DeviceBuffer() {
  if (Ptr)
    Ctx->driver().api().cuMemFree_v2(Ptr);
}

Status DeviceBuffer::upload(const void *Data, uint64_t Size) const {
  if (Size > Bytes)
    return Status::error("upload of " + std::to_string(Size) +
                         " bytes into a buffer of " + std::to_string(Bytes));
  GPUOPT_CU_CHECK(Ctx->driver(), cuMemcpyHtoD_v2, Ptr, Data, Size);
  return Status::success();
}

Status DeviceBuffer::download(void *Data, uint64_t Size,
                              uint64_t Offset) const {
  if (Offset > Bytes || Size > Bytes - Offset)
    return Status::error(
        "download of " + std::to_string(Size) + " bytes" +
        (Offset ? " at offset " + std::to_string(Offset) : std::string()) +
        " from a buffer of " + std::to_string(Bytes));
  GPUOPT_CU_CHECK(Ctx->driver(), cuMemcpyDtoH_v2, Data, Ptr + Offset, Size);
  return Status::success();
}

Status DeviceBuffer::fill(uint8_t Byte) const {
  GPUOPT_CU_CHECK(Ctx->driver(), cuMemsetD8_v2, Ptr, Byte, Bytes);
  return Status::success();
}

Status DeviceBuffer::copyFrom(const DeviceBuffer &Src) const {
  if (Src.Bytes != Bytes)
    return Status::error("device copy of a buffer of " +
                         std::to_string(Src.Bytes) + " bytes into one of " +
                         std::to_string(Bytes));
  if (Bytes)
    GPUOPT_CU_CHECK(Ctx->driver(), cuMemcpyDtoD_v2, Ptr, Src.Ptr, Bytes);
  return Status::success();
}

//===----------------------------------------------------------------------===//
// Module
//===----------------------------------------------------------------------===//

Expected<std::unique_ptr<Module>> Module::load(const Context &C,
                                               const std::vector<char> &Image,
                                               bool IsPTX,
                                               const std::string &Source) {
  std::unique_ptr<Module> M(new Module());
  M->Ctx = &C;
  M->Source = Source;
  std::vector<char> Data = Image;
  if (IsPTX && (Data.empty() || Data.back() != '\0'))
    Data.push_back('\0'); // The driver reads PTX as a C string.

  // Collect the JIT compiler's log so that a rejected PTX says why.
  constexpr size_t LogSize = 16384;
  std::vector<char> ErrorLog(LogSize, '\0'), InfoLog(LogSize, '\0');
  CUjit_option Options[] = {
      CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
      CU_JIT_INFO_LOG_BUFFER, CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES};
  void *Values[] = {ErrorLog.data(), reinterpret_cast<void *>(LogSize - 1),
                    InfoLog.data(), reinterpret_cast<void *>(LogSize - 1)};
  const CudaDriver &D = C.driver();
  CUresult R =
      D.api().cuModuleLoadDataEx(&M->Handle, Data.data(), 4, Options, Values);
  if (R != CUDA_SUCCESS) {
    std::string Msg = Source + ": cuModuleLoadDataEx failed: " + D.describe(R);
    if (ErrorLog[0])
      Msg += "\n" + std::string(ErrorLog.data());
    return Status::error(Msg);
  }
  return M;
}

Expected<std::unique_ptr<Module>> Module::loadFile(const Context &C,
                                                   const std::string &Path) {
  std::ifstream In(Path, std::ios::binary);
  if (!In)
    return Status::error(Path + ": cannot open the module");
  std::vector<char> Image((std::istreambuf_iterator<char>(In)),
                          std::istreambuf_iterator<char>());
  bool IsPTX =
      Path.size() >= 4 && Path.compare(Path.size() - 4, 4, ".ptx") == 0;
  // ELF (cubin) and fatbin images are binary; anything else is PTX text.
  if (!IsPTX &&
      !(Image.size() >= 4 && std::memcmp(Image.data(),
                                         "\x7f"
                                         "ELF",
                                         4) == 0) &&
      !(Image.size() >= 4 && uint8_t(Image[0]) == 0x50 &&
        uint8_t(Image[1]) == 0xed))
    IsPTX = true;
  return load(C, Image, IsPTX, Path);
}

Module::~Module() {
  if (Handle)
    Ctx->driver().api().cuModuleUnload(Handle);
}

Expected<Function> Module::getFunction(const std::string &Name) const {
  const CudaDriver &D = Ctx->driver();
  Function F;
  F.Name = Name;
  CUresult R = D.api().cuModuleGetFunction(&F.Handle, Handle, Name.c_str());
  if (R != CUDA_SUCCESS)
    return Status::error(Source + ": cuModuleGetFunction('" + Name +
                         "') failed: " + D.describe(R));
  const std::pair<int, int *> Attrs[] = {
      {CU_FUNC_ATTRIBUTE_NUM_REGS, &F.Registers},
      {CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, &F.StaticSmem},
      {CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, &F.LocalBytes},
      {CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, &F.MaxThreadsPerBlock}};
  for (auto [Attr, Slot] : Attrs)
    GPUOPT_CU_CHECK(D, cuFuncGetAttribute, Slot, Attr, F.Handle);
  return F;
}

Status Module::setGlobal(const std::string &Name, const void *Data,
                         uint64_t Size) const {
  const CudaDriver &D = Ctx->driver();
  if (!D.api().cuModuleGetGlobal_v2)
    return Status::error("the CUDA driver has no cuModuleGetGlobal_v2, which "
                         "setting the variable '" +
                         Name + "' needs");
  CUdeviceptr Ptr = 0;
  size_t Bytes = 0;
  CUresult R = D.api().cuModuleGetGlobal_v2(&Ptr, &Bytes, Handle, Name.c_str());
  if (R != CUDA_SUCCESS)
    return Status::error(Source + ": no module-scope variable '" + Name +
                         "' (cuModuleGetGlobal_v2 failed: " + D.describe(R) +
                         ")");
  if (Size > Bytes)
    return Status::error(Source + ": variable '" + Name + "' has " +
                         std::to_string(Bytes) + " bytes, fewer than the " +
                         std::to_string(Size) + " given");
  GPUOPT_CU_CHECK(D, cuMemcpyHtoD_v2, Ptr, Data, size_t(Size));
  return Status::success();
}

Expected<std::vector<ParamInfo>>
gpuopt::runtime::queryParamLayout(const Context &C, const Function &F) {
  const CudaDriver &D = C.driver();
  if (!D.api().cuFuncGetParamInfo)
    return Status::error("the CUDA driver has no cuFuncGetParamInfo (CUDA "
                         "12.4+): give a manifest for '" +
                         F.Name + "'");
  std::vector<ParamInfo> Params;
  for (size_t I = 0;; ++I) {
    size_t Offset = 0, Size = 0;
    CUresult R = D.api().cuFuncGetParamInfo(F.Handle, I, &Offset, &Size);
    if (R != CUDA_SUCCESS) {
      if (I > 0 || R == CUDA_ERROR_NOT_FOUND || R == 1 /*INVALID_VALUE*/)
        break; // Past the last parameter.
      return D.check(R, "cuFuncGetParamInfo");
    }
    ParamInfo P;
    P.Name = "param_" + std::to_string(I);
    P.Offset = Offset;
    P.Size = Size;
    if (Size == 4 || Size == 8 || Size == 2 || Size == 1) {
      P.Type = "b" + std::to_string(Size * 8);
      P.Align = Size;
      P.Kind = ParamKind::Scalar;
    } else {
      P.Type = "b8";
      P.Align = 1;
      P.Kind = ParamKind::Bytes;
    }
    Params.push_back(P);
  }
  return Params;
}

//===----------------------------------------------------------------------===//
// Streams and events
//===----------------------------------------------------------------------===//

Expected<std::unique_ptr<Stream>> Stream::create(const Context &C) {
  std::unique_ptr<Stream> S(new Stream());
  S->Ctx = &C;
  GPUOPT_CU_CHECK(C.driver(), cuStreamCreate, &S->Handle,
                  CU_STREAM_NON_BLOCKING);
  return S;
}

Stream::~Stream() {
  if (Handle)
    Ctx->driver().api().cuStreamDestroy_v2(Handle);
}

Status Stream::synchronize() const {
  GPUOPT_CU_CHECK(Ctx->driver(), cuStreamSynchronize, Handle);
  return Status::success();
}

Expected<std::unique_ptr<Event>> Event::create(const Context &C) {
  std::unique_ptr<Event> E(new Event());
  E->Ctx = &C;
  GPUOPT_CU_CHECK(C.driver(), cuEventCreate, &E->Handle, CU_EVENT_DEFAULT);
  return E;
}

Event::~Event() {
  if (Handle)
    Ctx->driver().api().cuEventDestroy_v2(Handle);
}

//===----------------------------------------------------------------------===//
// Arguments and launches
//===----------------------------------------------------------------------===//

ArgPack::ArgPack(const std::vector<ParamInfo> &Params) : Params(Params) {
  uint64_t End = 0;
  for (const ParamInfo &P : Params)
    End = std::max<uint64_t>(End, P.Offset + P.Size);
  Storage.assign(End, 0);
  for (const ParamInfo &P : Params)
    Pointers.push_back(Storage.data() + P.Offset);
}

Status ArgPack::set(unsigned Index, const void *Data, uint64_t Size) {
  if (Index >= Params.size())
    return Status::error("argument " + std::to_string(Index) +
                         " does not exist (the kernel has " +
                         std::to_string(Params.size()) + " parameters)");
  if (Size != Params[Index].Size)
    return Status::error("argument " + std::to_string(Index) + " is " +
                         std::to_string(Size) + " bytes, parameter '" +
                         Params[Index].Name + "' needs " +
                         std::to_string(Params[Index].Size));
  std::memcpy(Storage.data() + Params[Index].Offset, Data, Size);
  return Status::success();
}

Status gpuopt::runtime::prepareDynamicSmem(const Context &C, const Function &F,
                                           uint64_t Bytes, bool OptIn) {
  // Static and dynamic shared memory together above 48 KiB need the opt-in
  // (a fused kernel has its parts' static arrays and their dynamic ones).
  if (Bytes == 0 || (!OptIn && Bytes + uint64_t(F.StaticSmem) <= 48 * 1024))
    return Status::success();
  uint64_t Max = uint64_t(C.info().MaxSharedPerBlockOptin);
  if (Bytes + uint64_t(F.StaticSmem) > Max)
    return Status::error(
        "kernel '" + F.Name + "': " + std::to_string(Bytes) +
        " bytes of dynamic shared memory plus " + std::to_string(F.StaticSmem) +
        " static exceed the device's " + std::to_string(Max) + " per block");
  GPUOPT_CU_CHECK(C.driver(), cuFuncSetAttribute, F.Handle,
                  CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, int(Bytes));
  return Status::success();
}

Expected<int> gpuopt::runtime::activeBlocksPerSM(const Context &C,
                                                 const Function &F,
                                                 int BlockThreads,
                                                 uint64_t DynamicSmem) {
  const CudaDriverAPI &A = C.driver().api();
  if (!A.cuOccupancyMaxActiveBlocksPerMultiprocessor)
    return Status::error("the CUDA driver has no "
                         "cuOccupancyMaxActiveBlocksPerMultiprocessor");
  int Blocks = 0;
  GPUOPT_CU_CHECK(C.driver(), cuOccupancyMaxActiveBlocksPerMultiprocessor,
                  &Blocks, F.Handle, BlockThreads, size_t(DynamicSmem));
  return Blocks;
}

Status gpuopt::runtime::launch(const Context &C, const Function &F,
                               const LaunchConfig &L, ArgPack &Args,
                               CUstream Stream) {
  CUresult R = C.driver().api().cuLaunchKernel(
      F.Handle, unsigned(L.Grid.X), unsigned(L.Grid.Y), unsigned(L.Grid.Z),
      unsigned(L.Block.X), unsigned(L.Block.Y), unsigned(L.Block.Z),
      unsigned(L.DynamicSmem), Stream, Args.kernelParams(), nullptr);
  if (R != CUDA_SUCCESS)
    return Status::error(
        "cuLaunchKernel of '" + F.Name + "' (grid " + toString(L.Grid) +
        ", block " + toString(L.Block) + ", " + std::to_string(L.DynamicSmem) +
        " bytes dynamic shared memory) failed: " + C.driver().describe(R));
  return Status::success();
}

//===----------------------------------------------------------------------===//
// Graphs
//===----------------------------------------------------------------------===//

Expected<std::unique_ptr<KernelGraph>>
KernelGraph::create(const Context &C, const std::vector<LaunchItem> &Items) {
  const CudaDriver &D = C.driver();
  const CudaDriverAPI &A = D.api();
  const std::pair<const void *, const char *> Needed[] = {
      {reinterpret_cast<const void *>(A.cuGraphCreate), "cuGraphCreate"},
      {reinterpret_cast<const void *>(A.cuGraphAddKernelNode_v2),
       "cuGraphAddKernelNode_v2"},
      {reinterpret_cast<const void *>(A.cuGraphInstantiateWithFlags),
       "cuGraphInstantiateWithFlags"},
      {reinterpret_cast<const void *>(A.cuGraphLaunch), "cuGraphLaunch"},
      {reinterpret_cast<const void *>(A.cuGraphExecDestroy),
       "cuGraphExecDestroy"},
      {reinterpret_cast<const void *>(A.cuGraphDestroy), "cuGraphDestroy"}};
  for (auto [Fn, Name] : Needed)
    if (!Fn)
      return Status::error(std::string("the CUDA driver ") + D.libraryName() +
                           " lacks " + Name +
                           " (CUDA 11.4+), which CUDA graphs need");
  if (Items.empty())
    return Status::error("a CUDA graph needs at least one launch");

  CUgraph Graph = nullptr;
  GPUOPT_CU_CHECK(D, cuGraphCreate, &Graph, 0);
  // The graph is only needed until it is instantiated.
  struct GraphDeleter {
    const CudaDriverAPI &A;
    CUgraph G;
    ~GraphDeleter() { A.cuGraphDestroy(G); }
  } Deleter{A, Graph};

  for (const LaunchItem &It : Items) {
    const LaunchConfig &L = It.Config;
    CudaKernelNodeParams P{};
    P.func = It.Fn->Handle;
    P.gridDimX = unsigned(L.Grid.X);
    P.gridDimY = unsigned(L.Grid.Y);
    P.gridDimZ = unsigned(L.Grid.Z);
    P.blockDimX = unsigned(L.Block.X);
    P.blockDimY = unsigned(L.Block.Y);
    P.blockDimZ = unsigned(L.Block.Z);
    P.sharedMemBytes = unsigned(L.DynamicSmem);
    P.kernelParams = It.Args->kernelParams();
    CUgraphNode Node = nullptr;
    CUresult R = A.cuGraphAddKernelNode_v2(&Node, Graph, nullptr, 0, &P);
    if (R != CUDA_SUCCESS)
      return Status::error(
          "cuGraphAddKernelNode_v2 of '" + It.Fn->Name + "' (grid " +
          toString(L.Grid) + ", block " + toString(L.Block) + ", " +
          std::to_string(L.DynamicSmem) +
          " bytes dynamic shared memory) failed: " + D.describe(R));
  }
  std::unique_ptr<KernelGraph> G(new KernelGraph());
  G->Ctx = &C;
  G->Nodes = Items.size();
  GPUOPT_CU_CHECK(D, cuGraphInstantiateWithFlags, &G->Exec, Graph, 0);
  return G;
}

KernelGraph::~KernelGraph() {
  if (Exec)
    Ctx->driver().api().cuGraphExecDestroy(Exec);
}

Status KernelGraph::launch(CUstream Stream) const {
  GPUOPT_CU_CHECK(Ctx->driver(), cuGraphLaunch, Exec, Stream);
  return Status::success();
}
