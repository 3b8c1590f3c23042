//===- ProbeOpTest.cpp - What MLIR sees of probe code ---------------------===//
//
// ptx.probe declares its memory effects: it reads and writes the probe
// buffers and nothing else, so generic analyses can tell probe code from the
// kernel's instructions (unknown effects) and never erase it as dead.
//
//===----------------------------------------------------------------------===//

#include "ptx/IR/PTX.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Parser/Parser.h"

#include <gtest/gtest.h>

using namespace mlir;
using namespace gpuopt::ptx;

namespace {

const char *const probedKernel = R"mlir(
ptx.module @m version "8.7" target ["sm_90a"] address_size 64 {
  ptx.entry ".visible .entry k(.param .u64 out, .param .u64 .ptr .global .align 8 __probe_t)" {
    ptx.probe "kernel.entry" buffers ["__probe_t"] {
      ptx.reg ".reg .b64 %__pr_addr"
      ptx.reg ".reg .b32 %__pr_clock"
      ptx.inst "ld.param.u64 %__pr_addr, [__probe_t]"
      ptx.inst "mov.u32 %__pr_clock, %clock"
    }
    ptx.reg ".reg .b64 %rd<2>"
    ptx.inst "ld.param.u64 %rd1, [out]"
    ptx.probe "kernel.exit" {
      ptx.inst "st.global.b32 [%__pr_addr], %__pr_clock"
    }
    ptx.inst "ret"
  }
}
)mlir";

class ProbeOpTest : public ::testing::Test {
protected:
  void SetUp() override {
    context.loadDialect<PTXDialect>();
    module = parseSourceString<ModuleOp>(probedKernel, &context);
    ASSERT_TRUE(module);
    module->walk([&](ProbeOp op) { probes.push_back(op); });
    module->walk([&](InstOp op) {
      if (!op->getParentOfType<ProbeOp>())
        kernelInsts.push_back(op);
    });
  }

  MLIRContext context;
  OwningOpRef<ModuleOp> module;
  SmallVector<ProbeOp> probes;
  SmallVector<InstOp> kernelInsts;
};

TEST_F(ProbeOpTest, EffectsAreOnTheProbeBufferOnly) {
  ASSERT_EQ(probes.size(), 2u);
  for (ProbeOp probe : probes) {
    auto iface = dyn_cast<MemoryEffectOpInterface>(probe.getOperation());
    ASSERT_TRUE(iface);
    SmallVector<MemoryEffects::EffectInstance> effects;
    iface.getEffects(effects);
    ASSERT_EQ(effects.size(), 2u);
    bool reads = false, writes = false;
    for (const MemoryEffects::EffectInstance &effect : effects) {
      EXPECT_TRUE(isa<ProbeBufferResource>(effect.getResource()));
      EXPECT_FALSE(isa<SideEffects::DefaultResource>(effect.getResource()));
      reads |= isa<MemoryEffects::Read>(effect.getEffect());
      writes |= isa<MemoryEffects::Write>(effect.getEffect());
    }
    EXPECT_TRUE(reads);
    EXPECT_TRUE(writes);
    // The declared effects stand for the whole region: MLIR does not look
    // inside at the ptx.inst ops, whose effects are unknown.
    EXPECT_FALSE(probe->hasTrait<OpTrait::HasRecursiveMemoryEffects>());
    std::optional<SmallVector<MemoryEffects::EffectInstance>> all =
        getEffectsRecursively(probe);
    ASSERT_TRUE(all.has_value());
    EXPECT_EQ(all->size(), 2u);
    // It writes memory: never dead, although it has no results.
    EXPECT_FALSE(isMemoryEffectFree(probe));
    EXPECT_FALSE(wouldOpBeTriviallyDead(probe));
    EXPECT_TRUE(hasEffect<MemoryEffects::Write>(probe.getOperation()));
  }
}

TEST_F(ProbeOpTest, KernelInstructionsHaveUnknownEffects) {
  ASSERT_FALSE(kernelInsts.empty());
  for (InstOp inst : kernelInsts) {
    EXPECT_FALSE(isa<MemoryEffectOpInterface>(inst.getOperation()));
    EXPECT_FALSE(getEffectsRecursively(inst).has_value());
  }
}

TEST_F(ProbeOpTest, WritingAKernelRegisterIsRefused) {
  // The same kernel with the exit probe writing %rd1: the verifier refuses.
  std::string text = probedKernel;
  std::string from = "st.global.b32 [%__pr_addr], %__pr_clock";
  text.replace(text.find(from), from.size(), "mov.u64 %rd1, 0");
  std::string diagnostic;
  ScopedDiagnosticHandler handler(&context, [&](Diagnostic &diag) {
    diagnostic = diag.str();
    return success();
  });
  OwningOpRef<ModuleOp> bad = parseSourceString<ModuleOp>(text, &context);
  EXPECT_FALSE(bad);
  EXPECT_NE(diagnostic.find("in a probe writes '%rd1'"), std::string::npos)
      << diagnostic;
}

} // namespace
