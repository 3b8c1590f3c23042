//===- FusionConfigTest.cpp - Horizontal fusion configuration in YAML -----===//
//
// The fusion config is written by hand, so each mistake must be reported at
// its line and column with what to write instead; these tests pin both.
//
//===----------------------------------------------------------------------===//

#include "gpuopt/Transforms/HFuse/FusionConfig.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Diagnostics.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"

#include <gtest/gtest.h>

using namespace mlir;
using namespace gpuopt::hfuse;

namespace {

/// "LINE:COL" of a location in the test buffer.
std::string lineCol(Location loc) {
  auto fileLoc = dyn_cast<FileLineColLoc>(loc);
  if (!fileLoc)
    return "?";
  return llvm::formatv("{0}:{1}", fileLoc.getLine(), fileLoc.getColumn());
}

class FusionConfigTest : public ::testing::Test {
protected:
  /// Parses `yaml` as "test.yaml"; diagnostics go to `diagnostics` as
  /// "LINE:COL: message", notes as "LINE:COL: note: message".
  FailureOr<FusionConfig> parse(llvm::StringRef yaml) {
    diagnostics.clear();
    ScopedDiagnosticHandler handler(&ctx, [&](Diagnostic &diag) {
      diagnostics.push_back(lineCol(diag.getLocation()) + ": " + diag.str());
      for (const Diagnostic &note : diag.getNotes())
        diagnostics.push_back(lineCol(note.getLocation()) +
                              ": note: " + note.str());
      return success();
    });
    llvm::SourceMgr sourceMgr;
    sourceMgr.AddNewSourceBuffer(
        llvm::MemoryBuffer::getMemBufferCopy(yaml, "test.yaml"), llvm::SMLoc());
    return parseFusionConfig(sourceMgr, &ctx);
  }

  /// The one error that parsing `yaml` reports.
  std::string error(llvm::StringRef yaml) {
    FailureOr<FusionConfig> config = parse(yaml);
    EXPECT_TRUE(failed(config)) << yaml.str();
    EXPECT_EQ(diagnostics.size(), 1u) << yaml.str();
    return diagnostics.empty() ? "" : diagnostics.front();
  }

  MLIRContext ctx;
  std::vector<std::string> diagnostics;
};

TEST(Strategy, RoundTrip) {
  for (ConfigStrategy strategy :
       {ConfigStrategy(), ConfigStrategy(gpuopt::FusionStrategy::Thread),
        ConfigStrategy(gpuopt::FusionStrategy::Interleave),
        ConfigStrategy(gpuopt::FusionStrategy::Dynamic),
        ConfigStrategy(gpuopt::FusionStrategy::SMAware)}) {
    FailureOr<ConfigStrategy> parsed =
        parseStrategy(stringifyStrategy(strategy));
    ASSERT_TRUE(succeeded(parsed));
    EXPECT_EQ(*parsed, strategy);
  }
  EXPECT_EQ(stringifyStrategy(ConfigStrategy()), "auto");
  EXPECT_TRUE(failed(parseStrategy("Thread")));
  EXPECT_TRUE(failed(parseStrategy("")));
}

TEST_F(FusionConfigTest, FullExample) {
  FailureOr<FusionConfig> config = parse(R"(# a comment
name: ethash_blake2b
strategy: auto          # thread | interleave | dynamic | auto
maxnreg: 64
kernels:
  - name: ethash_search
    block: [128]
    grid: [8192]
    ratio: 1
  - name: _Z14blake2b_searchPKmjjPm
    module: blake2b
    block: 256
    grid: [64, 32, 2]
    dynamic_smem: 0
    resizable: true
    threads: 128
    time_ms: 0.41
)");
  ASSERT_TRUE(succeeded(config));
  EXPECT_TRUE(diagnostics.empty());
  EXPECT_EQ(config->name, "ethash_blake2b");
  EXPECT_EQ(config->strategy, std::nullopt);
  EXPECT_EQ(config->maxnreg, 64);
  EXPECT_EQ(lineCol(config->loc), "2:1");
  ASSERT_EQ(config->kernels.size(), 2u);

  const KernelConfig &a = config->kernels[0];
  EXPECT_EQ(a.name, "ethash_search");
  EXPECT_EQ(a.module, "");
  EXPECT_EQ(a.block, (std::array<int64_t, 3>{128, 1, 1}));
  EXPECT_EQ(a.grid, (std::array<int64_t, 3>{8192, 1, 1}));
  EXPECT_EQ(a.getBlockThreads(), 128);
  EXPECT_EQ(a.dynamicSmem, std::nullopt);
  EXPECT_FALSE(a.resizable);
  EXPECT_EQ(a.threads, std::nullopt);
  EXPECT_EQ(a.ratio, 1);
  EXPECT_EQ(a.timeMs, std::nullopt);
  EXPECT_EQ(lineCol(a.loc), "6:5");

  const KernelConfig &b = config->kernels[1];
  EXPECT_EQ(b.name, "_Z14blake2b_searchPKmjjPm");
  EXPECT_EQ(b.module, "blake2b");
  EXPECT_EQ(b.block, (std::array<int64_t, 3>{256, 1, 1}));
  EXPECT_EQ(b.grid, (std::array<int64_t, 3>{64, 32, 2}));
  EXPECT_EQ(b.dynamicSmem, 0);
  EXPECT_TRUE(b.resizable);
  EXPECT_EQ(b.threads, 128);
  EXPECT_EQ(b.ratio, std::nullopt);
  EXPECT_DOUBLE_EQ(*b.timeMs, 0.41);
  EXPECT_EQ(lineCol(b.loc), "10:5");
}

TEST_F(FusionConfigTest, Defaults) {
  FailureOr<FusionConfig> config = parse("kernels: [{name: a}, {name: b}]");
  ASSERT_TRUE(succeeded(config));
  EXPECT_EQ(config->name, "");
  EXPECT_EQ(config->strategy, std::nullopt);
  EXPECT_EQ(config->maxnreg, std::nullopt);
  EXPECT_EQ(config->kernels[1].name, "b");
  EXPECT_EQ(config->kernels[1].block, std::nullopt);
  EXPECT_EQ(config->kernels[1].getBlockThreads(), std::nullopt);
}

TEST_F(FusionConfigTest, TwoDimensionalBlocks) {
  FailureOr<FusionConfig> config = parse(R"(strategy: thread
kernels:
  - {name: a, block: [16, 16]}
  - {name: b, block: [8, 8, 4], threads: 256}
)");
  ASSERT_TRUE(succeeded(config));
  EXPECT_EQ(config->kernels[0].block, (std::array<int64_t, 3>{16, 16, 1}));
  EXPECT_EQ(config->kernels[1].getBlockThreads(), 256);
}

// The shapes the command line takes (`blocks=16x4`) are accepted as well.
TEST_F(FusionConfigTest, ShapesAsOnTheCommandLine) {
  FailureOr<FusionConfig> config = parse(R"(kernels:
  - {name: a, block: 16x4, grid: 64x128x2}
  - name: b
    block: 8 x 8 x 4
    grid: 1024x1
)");
  ASSERT_TRUE(succeeded(config)) << diagnostics.front();
  EXPECT_EQ(config->kernels[0].block, (std::array<int64_t, 3>{16, 4, 1}));
  EXPECT_EQ(config->kernels[0].grid, (std::array<int64_t, 3>{64, 128, 2}));
  EXPECT_EQ(config->kernels[1].block, (std::array<int64_t, 3>{8, 8, 4}));
  EXPECT_EQ(config->kernels[1].grid, (std::array<int64_t, 3>{1024, 1, 1}));
  EXPECT_EQ(error("kernels:\n  - name: a\n    block: 16xq\n  - name: b\n"),
            "3:12: 'block' must be an integer, XxY or XxYxZ (as 16x4), or a "
            "list of 1 to 3 integers, not '16xq'");
  EXPECT_EQ(error("kernels:\n  - name: a\n    grid: 1x2x3x4\n  - name: b\n"),
            "3:11: 'grid' must be an integer, XxY or XxYxZ (as 16x4), or a "
            "list of 1 to 3 integers, not '1x2x3x4'");
  EXPECT_EQ(error("kernels:\n  - name: a\n    block: 16x\n  - name: b\n"),
            "3:12: 'block' must be an integer, XxY or XxYxZ (as 16x4), or a "
            "list of 1 to 3 integers, not '16x'");
  EXPECT_EQ(error("kernels:\n  - name: a\n    block: 1x1x128\n  - name: b\n"),
            "3:12: 'block' dimension z must be between 1 and 64, not 128");
  EXPECT_EQ(error("kernels:\n  - name: a\n    grid: 1x0\n  - name: b\n"),
            "3:11: 'grid' dimension y must be between 1 and 65535, not 0");
  EXPECT_EQ(error("kernels:\n  - name: a\n    block: 32x64\n  - name: b\n"),
            "3:12: block of 2048 threads; a block has at most 1024 threads");
}

TEST_F(FusionConfigTest, SameEntryInTwoModules) {
  EXPECT_TRUE(succeeded(parse(R"(kernels:
  - {name: k, module: one}
  - {name: k, module: two}
)")));
}

TEST_F(FusionConfigTest, SyntaxError) {
  EXPECT_EQ(error("kernels: [a, b\nname: x\n"),
            "2:5: invalid YAML: end of sequence flow not found");
  EXPECT_EQ(error("name: a\n  strategy: thread\n"),
            "2:11: invalid YAML: illegal map value");
}

TEST_F(FusionConfigTest, TopLevel) {
  EXPECT_EQ(error(""), "1:1: empty fusion config: write a map with keys "
                       "name, strategy, maxnreg, runtime_shapes, units, "
                       "require, kernels");
  EXPECT_EQ(error("# nothing\n"), "1:1: empty fusion config: write a map "
                                  "with keys name, strategy, maxnreg, "
                                  "runtime_shapes, units, require, kernels");
  EXPECT_EQ(error("- name: a\n- name: b\n"),
            "1:1: the fusion config must be a map with keys name, strategy, "
            "maxnreg, runtime_shapes, units, require, kernels, not a list");
  EXPECT_EQ(error("name: a\n---\nname: b\n"),
            "3:1: one fusion config per file: remove this second document "
            "(after '---') or put it in a file of its own");
}

TEST_F(FusionConfigTest, UnknownKey) {
  EXPECT_EQ(error("stratgy: thread\n"),
            "1:1: unknown key 'stratgy' in the fusion config; did you mean "
            "'strategy'? (known keys: name, strategy, maxnreg, "
            "runtime_shapes, units, require, kernels)");
  EXPECT_EQ(error("kernels:\n  - name: a\n    blocks: 128\n  - name: b\n"),
            "3:5: unknown key 'blocks' in a kernel; did you mean 'block'? "
            "(known keys: name, module, block, grid, dynamic_smem, "
            "resizable, threads, ratio, time_ms, replicas, setmaxnreg)");
  EXPECT_EQ(error("kernels:\n  - name: a\n    launch: x\n  - name: b\n"),
            "3:5: unknown key 'launch' in a kernel (known keys: name, "
            "module, block, grid, dynamic_smem, resizable, threads, ratio, "
            "time_ms, replicas, setmaxnreg)");
  EXPECT_EQ(error("name: a\nname: b\n"),
            "2:1: duplicate key 'name' in the fusion config: write each key "
            "once");
}

// `require: true` makes strategy auto's decline an error.
TEST_F(FusionConfigTest, Require) {
  const char *kernels = "kernels:\n  - name: a\n  - name: b\n";
  FailureOr<FusionConfig> config = parse(kernels);
  ASSERT_TRUE(succeeded(config));
  EXPECT_FALSE(config->require);
  config = parse(std::string("require: true\n") + kernels);
  ASSERT_TRUE(succeeded(config));
  EXPECT_TRUE(config->require);
  EXPECT_EQ(error(std::string("require: always\n") + kernels),
            "1:10: 'require' must be true or false");
}

TEST_F(FusionConfigTest, Strategy) {
  EXPECT_EQ(error("strategy: fastest\n"),
            "1:11: unknown strategy 'fastest': write auto, thread, "
            "interleave, dynamic or sm_aware");
  EXPECT_EQ(error("strategy: [thread]\n"),
            "1:11: unknown strategy: write auto, thread, interleave, dynamic "
            "or sm_aware");
}

TEST_F(FusionConfigTest, FusedName) {
  EXPECT_EQ(error("name: 2fused\n"),
            "1:7: 'name' must be a PTX identifier (letters, digits, '_' and "
            "'$', not starting with a digit), not '2fused'");
  EXPECT_EQ(error("name: a-b\n"),
            "1:7: 'name' must be a PTX identifier (letters, digits, '_' and "
            "'$', not starting with a digit), not 'a-b'");
  EXPECT_TRUE(
      succeeded(parse("name: _fused$1\nkernels: [{name: a}, {name: b}]\n")));
}

TEST_F(FusionConfigTest, Units) {
  FailureOr<FusionConfig> config =
      parse("strategy: sm_aware\nunits: 4\nkernels: [{name: a}, {name: b}]\n");
  ASSERT_TRUE(succeeded(config));
  EXPECT_EQ(config->strategy, gpuopt::FusionStrategy::SMAware);
  EXPECT_EQ(config->units, 4);
  config = parse("kernels: [{name: a}, {name: b}]");
  ASSERT_TRUE(succeeded(config));
  EXPECT_EQ(config->units, std::nullopt);
  // One unit per block is what every strategy does.
  EXPECT_TRUE(succeeded(
      parse("strategy: thread\nunits: 1\nkernels: [{name: a}, {name: b}]\n")));
  EXPECT_EQ(error("units: 0\n"), "1:8: 'units' must be positive, not 0");
  EXPECT_EQ(error("strategy: interleave\nunits: 2\n"
                  "kernels: [{name: a}, {name: b}]\n"),
            "2:8: 'units' is how many blocks of the kernels a fused block "
            "takes per ticket; it applies to strategy 'dynamic', 'sm_aware' "
            "or 'auto', not 'interleave'");
}

TEST_F(FusionConfigTest, Maxnreg) {
  EXPECT_EQ(error("maxnreg: 16\n"),
            "1:10: 'maxnreg' must be between 24 and 255, not 16");
  EXPECT_EQ(error("maxnreg: 256\n"),
            "1:10: 'maxnreg' must be between 24 and 255, not 256");
  EXPECT_EQ(error("maxnreg: lots\n"),
            "1:10: 'maxnreg' must be an integer, not 'lots'");
}

TEST_F(FusionConfigTest, Kernels) {
  EXPECT_EQ(error("name: x\n"),
            "1:1: the fusion config has no 'kernels': list the kernels to "
            "fuse, at least 2");
  EXPECT_EQ(error("kernels:\n  - name: a\n"),
            "2:3: a fusion needs at least 2 kernels, not 1: list every "
            "kernel to fuse under 'kernels'");
  EXPECT_EQ(error("kernels:\n"),
            "1:1: 'kernels' must be a list of kernels ('- name: ...'), not "
            "nothing");
  EXPECT_EQ(error("kernels: [a, b]\n"),
            "1:11: each kernel must be a map such as '- name: my_kernel', "
            "not a scalar (known keys: name, module, block, grid, "
            "dynamic_smem, resizable, threads, ratio, time_ms, replicas, "
            "setmaxnreg)");
  EXPECT_EQ(error("kernels:\n  - name: a\n  - block: 128\n"),
            "3:5: kernel has no 'name': write its .entry name, as in "
            "'- name: my_kernel'");
  EXPECT_EQ(error("kernels:\n  - name: ''\n  - name: b\n"),
            "2:11: 'name' must be a name, not an empty string");
}

TEST_F(FusionConfigTest, DuplicateKernel) {
  FailureOr<FusionConfig> config =
      parse("kernels:\n  - name: a\n  - name: b\n  - name: a\n");
  EXPECT_TRUE(failed(config));
  ASSERT_EQ(diagnostics.size(), 2u);
  EXPECT_EQ(diagnostics[0],
            "4:5: kernel 'a' is listed twice: list each kernel once, or name "
            "their modules with 'module' when two files have the same entry");
  EXPECT_EQ(diagnostics[1], "2:5: note: first listed here");

  config = parse("kernels:\n  - {name: a, module: m}\n"
                 "  - {name: a, module: m}\n");
  EXPECT_TRUE(failed(config));
  ASSERT_FALSE(diagnostics.empty());
  EXPECT_EQ(diagnostics[0],
            "3:5: kernel 'a' of module 'm' is listed twice: list each kernel "
            "once, or name their modules with 'module' when two files have "
            "the same entry");
}

TEST_F(FusionConfigTest, Dimensions) {
  EXPECT_EQ(error("kernels:\n  - name: a\n    block: [128, x]\n  - name: b\n"),
            "3:18: 'block' must be an integer, not 'x'");
  EXPECT_EQ(error("kernels:\n  - name: a\n    grid: \"128\"\n  - name: b\n"),
            "3:11: 'grid' must be an integer, not '128'");
  EXPECT_EQ(error("kernels:\n  - name: a\n    grid: -4\n  - name: b\n"),
            "3:11: 'grid' must be positive, not -4");
  EXPECT_EQ(error("kernels:\n  - name: a\n    block: 0\n  - name: b\n"),
            "3:12: 'block' must be positive, not 0");
  EXPECT_EQ(error("kernels:\n  - name: a\n    block: [1, 2, 3, 4]\n"
                  "  - name: b\n"),
            "3:12: 'block' must be an integer, XxY or XxYxZ (as 16x4), or a "
            "list of 1 to 3 integers ([x], [x, y] or [x, y, z]), not a list "
            "of 4");
  EXPECT_EQ(error("kernels:\n  - name: a\n    block: []\n  - name: b\n"),
            "3:12: 'block' must be an integer, XxY or XxYxZ (as 16x4), or a "
            "list of 1 to 3 integers ([x], [x, y] or [x, y, z]), not a list "
            "of 0");
  EXPECT_EQ(error("kernels:\n  - name: a\n    block: 2048\n  - name: b\n"),
            "3:12: 'block' must be between 1 and 1024, not 2048");
  EXPECT_EQ(error("kernels:\n  - name: a\n    block: [1, 1, 128]\n"
                  "  - name: b\n"),
            "3:19: 'block' must be between 1 and 64, not 128");
  EXPECT_EQ(error("kernels:\n  - name: a\n    block: [32, 32, 2]\n"
                  "  - name: b\n"),
            "3:12: block of 2048 threads; a block has at most 1024 threads");
  EXPECT_EQ(error("kernels:\n  - name: a\n    grid: [1, 65536]\n"
                  "  - name: b\n"),
            "3:15: 'grid' must be between 1 and 65535, not 65536");
  // A key without a value is reported at the key, not at the next line.
  EXPECT_EQ(error("kernels:\n  - name: a\n    grid:\n  - name: b\n"),
            "3:5: 'grid' must be an integer, XxY or XxYxZ (as 16x4), or a list "
            "of 1 to 3 integers ([x], [x, y] or [x, y, z]), not nothing");
  EXPECT_EQ(error("kernels:\n  - name: a\n    dynamic_smem: -1\n"
                  "  - name: b\n"),
            "3:19: 'dynamic_smem' must be at least 0, not -1");
}

TEST_F(FusionConfigTest, ScalarTypes) {
  EXPECT_EQ(error("kernels:\n  - name: a\n    resizable: maybe\n"
                  "  - name: b\n"),
            "3:16: 'resizable' must be true or false");
  EXPECT_EQ(error("kernels:\n  - name: a\n    time_ms: fast\n  - name: b\n"),
            "3:14: 'time_ms' must be a number (milliseconds)");
  EXPECT_EQ(error("kernels:\n  - name: a\n    time_ms: 0\n  - name: b\n"),
            "3:14: 'time_ms' must be positive, not 0");
  EXPECT_EQ(error("kernels:\n  - name: a\n    ratio: 0\n  - name: b\n"),
            "3:12: 'ratio' must be positive, not 0");
  EXPECT_EQ(error("kernels:\n  - name: a\n    module: [x]\n  - name: b\n"),
            "3:13: 'module' must be a name, not a list");
}

TEST_F(FusionConfigTest, Threads) {
  EXPECT_EQ(error("kernels:\n  - name: a\n    threads: 100\n  - name: b\n"),
            "3:14: 'threads' must be a multiple of 32 (whole warps), not "
            "100: try 128");
  // A split other than the block is the pass's to check, with the kernel.
  EXPECT_TRUE(succeeded(parse("kernels:\n  - name: a\n    block: 256\n"
                              "    threads: 128\n  - name: b\n")));
  EXPECT_TRUE(succeeded(parse("kernels:\n  - name: a\n    block: 256\n"
                              "    threads: 128\n    resizable: true\n"
                              "  - name: b\n")));
  EXPECT_EQ(error("kernels:\n  - name: a\n    block: [128, 2]\n"
                  "    resizable: true\n  - name: b\n"),
            "3:12: a resizable kernel takes any 1-D block: write its block "
            "as one number, or drop 'resizable: true'");
  EXPECT_EQ(error("strategy: interleave\nkernels:\n  - name: a\n"
                  "    threads: 128\n  - name: b\n"),
            "4:14: 'threads' splits a block between kernels; it applies to "
            "strategy 'thread' or 'auto', not 'interleave' (which uses "
            "'ratio')");
  EXPECT_EQ(error("strategy: thread\nkernels:\n  - name: a\n    ratio: 2\n"
                  "  - name: b\n"),
            "4:12: 'ratio' sets a kernel's share of the blocks; it applies to "
            "strategy 'interleave', 'dynamic', 'sm_aware' or 'auto', not "
            "'thread' (which uses 'threads')");
}

TEST_F(FusionConfigTest, ThreadSplitFitsOneBlock) {
  EXPECT_EQ(error("strategy: thread\nkernels:\n  - {name: a, block: 512}\n"
                  "  - {name: b, block: 768}\n"),
            "2:1: the kernels' thread ranges add up to 1280 threads, more "
            "than a block's 1024: give resizable kernels fewer 'threads', or "
            "use strategy 'interleave'");
  // `auto` may still choose a block-level strategy.
  EXPECT_TRUE(succeeded(parse("kernels:\n  - {name: a, block: 512}\n"
                              "  - {name: b, block: 768}\n")));
  // A block shape the config leaves out (`.reqntid`) is the pass's to check.
  EXPECT_TRUE(succeeded(parse("strategy: thread\nkernels:\n"
                              "  - {name: a, block: 1024}\n"
                              "  - {name: b}\n")));
}

TEST_F(FusionConfigTest, PrintedThroughSourceMgr) {
  // Tools print diagnostics with SourceMgrDiagnosticHandler: the YAML
  // buffer's name, line and column, and the line itself.
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBufferCopy("strategy: fast\nkernels: []\n",
                                           "pair.yaml"),
      llvm::SMLoc());
  std::string output;
  llvm::raw_string_ostream os(output);
  SourceMgrDiagnosticHandler handler(sourceMgr, &ctx, os);
  EXPECT_TRUE(failed(parseFusionConfig(sourceMgr, &ctx)));
  EXPECT_EQ(output, "pair.yaml:1:11: error: unknown strategy 'fast': write "
                    "auto, thread, interleave, dynamic or sm_aware\n"
                    "strategy: fast\n"
                    "          ^\n");
}

TEST_F(FusionConfigTest, ExampleConfigs) {
  for (const char *name : {"ethash_blake2b", "histogram_reduce"}) {
    std::string path =
        std::string(GPUOPT_SOURCE_DIR) + "/configs/hfuse/" + name + ".yaml";
    ScopedDiagnosticHandler handler(&ctx, [&](Diagnostic &diag) {
      ADD_FAILURE() << path << ": " << diag.str();
      return success();
    });
    FailureOr<FusionConfig> config = readFusionConfig(path, &ctx);
    ASSERT_TRUE(succeeded(config)) << path;
    EXPECT_EQ(config->name, name);
    EXPECT_EQ(config->kernels.size(), 2u);
    auto loc = dyn_cast<FileLineColLoc>(config->kernels[0].loc);
    ASSERT_TRUE(loc);
    EXPECT_EQ(loc.getFilename().str(), path);
  }
}

TEST_F(FusionConfigTest, MissingFile) {
  std::string message;
  ScopedDiagnosticHandler handler(&ctx, [&](Diagnostic &diag) {
    message = diag.str();
    return success();
  });
  EXPECT_TRUE(failed(readFusionConfig("/nonexistent/pair.yaml", &ctx)));
  EXPECT_EQ(message, "cannot read fusion config '/nonexistent/pair.yaml': No "
                     "such file or directory");
}

} // namespace
