//===- Device.h - Contexts, buffers, modules and launches -------*- C++ -*-===//
//
// Thin RAII wrappers over the driver API (CudaDriver.h). Every failing call
// becomes a Status naming the call and the driver's error, so that a tool
// can print it as is. One Context per process uses the device's primary
// context, which is what the CUDA runtime and PyTorch share too.
//
//===----------------------------------------------------------------------===//

#ifndef GPUOPT_RUNTIME_DEVICE_H
#define GPUOPT_RUNTIME_DEVICE_H

#include "gpuopt/Runtime/CudaDriver.h"
#include "gpuopt/Runtime/Manifest.h"

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace gpuopt::runtime {

struct DeviceInfo {
  int Ordinal = 0;
  std::string Name;
  int ComputeMajor = 0, ComputeMinor = 0;
  int Multiprocessors = 0;
  int MaxSharedPerBlockOptin = 0;
  /// Shared memory of one SM, and what the system reserves of it per block
  /// (0 where the driver does not say).
  int SharedPerMultiprocessor = 0;
  int ReservedSharedPerBlock = 0;
  /// Resident threads, resident blocks and 32-bit registers of one SM (0
  /// where the driver does not say): the occupancy limits the fusion model
  /// takes from the GPU instead of its chip table.
  int ThreadsPerMultiprocessor = 0;
  int BlocksPerMultiprocessor = 0;
  int RegistersPerMultiprocessor = 0;
  int L2Bytes = 0;
  int ClockKHz = 0;
  uint64_t TotalMemory = 0;
  int DriverVersion = 0;
};

/// What the driver (CudaDriver::get) says of device Ordinal, without making
/// a context: whether there is a GPU to run on. Fails as Context::create
/// does ("no CUDA device ...", or the driver's load error).
Expected<DeviceInfo> queryDevice(int Ordinal = 0);
Expected<DeviceInfo> queryDevice(CudaDriver &D, int Ordinal = 0);

class Context {
public:
  /// Loads the driver (CudaDriver::get), initialises it, picks device
  /// Ordinal and makes its primary context current. Fails with "no CUDA device
  /// ..." when there is none.
  static Expected<std::unique_ptr<Context>> create(int Ordinal = 0);
  /// The same with a given driver (tests use a stand-in library).
  static Expected<std::unique_ptr<Context>> create(CudaDriver &D,
                                                   int Ordinal = 0);
  ~Context();
  Context(const Context &) = delete;
  Context &operator=(const Context &) = delete;

  const CudaDriver &driver() const { return *D; }
  const DeviceInfo &info() const { return Info; }
  Status synchronize() const;
  /// The device memory free now (cuMemGetInfo_v2).
  Expected<uint64_t> freeMemory() const;

private:
  Context() = default;
  CudaDriver *D = nullptr;
  CUdevice Device = 0;
  CUcontext Ctx = nullptr;
  DeviceInfo Info;
};

/// Device memory; freed on destruction.
class DeviceBuffer {
public:
  static Expected<DeviceBuffer> allocate(const Context &C, uint64_t Bytes);
  DeviceBuffer() = default;
  DeviceBuffer(DeviceBuffer &&O) noexcept { *this = std::move(O); }
  DeviceBuffer &operator=(DeviceBuffer &&O) noexcept;
  ~DeviceBuffer();

  CUdeviceptr ptr() const { return Ptr; }
  uint64_t size() const { return Bytes; }
  Status upload(const void *Data, uint64_t Size) const;
  /// Copies Size bytes from Offset in the buffer to Data.
  Status download(void *Data, uint64_t Size, uint64_t Offset = 0) const;
  Status fill(uint8_t Byte) const;
  /// Copies all of Src, which must be as large, into this buffer on the
  /// device (cuMemcpyDtoD_v2).
  Status copyFrom(const DeviceBuffer &Src) const;

private:
  const Context *Ctx = nullptr;
  CUdeviceptr Ptr = 0;
  uint64_t Bytes = 0;
};

/// A loaded kernel and its attributes.
struct Function {
  CUfunction Handle = nullptr;
  std::string Name;
  int Registers = 0;
  int StaticSmem = 0;
  int LocalBytes = 0;
  int MaxThreadsPerBlock = 0;
};

/// A loaded PTX (JIT-compiled by the driver) or cubin module.
class Module {
public:
  /// Loads an image; IsPTX selects JIT compilation. JIT errors carry the
  /// driver's compiler log.
  static Expected<std::unique_ptr<Module>> load(const Context &C,
                                                const std::vector<char> &Image,
                                                bool IsPTX,
                                                const std::string &Source);
  /// Reads and loads a file: PTX when it ends in .ptx or starts with PTX
  /// text, a cubin/fatbin otherwise.
  static Expected<std::unique_ptr<Module>> loadFile(const Context &C,
                                                    const std::string &Path);
  ~Module();

  Expected<Function> getFunction(const std::string &Name) const;
  /// Copies Size bytes to the start of the module-scope variable Name (a
  /// `.const` or `.global` of the module, as cuModuleGetGlobal_v2 finds it),
  /// which must hold at least Size bytes.
  Status setGlobal(const std::string &Name, const void *Data,
                   uint64_t Size) const;
  const std::string &source() const { return Source; }

private:
  Module() = default;
  const Context *Ctx = nullptr;
  CUmodule Handle = nullptr;
  std::string Source;
};

/// The parameter layout of a loaded function from the driver
/// (cuFuncGetParamInfo, CUDA 12.4+): what a cubin without manifest offers.
/// Parameters are reported as untyped bytes ("b8" arrays, or b32/b64 when
/// the size says so).
Expected<std::vector<ParamInfo>> queryParamLayout(const Context &C,
                                                  const Function &F);

class Stream {
public:
  static Expected<std::unique_ptr<Stream>> create(const Context &C);
  ~Stream();
  CUstream get() const { return Handle; }
  Status synchronize() const;

private:
  Stream() = default;
  const Context *Ctx = nullptr;
  CUstream Handle = nullptr;
};

class Event {
public:
  static Expected<std::unique_ptr<Event>> create(const Context &C);
  ~Event();
  CUevent get() const { return Handle; }

private:
  Event() = default;
  const Context *Ctx = nullptr;
  CUevent Handle = nullptr;
};

/// The kernel parameter buffer, packed at the manifest's offsets; the driver
/// receives a pointer to each parameter inside it.
class ArgPack {
public:
  explicit ArgPack(const std::vector<ParamInfo> &Params);
  // Pointers point into Storage, whose heap block a move keeps.
  ArgPack(ArgPack &&) = default;
  ArgPack &operator=(ArgPack &&) = default;
  ArgPack(const ArgPack &) = delete;
  ArgPack &operator=(const ArgPack &) = delete;
  /// Copies Size bytes into parameter Index; Size must be its size.
  Status set(unsigned Index, const void *Data, uint64_t Size);
  void **kernelParams() { return Pointers.empty() ? nullptr : Pointers.data(); }
  const std::vector<uint8_t> &bytes() const { return Storage; }

private:
  std::vector<ParamInfo> Params;
  std::vector<uint8_t> Storage;
  std::vector<void *> Pointers;
};

struct LaunchConfig {
  Dim3 Grid, Block;
  uint64_t DynamicSmem = 0;
};

/// Raises the function's dynamic shared memory limit to Bytes
/// (cuFuncSetAttribute) when Bytes and the static shared memory together
/// exceed the default 48 KiB, or whenever OptIn is set (the manifest's
/// "smem_optin"), with a clear error past the device's opt-in maximum.
Status prepareDynamicSmem(const Context &C, const Function &F, uint64_t Bytes,
                          bool OptIn = false);

/// How many blocks of F with BlockThreads threads and DynamicSmem bytes of
/// dynamic shared memory fit on one SM at once (the driver's occupancy
/// calculator).
Expected<int> activeBlocksPerSM(const Context &C, const Function &F,
                                int BlockThreads, uint64_t DynamicSmem);

/// Enqueues one launch on Stream (null: the legacy default stream).
Status launch(const Context &C, const Function &F, const LaunchConfig &L,
              ArgPack &Args, CUstream Stream = nullptr);

/// One launch of a group: a kernel, its shape and its arguments.
struct LaunchItem {
  const Function *Fn = nullptr;
  LaunchConfig Config;
  ArgPack *Args = nullptr;
  /// Device ranges zeroed before each timed or warm-up launch, outside the
  /// timed interval (KernelSpec::Resets).
  std::vector<std::pair<CUdeviceptr, uint64_t>> Resets;
};

/// A CUDA graph of one kernel node per launch, without edges between them
/// (so that the driver may run them concurrently), instantiated once. The
/// nodes copy the argument values when the graph is built.
class KernelGraph {
public:
  /// Builds and instantiates the graph; fails clearly when the driver lacks
  /// the graph API (CUDA 11.4+).
  static Expected<std::unique_ptr<KernelGraph>>
  create(const Context &C, const std::vector<LaunchItem> &Items);
  ~KernelGraph();
  KernelGraph(const KernelGraph &) = delete;
  KernelGraph &operator=(const KernelGraph &) = delete;

  /// Enqueues one launch of the whole graph on Stream (cuGraphLaunch).
  Status launch(CUstream Stream) const;
  size_t size() const { return Nodes; }

private:
  KernelGraph() = default;
  const Context *Ctx = nullptr;
  CUgraphExec Exec = nullptr;
  size_t Nodes = 0;
};

} // namespace gpuopt::runtime

#endif // GPUOPT_RUNTIME_DEVICE_H
