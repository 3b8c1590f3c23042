//===- PtxasResourcesTest.cpp - ptxas -v resource reports -----------------===//
//
// The fusion passes size a fused kernel by what ptxas reports; a misread
// line would silently give zeros. The parser is checked on output captured
// from ptxas 13.0 (and the older format with cmem), and once on a live
// ptxas when one is installed.
//
//===----------------------------------------------------------------------===//

#include "gpuopt/Target/PTX/ExportPTX.h"
#include "gpuopt/Target/PTX/ImportPTX.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

using namespace mlir;
using namespace gpuopt;

namespace {

/// ptxas 13.0 -v -arch=sm_90a on test/corpus/nvcc/device_misc.ptx: entries
/// with stacks, and device functions (virtual calls) between them.
const char *const deviceMiscOutput =
    R"(ptxas info    : 230 bytes gmem
ptxas info    : Compiling entry function '_Z16virtual_dispatchPKfPKiPfi' for 'sm_90a'
ptxas info    : Function properties for _Z16virtual_dispatchPKfPKiPfi
    32 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 24 registers, used 0 barriers, 56 bytes cumulative stack size
ptxas info    : Compile time = 6.531 ms
ptxas info    : Function properties for _ZNK4Disk4areaEv
    8 bytes stack frame, 4 bytes spill stores, 4 bytes spill loads
ptxas info    : Function properties for _ZNK4Disk5scaleEf
    16 bytes stack frame, 16 bytes spill stores, 16 bytes spill loads
ptxas info    : Compiling entry function '_Z9interpretPKiPKfPfii' for 'sm_90a'
ptxas info    : Function properties for _Z9interpretPKiPKfPfii
    24 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 27 registers, used 0 barriers, 24 bytes cumulative stack size
ptxas info    : Compile time = 12.932 ms
ptxas info    : Function properties for _Z8apply_opiff
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Compiling entry function '_Z14grid_two_phasePfPjPyi' for 'sm_90a'
ptxas info    : Function properties for _Z14grid_two_phasePfPjPyi
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 22 registers, used 1 barriers
ptxas info    : Compile time = 6.106 ms
)";

TEST(PtxasResources, EntriesAndFunctions) {
  llvm::SmallVector<KernelResources> all =
      parsePtxasVerboseOutput(deviceMiscOutput);
  ASSERT_EQ(all.size(), 6u);

  EXPECT_EQ(all[0].kernel, "_Z16virtual_dispatchPKfPKiPfi");
  EXPECT_TRUE(all[0].isEntry);
  EXPECT_EQ(all[0].registers, 24u);
  EXPECT_EQ(all[0].barriers, 0u);
  EXPECT_EQ(all[0].localBytes, 32u);
  EXPECT_EQ(all[0].cumulativeStackBytes, 56u);
  EXPECT_EQ(all[0].sharedBytes, 0u);

  // Device functions have only the stack frame line.
  EXPECT_EQ(all[1].kernel, "_ZNK4Disk4areaEv");
  EXPECT_FALSE(all[1].isEntry);
  EXPECT_EQ(all[1].registers, 0u);
  EXPECT_EQ(all[1].localBytes, 8u);
  EXPECT_EQ(all[1].spillStores, 4u);
  EXPECT_EQ(all[1].spillLoads, 4u);
  EXPECT_EQ(all[2].kernel, "_ZNK4Disk5scaleEf");
  EXPECT_EQ(all[2].spillStores, 16u);

  EXPECT_EQ(all[3].kernel, "_Z9interpretPKiPKfPfii");
  EXPECT_TRUE(all[3].isEntry);
  EXPECT_EQ(all[3].registers, 27u);
  // A function listed after an entry does not take the entry's figures.
  EXPECT_EQ(all[4].kernel, "_Z8apply_opiff");
  EXPECT_FALSE(all[4].isEntry);
  EXPECT_EQ(all[4].registers, 0u);

  EXPECT_EQ(all[5].kernel, "_Z14grid_two_phasePfPjPyi");
  EXPECT_TRUE(all[5].isEntry);
  EXPECT_EQ(all[5].registers, 22u);
  EXPECT_EQ(all[5].barriers, 1u);
}

TEST(PtxasResources, SharedMemoryAndDebugFunctions) {
  // ptxas -v -g on test/corpus/nvcc/reduce_shfl.O0.ptx.
  llvm::SmallVector<KernelResources> all = parsePtxasVerboseOutput(
      R"(ptxas info    : 0 bytes gmem
ptxas info    : Compiling entry function 'reduce_sum_shfl' for 'sm_90a'
ptxas info    : Function properties for reduce_sum_shfl
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 32 registers, used 1 barriers, 24 bytes cumulative stack size, 128 bytes smem
ptxas info    : Compile time = 20.865 ms
ptxas info    : Function properties for __fAtomicAdd
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Compile time = 1.146 ms
ptxas info    : Function properties for _ZN45_INTERNAL_0b4af67a_14_reduce_shfl_cu_8a8c27c19atomicAddEPff
    24 bytes stack frame, 20 bytes spill stores, 20 bytes spill loads
ptxas info    : Compile time = 0.658 ms
)");
  ASSERT_EQ(all.size(), 3u);
  EXPECT_EQ(all[0].kernel, "reduce_sum_shfl");
  EXPECT_TRUE(all[0].isEntry);
  EXPECT_EQ(all[0].registers, 32u);
  EXPECT_EQ(all[0].barriers, 1u);
  EXPECT_EQ(all[0].sharedBytes, 128u);
  EXPECT_EQ(all[0].cumulativeStackBytes, 24u);
  EXPECT_FALSE(all[1].isEntry);
  EXPECT_EQ(all[2].localBytes, 24u);
  EXPECT_EQ(all[2].spillLoads, 20u);
}

TEST(PtxasResources, Spills) {
  // ethash_like.ptx with `.maxnreg 64` in place of its `.maxntid`: a
  // register cap that spills, as a fusion's `.maxnreg` can.
  llvm::SmallVector<KernelResources> all = parsePtxasVerboseOutput(
      R"(ptxas info    : 0 bytes gmem
ptxas info    : Compiling entry function 'ethash_like_search' for 'sm_90a'
ptxas info    : Function properties for ethash_like_search
    80 bytes stack frame, 220 bytes spill stores, 176 bytes spill loads
ptxas info    : Used 64 registers, used 0 barriers, 80 bytes cumulative stack size
ptxas info    : Compile time = 175.396 ms
)");
  ASSERT_EQ(all.size(), 1u);
  EXPECT_EQ(all[0].registers, 64u);
  EXPECT_EQ(all[0].localBytes, 80u);
  EXPECT_EQ(all[0].spillStores, 220u);
  EXPECT_EQ(all[0].spillLoads, 176u);
}

TEST(PtxasResources, OlderFormatWithConstantBanks) {
  // ptxas before CUDA 13 prints constant banks and no barrier count; other
  // banks, warnings and unknown figures are skipped.
  llvm::SmallVector<KernelResources> all = parsePtxasVerboseOutput(
      "ptxas warning : Registers are spilled to local memory in function "
      "'k', 8 bytes spill stores, 8 bytes spill loads\r\n"
      "ptxas info    : Compiling entry function 'k' for 'sm_80'\r\n"
      "ptxas info    : Function properties for k\r\n"
      "    8 bytes stack frame, 8 bytes spill stores, 8 bytes spill loads\r\n"
      "ptxas info    : Used 40 registers, 1024 bytes smem, 380 bytes "
      "cmem[0], 4 bytes cmem[2], 2 textures\r\n");
  ASSERT_EQ(all.size(), 1u);
  EXPECT_TRUE(all[0].isEntry);
  EXPECT_EQ(all[0].registers, 40u);
  EXPECT_EQ(all[0].barriers, 0u);
  EXPECT_EQ(all[0].sharedBytes, 1024u);
  EXPECT_EQ(all[0].constBytes, 380u);
  EXPECT_EQ(all[0].spillStores, 8u);
}

TEST(PtxasResources, NothingToReport) {
  EXPECT_TRUE(parsePtxasVerboseOutput("").empty());
  EXPECT_TRUE(parsePtxasVerboseOutput("ptxas info    : 0 bytes gmem\n"
                                      "ptxas info    : Used 8 registers\n")
                  .empty());
}

/// Imports a corpus file; nullptr (with a test failure) if it does not parse.
OwningOpRef<ModuleOp> importCorpusFile(MLIRContext &ctx, llvm::StringRef name) {
  std::string path =
      std::string(GPUOPT_SOURCE_DIR) + "/test/corpus/nvcc/" + name.str();
  auto buffer = llvm::MemoryBuffer::getFile(path);
  if (!buffer) {
    ADD_FAILURE() << "cannot read " << path;
    return nullptr;
  }
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(std::move(*buffer), llvm::SMLoc());
  return importPTX(sourceMgr, &ctx);
}

TEST(PtxasResources, LivePtxas) {
  if (!findPtxas({}))
    GTEST_SKIP() << "no ptxas: set PTXAS or CUDA_HOME";
  MLIRContext ctx;
  ScopedDiagnosticHandler handler(&ctx, [](Diagnostic &diag) {
    ADD_FAILURE() << diag.str();
    return success();
  });

  OwningOpRef<ModuleOp> reduce = importCorpusFile(ctx, "reduce_shfl.ptx");
  ASSERT_TRUE(reduce);
  FailureOr<ptx::PTXModuleOp> module = findPTXModule(*reduce, "");
  ASSERT_TRUE(succeeded(module));
  FailureOr<llvm::SmallVector<KernelResources>> resources =
      getPtxasResources(*module, PtxasOptions());
  ASSERT_TRUE(succeeded(resources));
  ASSERT_EQ(resources->size(), 1u);
  const KernelResources &kernel = resources->front();
  EXPECT_EQ(kernel.kernel, "reduce_sum_shfl");
  EXPECT_TRUE(kernel.isEntry);
  EXPECT_GT(kernel.registers, 0u);
  EXPECT_EQ(kernel.barriers, 1u);
  // `__shared__ float s_warp[32]`.
  EXPECT_EQ(kernel.sharedBytes, 128u);
  EXPECT_EQ(kernel.spillStores, 0u);

  // Entries come in the module's order, without the device functions that
  // ptxas reports between them.
  OwningOpRef<ModuleOp> misc = importCorpusFile(ctx, "device_misc.ptx");
  ASSERT_TRUE(misc);
  module = findPTXModule(*misc, "");
  ASSERT_TRUE(succeeded(module));
  resources = getPtxasResources(*module, PtxasOptions());
  ASSERT_TRUE(succeeded(resources));
  llvm::SmallVector<std::string> names;
  for (const KernelResources &entry : *resources) {
    EXPECT_TRUE(entry.isEntry);
    EXPECT_GT(entry.registers, 0u) << entry.kernel;
    names.push_back(entry.kernel);
  }
  EXPECT_EQ(names,
            (llvm::SmallVector<std::string>{
                "_Z16virtual_dispatchPKfPKiPfi", "_Z9interpretPKiPKfPfii",
                "_Z15texture_surfaceyyii", "_Z14grid_two_phasePfPjPyi",
                "_Z13local_scratchPKiPKfPf"}));
}

TEST(PtxasResources, NamedPtxas) {
  // Triton's ptxas-blackwell (CUDA 12.9) -v on a Triton kernel: its own name
  // starts each line.
  llvm::SmallVector<KernelResources> all = parsePtxasVerboseOutput(
      R"(ptxas-blackwell info    : 11 bytes gmem
ptxas-blackwell info    : Compiling entry function '_rms_norm_forward_kernel' for 'sm_90a'
ptxas-blackwell info    : Function properties for _rms_norm_forward_kernel
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas-blackwell info    : Used 39 registers, used 1 barriers
ptxas-blackwell info    : Compile time = 12.211 ms
ptxas-blackwell warning : something else
)");
  ASSERT_EQ(all.size(), 1u);
  EXPECT_TRUE(all[0].isEntry);
  EXPECT_EQ(all[0].registers, 39u);
  EXPECT_EQ(all[0].barriers, 1u);
}

TEST(PtxasVersion, ReleasesAndISA) {
  // `ptxas --version` of Triton 3.6's bundled ptxas and of CUDA 13.0's.
  std::optional<PTXVersion> triton = parseCudaRelease(
      "ptxas: NVIDIA (R) Ptx optimizing assembler\nCopyright (c) 2005-2025 "
      "NVIDIA Corporation\nCuda compilation tools, release 12.8, V12.8.93\n");
  ASSERT_TRUE(triton);
  EXPECT_EQ(triton->major, 12u);
  EXPECT_EQ(triton->minor, 8u);
  PTXVersion isa = getMaxPTXVersionOfCuda(*triton);
  EXPECT_EQ(isa.major, 8u);
  EXPECT_EQ(isa.minor, 7u);
  PTXVersion cuda13 = getMaxPTXVersionOfCuda({13, 0});
  EXPECT_EQ(cuda13.major, 9u);
  EXPECT_EQ(cuda13.minor, 0u);
  PTXVersion cuda129 = getMaxPTXVersionOfCuda({12, 9});
  EXPECT_EQ(cuda129.minor, 8u);
  PTXVersion cuda126 = getMaxPTXVersionOfCuda({12, 6});
  EXPECT_EQ(cuda126.minor, 5u);
  EXPECT_FALSE(parseCudaRelease("not ptxas"));

  std::optional<PTXVersion> version =
      getPTXVersion("//\n// Generated by NVIDIA NVVM Compiler\n//\n"
                    ".version 9.0\n.target sm_90a\n");
  ASSERT_TRUE(version);
  EXPECT_EQ(version->major, 9u);
  EXPECT_EQ(version->minor, 0u);
  EXPECT_TRUE(isa < *version);
  EXPECT_FALSE(getPTXVersion(".target sm_90a\n"));
}

/// Writes `body` after a `--version` answer of CUDA 12.8 into the
/// executable script `path`: a ptxas standing in for Triton's.
void writeFakePtxas(llvm::StringRef path, llvm::StringRef body) {
  std::error_code ec;
  {
    llvm::raw_fd_ostream os(path, ec);
    ASSERT_FALSE(ec) << ec.message();
    os << "#!/bin/sh\n"
          "case \"$1\" in --version) echo 'Cuda compilation tools, release "
          "12.8, V12.8.93'; exit 0;; esac\n"
       << body;
  }
  llvm::sys::fs::setPermissions(path, llvm::sys::fs::all_read |
                                          llvm::sys::fs::all_exe |
                                          llvm::sys::fs::owner_write);
}

TEST(PtxasVersion, OlderPtxasGetsLowerVersion) {
  // A ptxas that says it is CUDA 12.8 is handed PTX ISA 9.0 with its
  // .version lowered to 8.7: the script fails unless it sees ".version 8.7".
  llvm::SmallString<128> script;
  ASSERT_FALSE(
      llvm::sys::fs::getPotentiallyUniqueTempFileName("fake-ptxas", "sh",
                                                      script));
  // -arch CHIP IN -o OUT
  writeFakePtxas(script, "grep -q '^.version 8.7$' \"$3\" || { echo 'ptxas "
                         "fatal : Unsupported .version'; exit 1; }\n"
                         "printf cubin > \"$5\"\n");
  std::optional<PTXVersion> isa = getPtxasMaxPTXVersion(script);
  ASSERT_TRUE(isa);
  EXPECT_EQ(isa->minor, 7u);

  MLIRContext ctx;
  std::string message;
  ScopedDiagnosticHandler handler(&ctx, [&](Diagnostic &diag) {
    message = diag.str();
    return success();
  });
  PtxasOptions options;
  options.chip = "sm_90a";
  options.ptxasPath = std::string(script);
  const char *ptx = ".version 9.0\n.target sm_90a\n.address_size 64\n";
  FailureOr<std::string> cubin =
      assembleWithPtxas(ptx, options, UnknownLoc::get(&ctx));
  ASSERT_TRUE(succeeded(cubin)) << message;
  EXPECT_EQ(*cubin, "cubin");

  // A kernel that needs PTX ISA 9.0: the lowered PTX fails, and the error
  // names the PTX ISA and the CUDA release whose ptxas takes it.
  writeFakePtxas(script, "echo 'ptxas error : Feature requires PTX ISA "
                         ".version 9.0'; exit 1\n");
  EXPECT_TRUE(failed(assembleWithPtxas(ptx, options, UnknownLoc::get(&ctx))));
  EXPECT_NE(message.find("needs PTX ISA 9.0"), std::string::npos) << message;
  EXPECT_NE(message.find("CUDA 13.0"), std::string::npos) << message;
  EXPECT_NE(message.find("Feature requires"), std::string::npos) << message;
  llvm::sys::fs::remove(script);
}

TEST(PtxasResources, PtxasFails) {
  if (!findPtxas({}))
    GTEST_SKIP() << "no ptxas: set PTXAS or CUDA_HOME";
  MLIRContext ctx;
  std::string message;
  ScopedDiagnosticHandler handler(&ctx, [&](Diagnostic &diag) {
    message = diag.str();
    return success();
  });
  PtxasOptions options;
  options.chip = "sm_90a";
  EXPECT_TRUE(
      failed(getPtxasResources(".version 8.8\n.target sm_90a\n"
                               ".address_size 64\n.entry k() { bad; }\n",
                               options, UnknownLoc::get(&ctx))));
  EXPECT_TRUE(llvm::StringRef(message).starts_with("ptxas failed")) << message;
}

} // namespace
