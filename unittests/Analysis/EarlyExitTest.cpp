//===- EarlyExitTest.cpp - Threads leaving before their block's barrier ---===//
//
// Each kernel is the smallest PTX of a shape compilers emit: the bounds
// check before a barrier (an early exit), and the shapes the analysis must
// not mistake for one (uniform loops around barriers, tree reductions,
// divergent tails after the last barrier), with the divergence carried
// through control (a value set under a divergent branch) and through memory.
//
//===----------------------------------------------------------------------===//

#include "gpuopt/Analysis/KernelAnalysis.h"
#include "gpuopt/InitAll.h"
#include "gpuopt/Target/PTX/ImportPTX.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"

#include "gtest/gtest.h"

using namespace mlir;
using namespace gpuopt;
using namespace gpuopt::ptx;

namespace {

class EarlyExitTest : public ::testing::Test {
protected:
  EarlyExitTest() {
    DialectRegistry registry;
    registerAllDialects(registry);
    context.appendDialectRegistry(registry);
    context.loadAllAvailableDialects();
  }

  /// The analysis of the only kernel of `body` (the statements of an entry
  /// with one `.u64` parameter `out` and registers declared).
  std::optional<EarlyExit> analyze(llvm::StringRef body) {
    std::string text = (".version 8.0\n.target sm_90\n.address_size 64\n"
                        ".visible .entry k(.param .u64 out, .param .u32 n)\n"
                        "{\n.reg .pred %p<8>;\n.reg .b32 %r<16>;\n"
                        ".reg .b64 %rd<8>;\n" +
                        body + "\n}\n")
                           .str();
    llvm::SourceMgr sourceMgr;
    sourceMgr.AddNewSourceBuffer(llvm::MemoryBuffer::getMemBufferCopy(text),
                                 llvm::SMLoc());
    owned = importPTX(sourceMgr, &context);
    if (!owned) {
      ADD_FAILURE() << "does not parse:\n" << text;
      return std::nullopt;
    }
    EntryOp entry;
    owned->walk([&](EntryOp e) { entry = e; });
    analysis.emplace(entry);
    return analysis->getEarlyExit();
  }

  static std::string text(InstOp inst) {
    return inst ? inst.getFullOpcode() : "<none>";
  }

  MLIRContext context;
  OwningOpRef<ModuleOp> owned;
  std::optional<KernelAnalysis> analysis;
};

TEST_F(EarlyExitTest, BoundsCheckBeforeBarrier) {
  std::optional<EarlyExit> early = analyze(R"(
  ld.param.u32 %r1, [n];
  mov.u32 %r2, %tid.x;
  setp.ge.u32 %p1, %r2, %r1;
  @%p1 bra $L_done;
  bar.sync 0;
$L_done:
  ret;)");
  ASSERT_TRUE(early);
  EXPECT_EQ(text(early->exit), "ret");
  EXPECT_EQ(text(early->divergence), "bra");
  EXPECT_EQ(text(early->barrier), "bar.sync");
}

TEST_F(EarlyExitTest, GuardedReturnBeforeBarrier) {
  std::optional<EarlyExit> early = analyze(R"(
  mov.u32 %r2, %laneid;
  setp.ne.u32 %p1, %r2, 0;
  @%p1 ret;
  barrier.sync.aligned 0;
  ret;)");
  ASSERT_TRUE(early);
  EXPECT_EQ(early->exit, early->divergence);
}

TEST_F(EarlyExitTest, UniformBoundsCheckIsNotEarly) {
  // The whole block leaves or none does.
  EXPECT_FALSE(analyze(R"(
  ld.param.u32 %r1, [n];
  mov.u32 %r2, %ctaid.x;
  setp.ge.u32 %p1, %r2, %r1;
  @%p1 bra $L_done;
  bar.sync 0;
$L_done:
  ret;)"));
}

TEST_F(EarlyExitTest, UniformLoopAroundBarrierIsNotEarly) {
  EXPECT_FALSE(analyze(R"(
  ld.param.u32 %r1, [n];
  mov.u32 %r2, 0;
$L_loop:
  bar.sync 0;
  add.s32 %r2, %r2, 1;
  setp.lt.s32 %p1, %r2, %r1;
  @%p1 bra $L_loop;
  ret;)"));
}

TEST_F(EarlyExitTest, TreeReductionIsNotEarly) {
  // `for (s = 64; s > 0; s >>= 1) { if (tid < s) ...; __syncthreads(); }`
  // then `if (tid == 0) store`: the divergent ifs meet again before any
  // thread leaves.
  EXPECT_FALSE(analyze(R"(
  ld.param.u64 %rd1, [out];
  mov.u32 %r1, %tid.x;
  mov.u32 %r2, 64;
  mov.u32 %r3, 0;
$L_loop:
  setp.ge.u32 %p1, %r1, %r2;
  @%p1 bra $L_skip;
  add.s32 %r3, %r3, 1;
$L_skip:
  bar.sync 0;
  shr.u32 %r2, %r2, 1;
  setp.ne.u32 %p2, %r2, 0;
  @%p2 bra $L_loop;
  setp.ne.u32 %p3, %r1, 0;
  @%p3 bra $L_done;
  st.global.u32 [%rd1], %r3;
$L_done:
  ret;)"));
}

TEST_F(EarlyExitTest, DivergenceThroughControl) {
  // %r3 is 0 or 1 depending on the thread: set under a divergent branch,
  // then it decides between leaving and the barrier.
  std::optional<EarlyExit> early = analyze(R"(
  mov.u32 %r1, %tid.x;
  mov.u32 %r3, 0;
  setp.lt.u32 %p1, %r1, 10;
  @%p1 bra $L_join;
  mov.u32 %r3, 1;
$L_join:
  setp.eq.u32 %p2, %r3, 0;
  @%p2 bra $L_done;
  bar.sync 0;
$L_done:
  ret;)");
  ASSERT_TRUE(early);
  // Not the first branch (its ways meet at $L_join with no barrier between)
  // but the second, whose predicate the first made divergent.
  EXPECT_EQ(text(early->divergence), "bra");
  EXPECT_EQ(early->divergence.getGuardAttr().getName(), "%p2");
}

TEST_F(EarlyExitTest, DivergenceThenUniformExitIsNotEarly) {
  // A divergent if whose ways meet again, then a uniform choice between
  // leaving and the barrier: every thread takes it alike.
  EXPECT_FALSE(analyze(R"(
  ld.param.u32 %r5, [n];
  mov.u32 %r1, %tid.x;
  setp.lt.u32 %p1, %r1, 10;
  @%p1 bra $L_join;
  add.s32 %r1, %r1, 1;
$L_join:
  setp.eq.u32 %p2, %r5, 0;
  @%p2 bra $L_done;
  bar.sync 0;
$L_done:
  ret;)"));
}

TEST_F(EarlyExitTest, LoadedValuesDiverge) {
  // A flag read from global memory may differ between threads.
  std::optional<EarlyExit> early = analyze(R"(
  ld.param.u64 %rd1, [out];
  ld.global.u32 %r1, [%rd1];
  setp.eq.u32 %p1, %r1, 0;
  @%p1 bra $L_done;
  bar.sync 0;
$L_done:
  ret;)");
  EXPECT_TRUE(early);
}

TEST_F(EarlyExitTest, CountedBarrierIsNotWaitedForByExits) {
  // Threads that leave never counted at a barrier with a thread count,
  // alone or fused: nothing changes for it.
  EXPECT_FALSE(analyze(R"(
  mov.u32 %r1, %tid.x;
  setp.ge.u32 %p1, %r1, 64;
  @%p1 bra $L_done;
  bar.sync 1, 64;
$L_done:
  ret;)"));
}

TEST_F(EarlyExitTest, GuardedBarrierLetsOthersLeave) {
  // `@%p bar.sync`: the threads that skip it leave while the others wait.
  std::optional<EarlyExit> early = analyze(R"(
  mov.u32 %r1, %tid.x;
  setp.lt.u32 %p1, %r1, 32;
  @%p1 bar.sync 0;
  ret;)");
  ASSERT_TRUE(early);
  EXPECT_EQ(text(early->barrier), "bar.sync");
}

TEST_F(EarlyExitTest, UniAssertsUniformBranch) {
  // `bra.uni`: the compiler asserts no thread goes another way.
  EXPECT_FALSE(analyze(R"(
  mov.u32 %r1, %tid.x;
  setp.ge.u32 %p1, %r1, 64;
  @%p1 bra.uni $L_done;
  bar.sync 0;
$L_done:
  ret;)"));
}

} // namespace
