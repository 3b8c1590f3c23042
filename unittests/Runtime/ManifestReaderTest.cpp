//===- ManifestReaderTest.cpp - Launch manifests as text ------------------===//
//
// The reader on manifest text: every version it reads, and the exact error
// (with its JSON path) of each malformed case.
//
//===----------------------------------------------------------------------===//

#include "gpuopt/Runtime/ManifestReader.h"
#include "gpuopt/Runtime/Manifest.h"
#include "gpuopt/Runtime/ManifestWriter.h"

#include <gtest/gtest.h>

#include <string>

using namespace gpuopt::runtime;

namespace {

/// A valid manifest as text, to be broken in one place per case.
const char *const Valid = R"({
  "manifest_version": 3,
  "module": {"path": "k.ptx", "format": "ptx", "target": "sm_90a"},
  "kernels": [{
    "name": "k",
    "params": [
      {"name": "a", "type": "u64", "size": 8, "align": 8, "offset": 0, "kind": "pointer"},
      {"name": "n", "type": "u32", "size": 4, "align": 4, "offset": 8, "kind": "scalar"},
      {"name": "s", "type": "f32", "size": 4, "align": 4, "offset": 12, "kind": "scalar"},
      {"name": "p", "type": "u64", "size": 8, "align": 8, "offset": 16, "kind": "pointer"}
    ],
    "launch": {"block": [256], "grid": "runtime", "dynamic_smem": 0},
    "fusion_strategy": "thread",
    "fused_from": [
      {"kernel": "x", "threads": [0, 128], "arg_map": [0, 1]},
      {"kernel": "y", "threads": [128, 256], "arg_map": [2]}
    ],
    "probes": [
      {"name": "t", "probe": "clock", "param": 3, "level": "thread",
       "capacity": 1, "record_bytes": 8, "overflow_counter": true,
       "fields": [{"name": "c", "type": "u64", "offset": 0}]}
    ]
  }]
})";

/// Version 2: probe entries have neither "probe" nor "overflow_counter".
const char *const ValidV2 = R"({
  "manifest_version": 2,
  "module": {"path": "k.ptx", "format": "ptx"},
  "kernels": [{
    "name": "k",
    "params": [
      {"name": "a", "type": "u64", "size": 8, "align": 8, "offset": 0, "kind": "pointer"},
      {"name": "p", "type": "u64", "size": 8, "align": 8, "offset": 8, "kind": "pointer"}
    ],
    "probes": [
      {"name": "t", "param": 1, "level": "warp", "capacity": 2,
       "record_bytes": 8, "fields": [{"name": "c", "type": "u64", "offset": 0}]}
    ]
  }]
})";

/// Version 1: no fusion_strategy, which means "thread".
const char *const ValidV1 = R"({
  "manifest_version": 1,
  "module": {"path": "k.ptx", "format": "ptx"},
  "kernels": [{
    "name": "k",
    "params": [
      {"name": "a", "type": "u64", "size": 8, "align": 8, "offset": 0, "kind": "pointer"},
      {"name": "b", "type": "u64", "size": 8, "align": 8, "offset": 8, "kind": "pointer"}
    ],
    "launch": {"block": [256], "grid": "runtime", "dynamic_smem": 0},
    "fused_from": [
      {"kernel": "x", "threads": [0, 128], "arg_map": [0]},
      {"kernel": "y", "threads": [128, 256], "arg_map": [1]}
    ]
  }]
})";

/// Interleaved parts: each runs from thread 0, so their ranges overlap.
const char *const ValidInterleave = R"({
  "manifest_version": 2,
  "module": {"path": "k.ptx", "format": "ptx"},
  "kernels": [{
    "name": "k",
    "params": [
      {"name": "a", "type": "u64", "size": 8, "align": 8, "offset": 0, "kind": "pointer"},
      {"name": "b", "type": "u64", "size": 8, "align": 8, "offset": 8, "kind": "pointer"}
    ],
    "launch": {"block": [256], "grid": "runtime", "dynamic_smem": 0},
    "fusion_strategy": "interleave",
    "fused_from": [
      {"kernel": "x", "threads": [0, 256], "ratio": 3, "arg_map": [0]},
      {"kernel": "y", "threads": [0, 128], "ratio": 1, "block": [128], "arg_map": [1]}
    ]
  }]
})";

/// Version 4: a map of "dynamic" capacity, passed in parameter 4, and a
/// fixed map with slot counts.
const char *const ValidV4 = R"({
  "manifest_version": 4,
  "module": {"path": "k.ptx", "format": "ptx"},
  "kernels": [{
    "name": "k",
    "params": [
      {"name": "a", "type": "u64", "size": 8, "align": 8, "offset": 0, "kind": "pointer"},
      {"name": "n", "type": "u32", "size": 4, "align": 4, "offset": 8, "kind": "scalar"},
      {"name": "s", "type": "f32", "size": 4, "align": 4, "offset": 12, "kind": "scalar"},
      {"name": "p", "type": "u64", "size": 8, "align": 8, "offset": 16, "kind": "pointer"},
      {"name": "cap", "type": "u32", "size": 4, "align": 4, "offset": 24, "kind": "scalar"},
      {"name": "q", "type": "u64", "size": 8, "align": 8, "offset": 32, "kind": "pointer"}
    ],
    "probes": [
      {"name": "d", "probe": "trace", "param": 3, "level": "warp",
       "capacity": "dynamic", "capacity_param": 4, "record_bytes": 8,
       "overflow_counter": true, "slot_counts": true,
       "fields": [{"name": "c", "type": "u64", "offset": 0}]},
      {"name": "f", "param": 5, "level": "block", "capacity": 2,
       "record_bytes": 4, "slot_counts": true,
       "fields": [{"name": "v", "type": "u32", "offset": 0}]}
    ]
  }]
})";

std::string replaceOnce(std::string S, const std::string &From,
                        const std::string &To) {
  size_t Pos = S.find(From);
  EXPECT_NE(Pos, std::string::npos) << "test text lacks: " << From;
  if (Pos != std::string::npos)
    S.replace(Pos, From.size(), To);
  return S;
}

TEST(Manifest, ValidTextParses) {
  Expected<Manifest> M = parseManifest(Valid, "valid.json");
  ASSERT_TRUE(M) << M.status().message();
  ASSERT_EQ(M->Kernels.size(), 1u);
  const KernelInfo &K = M->Kernels[0];
  EXPECT_EQ(K.Params.size(), 4u);
  EXPECT_EQ(K.paramBytes(), 24u);
  EXPECT_EQ(K.Launch.Block, (Dim3{256, 1, 1}));
  EXPECT_FALSE(K.Launch.Grid.has_value());
  EXPECT_EQ(K.FusedFrom[1].ArgMap, std::vector<uint64_t>{2});
  EXPECT_EQ(K.Probes[0].Level, ProbeLevel::Thread);
  EXPECT_EQ(K.Probes[0].Probe, "clock");
  EXPECT_TRUE(K.Probes[0].OverflowCounter);
  EXPECT_EQ(M->findKernel("k"), &M->Kernels[0]);
  EXPECT_EQ(M->findKernel("nope"), nullptr);
  EXPECT_EQ(K.Strategy, FusionStrategy::Thread);
}

TEST(Manifest, Version2ProbesHaveNoCounter) {
  Expected<Manifest> M = parseManifest(ValidV2, "v2.json");
  ASSERT_TRUE(M) << M.status().message();
  const ProbeBuffer &P = M->Kernels[0].Probes[0];
  EXPECT_FALSE(P.OverflowCounter);
  EXPECT_TRUE(P.Probe.empty());
  EXPECT_EQ(P.totalBytes(Dim3{2, 1, 1}, Dim3{64, 1, 1}), 2u * 2 * 2 * 8);
  // Written back as version 5, which reads back the same.
  std::string Text = writeManifest(*M);
  EXPECT_NE(Text.find("\"manifest_version\": 5"), std::string::npos);
  Expected<Manifest> Back = parseManifest(Text, "v4.json");
  ASSERT_TRUE(Back) << Back.status().message();
  EXPECT_TRUE(*Back == *M);
}

TEST(Manifest, Version1ReadsAsThreadStrategy) {
  Expected<Manifest> M = parseManifest(ValidV1, "v1.json");
  ASSERT_TRUE(M) << M.status().message();
  EXPECT_EQ(M->Kernels[0].Strategy, FusionStrategy::Thread);
  EXPECT_FALSE(M->Kernels[0].FusedFrom[0].Ratio.has_value());
  // Written back as version 5, with the strategy spelled out.
  std::string Text = writeManifest(*M);
  EXPECT_NE(Text.find("\"manifest_version\": 5"), std::string::npos);
  EXPECT_NE(Text.find("\"fusion_strategy\": \"thread\""), std::string::npos);
  Expected<Manifest> Back = parseManifest(Text, "v2.json");
  ASSERT_TRUE(Back) << Back.status().message();
  EXPECT_TRUE(*Back == *M);
  // Without fused_from, no strategy.
  M = parseManifest(R"({"manifest_version": 1,
                        "module": {"path": "k.ptx", "format": "ptx"},
                        "kernels": [{"name": "p", "params": []}]})",
                    "plain.json");
  ASSERT_TRUE(M) << M.status().message();
  EXPECT_FALSE(M->Kernels[0].Strategy.has_value());
}

TEST(Manifest, InterleavedAndDynamicPartsOverlap) {
  Expected<Manifest> M = parseManifest(ValidInterleave, "i.json");
  ASSERT_TRUE(M) << M.status().message();
  const KernelInfo &K = M->Kernels[0];
  EXPECT_EQ(K.Strategy, FusionStrategy::Interleave);
  EXPECT_EQ(K.FusedFrom[0].ThreadsHi, 256u);
  EXPECT_EQ(K.FusedFrom[0].Ratio, 3u);
  EXPECT_EQ(K.FusedFrom[1].Ratio, 1u);
  Expected<Manifest> Back = parseManifest(writeManifest(*M), "i2.json");
  ASSERT_TRUE(Back) << Back.status().message();
  EXPECT_TRUE(*Back == *M);

  M = parseManifest(
      replaceOnce(ValidInterleave, R"("interleave")", R"("dynamic")"),
      "d.json");
  ASSERT_TRUE(M) << M.status().message();
  EXPECT_EQ(M->Kernels[0].Strategy, FusionStrategy::Dynamic);
  // The ratio is optional.
  M = parseManifest(replaceOnce(ValidInterleave, R"("ratio": 3, )", ""),
                    "r.json");
  ASSERT_TRUE(M) << M.status().message();
  EXPECT_FALSE(M->Kernels[0].FusedFrom[0].Ratio.has_value());
}

/// A thread split whose part y runs two copies of its 64-thread block on
/// threads [128, 256), its warps at 56 registers (version 6).
const char *const ValidReplicas = R"({
  "manifest_version": 6,
  "module": {"path": "k.ptx", "format": "ptx"},
  "kernels": [{
    "name": "k",
    "params": [
      {"name": "a", "type": "u64", "size": 8, "align": 8, "offset": 0, "kind": "pointer"},
      {"name": "b", "type": "u64", "size": 8, "align": 8, "offset": 8, "kind": "pointer"}
    ],
    "launch": {"block": [256], "grid": [64], "dynamic_smem": 0},
    "fusion_strategy": "thread",
    "fused_from": [
      {"kernel": "x", "threads": [0, 128], "block": [128], "grid": [64],
       "setmaxnreg": 152, "arg_map": [0]},
      {"kernel": "y", "threads": [128, 256], "block": [64], "grid": [128],
       "replicas": 2, "setmaxnreg": 56, "arg_map": [1]}
    ]
  }]
})";

TEST(Manifest, Version6ReplicasAndSetmaxnreg) {
  std::string Text = ValidReplicas;
  Expected<Manifest> M = parseManifest(Text, "r.json");
  ASSERT_TRUE(M) << M.status().message() << Text;
  const FusedPart &Y = M->Kernels[0].FusedFrom[1];
  EXPECT_EQ(Y.Replicas, 2u);
  EXPECT_EQ(Y.Setmaxnreg, 56u);
  EXPECT_EQ(M->Kernels[0].FusedFrom[0].Replicas, 1u);
  EXPECT_EQ(M->Kernels[0].FusedFrom[0].Setmaxnreg, 152u);
  EXPECT_EQ(oldestVersionFor(*M), 6);
  Expected<Manifest> Back = parseManifest(writeManifest(*M), "r2.json");
  ASSERT_TRUE(Back) << Back.status().message();
  EXPECT_EQ(*Back, *M);

  // Version 5 does not know the keys; the block must fill the range with
  // its copies; a budget is what setmaxnreg takes.
  Expected<Manifest> Old = parseManifest(
      replaceOnce(Text, R"("manifest_version": 6)", R"("manifest_version": 5)"),
      "r5.json");
  EXPECT_FALSE(Old);
  Expected<Manifest> Short = parseManifest(
      replaceOnce(Text, R"("replicas": 2)", R"("replicas": 3)"), "r3.json");
  ASSERT_FALSE(Short);
  EXPECT_NE(Short.status().message().find("x 3 replicas does not have"),
            std::string::npos)
      << Short.status().message();
  Expected<Manifest> Odd = parseManifest(
      replaceOnce(Text, R"("setmaxnreg": 56)", R"("setmaxnreg": 60)"),
      "r60.json");
  ASSERT_FALSE(Odd);
  EXPECT_NE(Odd.status().message().find("multiple of 8"), std::string::npos)
      << Odd.status().message();
}

TEST(Manifest, Version4DynamicCapacity) {
  Expected<Manifest> M = parseManifest(ValidV4, "v4.json");
  ASSERT_TRUE(M) << M.status().message();
  const ProbeBuffer &D = M->Kernels[0].Probes[0];
  EXPECT_TRUE(D.DynamicCapacity);
  EXPECT_EQ(D.Capacity, 0u); // Until the launcher sizes it.
  EXPECT_EQ(D.CapacityParam, 4u);
  EXPECT_TRUE(D.SlotCounts);
  EXPECT_TRUE(D.OverflowCounter);
  const ProbeBuffer &F = M->Kernels[0].Probes[1];
  EXPECT_FALSE(F.DynamicCapacity);
  EXPECT_EQ(F.Capacity, 2u);
  EXPECT_TRUE(F.SlotCounts);
  EXPECT_FALSE(F.OverflowCounter);

  // Written back with the same keys; reads back the same.
  std::string Text = writeManifest(*M);
  EXPECT_NE(Text.find("\"manifest_version\": 5"), std::string::npos);
  EXPECT_NE(Text.find("\"capacity\": \"dynamic\",\n          "
                      "\"capacity_param\": 4,"),
            std::string::npos)
      << Text;
  EXPECT_NE(Text.find("\"slot_counts\": true"), std::string::npos);
  // The fixed map has no capacity parameter.
  EXPECT_EQ(Text.find("capacity_param"), Text.rfind("capacity_param"));
  Expected<Manifest> Back = parseManifest(Text, "back.json");
  ASSERT_TRUE(Back) << Back.status().message();
  EXPECT_TRUE(*Back == *M);
  EXPECT_EQ(writeManifest(*Back), Text);

  // A sized dynamic map is still written as "dynamic": the capacity a run
  // chose is not part of the kernel's contract.
  Manifest Sized = *M;
  Sized.Kernels[0].Probes[0].Capacity = 7;
  ASSERT_TRUE(validateManifest(Sized).ok())
      << validateManifest(Sized).message();
  EXPECT_EQ(writeManifest(Sized), Text);
}

TEST(Manifest, Version3ContentRoundTripsWithoutVersion4Keys) {
  // Defaults are not written, so a version 3 manifest written as version 5
  // still reads as version 3.
  Expected<Manifest> M = parseManifest(Valid, "v3.json");
  ASSERT_TRUE(M) << M.status().message();
  const ProbeBuffer &P = M->Kernels[0].Probes[0];
  EXPECT_FALSE(P.DynamicCapacity);
  EXPECT_FALSE(P.SlotCounts);
  EXPECT_EQ(P.CapacityParam, 0u);
  std::string Text = writeManifest(*M);
  EXPECT_EQ(Text.find("capacity_param"), std::string::npos);
  EXPECT_EQ(Text.find("slot_counts"), std::string::npos);
  EXPECT_EQ(Text.find("\"dynamic\""), std::string::npos);
  EXPECT_EQ(Text.find("smem_optin"), std::string::npos);
  std::string AsV3 =
      replaceOnce(Text, "\"manifest_version\": 5", "\"manifest_version\": 3");
  Expected<Manifest> Back = parseManifest(AsV3, "as-v3.json");
  ASSERT_TRUE(Back) << Back.status().message();
  EXPECT_TRUE(*Back == *M);
}

TEST(Manifest, ValidateDynamicCapacity) {
  Expected<Manifest> Parsed = parseManifest(ValidV4, "v4.json");
  ASSERT_TRUE(Parsed) << Parsed.status().message();
  const Manifest Good = *Parsed;
  // The capacity parameter must not be a later map's buffer (which is
  // checked for its own size only when that map's turn comes).
  Manifest M = Good;
  M.Kernels[0].Probes[1].Param = 1;
  M.Kernels[0].Probes[0].CapacityParam = 1;
  EXPECT_EQ(validateManifest(M).message(),
            "kernels[0].probes[0].capacity_param: parameter 1 is the buffer "
            "of probes[1]");
  // A fixed map's CapacityParam means nothing.
  M = Good;
  M.Kernels[0].Probes[1].CapacityParam = 4;
  EXPECT_TRUE(validateManifest(M).ok()) << validateManifest(M).message();
  // A dynamic capacity of 0 is fine (nothing sized yet); a fixed one is not.
  M = Good;
  M.Kernels[0].Probes[1].Capacity = 0;
  EXPECT_EQ(validateManifest(M).message(),
            "kernels[0].probes[1].capacity: expected a positive integer, got "
            "0");
  // The counting run needs the counts and the counter.
  M = Good;
  M.Kernels[0].Probes[0].SlotCounts = false;
  EXPECT_EQ(validateManifest(M).message(),
            "kernels[0].probes[0].slot_counts: a \"dynamic\" capacity needs "
            "slot_counts: true (the launcher sizes the buffer from them)");
  M = Good;
  M.Kernels[0].Probes[0].OverflowCounter = false;
  EXPECT_EQ(validateManifest(M).message(),
            "kernels[0].probes[0].overflow_counter: a \"dynamic\" capacity "
            "needs overflow_counter: true");
  // A bytes parameter of 4 bytes holds a u32 too.
  M = Good;
  M.Kernels[0].Params[4] = {"cap", "b8", 4, 4, 24, ParamKind::Bytes, "", 0};
  EXPECT_TRUE(validateManifest(M).ok()) << validateManifest(M).message();
}

TEST(Manifest, ProbeBufferSlotCounts) {
  // Records, padded to 8; a u32 per slot, padded to 8; the counter.
  ProbeBuffer P;
  P.Level = ProbeLevel::Warp;
  P.Capacity = 3;
  P.RecordBytes = 4;
  P.OverflowCounter = true;
  Dim3 One{1, 1, 1}, Odd{65, 1, 1}; // 3 warps: 3 slots.
  EXPECT_EQ(P.slots(One, Odd), 3u);
  EXPECT_EQ(P.bufferBytes(One, Odd), 36u);
  EXPECT_EQ(P.countsOffset(One, Odd), 40u);
  EXPECT_EQ(P.overflowOffset(One, Odd), 40u); // No counts: as in version 3.
  EXPECT_EQ(P.totalBytes(One, Odd), 48u);
  P.SlotCounts = true;
  EXPECT_EQ(P.countsOffset(One, Odd), 40u);
  EXPECT_EQ(P.overflowOffset(One, Odd), 56u); // 12 bytes of counts -> 16.
  EXPECT_EQ(P.totalBytes(One, Odd), 64u);
  P.OverflowCounter = false;
  EXPECT_EQ(P.totalBytes(One, Odd), 56u);
  // A dynamic map before sizing: no records, the counts and the counter.
  P.DynamicCapacity = true;
  P.OverflowCounter = true;
  P.Capacity = 0;
  EXPECT_EQ(P.bufferBytes(One, Odd), 0u);
  EXPECT_EQ(P.countsOffset(One, Odd), 0u);
  EXPECT_EQ(P.overflowOffset(One, Odd), 16u);
  EXPECT_EQ(P.totalBytes(One, Odd), 24u);
  // Block level over a grid of 4 x 2: 8 slots, 32 bytes of counts.
  P.Level = ProbeLevel::Block;
  P.Capacity = 2;
  P.RecordBytes = 12;
  Dim3 Grid{4, 2, 1};
  EXPECT_EQ(P.slots(Grid, Odd), 8u);
  EXPECT_EQ(P.bufferBytes(Grid, Odd), 192u);
  EXPECT_EQ(P.countsOffset(Grid, Odd), 192u);
  EXPECT_EQ(P.overflowOffset(Grid, Odd), 224u);
  EXPECT_EQ(P.totalBytes(Grid, Odd), 232u);
}

struct Malformed {
  const char *From;
  const char *To;
  const char *Error;
  /// The valid text to break.
  const char *Base = Valid;
};

class MalformedManifest : public ::testing::TestWithParam<Malformed> {};

TEST_P(MalformedManifest, NamesTheJSONPath) {
  const Malformed &C = GetParam();
  std::string Text = replaceOnce(C.Base, C.From, C.To);
  Expected<Manifest> M = parseManifest(Text, "bad.json");
  ASSERT_FALSE(M) << "accepted:\n" << Text;
  EXPECT_EQ(M.status().message(), std::string("bad.json: ") + C.Error);
}

INSTANTIATE_TEST_SUITE_P(
    Cases, MalformedManifest,
    ::testing::Values(
        Malformed{R"("size": 4, "align": 4, "offset": 12)",
                  R"("size": "4", "align": 4, "offset": 12)",
                  "kernels[0].params[2].size: expected an unsigned integer, "
                  "got string"},
        Malformed{R"("size": 4, "align": 4, "offset": 12)",
                  R"("size": -4, "align": 4, "offset": 12)",
                  "kernels[0].params[2].size: expected an unsigned integer, "
                  "got a negative integer"},
        Malformed{R"("manifest_version": 3)", R"("manifest_version": 8)",
                  "manifest_version: unsupported version 8 (this runtime "
                  "reads versions 1, 2, 3, 4, 5, 6 and 7)"},
        Malformed{R"("manifest_version": 3)", R"("manifest_version": 0)",
                  "manifest_version: unsupported version 0 (this runtime "
                  "reads versions 1, 2, 3, 4, 5, 6 and 7)"},
        Malformed{R"("manifest_version": 3,)", "", "manifest_version: missing"},
        Malformed{R"("format": "ptx")", R"("format": "sass")",
                  "module.format: expected \"ptx\" or \"cubin\", got "
                  "\"sass\""},
        Malformed{R"("name": "k",)", R"("name": "k", "lanuch": {},)",
                  "kernels[0].lanuch: unknown key (expected one of: name, "
                  "params, launch, resources, fusion_strategy, fused_from, "
                  "probes)"},
        Malformed{R"({"name": "n", "type": "u32")", R"({"type": "u32")",
                  "kernels[0].params[1].name: missing"},
        Malformed{R"("type": "f32")", R"("type": ".f32")",
                  "kernels[0].params[2].type: '.f32' is not a PTX "
                  "fundamental type (u32, f32, b64 ...; no leading dot)"},
        Malformed{R"("size": 4, "align": 4, "offset": 12)",
                  R"("size": 8, "align": 4, "offset": 12)",
                  "kernels[0].params[2].size: 8 does not match type f32 (4 "
                  "bytes)"},
        Malformed{R"("offset": 8, "kind": "scalar")",
                  R"("offset": 8, "kind": "value")",
                  "kernels[0].params[1].kind: expected \"scalar\", "
                  "\"pointer\" or \"bytes\", got \"value\""},
        Malformed{R"("align": 4, "offset": 12)", R"("align": 3, "offset": 12)",
                  "kernels[0].params[2].align: expected a power of two, got "
                  "3"},
        Malformed{R"("align": 4, "offset": 12)", R"("align": 4, "offset": 10)",
                  "kernels[0].params[2].offset: 10 is not a multiple of "
                  "align 4"},
        Malformed{R"("align": 8, "offset": 16)", R"("align": 8, "offset": 8)",
                  "kernels[0].params[3].offset: 8 overlaps the previous "
                  "parameter, which ends at 16"},
        Malformed{R"("block": [256])", R"("block": [256, 0])",
                  "kernels[0].launch.block[1]: expected a positive integer, "
                  "got 0"},
        Malformed{R"("block": [256])", R"("block": [2048])",
                  "kernels[0].launch.block: 2048,1,1 has more than 1024 "
                  "threads"},
        Malformed{R"("grid": "runtime")", R"("grid": "later")",
                  "kernels[0].launch.grid: expected \"runtime\" or an array "
                  "of 1 to 3 positive integers"},
        Malformed{R"("threads": [128, 256])", R"("threads": [64, 256])",
                  "kernels[0].fused_from[1].threads: overlaps the threads of "
                  "fused_from[0]"},
        Malformed{R"("threads": [128, 256])", R"("threads": [96, 80])",
                  "kernels[0].fused_from[1].threads: expected lo < hi, got "
                  "[96, 80)"},
        Malformed{R"("threads": [128, 256])", R"("threads": [128, 512])",
                  "kernels[0].fused_from[1].threads[1]: 512 is past the "
                  "fused block's 256 threads"},
        Malformed{R"("arg_map": [2])", R"("arg_map": [7])",
                  "kernels[0].fused_from[1].arg_map[0]: parameter 7 does not "
                  "exist (the kernel has 4)"},
        Malformed{R"("param": 3)", R"("param": 1)",
                  "kernels[0].probes[0].param: parameter 1 ('n') is not 8 "
                  "bytes and cannot hold a buffer address"},
        Malformed{R"("level": "thread")", R"("level": "grid")",
                  "kernels[0].probes[0].level: expected \"thread\", \"warp\" "
                  "or \"block\", got \"grid\""},
        Malformed{R"("record_bytes": 8,)", R"("record_bytes": 4,)",
                  "kernels[0].probes[0].fields[0].offset: field ends at byte "
                  "8, past record_bytes 4"}));

// Version 3's probe keys, and what versions 1 and 2 lack.
INSTANTIATE_TEST_SUITE_P(
    Probes, MalformedManifest,
    ::testing::Values(
        Malformed{R"("overflow_counter": true)", R"("overflow_counter": "yes")",
                  "kernels[0].probes[0].overflow_counter: expected true or "
                  "false, got string"},
        Malformed{R"("overflow_counter": true)", R"("overflow_counter": 1)",
                  "kernels[0].probes[0].overflow_counter: expected true or "
                  "false, got an unsigned integer"},
        Malformed{R"("probe": "clock")", R"("probe": "")",
                  "kernels[0].probes[0].probe: expected a non-empty string"},
        Malformed{R"("probe": "clock")", R"("probe": ["clock"])",
                  "kernels[0].probes[0].probe: expected a string, got array"},
        Malformed{R"("name": "t",)", R"("name": "t", "counter": true,)",
                  "kernels[0].probes[0].counter: unknown key (expected one "
                  "of: name, probe, param, level, capacity, record_bytes, "
                  "overflow_counter, fields)"},
        Malformed{R"("fields": [{"name": "c", "type": "u64", "offset": 0}]})",
                  R"("fields": [{"name": "c", "type": "u64", "offset": 0}]},
                     {"name": "t", "param": 0, "level": "block",
                      "capacity": 1, "record_bytes": 8, "fields": []})",
                  "kernels[0].probes[1].name: duplicate map 't' (also "
                  "probes[0])"},
        Malformed{R"("fields": [{"name": "c", "type": "u64", "offset": 0}]})",
                  R"("fields": [{"name": "c", "type": "u64", "offset": 0}]},
                     {"name": "u", "param": 3, "level": "block",
                      "capacity": 1, "record_bytes": 8, "fields": []})",
                  "kernels[0].probes[1].param: parameter 3 is already the "
                  "buffer of probes[0]"},
        Malformed{R"("level": "warp",)",
                  R"("level": "warp", "overflow_counter": false,)",
                  "kernels[0].probes[0].overflow_counter: new in "
                  "manifest_version 3 (this manifest is version 2)",
                  ValidV2},
        Malformed{R"("level": "warp",)",
                  R"("level": "warp", "probe": "block_sched",)",
                  "kernels[0].probes[0].probe: new in manifest_version 3 "
                  "(this manifest is version 2)",
                  ValidV2},
        Malformed{R"("manifest_version": 2)", R"("manifest_version": 1)",
                  "kernels[0].probes[0].overflow_counter: new in "
                  "manifest_version 3 (this manifest is version 1)",
                  R"({"manifest_version": 2,
                      "module": {"path": "k.ptx", "format": "ptx"},
                      "kernels": [{"name": "k", "params": [
                        {"name": "p", "type": "u64", "size": 8, "align": 8,
                         "offset": 0, "kind": "pointer"}],
                        "probes": [{"name": "t", "param": 0,
                          "level": "block", "capacity": 1,
                          "record_bytes": 8, "overflow_counter": true,
                          "fields": []}]}]})"},
        Malformed{R"("name": "t",)", R"("name": "t", "counter": true,)",
                  "kernels[0].probes[0].counter: unknown key (expected one "
                  "of: name, param, level, capacity, record_bytes, fields)",
                  ValidV2}));

// Version 2's fusion strategies and ratios, and what version 1 lacks.
INSTANTIATE_TEST_SUITE_P(
    Fusion, MalformedManifest,
    ::testing::Values(
        Malformed{R"("fusion_strategy": "thread",)", "",
                  "kernels[0].fusion_strategy: missing (required when "
                  "fused_from is not empty)"},
        Malformed{R"("fusion_strategy": "thread")",
                  R"("fusion_strategy": "warp")",
                  "kernels[0].fusion_strategy: expected \"thread\", "
                  "\"interleave\", \"dynamic\" or \"sm_aware\", got "
                  "\"warp\""},
        Malformed{R"("fusion_strategy": "thread")", R"("fusion_strategy": 1)",
                  "kernels[0].fusion_strategy: expected a string, got an "
                  "unsigned integer"},
        Malformed{R"("threads": [128, 256])",
                  R"("threads": [128, 256], "ratio": 2)",
                  "kernels[0].fused_from[1].ratio: only the \"interleave\" "
                  "and \"dynamic\" strategies take a ratio (this kernel's is "
                  "\"thread\")"},
        Malformed{R"("kernel": "x",)", R"("kernel": "x", "ratoi": 1,)",
                  "kernels[0].fused_from[0].ratoi: unknown key (expected one "
                  "of: kernel, module, threads, ratio, block, grid, "
                  "dynamic_smem_offset, dynamic_smem, arg_map)"},
        Malformed{R"("ratio": 1)", R"("ratio": 0)",
                  "kernels[0].fused_from[1].ratio: expected a positive "
                  "integer, got 0",
                  ValidInterleave},
        Malformed{R"("ratio": 1)", R"("ratio": "1")",
                  "kernels[0].fused_from[1].ratio: expected an unsigned "
                  "integer, got string",
                  ValidInterleave},
        Malformed{R"("threads": [0, 128])", R"("threads": [128, 256])",
                  "kernels[0].fused_from[1].threads[0]: expected 0, got 128 "
                  "(under \"interleave\" a fused block runs one part whole, "
                  "from thread 0)",
                  ValidInterleave},
        Malformed{R"("threads": [0, 256])", R"("threads": [0, 512])",
                  "kernels[0].fused_from[0].threads[1]: 512 is past the fused "
                  "block's 256 threads",
                  ValidInterleave},
        Malformed{R"("threads": [0, 128])", R"("threads": [0, 0])",
                  "kernels[0].fused_from[1].threads: expected lo < hi, got "
                  "[0, 0)",
                  ValidInterleave},
        Malformed{R"("block": [128])", R"("block": [64])",
                  "kernels[0].fused_from[1].block: 64,1,1 does not have hi - "
                  "lo = 128 threads",
                  ValidInterleave},
        Malformed{R"("fused_from": [)",
                  R"("fusion_strategy": "thread", "fused_from": [)",
                  "kernels[0].fusion_strategy: new in manifest_version 2 (this "
                  "manifest is version 1)",
                  ValidV1},
        Malformed{R"("threads": [128, 256])",
                  R"("threads": [128, 256], "ratio": 1)",
                  "kernels[0].fused_from[1].ratio: new in manifest_version 2 "
                  "(this manifest is version 1)",
                  ValidV1},
        Malformed{R"("name": "k",)", R"("name": "k", "lanuch": {},)",
                  "kernels[0].lanuch: unknown key (expected one of: name, "
                  "params, launch, resources, fused_from, probes)",
                  ValidV1},
        Malformed{R"("threads": [128, 256])", R"("threads": [96, 256])",
                  "kernels[0].fused_from[1].threads: overlaps the threads of "
                  "fused_from[0]",
                  ValidV1}));

// Version 4's dynamic capacities and slot counts, and what version 3 lacks.
INSTANTIATE_TEST_SUITE_P(
    DynamicCapacity, MalformedManifest,
    ::testing::Values(
        Malformed{R"("capacity": 1,)", R"("capacity": "dynamic",)",
                  "kernels[0].probes[0].capacity: \"dynamic\" is new in "
                  "manifest_version 4 (this manifest is version 3)"},
        Malformed{R"("capacity": 1,)", R"("capacity": 1, "capacity_param": 1,)",
                  "kernels[0].probes[0].capacity_param: new in "
                  "manifest_version 4 (this manifest is version 3)"},
        Malformed{R"("overflow_counter": true)",
                  R"("overflow_counter": true, "slot_counts": false)",
                  "kernels[0].probes[0].slot_counts: new in manifest_version 4 "
                  "(this manifest is version 3)"},
        // Version 3 keeps its message for a capacity that is a string.
        Malformed{R"("capacity": 1,)", R"("capacity": "lots",)",
                  "kernels[0].probes[0].capacity: expected an unsigned "
                  "integer, got string"},
        Malformed{R"("capacity": "dynamic",)", R"("capacity": "lots",)",
                  "kernels[0].probes[0].capacity: expected an unsigned "
                  "integer or \"dynamic\", got \"lots\"",
                  ValidV4},
        Malformed{R"("capacity": 2,)", R"("capacity": -2,)",
                  "kernels[0].probes[1].capacity: expected an unsigned "
                  "integer or \"dynamic\", got a negative integer",
                  ValidV4},
        Malformed{R"("capacity": 2,)", R"("capacity": 0,)",
                  "kernels[0].probes[1].capacity: expected a positive "
                  "integer, got 0",
                  ValidV4},
        Malformed{R"("capacity_param": 4, )", "",
                  "kernels[0].probes[0].capacity_param: missing (required "
                  "when capacity is \"dynamic\")",
                  ValidV4},
        Malformed{R"("capacity": 2,)", R"("capacity": 2, "capacity_param": 1,)",
                  "kernels[0].probes[1].capacity_param: only a \"dynamic\" "
                  "capacity is passed in a parameter",
                  ValidV4},
        Malformed{R"("capacity_param": 4,)", R"("capacity_param": "4",)",
                  "kernels[0].probes[0].capacity_param: expected an unsigned "
                  "integer, got string",
                  ValidV4},
        Malformed{R"("capacity_param": 4,)", R"("capacity_param": 9,)",
                  "kernels[0].probes[0].capacity_param: parameter 9 does not "
                  "exist (the kernel has 6)",
                  ValidV4},
        Malformed{R"("capacity_param": 4,)", R"("capacity_param": 2,)",
                  "kernels[0].probes[0].capacity_param: parameter 2 ('s', "
                  ".f32, 4 bytes) is not a 4-byte integer and cannot hold a "
                  "u32 capacity",
                  ValidV4},
        Malformed{R"("capacity_param": 4,)", R"("capacity_param": 0,)",
                  "kernels[0].probes[0].capacity_param: parameter 0 ('a', "
                  ".u64, 8 bytes) is not a 4-byte integer and cannot hold a "
                  "u32 capacity",
                  ValidV4},
        Malformed{R"("capacity": 2,)",
                  R"("capacity": "dynamic", "capacity_param": 4,
                     "overflow_counter": true,)",
                  "kernels[0].probes[1].capacity_param: parameter 4 is "
                  "already the capacity of probes[0]",
                  ValidV4},
        Malformed{R"("overflow_counter": true, "slot_counts": true,)",
                  R"("overflow_counter": true,)",
                  "kernels[0].probes[0].slot_counts: a \"dynamic\" capacity "
                  "needs slot_counts: true (the launcher sizes the buffer "
                  "from them)",
                  ValidV4},
        Malformed{R"("overflow_counter": true, "slot_counts": true,)",
                  R"("overflow_counter": true, "slot_counts": false,)",
                  "kernels[0].probes[0].slot_counts: a \"dynamic\" capacity "
                  "needs slot_counts: true (the launcher sizes the buffer "
                  "from them)",
                  ValidV4},
        Malformed{R"("overflow_counter": true, "slot_counts": true,)",
                  R"("slot_counts": true,)",
                  "kernels[0].probes[0].overflow_counter: a \"dynamic\" "
                  "capacity needs overflow_counter: true",
                  ValidV4},
        Malformed{R"("record_bytes": 4, "slot_counts": true,)",
                  R"("record_bytes": 4, "slot_counts": 1,)",
                  "kernels[0].probes[1].slot_counts: expected true or false, "
                  "got an unsigned integer",
                  ValidV4},
        Malformed{R"("name": "f",)", R"("name": "f", "counts": true,)",
                  "kernels[0].probes[1].counts: unknown key (expected one of: "
                  "name, probe, param, level, capacity, capacity_param, "
                  "record_bytes, overflow_counter, slot_counts, fields)",
                  ValidV4},
        Malformed{R"("manifest_version": 4)", R"("manifest_version": 8)",
                  "manifest_version: unsupported version 8 (this runtime "
                  "reads versions 1, 2, 3, 4, 5, 6 and 7)",
                  ValidV4}));

/// Version 5: a fused kernel whose shared memory needs the opt-in.
const char *const ValidV5 = R"({
  "manifest_version": 5,
  "module": {"path": "k.ptx", "format": "ptx"},
  "kernels": [{
    "name": "k",
    "params": [
      {"name": "a", "type": "u64", "size": 8, "align": 8, "offset": 0, "kind": "pointer"}
    ],
    "launch": {"block": [128], "grid": [8], "dynamic_smem": 49152,
               "smem_optin": true}
  }]
})";

TEST(Manifest, Version5SmemOptin) {
  Expected<Manifest> M = parseManifest(ValidV5, "v5.json");
  ASSERT_TRUE(M) << M.status().message();
  EXPECT_TRUE(M->Kernels[0].Launch.SmemOptin);
  EXPECT_EQ(M->Kernels[0].Launch.DynamicSmem, 49152u);
  std::string Text = writeManifest(*M);
  EXPECT_NE(Text.find("\"smem_optin\": true"), std::string::npos) << Text;
  Expected<Manifest> Back = parseManifest(Text, "back.json");
  ASSERT_TRUE(Back) << Back.status().message();
  EXPECT_EQ(*Back, *M);
  // The default is not written.
  M->Kernels[0].Launch.SmemOptin = false;
  EXPECT_EQ(writeManifest(*M).find("smem_optin"), std::string::npos);
}

INSTANTIATE_TEST_SUITE_P(
    SharedMemory, MalformedManifest,
    ::testing::Values(
        Malformed{R"("smem_optin": true)", R"("smem_optin": 1)",
                  "kernels[0].launch.smem_optin: expected true or false, got "
                  "an unsigned integer",
                  ValidV5},
        Malformed{R"("dynamic_smem": 49152)", R"("dynamic_smem": "runtime")",
                  "kernels[0].launch.smem_optin: true needs a fixed, non-zero "
                  "dynamic_smem (the size to opt in to)",
                  ValidV5},
        Malformed{R"("dynamic_smem": 49152)", R"("dynamic_smem": 0)",
                  "kernels[0].launch.smem_optin: true needs a fixed, non-zero "
                  "dynamic_smem (the size to opt in to)",
                  ValidV5},
        Malformed{R"("manifest_version": 5)", R"("manifest_version": 4)",
                  "kernels[0].launch.smem_optin: new in manifest_version 5 "
                  "(this manifest is version 4)",
                  ValidV5}));

TEST(Manifest, SyntaxErrorsSayWhere) {
  Expected<Manifest> M =
      parseManifest("{\n  \"manifest_version\": 1,\n}", "s.json");
  ASSERT_FALSE(M);
  EXPECT_EQ(M.status().message().rfind("s.json: invalid JSON: ", 0), 0u)
      << M.status().message();
  EXPECT_NE(M.status().message().find("line 3"), std::string::npos)
      << M.status().message();

  M = parseManifest(R"({"manifest_version": 1, "kernels": {},
                        "module": {"path": "k.ptx", "format": "ptx"}})",
                    "k.json");
  ASSERT_FALSE(M);
  EXPECT_EQ(M.status().message(), "k.json: kernels: expected an array, got "
                                  "object");

  M = parseManifest("[1, 2]", "a.json");
  ASSERT_FALSE(M);
  EXPECT_EQ(M.status().message(),
            "a.json: (top level): expected an object, got array");
}

/// Version 5: a probed kernel that kept the registers its probes need at a
/// cost in occupancy, because keeping the occupancy would have spilled.
const char *const ValidProbeOccupancy = R"({
  "manifest_version": 5,
  "module": {"path": "k.ptx", "format": "ptx"},
  "kernels": [{
    "name": "k",
    "params": [
      {"name": "a", "type": "u64", "size": 8, "align": 8, "offset": 0, "kind": "pointer"},
      {"name": "buf", "type": "u64", "size": 8, "align": 8, "offset": 8, "kind": "pointer"}
    ],
    "probes": [
      {"name": "t", "param": 1, "level": "thread", "capacity": 1,
       "record_bytes": 8, "fields": [{"name": "c", "type": "u64", "offset": 0}]}
    ],
    "probe_occupancy": {"before": 8, "after": 6, "block_threads": 256,
                        "registers_before": 32, "registers_after": 40,
                        "cap_spill_bytes": 12}
  }]
})";

TEST(Manifest, Version5ProbeOccupancy) {
  Expected<Manifest> M = parseManifest(ValidProbeOccupancy, "v5.json");
  ASSERT_TRUE(M) << M.status().message();
  ASSERT_TRUE(M->Kernels[0].Occupancy.has_value());
  const ProbeOccupancy &O = *M->Kernels[0].Occupancy;
  EXPECT_EQ(O.Before, 8u);
  EXPECT_EQ(O.After, 6u);
  EXPECT_EQ(O.BlockThreads, 256u);
  EXPECT_EQ(O.RegistersBefore, 32u);
  EXPECT_EQ(O.RegistersAfter, 40u);
  EXPECT_EQ(O.CapSpillBytes, 12u);
  std::string Text = writeManifest(*M);
  EXPECT_NE(Text.find("\"probe_occupancy\": {"), std::string::npos) << Text;
  Expected<Manifest> Back = parseManifest(Text, "back.json");
  ASSERT_TRUE(Back) << Back.status().message();
  EXPECT_EQ(*Back, *M);
  // Only a probed kernel has it.
  Manifest Unprobed = *M;
  Unprobed.Kernels[0].Probes.clear();
  EXPECT_EQ(validateManifest(Unprobed).message(),
            "kernels[0].probe_occupancy: the kernel has no probes");
  // Absent unless probing cost occupancy.
  M->Kernels[0].Occupancy.reset();
  EXPECT_EQ(writeManifest(*M).find("probe_occupancy"), std::string::npos);
}

INSTANTIATE_TEST_SUITE_P(
    ProbeOccupancy, MalformedManifest,
    ::testing::Values(
        Malformed{R"("manifest_version": 5)", R"("manifest_version": 4)",
                  "kernels[0].probe_occupancy: new in manifest_version 5 "
                  "(this manifest is version 4)",
                  ValidProbeOccupancy},
        Malformed{R"("after": 6, )", "",
                  "kernels[0].probe_occupancy.after: missing",
                  ValidProbeOccupancy},
        Malformed{R"("after": 6)", R"("after": "6")",
                  "kernels[0].probe_occupancy.after: expected an unsigned "
                  "integer, got string",
                  ValidProbeOccupancy},
        Malformed{R"("after": 6)", R"("after": 8)",
                  "kernels[0].probe_occupancy.after: 8 is not below before "
                  "(8)",
                  ValidProbeOccupancy},
        Malformed{R"("block_threads": 256)", R"("block_threads": 2048)",
                  "kernels[0].probe_occupancy.block_threads: expected 1 to "
                  "1024 threads, got 2048",
                  ValidProbeOccupancy},
        Malformed{R"("registers_after": 40)", R"("registers_after": 32)",
                  "kernels[0].probe_occupancy.registers_after: 32 is not "
                  "above registers_before (32)",
                  ValidProbeOccupancy},
        Malformed{R"("cap_spill_bytes": 12)", R"("spills": 12)",
                  "kernels[0].probe_occupancy.spills: unknown key (expected "
                  "one of: before, after, block_threads, registers_before, "
                  "registers_after, cap_spill_bytes)",
                  ValidProbeOccupancy},
        Malformed{R"("probes": [)", R"("params2": [)",
                  "kernels[0].params2: unknown key (expected one of: name, "
                  "params, launch, resources, fusion_strategy, fused_from, "
                  "probes, probe_occupancy)",
                  ValidProbeOccupancy}));

} // namespace

/// Version 6: a launch-agnostic fused kernel. Part 0 (a 1-D kernel) and
/// part 1 (a 2-D grid whose dynamic shared memory is given at launch) take
/// their grids in parameters 2 to 7, part 1's size in parameter 8.
const char *const ValidV6 = R"({
  "manifest_version": 6,
  "module": {"path": "f.ptx", "format": "ptx"},
  "kernels": [{
    "name": "f",
    "params": [
      {"name": "a", "type": "u64", "size": 8, "align": 8, "offset": 0, "kind": "pointer"},
      {"name": "b", "type": "u64", "size": 8, "align": 8, "offset": 8, "kind": "pointer"},
      {"name": "g0x", "type": "u32", "size": 4, "align": 4, "offset": 16, "kind": "scalar"},
      {"name": "g0y", "type": "u32", "size": 4, "align": 4, "offset": 20, "kind": "scalar"},
      {"name": "g0z", "type": "u32", "size": 4, "align": 4, "offset": 24, "kind": "scalar"},
      {"name": "g1x", "type": "u32", "size": 4, "align": 4, "offset": 28, "kind": "scalar"},
      {"name": "g1y", "type": "u32", "size": 4, "align": 4, "offset": 32, "kind": "scalar"},
      {"name": "g1z", "type": "u32", "size": 4, "align": 4, "offset": 36, "kind": "scalar"},
      {"name": "s1", "type": "u32", "size": 4, "align": 4, "offset": 40, "kind": "scalar"}
    ],
    "launch": {"block": [192], "grid": "runtime", "dynamic_smem": "runtime"},
    "fusion_strategy": "thread",
    "fused_from": [
      {"kernel": "k0", "threads": [0, 128], "block": [128, 1, 1],
       "grid": "runtime", "default_grid": [1000, 1, 1],
       "dynamic_smem_offset": 0, "dynamic_smem": 100, "arg_map": [0]},
      {"kernel": "k1", "threads": [128, 192], "block": [16, 4, 1],
       "grid": "runtime", "dynamic_smem_offset": 1024,
       "dynamic_smem": "runtime", "default_dynamic_smem": 64, "arg_map": [1]}
    ],
    "shape_params": [
      {"param": 2, "part": 0, "value": "grid_x"},
      {"param": 3, "part": 0, "value": "grid_y"},
      {"param": 4, "part": 0, "value": "grid_z"},
      {"param": 5, "part": 1, "value": "grid_x"},
      {"param": 6, "part": 1, "value": "grid_y"},
      {"param": 7, "part": 1, "value": "grid_z"},
      {"param": 8, "part": 1, "value": "dynamic_smem"}
    ]
  }]
})";

TEST(Manifest, Version6ShapeParams) {
  Expected<Manifest> M = parseManifest(ValidV6, "v6.json");
  ASSERT_TRUE(M) << M.status().message();
  const KernelInfo &K = M->Kernels[0];
  ASSERT_EQ(K.ShapeParams.size(), 7u);
  EXPECT_EQ(K.ShapeParams[6].Field, ShapeField::DynamicSmem);
  EXPECT_EQ(K.FusedFrom[0].DefaultGrid, (Dim3{1000, 1, 1}));
  EXPECT_FALSE(K.FusedFrom[1].DefaultGrid);
  EXPECT_EQ(K.FusedFrom[1].DefaultDynamicSmem, 64u);
  // Written back as version 6 (the default version is 5), and read the same.
  std::string Text = writeManifest(*M);
  EXPECT_NE(Text.find("\"manifest_version\": 6"), std::string::npos) << Text;
  Expected<Manifest> Back = parseManifest(Text, "back.json");
  ASSERT_TRUE(Back) << Back.status().message();
  EXPECT_EQ(*Back, *M);
  EXPECT_EQ(oldestVersionFor(*M), 6);

  // Thread split: the most blocks of any part; shared memory ends at part
  // 1's offset plus its size.
  Expected<FusedLaunch> L = computeFusedLaunch(
      K, {std::nullopt, Dim3{64, 64, 1}}, {std::nullopt, uint64_t(4096)});
  ASSERT_TRUE(L) << L.status().message();
  EXPECT_EQ(L->Grid, (Dim3{4096, 1, 1}));
  EXPECT_EQ(L->DynamicSmem, 1024u + 4096u);
  EXPECT_EQ(L->ShapeValues,
            (std::vector<uint32_t>{1000, 1, 1, 64, 64, 1, 4096}));
  // Part 0's default, part 1 smaller: part 0 decides; part 1's default size.
  L = computeFusedLaunch(K, {std::nullopt, Dim3{8, 4, 2}}, {});
  ASSERT_TRUE(L) << L.status().message();
  EXPECT_EQ(L->Grid, (Dim3{1000, 1, 1}));
  EXPECT_EQ(L->DynamicSmem, 1024u + 64u);
  EXPECT_EQ(L->ShapeValues, (std::vector<uint32_t>{1000, 1, 1, 8, 4, 2, 64}));

  // Block-level strategies: the sum of the blocks, the largest part's size.
  KernelInfo I = K;
  I.Strategy = FusionStrategy::Interleave;
  for (FusedPart &F : I.FusedFrom) {
    F.ThreadsHi -= F.ThreadsLo;
    F.ThreadsLo = 0;
    F.DynamicSmemOffset = 0;
  }
  L = computeFusedLaunch(I, {Dim3{300, 1, 1}, Dim3{16, 8, 1}},
                         {std::nullopt, uint64_t(64)});
  ASSERT_TRUE(L) << L.status().message();
  EXPECT_EQ(L->Grid, (Dim3{428, 1, 1}));
  EXPECT_EQ(L->DynamicSmem, 100u);

  // What the launcher must give, and what it may not.
  auto Error = [&](const KernelInfo &Kernel,
                   const std::vector<std::optional<Dim3>> &Grids,
                   const std::vector<std::optional<uint64_t>> &Smem) {
    Expected<FusedLaunch> E = computeFusedLaunch(Kernel, Grids, Smem);
    return E ? std::string("accepted") : E.status().message();
  };
  EXPECT_EQ(Error(K, {}, {}),
            "kernel 'f': part 1 (k1): its grid is taken at launch and the "
            "manifest has no default; give --part-grid 1=X[xY[xZ]]");
  KernelInfo NoSize = K;
  NoSize.FusedFrom[1].DefaultDynamicSmem.reset();
  EXPECT_EQ(Error(NoSize, {std::nullopt, Dim3{2, 2, 1}}, {}),
            "kernel 'f': part 1 (k1): its dynamic shared memory is taken at "
            "launch and the manifest has no default; give --part-smem "
            "1=BYTES");
  EXPECT_EQ(Error(K, {std::nullopt, Dim3{2, 2, 1}}, {uint64_t(8)}),
            "kernel 'f': part 0 (k0) has the fixed dynamic shared memory "
            "100; --part-smem applies to sizes taken at launch");
  EXPECT_EQ(Error(K, {std::nullopt, Dim3{2, 70000, 1}}, {}),
            "kernel 'f': part 1 (k1): grid 2,70000,1: dimension y must be "
            "between 1 and 65535");
  EXPECT_EQ(Error(I, {Dim3{2147483647, 1, 1}, Dim3{2, 1, 1}}, {}),
            "kernel 'f': the parts' grids add up to 2147483649 fused "
            "blocks, more than 2147483647");
  EXPECT_EQ(Error(K, {std::nullopt, std::nullopt, Dim3{1, 1, 1}}, {}),
            "kernel 'f' has 2 parts (0 to 1)");
}

INSTANTIATE_TEST_SUITE_P(
    ShapeParams, MalformedManifest,
    ::testing::Values(
        Malformed{R"("manifest_version": 6)", R"("manifest_version": 5)",
                  "kernels[0].shape_params: new in manifest_version 6 (this "
                  "manifest is version 5)",
                  ValidV6},
        Malformed{R"({"param": 8, "part": 1, "value": "dynamic_smem"})",
                  R"({"param": 8, "part": 1, "value": "smem"})",
                  "kernels[0].shape_params[6].value: expected \"grid_x\", "
                  "\"grid_y\", \"grid_z\" or \"dynamic_smem\", got \"smem\"",
                  ValidV6},
        Malformed{R"({"param": 8, "part": 1, "value": "dynamic_smem"})",
                  R"({"param": 1, "part": 1, "value": "dynamic_smem"})",
                  "kernels[0].shape_params[6].param: parameter 1 ('b', .u64) "
                  "is not a 4-byte integer",
                  ValidV6},
        Malformed{R"({"param": 7, "part": 1, "value": "grid_z"},)", "",
                  "kernels[0].shape_params: no parameter receives "
                  "fused_from[1]'s grid_z",
                  ValidV6},
        Malformed{R"({"param": 7, "part": 1, "value": "grid_z"})",
                  R"({"param": 7, "part": 1, "value": "grid_y"})",
                  "kernels[0].shape_params[5].value: part 1's grid_y is "
                  "already another parameter's",
                  ValidV6},
        Malformed{R"({"param": 8, "part": 1, "value": "dynamic_smem"})",
                  R"({"param": 8, "part": 0, "value": "dynamic_smem"})",
                  "kernels[0].shape_params[6].value: fused_from[0]."
                  "dynamic_smem is fixed, not \"runtime\"",
                  ValidV6},
        Malformed{R"("grid": "runtime", "dynamic_smem": "runtime")",
                  R"("grid": [8], "dynamic_smem": "runtime")",
                  "kernels[0].launch.grid: expected \"runtime\": a kernel "
                  "with shape_params is launched on a grid computed from its "
                  "parts'",
                  ValidV6},
        Malformed{R"("grid": "runtime", "default_grid": [1000, 1, 1],)",
                  R"("grid": [1000, 1, 1],)",
                  "kernels[0].fused_from[0].grid: expected \"runtime\": the "
                  "kernel takes its parts' grids in shape_params",
                  ValidV6},
        Malformed{R"("arg_map": [1])", R"("arg_map": [5])",
                  "kernels[0].shape_params[3].param: parameter 5 receives an "
                  "argument of fused_from[1]",
                  ValidV6}));

/// Version 7: a kernel probed with buffer=last-param: both maps lie in its
/// last parameter (Triton's profile scratch), 2176 bytes per block.
const char *const ValidProbeScratch = R"({
  "manifest_version": 7,
  "module": {"path": "k.ptx", "format": "ptx"},
  "kernels": [{
    "name": "k",
    "params": [
      {"name": "a", "type": "u64", "size": 8, "align": 8, "offset": 0, "kind": "pointer"},
      {"name": "n", "type": "u32", "size": 4, "align": 4, "offset": 8, "kind": "scalar"},
      {"name": "profile", "type": "u64", "size": 8, "align": 8, "offset": 16, "kind": "pointer"}
    ],
    "probes": [
      {"name": "block_sched", "param": 2, "level": "warp", "capacity": 1,
       "record_bytes": 24, "overflow_counter": true, "block_offset": 0,
       "fields": [{"name": "c", "type": "u64", "offset": 0}]},
      {"name": "gmem_bytes", "param": 2, "level": "thread", "capacity": 1,
       "record_bytes": 16, "overflow_counter": true, "block_offset": 112,
       "fields": [{"name": "sync", "type": "u64", "offset": 0}]}
    ],
    "probe_scratch": {"param": 2, "bytes_per_block": 2176, "align": 16}
  }]
})";

TEST(Manifest, Version7ProbeScratch) {
  Expected<Manifest> M = parseManifest(ValidProbeScratch, "v7.json");
  ASSERT_TRUE(M) << M.status().message();
  const KernelInfo &K = M->Kernels[0];
  ASSERT_TRUE(K.Scratch.has_value());
  EXPECT_EQ(K.Scratch->Param, 2u);
  EXPECT_EQ(K.Scratch->BytesPerBlock, 2176u);
  EXPECT_EQ(K.Scratch->Align, 16u);
  ASSERT_EQ(K.Probes.size(), 2u);
  EXPECT_EQ(K.Probes[0].BlockOffset, std::optional<uint64_t>(0));
  EXPECT_EQ(K.Probes[1].BlockOffset, std::optional<uint64_t>(112));
  EXPECT_EQ(oldestVersionFor(*M), 7);
  std::string Text = writeManifest(*M);
  EXPECT_NE(Text.find("\"manifest_version\": 7"), std::string::npos) << Text;
  EXPECT_NE(Text.find("\"block_offset\": 112"), std::string::npos) << Text;
  Expected<Manifest> Back = parseManifest(Text, "back.json");
  ASSERT_TRUE(Back) << Back.status().message();
  EXPECT_EQ(*Back, *M);
  // Without the scratch, the keys are left out and version 5 describes it.
  Manifest Own = *M;
  Own.Kernels[0].Scratch.reset();
  for (ProbeBuffer &P : Own.Kernels[0].Probes)
    P.BlockOffset.reset();
  EXPECT_EQ(oldestVersionFor(Own), 3);
  EXPECT_EQ(writeManifest(Own).find("block_offset"), std::string::npos);
  // A map without a block offset in a kernel with a scratch.
  Manifest Missing = *M;
  Missing.Kernels[0].Probes[1].BlockOffset.reset();
  EXPECT_EQ(validateManifest(Missing).message(),
            "kernels[0].probes[1]: missing block_offset (the kernel's probes "
            "lie in its probe_scratch)");
}

namespace {
INSTANTIATE_TEST_SUITE_P(
    ProbeScratch, MalformedManifest,
    ::testing::Values(
        Malformed{R"("manifest_version": 7)", R"("manifest_version": 6)",
                  "kernels[0].probe_scratch: new in manifest_version 7 "
                  "(this manifest is version 6)",
                  ValidProbeScratch},
        Malformed{R"("block_offset": 112)", R"("block_offset": 120)",
                  "kernels[0].probes[1].block_offset: 120 is not a multiple "
                  "of the scratch's align (16)",
                  ValidProbeScratch},
        Malformed{R"("block_offset": 112)", R"("block_offset": 2176)",
                  "kernels[0].probes[1].block_offset: 2176 is not below "
                  "bytes_per_block (2176)",
                  ValidProbeScratch},
        Malformed{R"("gmem_bytes", "param": 2)", R"("gmem_bytes", "param": 0)",
                  "kernels[0].probes[1].param: parameter 0 is not the "
                  "probe_scratch parameter (2)",
                  ValidProbeScratch},
        Malformed{R"("probe_scratch": {"param": 2,)",
                  R"("probe_scratch": {"param": 1,)",
                  "kernels[0].probe_scratch.param: parameter 1 ('n') is not "
                  "8 bytes and cannot hold a buffer address",
                  ValidProbeScratch},
        Malformed{R"("bytes_per_block": 2176)", R"("bytes_per_block": 2168)",
                  "kernels[0].probe_scratch.bytes_per_block: expected a "
                  "positive multiple of align (16), got 2168",
                  ValidProbeScratch},
        Malformed{R"("align": 16})", R"("align": 24})",
                  "kernels[0].probe_scratch.align: expected a power of two, "
                  "got 24",
                  ValidProbeScratch},
        Malformed{R"("align": 16})", R"("alignment": 16})",
                  "kernels[0].probe_scratch.alignment: unknown key (expected "
                  "one of: param, bytes_per_block, align)",
                  ValidProbeScratch},
        Malformed{R"(, "align": 16})", "}",
                  "kernels[0].probe_scratch.align: missing",
                  ValidProbeScratch}));
} // namespace
