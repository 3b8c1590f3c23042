//===- ManifestTest.cpp - Launch manifests as structs ---------------------===//
//
// A manifest is a contract between separately built tools, so the tests pin
// the round trip through the writer and the reader, the writer's options,
// the checks of validateManifest and the probe buffers' sizes.
// ManifestReaderTest.cpp pins the reader on text.
//
//===----------------------------------------------------------------------===//

#include "gpuopt/Runtime/Manifest.h"
#include "gpuopt/Runtime/ManifestReader.h"
#include "gpuopt/Runtime/ManifestWriter.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>

using namespace gpuopt::runtime;

namespace {

/// A manifest that uses every field of the schema.
Manifest fullManifest() {
  Manifest M;
  M.Module = {"fused.ptx", "ptx", "sm_90a"};
  KernelInfo K;
  K.Name = "fused_im2col_maxpool";
  K.Params = {
      {"data_im", "u64", 8, 8, 0, ParamKind::Pointer, "global", 16},
      {"batch", "s32", 4, 4, 8, ParamKind::Scalar, "", 0},
      {"scale", "f32", 4, 4, 12, ParamKind::Scalar, "", 0},
      {"desc", "b8", 32, 16, 16, ParamKind::Bytes, "", 0},
      {"probe_buf", "u64", 8, 8, 48, ParamKind::Pointer, "global", 0},
  };
  K.Launch.Block = Dim3{512, 1, 1};
  K.Launch.Grid = std::nullopt;
  K.Launch.DynamicSmem = 1024;
  K.Launch.MaxThreads = Dim3{512, 1, 1};
  K.Resources.Registers = 64;
  K.Resources.StaticSmem = 3072;
  K.Strategy = FusionStrategy::Thread;
  FusedPart A;
  A.Kernel = "im2col_kernel";
  A.Module = "im2col.ptx";
  A.ThreadsLo = 0;
  A.ThreadsHi = 256;
  A.Block = Dim3{256, 1, 1};
  A.Grid = std::nullopt;
  A.DynamicSmem = 0;
  A.ArgMap = {0, 1};
  FusedPart B;
  B.Kernel = "maxpool2d_fwd";
  B.ThreadsLo = 256;
  B.ThreadsHi = 512;
  B.Block = Dim3{16, 16, 1};
  B.Grid = Dim3{25088, 1, 1};
  B.DynamicSmemOffset = 0;
  B.DynamicSmem = 1024;
  B.ArgMap = {2, 3};
  K.FusedFrom = {A, B};
  ProbeBuffer P;
  P.Name = "warps";
  P.Probe = "block_sched";
  P.Param = 4;
  P.Level = ProbeLevel::Warp;
  P.Capacity = 2;
  P.RecordBytes = 16;
  P.OverflowCounter = true;
  P.Fields = {{"clock", "u64", 0}, {"smid", "u32", 8}, {"warp", "u32", 12}};
  K.Probes = {P};
  M.Kernels.push_back(K);

  KernelInfo Plain;
  Plain.Name = "plain";
  Plain.Params = {{"n", "u32", 4, 4, 0, ParamKind::Scalar, "", 0}};
  M.Kernels.push_back(Plain);

  // Interleaved: each fused block runs one part whole, so the parts' thread
  // ranges overlap; part 0 gets 3 of every 4 blocks.
  KernelInfo I;
  I.Name = "fused_interleaved";
  I.Params = {{"x", "u64", 8, 8, 0, ParamKind::Pointer, "global", 0},
              {"y", "u64", 8, 8, 8, ParamKind::Pointer, "global", 0}};
  I.Launch.Block = Dim3{256, 1, 1};
  I.Launch.DynamicSmem = 0;
  I.Strategy = FusionStrategy::Interleave;
  FusedPart X;
  X.Kernel = "x";
  X.ThreadsHi = 256;
  X.Ratio = 3;
  X.ArgMap = {0};
  FusedPart Y;
  Y.Kernel = "y";
  Y.ThreadsHi = 128;
  Y.Ratio = 1;
  Y.Block = Dim3{128, 1, 1};
  Y.ArgMap = {1};
  I.FusedFrom = {X, Y};
  M.Kernels.push_back(I);
  return M;
}

TEST(Manifest, RoundTrip) {
  Manifest M = fullManifest();
  ASSERT_TRUE(validateManifest(M).ok()) << validateManifest(M).message();
  std::string Text = writeManifest(M);
  Expected<Manifest> Back = parseManifest(Text, "round-trip.json");
  ASSERT_TRUE(Back) << Back.status().message();
  EXPECT_TRUE(*Back == M);
  EXPECT_EQ(writeManifest(*Back), Text);
  // Fields the writer must not drop.
  EXPECT_NE(Text.find("\"manifest_version\": 5"), std::string::npos);
  EXPECT_NE(Text.find("\"grid\": \"runtime\""), std::string::npos);
  EXPECT_NE(Text.find("\"fusion_strategy\": \"thread\""), std::string::npos);
  EXPECT_NE(Text.find("\"fusion_strategy\": \"interleave\""),
            std::string::npos);
  EXPECT_NE(Text.find("\"ratio\": 3"), std::string::npos);
  EXPECT_NE(Text.find("\"probe\": \"block_sched\""), std::string::npos);
  EXPECT_NE(Text.find("\"overflow_counter\": true"), std::string::npos);
  // Kernels without fused_from have no strategy.
  EXPECT_FALSE(Back->Kernels[1].Strategy.has_value());
}

TEST(Manifest, WriterOptionsForTheCompiler) {
  // The compiler writes the oldest version that describes the module, its
  // keys sorted; what it writes reads back the same.
  Manifest M = fullManifest();
  EXPECT_EQ(oldestVersionFor(M), 3);
  Manifest Plain;
  Plain.Module = {"a.ptx", "ptx", ""};
  Plain.Kernels.push_back(M.Kernels[1]);
  EXPECT_EQ(oldestVersionFor(Plain), 1);
  Plain.Kernels.push_back(M.Kernels[2]);
  EXPECT_EQ(oldestVersionFor(Plain), 2);
  M.Kernels[0].Probes[0].DynamicCapacity = true;
  M.Kernels[0].Probes[0].CapacityParam = 1;
  EXPECT_EQ(oldestVersionFor(M), 4);
  M.Kernels[2].Launch.DynamicSmem = 65536;
  M.Kernels[2].Launch.SmemOptin = true;
  EXPECT_EQ(oldestVersionFor(M), 5);

  std::string Sorted = writeManifest(Plain, {oldestVersionFor(Plain), true});
  EXPECT_EQ(Sorted.rfind("{\n  \"kernels\": [", 0), 0u) << Sorted;
  EXPECT_NE(Sorted.find("\"manifest_version\": 2"), std::string::npos);
  // "align" before "kind" before "name": byte order, not schema order.
  size_t Align = Sorted.find("\"align\""), Kind = Sorted.find("\"kind\""),
         Name = Sorted.find("\"name\": \"n\"");
  EXPECT_LT(Align, Kind);
  EXPECT_LT(Kind, Name);
  Expected<Manifest> Back = parseManifest(Sorted, "sorted.json");
  ASSERT_TRUE(Back) << Back.status().message();
  EXPECT_TRUE(*Back == Plain);
  // Schema order by default.
  std::string Schema = writeManifest(Plain);
  EXPECT_EQ(Schema.rfind("{\n  \"manifest_version\": 5", 0), 0u) << Schema;
}

TEST(Manifest, RoundTripThroughAFile) {
  Manifest M = fullManifest();
  std::string Path = ::testing::TempDir() + "manifest-roundtrip.json";
  {
    std::ofstream Out(Path);
    Out << writeManifest(M);
  }
  Expected<Manifest> Back = readManifest(Path);
  ASSERT_TRUE(Back) << Back.status().message();
  EXPECT_TRUE(*Back == M);
  std::remove(Path.c_str());

  Expected<Manifest> Missing = readManifest(Path);
  ASSERT_FALSE(Missing);
  EXPECT_NE(Missing.status().message().find("cannot open"), std::string::npos);
}

TEST(Manifest, ChangesAreDetected) {
  // The comparison used by the round-trip test sees every field.
  Manifest M = fullManifest();
  Manifest N = M;
  N.Kernels[0].Probes[0].Fields[1].Offset = 4;
  EXPECT_FALSE(N == M);
  N = M;
  N.Kernels[0].FusedFrom[1].ArgMap[1] = 4;
  EXPECT_FALSE(N == M);
  N = M;
  N.Kernels[0].Launch.Grid = Dim3{1, 1, 1};
  EXPECT_FALSE(N == M);
  N = M;
  N.Kernels[2].Strategy = FusionStrategy::Dynamic;
  EXPECT_FALSE(N == M);
  N = M;
  N.Kernels[2].FusedFrom[1].Ratio = std::nullopt;
  EXPECT_FALSE(N == M);
  N = M;
  N.Kernels[0].Probes[0].Probe = "other";
  EXPECT_FALSE(N == M);
  N = M;
  N.Kernels[0].Probes[0].OverflowCounter = false;
  EXPECT_FALSE(N == M);
  N = M;
  N.Kernels[0].Probes[0].DynamicCapacity = true;
  EXPECT_FALSE(N == M);
  N = M;
  N.Kernels[0].Probes[0].CapacityParam = 1;
  EXPECT_FALSE(N == M);
  N = M;
  N.Kernels[0].Probes[0].SlotCounts = true;
  EXPECT_FALSE(N == M);
}

TEST(Manifest, ProbeDefaultsAreNotWritten) {
  // Without a probe name or counter the keys are left out (and read back as
  // the defaults).
  Manifest M = fullManifest();
  M.Kernels[0].Probes[0].Probe.clear();
  M.Kernels[0].Probes[0].OverflowCounter = false;
  std::string Text = writeManifest(M);
  EXPECT_EQ(Text.find("\"probe\""), std::string::npos);
  EXPECT_EQ(Text.find("overflow_counter"), std::string::npos);
  Expected<Manifest> Back = parseManifest(Text, "defaults.json");
  ASSERT_TRUE(Back) << Back.status().message();
  EXPECT_TRUE(*Back == M);
}

TEST(Manifest, ValidateProbeBuffers) {
  Manifest M = fullManifest();
  ProbeBuffer Second = M.Kernels[0].Probes[0];
  Second.Name = "more";
  M.Kernels[0].Probes.push_back(Second);
  EXPECT_EQ(validateManifest(M).message(),
            "kernels[0].probes[1].param: parameter 4 is already the buffer "
            "of probes[0]");
  M.Kernels[0].Probes[1].Param = 0;
  EXPECT_TRUE(validateManifest(M).ok()) << validateManifest(M).message();
  M.Kernels[0].Probes[1].Name = "warps";
  EXPECT_EQ(validateManifest(M).message(),
            "kernels[0].probes[1].name: duplicate map 'warps' (also "
            "probes[0])");
  M.Kernels[0].Probes[1].Name = "";
  EXPECT_EQ(validateManifest(M).message(),
            "kernels[0].probes[1].name: expected a non-empty string");
  M = fullManifest();
  M.Kernels[0].Probes[0].Fields[2].Name = "clock";
  EXPECT_EQ(validateManifest(M).message(),
            "kernels[0].probes[0].fields[2].name: duplicate field 'clock' "
            "(also fields[0])");
}

TEST(Manifest, ValidateTheFusionStrategy) {
  Manifest M = fullManifest();
  ASSERT_TRUE(validateManifest(M).ok());
  // A strategy exactly when there are parts.
  M.Kernels[0].Strategy = std::nullopt;
  EXPECT_EQ(validateManifest(M).message(),
            "kernels[0].fusion_strategy: missing (required when fused_from is "
            "not empty)");
  M = fullManifest();
  M.Kernels[1].Strategy = FusionStrategy::Interleave;
  EXPECT_EQ(validateManifest(M).message(),
            "kernels[1].fusion_strategy: \"interleave\" without fused_from");
  // Overlapping ranges are for interleave and dynamic only.
  M = fullManifest();
  M.Kernels[2].Strategy = FusionStrategy::Dynamic;
  EXPECT_TRUE(validateManifest(M).ok()) << validateManifest(M).message();
  M.Kernels[2].Strategy = FusionStrategy::Thread;
  M.Kernels[2].FusedFrom[0].Ratio = std::nullopt;
  M.Kernels[2].FusedFrom[1].Ratio = std::nullopt;
  EXPECT_EQ(validateManifest(M).message(),
            "kernels[2].fused_from[1].threads: overlaps the threads of "
            "fused_from[0]");
}

TEST(Manifest, ProbeBufferBytes) {
  ProbeBuffer P;
  P.Capacity = 3;
  P.RecordBytes = 16;
  Dim3 Grid{10, 2, 1}, Block{96, 1, 1};
  P.Level = ProbeLevel::Thread;
  EXPECT_EQ(P.bufferBytes(Grid, Block), 20u * 96 * 3 * 16);
  P.Level = ProbeLevel::Warp;
  EXPECT_EQ(P.bufferBytes(Grid, Block), 20u * 3 * 3 * 16);
  P.Level = ProbeLevel::Block;
  EXPECT_EQ(P.bufferBytes(Grid, Block), 20u * 1 * 3 * 16);
  // A partial warp still has a slot.
  P.Level = ProbeLevel::Warp;
  EXPECT_EQ(P.bufferBytes(Dim3{1, 1, 1}, Dim3{33, 1, 1}), 2u * 3 * 16);
  EXPECT_EQ(P.unitsPerBlock(Dim3{33, 1, 1}), 2u);
  EXPECT_EQ(P.unitsPerBlock(Dim3{8, 4, 2}), 2u);
}

TEST(Manifest, ProbeBufferTotalBytes) {
  // 12-byte records: the records end off a multiple of 8, so the counter
  // starts at the next one.
  ProbeBuffer P;
  P.Capacity = 1;
  P.RecordBytes = 12;
  Dim3 Grid{5, 1, 1}, Block{40, 1, 1}; // The second warp has 8 threads.
  P.Level = ProbeLevel::Thread;
  EXPECT_EQ(P.unitsPerBlock(Block), 40u);
  EXPECT_EQ(P.bufferBytes(Grid, Block), 5u * 40 * 12); // 2400
  EXPECT_EQ(P.overflowOffset(Grid, Block), 2400u);     // Already aligned.
  EXPECT_EQ(P.totalBytes(Grid, Block), 2400u);         // No counter.
  P.OverflowCounter = true;
  EXPECT_EQ(P.totalBytes(Grid, Block), 2408u);
  P.Level = ProbeLevel::Warp;
  EXPECT_EQ(P.unitsPerBlock(Block), 2u);
  EXPECT_EQ(P.bufferBytes(Grid, Block), 5u * 2 * 12); // 120
  EXPECT_EQ(P.overflowOffset(Grid, Block), 120u);
  EXPECT_EQ(P.totalBytes(Grid, Block), 128u);
  P.Level = ProbeLevel::Block;
  EXPECT_EQ(P.unitsPerBlock(Block), 1u);
  EXPECT_EQ(P.bufferBytes(Grid, Block), 5u * 12); // 60
  EXPECT_EQ(P.overflowOffset(Grid, Block), 64u);
  EXPECT_EQ(P.totalBytes(Grid, Block), 72u);
  P.OverflowCounter = false;
  EXPECT_EQ(P.totalBytes(Grid, Block), 64u);
  // A partial last warp, three of them, and capacity 3 of 4-byte records.
  P.Level = ProbeLevel::Warp;
  P.Capacity = 3;
  P.RecordBytes = 4;
  P.OverflowCounter = true;
  Dim3 One{1, 1, 1}, Odd{65, 1, 1};
  EXPECT_EQ(P.unitsPerBlock(Odd), 3u);
  EXPECT_EQ(P.bufferBytes(One, Odd), 36u);
  EXPECT_EQ(P.overflowOffset(One, Odd), 40u);
  EXPECT_EQ(P.totalBytes(One, Odd), 48u);
}

TEST(Manifest, DuplicateKernelNames) {
  Manifest M = fullManifest();
  M.Kernels[1].Name = M.Kernels[0].Name;
  Expected<Manifest> Back = parseManifest(writeManifest(M), "dup.json");
  ASSERT_FALSE(Back);
  EXPECT_EQ(Back.status().message(),
            "dup.json: kernels[1].name: duplicate kernel "
            "'fused_im2col_maxpool' (also kernels[0])");
}

} // namespace
