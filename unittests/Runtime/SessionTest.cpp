//===- SessionTest.cpp - Run specs and sessions without a GPU -------------===//
//
// The library gpu-run is a command line over, called directly as Python or
// an interposer would: a run spec read from JSON and resolved, then a
// session on the stand-in driver that emulates a device in host memory
// (FakeCuda.c: fake_copy copies n bytes, fake_half the first n / 2).
//
//===----------------------------------------------------------------------===//

#include "gpuopt/Runtime/Session.h"
#include "gpuopt/Runtime/CompareRun.h"
#include "gpuopt/Runtime/RunReport.h"
#include "gpuopt/Runtime/RunSpec.h"

#include <gtest/gtest.h>

#include <fstream>

using namespace gpuopt::runtime;

namespace {

const std::string FakePTX = std::string(GPUOPT_TEST_INPUTS) + "/fake.ptx";
const std::string FakeEmulated =
    std::string(FAKE_CUDA_DIR) + "/libfakecuda_emulated.so";

/// Writes Text to a file of the test's temporary directory.
std::string writeTemp(const std::string &Name, const std::string &Text) {
  std::string Path = ::testing::TempDir() + Name;
  std::ofstream(Path) << Text;
  return Path;
}

KernelSpec copySpec(const std::string &Label, const char *Kernel,
                    const char *Init) {
  KernelSpec K;
  K.Label = Label;
  K.ModulePath = FakePTX;
  K.KernelName = Kernel;
  K.Grid = Dim3{1, 1, 1};
  K.Smem = 0;
  K.Args = {*parseArgSpec(std::string("buf:u8:64:") + Init),
            *parseArgSpec("buf:u8:64:out"), *parseArgSpec("scalar:u32:64")};
  return K;
}

TEST(RunSpec, ReadsKernelsAndGroups) {
  std::string Path = writeTemp("spec-ok.json", R"({
    "warmup": 1, "repeat": 2,
    "kernels": [{"label": "a", "module": "a.ptx", "grid": [4, 2],
                 "args": ["scalar:u32:1"], "out": {"0": "a.bin"},
                 "consts": ["ns::c:f32:4:fill:1"]},
                {"module": "b.ptx", "kernel": "kb", "time_alone": false}],
    "groups": [{"kernels": ["a", "kb"], "modes": ["graph"], "also": ["a"]}]})");
  RunSpec Spec;
  ASSERT_TRUE(readRunSpec(Path, Spec).ok());
  EXPECT_EQ(Spec.Warmup, 1u);
  EXPECT_EQ(Spec.Repeat, 2u);
  ASSERT_EQ(Spec.Kernels.size(), 2u);
  EXPECT_EQ(*Spec.Kernels[0].Grid, (Dim3{4, 2, 1}));
  EXPECT_EQ(Spec.Kernels[0].Outs[0].second, "a.bin");
  EXPECT_EQ(Spec.Kernels[0].Consts[0].Name, "ns::c");
  EXPECT_FALSE(Spec.Kernels[1].TimeAlone);
  ASSERT_EQ(Spec.Groups.size(), 1u);
  EXPECT_EQ(Spec.Groups[0].Members, (std::vector<size_t>{0, 1}));
  EXPECT_TRUE(Spec.Groups[0].Graph);
  EXPECT_FALSE(Spec.Groups[0].Serial);
  EXPECT_EQ(Spec.Groups[0].Also, (std::vector<size_t>{0}));
}

TEST(RunSpec, ErrorsNameTheJsonPath) {
  auto Error = [](const std::string &Text) {
    std::string Path = writeTemp("spec-bad.json", Text);
    RunSpec Spec;
    Status S = readRunSpec(Path, Spec);
    EXPECT_FALSE(S.ok());
    return S.message().substr(Path.size());
  };
  EXPECT_EQ(Error(R"({"kernels": [{"module": "a.ptx", "grid": [0]}]})"),
            ": kernels[0].grid: dimensions must be positive");
  EXPECT_EQ(Error(R"({"kernels": [{"module": 1}]})"),
            ": kernels[0].module: expected a string");
  EXPECT_EQ(Error(R"({"kernels": [], "repeats": 1})"),
            ": (top level).repeats: unknown key");
  EXPECT_EQ(Error(R"({"kernels": [{"module": "a", "label": "x"}],
                      "groups": [{"kernels": ["y"]}]})"),
            ": groups[0].kernels[0]: no kernel labelled 'y'");
  EXPECT_EQ(
      Error(R"({"kernels": [{"module": "a", "consts": ["c:f32:1:out"]}]})")
          .rfind(": kernels[0].consts[0] 'c:f32:1:out': 'out' marks", 0),
      0u);
}

TEST(RunSpec, ReadsText) {
  RunSpec Spec;
  ASSERT_TRUE(readRunSpecText(R"({"repeat": 0, "kernels": [{"module": "a.ptx",
                                  "grid": [3]}]})",
                              "spec", Spec)
                  .ok());
  EXPECT_EQ(Spec.Repeat, 0u);
  ASSERT_EQ(Spec.Kernels.size(), 1u);
  EXPECT_EQ(*Spec.Kernels[0].Grid, (Dim3{3, 1, 1}));
  // Errors name the text as they name a file.
  EXPECT_EQ(readRunSpecText(R"({"kernels": [{"module": 1}]})", "spec", Spec)
                .message(),
            "spec: kernels[0].module: expected a string");
  EXPECT_EQ(readRunSpecText("{", "spec", Spec)
                .message()
                .rfind("spec: invalid JSON: ", 0),
            0u);
}

TEST(RunSpec, OptionTexts) {
  Expected<ConstSpec> C = parseConstSpec("ns::coeffs:f32:16:fill:1", "--const");
  ASSERT_TRUE(C);
  EXPECT_EQ(C->Name, "ns::coeffs");
  EXPECT_EQ(C->Value.Count, 16u);
  KernelSpec K;
  EXPECT_EQ(addOutSpec(K, "1:x.bin").ok(), true);
  EXPECT_EQ(K.Outs[0].first, 1u);
  EXPECT_EQ(addOutSpec(K, "x.bin").message(),
            "--out: expected INDEX:PATH, got 'x.bin'");
  EXPECT_EQ(parseUnsignedOption("-1", "--repeat").status().message(),
            "--repeat: expected an unsigned integer, got '-1'");
}

TEST(RunSpec, ResolvingChecksArgumentsBeforeTheGPU) {
  RunSpec Spec;
  Spec.Kernels.push_back(copySpec("c", "fake_copy", "fill:1"));
  Spec.Kernels[0].Args.pop_back();
  Status S = resolveRunSpec(Spec);
  ASSERT_FALSE(S.ok());
  EXPECT_EQ(S.message().rfind("kernel 'c' has 3 parameters, 2 --arg given", 0),
            0u)
      << S.message();
  // The block comes from .reqntid, the group's name from its labels.
  Spec.Kernels[0] = copySpec("c", "fake_copy", "fill:1");
  Spec.Kernels.push_back(copySpec("h", "fake_half", "fill:1"));
  Spec.Groups.push_back({"", {0, 1}, false, true, false, false, {}});
  ASSERT_TRUE(resolveRunSpec(Spec).ok());
  EXPECT_EQ(Spec.Kernels[0].Config.Block, (Dim3{32, 1, 1}));
  EXPECT_EQ(Spec.Groups[0].Name, "c+h");
}

TEST(Session, ChecksComparesAndTimesOnTheEmulatedDriver) {
  Expected<std::unique_ptr<CudaDriver>> D = CudaDriver::load(FakeEmulated);
  ASSERT_TRUE(D) << D.status().message();
  RunSpec Spec;
  Spec.Warmup = 1;
  Spec.Repeat = 2;
  Spec.Kernels.push_back(copySpec("copy", "fake_copy", "random:3"));
  Spec.Kernels.push_back(copySpec("half", "fake_half", "random:3"));
  Spec.Groups.push_back({"", {0, 1}, true, true, true, false, {}});
  ASSERT_TRUE(resolveRunSpec(Spec).ok());
  Expected<std::unique_ptr<Session>> S = Session::create(Spec);
  ASSERT_TRUE(S) << S.status().message();
  Session &Run = **S;
  ASSERT_TRUE(Run.open(**D, 0).ok());
  // Equal argument texts share their host contents.
  EXPECT_EQ(Run.run(0).HostInit[0], Run.run(1).HostInit[0]);

  RunReport Report;
  Report.Device = Run.context().info();
  for (size_t I = 0; I < 2; ++I) {
    Expected<std::vector<CountedMap>> Counted = Run.launchChecked(I);
    ASSERT_TRUE(Counted) << Counted.status().message();
    EXPECT_TRUE(Counted->empty());
    KernelReport K;
    K.Label = Spec.Kernels[I].Label;
    Report.Kernels.push_back(K);
  }
  std::string Out = ::testing::TempDir() + "copy-out.bin";
  Expected<uint64_t> Bytes = Run.writeOutput(0, 1, Out);
  ASSERT_TRUE(Bytes);
  EXPECT_EQ(*Bytes, 64u);

  Expected<RunComparison> C =
      compareRun(Run, 0, FakePTX, "fake_copy", std::nullopt);
  ASSERT_TRUE(C) << C.status().message();
  EXPECT_TRUE(C->BitIdentical);
  EXPECT_TRUE(C->Pass);
  Report.Compare = *C;
  // A comparison initialises the buffers again: launch again first.
  // fake_half copies half of what fake_copy does: the output differs.
  ASSERT_TRUE(Run.launchChecked(0));
  C = compareRun(Run, 0, FakePTX, "fake_half", std::nullopt);
  ASSERT_TRUE(C) << C.status().message();
  ASSERT_EQ(C->Buffers.size(), 2u);
  EXPECT_EQ(C->Buffers[1].Arg, 1u);
  EXPECT_TRUE(C->Buffers[0].Result.bitIdentical());
  EXPECT_GT(C->Buffers[1].Result.Mismatches, 0u);
  EXPECT_LE(C->Buffers[1].Result.Mismatches, 32u);
  EXPECT_GE(C->Buffers[1].Result.FirstMismatch, 32u);
  EXPECT_FALSE(C->Pass);

  ASSERT_TRUE(Run.startTiming().ok());
  Expected<GroupTiming> T = Run.timeGroup(Spec.Groups[0]);
  ASSERT_TRUE(T) << T.status().message();
  ASSERT_EQ(T->Entries.size(), 4u);
  EXPECT_EQ(T->Entries[0].M, GroupTiming::Mode::Alone);
  EXPECT_EQ(T->Entries[1].Kernel, 1u);
  EXPECT_EQ(T->Entries[3].M, GroupTiming::Mode::Concurrent);
  EXPECT_EQ(T->Entries[3].Time.Samples.size(), 2u);
  Report.Timed = true;
  Report.Groups.push_back(GroupReport::of(Spec, Spec.Groups[0], *T));

  std::string Json = writeRunReport(Report);
  EXPECT_NE(Json.find("\"alone\": {\n        \"copy\""), std::string::npos)
      << Json;
  EXPECT_NE(Json.find("\"concurrent\": {"), std::string::npos);
  EXPECT_NE(Json.find("\"pass\": true"), std::string::npos);
  EXPECT_LT(Json.find("\"compare\""), Json.find("\"groups\""));
}

} // namespace
