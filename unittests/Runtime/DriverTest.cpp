//===- DriverTest.cpp - Loading the CUDA driver without a GPU -------------===//
//
// The runtime must fail clearly where there is no driver or no device. These
// tests use missing libraries and the stand-in drivers from FakeCuda.c, so
// they behave the same on machines with and without a GPU.
//
//===----------------------------------------------------------------------===//

#include "gpuopt/Runtime/CudaDriver.h"
#include "gpuopt/Runtime/Device.h"

#include <gtest/gtest.h>

#include <cstdlib>

using namespace gpuopt::runtime;

namespace {

const std::string FakeNoDevice =
    std::string(FAKE_CUDA_DIR) + "/libfakecuda_nodevice.so";
const std::string FakePartial =
    std::string(FAKE_CUDA_DIR) + "/libfakecuda_partial.so";
const std::string FakeEmulated =
    std::string(FAKE_CUDA_DIR) + "/libfakecuda_emulated.so";

TEST(CudaDriver, MissingLibraryIsAClearError) {
  Expected<std::unique_ptr<CudaDriver>> D =
      CudaDriver::load("/nonexistent/libcuda.so.1");
  ASSERT_FALSE(D);
  const std::string &M = D.status().message();
  EXPECT_NE(M.find("CUDA driver /nonexistent/libcuda.so.1 not found: "),
            std::string::npos)
      << M;
  EXPECT_NE(M.find("GPUOPT_CUDA_DRIVER"), std::string::npos) << M;
}

TEST(CudaDriver, EnvironmentNamesTheLibrary) {
  ::setenv("GPUOPT_CUDA_DRIVER", "libgpuopt-no-such-driver.so", 1);
  EXPECT_EQ(defaultCudaDriverName(), "libgpuopt-no-such-driver.so");
  Expected<std::unique_ptr<CudaDriver>> D = CudaDriver::load();
  ASSERT_FALSE(D);
  EXPECT_NE(D.status().message().find(
                "CUDA driver libgpuopt-no-such-driver.so not found"),
            std::string::npos)
      << D.status().message();
  ::unsetenv("GPUOPT_CUDA_DRIVER");
  EXPECT_EQ(defaultCudaDriverName(), "libcuda.so.1");
}

TEST(CudaDriver, ProcessWideDriverReportsTheLoadError) {
  // CudaDriver::get() loads once per process; nothing else in this test
  // binary calls it, so the environment set here decides.
  ::setenv("GPUOPT_CUDA_DRIVER", "/nonexistent/libcuda-for-get.so", 1);
  Expected<std::unique_ptr<Context>> C = Context::create();
  ::unsetenv("GPUOPT_CUDA_DRIVER");
  ASSERT_FALSE(C);
  EXPECT_NE(C.status().message().find(
                "CUDA driver /nonexistent/libcuda-for-get.so not found"),
            std::string::npos)
      << C.status().message();
  // The same error again, without a second attempt.
  Expected<CudaDriver *> D = CudaDriver::get();
  ASSERT_FALSE(D);
  EXPECT_EQ(D.status().message(), C.status().message());
}

TEST(CudaDriver, MissingEntryPointIsNamed) {
  Expected<std::unique_ptr<CudaDriver>> D = CudaDriver::load(FakePartial);
  ASSERT_FALSE(D);
  EXPECT_NE(D.status().message().find("lacks the entry point "),
            std::string::npos)
      << D.status().message();
}

TEST(CudaDriver, ErrorsNameTheCallAndTheDriverError) {
  Expected<std::unique_ptr<CudaDriver>> D = CudaDriver::load(FakeNoDevice);
  ASSERT_TRUE(D) << D.status().message();
  EXPECT_TRUE((*D)->check(0, "cuMemAlloc_v2").ok());
  Status S = (*D)->check(2, "cuMemAlloc_v2");
  ASSERT_FALSE(S.ok());
  EXPECT_EQ(S.message(),
            "cuMemAlloc_v2 failed: CUDA_ERROR_OUT_OF_MEMORY (out of memory)");
  // An error code the driver cannot name is still reported with its number.
  EXPECT_EQ((*D)->check(12345, "cuLaunchKernel").message(),
            "cuLaunchKernel failed: CUDA error 12345");
  // The loader falls back to cuEventElapsedTime when _v2 is missing.
  EXPECT_NE((*D)->api().cuEventElapsedTime_v2, nullptr);
  // Optional entry points may be missing.
  EXPECT_EQ((*D)->api().cuFuncGetParamInfo, nullptr);
  EXPECT_EQ((*D)->api().cuGraphCreate, nullptr);
  EXPECT_EQ((*D)->api().cuGraphInstantiateWithFlags, nullptr);
}

TEST(CudaDriver, GraphEntryPointsAreLoaded) {
  Expected<std::unique_ptr<CudaDriver>> D = CudaDriver::load(FakeEmulated);
  ASSERT_TRUE(D) << D.status().message();
  const CudaDriverAPI &A = (*D)->api();
  EXPECT_NE(A.cuGraphCreate, nullptr);
  EXPECT_NE(A.cuGraphAddKernelNode_v2, nullptr);
  EXPECT_NE(A.cuGraphInstantiateWithFlags, nullptr);
  EXPECT_NE(A.cuGraphLaunch, nullptr);
  EXPECT_NE(A.cuGraphExecDestroy, nullptr);
  EXPECT_NE(A.cuGraphDestroy, nullptr);
}

TEST(CudaDriver, NoDeviceIsAClearError) {
  Expected<std::unique_ptr<CudaDriver>> D = CudaDriver::load(FakeNoDevice);
  ASSERT_TRUE(D) << D.status().message();
  Expected<std::unique_ptr<Context>> C = Context::create(**D);
  ASSERT_FALSE(C);
  EXPECT_EQ(C.status().message().rfind("no CUDA device", 0), 0u)
      << C.status().message();

  ::setenv("FAKE_CUDA_INIT_RESULT", "100", 1);
  C = Context::create(**D);
  ::unsetenv("FAKE_CUDA_INIT_RESULT");
  ASSERT_FALSE(C);
  EXPECT_EQ(C.status().message(),
            "no CUDA device: cuInit failed: CUDA_ERROR_NO_DEVICE (no "
            "CUDA-capable device is detected)");
}

TEST(CudaDriver, QueryDeviceMakesNoContext) {
  // Python's find_gpu asks whether there is a GPU without taking its
  // primary context.
  Expected<std::unique_ptr<CudaDriver>> D = CudaDriver::load(FakeEmulated);
  ASSERT_TRUE(D) << D.status().message();
  Expected<DeviceInfo> Info = queryDevice(**D);
  ASSERT_TRUE(Info) << Info.status().message();
  EXPECT_EQ(Info->Name, "Fake GPU");
  EXPECT_GT(Info->Multiprocessors, 0);
  Expected<std::unique_ptr<Context>> C = Context::create(**D);
  ASSERT_TRUE(C) << C.status().message();
  EXPECT_EQ((*C)->info().Name, Info->Name);
  EXPECT_EQ((*C)->info().Multiprocessors, Info->Multiprocessors);
  Info = queryDevice(**D, 1);
  ASSERT_FALSE(Info);
  EXPECT_EQ(Info.status().message(), "no CUDA device 1 (the driver lists 1)");

  Expected<std::unique_ptr<CudaDriver>> None = CudaDriver::load(FakeNoDevice);
  ASSERT_TRUE(None) << None.status().message();
  Info = queryDevice(**None);
  ASSERT_FALSE(Info);
  EXPECT_EQ(Info.status().message().rfind("no CUDA device", 0), 0u)
      << Info.status().message();
}

TEST(DeviceBuffer, DownloadAtAnOffset) {
  // gpu-run reads a probe buffer's overflow counter alone, after the records.
  Expected<std::unique_ptr<CudaDriver>> D = CudaDriver::load(FakeEmulated);
  ASSERT_TRUE(D) << D.status().message();
  Expected<std::unique_ptr<Context>> C = Context::create(**D);
  ASSERT_TRUE(C) << C.status().message();
  Expected<DeviceBuffer> B = DeviceBuffer::allocate(**C, 16);
  ASSERT_TRUE(B) << B.status().message();
  uint8_t In[16];
  for (int I = 0; I < 16; ++I)
    In[I] = uint8_t(I);
  ASSERT_TRUE(B->upload(In, sizeof(In)).ok());
  uint8_t Out[4] = {};
  ASSERT_TRUE(B->download(Out, 4, 12).ok());
  EXPECT_EQ(Out[0], 12);
  EXPECT_EQ(Out[3], 15);
  EXPECT_EQ(B->download(Out, 4, 13).message(),
            "download of 4 bytes at offset 13 from a buffer of 16");
  EXPECT_EQ(B->download(Out, 4, 17).message(),
            "download of 4 bytes at offset 17 from a buffer of 16");
  EXPECT_FALSE(B->download(Out, 4, ~uint64_t(0)).ok());
}

TEST(DeviceBuffer, CopyOnTheDevice) {
  // gpu-run's counting run works on device copies of the arguments.
  Expected<std::unique_ptr<CudaDriver>> D = CudaDriver::load(FakeEmulated);
  ASSERT_TRUE(D) << D.status().message();
  Expected<std::unique_ptr<Context>> C = Context::create(**D);
  ASSERT_TRUE(C) << C.status().message();
  Expected<DeviceBuffer> A = DeviceBuffer::allocate(**C, 8);
  Expected<DeviceBuffer> B = DeviceBuffer::allocate(**C, 8);
  Expected<DeviceBuffer> Small = DeviceBuffer::allocate(**C, 4);
  ASSERT_TRUE(A && B && Small);
  const uint8_t In[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  ASSERT_TRUE(A->upload(In, sizeof(In)).ok());
  ASSERT_TRUE(B->fill(0).ok());
  ASSERT_TRUE(B->copyFrom(*A).ok());
  uint8_t Out[8] = {};
  ASSERT_TRUE(B->download(Out, sizeof(Out)).ok());
  EXPECT_EQ(Out[0], 1);
  EXPECT_EQ(Out[7], 8);
  EXPECT_EQ(Small->copyFrom(*A).message(),
            "device copy of a buffer of 8 bytes into one of 4");
}

TEST(Context, FreeMemory) {
  Expected<std::unique_ptr<CudaDriver>> D = CudaDriver::load(FakeEmulated);
  ASSERT_TRUE(D) << D.status().message();
  Expected<std::unique_ptr<Context>> C = Context::create(**D);
  ASSERT_TRUE(C) << C.status().message();
  ::setenv("FAKE_CUDA_FREE_MEMORY", "12345", 1);
  Expected<uint64_t> Free = (*C)->freeMemory();
  ::unsetenv("FAKE_CUDA_FREE_MEMORY");
  ASSERT_TRUE(Free) << Free.status().message();
  EXPECT_EQ(*Free, 12345u);
}

TEST(Module, DynamicSharedMemoryNeedsTheOptIn) {
  // The stand-in enforces the driver's rule: past 48 KiB less the static
  // shared memory, a launch fails unless the function's limit was raised.
  Expected<std::unique_ptr<CudaDriver>> D = CudaDriver::load(FakeEmulated);
  ASSERT_TRUE(D) << D.status().message();
  Expected<std::unique_ptr<Context>> C = Context::create(**D);
  ASSERT_TRUE(C) << C.status().message();
  const std::string Text = ".version 8.0\n.target sm_90\n.address_size 64\n"
                           ".visible .entry a_kernel_whose_name_is_longer_than_"
                           "sixty_four_characters_as_fused_kernels_are()\n"
                           "{\n\tret;\n}\n";
  Expected<std::unique_ptr<Module>> M = Module::load(
      **C, std::vector<char>(Text.begin(), Text.end()), true, "k.ptx");
  ASSERT_TRUE(M) << M.status().message();
  ::setenv("FAKE_CUDA_STATIC_SMEM", "1024", 1);
  Expected<Function> F = (*M)->getFunction(
      "a_kernel_whose_name_is_longer_than_sixty_four_characters_as_fused_"
      "kernels_are");
  ASSERT_TRUE(F) << F.status().message();
  EXPECT_EQ(F->StaticSmem, 1024);
  ArgPack Args({});
  LaunchConfig L{{1, 1, 1}, {32, 1, 1}, 48 * 1024 - 1024};
  EXPECT_TRUE(launch(**C, *F, L, Args).ok());
  L.DynamicSmem = 48 * 1024;
  Status S = launch(**C, *F, L, Args);
  EXPECT_FALSE(S.ok());
  // Raised to what the launch needs, it runs.
  EXPECT_TRUE(prepareDynamicSmem(**C, *F, L.DynamicSmem).ok());
  EXPECT_TRUE(launch(**C, *F, L, Args).ok());
  ::unsetenv("FAKE_CUDA_STATIC_SMEM");
}

TEST(Module, SetGlobal) {
  Expected<std::unique_ptr<CudaDriver>> D = CudaDriver::load(FakeEmulated);
  ASSERT_TRUE(D) << D.status().message();
  Expected<std::unique_ptr<Context>> C = Context::create(**D);
  ASSERT_TRUE(C) << C.status().message();
  const std::string Text = ".version 8.0\n.target sm_90\n.address_size 64\n"
                           ".const .align 4 .b8 coeffs[64];\n";
  Expected<std::unique_ptr<Module>> M = Module::load(
      **C, std::vector<char>(Text.begin(), Text.end()), true, "c.ptx");
  ASSERT_TRUE(M) << M.status().message();
  uint8_t Bytes[65] = {};
  EXPECT_TRUE((*M)->setGlobal("coeffs", Bytes, 64).ok());
  EXPECT_EQ((*M)->setGlobal("coeffs", Bytes, 65).message(),
            "c.ptx: variable 'coeffs' has 64 bytes, fewer than the 65 given");
  EXPECT_EQ((*M)->setGlobal("taps", Bytes, 4).message(),
            "c.ptx: no module-scope variable 'taps' (cuModuleGetGlobal_v2 "
            "failed: CUDA_ERROR_NOT_FOUND (named symbol not found))");
  // A driver without the entry point says so.
  Expected<std::unique_ptr<CudaDriver>> Old = CudaDriver::load(FakeNoDevice);
  ASSERT_TRUE(Old) << Old.status().message();
  EXPECT_EQ((*Old)->api().cuModuleGetGlobal_v2, nullptr);
}

} // namespace
