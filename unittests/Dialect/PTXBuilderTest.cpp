//===- PTXBuilderTest.cpp - Built instructions are parsed instructions ----===//
//
// The typed builder makes the same op as the statement parser does from the
// same PTX (attribute for attribute, printed the same), refuses modifiers the
// opcode table refuses; the namespace never hands out a name in use and
// knows which prefixes names in use start with; the opcode table's def roles
// and kinds answer for representative opcodes.
//
//===----------------------------------------------------------------------===//

#include "ptx/IR/PTXBuilder.h"
#include "ptx/IR/PTXNamespace.h"
#include "ptx/IR/PTXOpcodes.h"
#include "ptx/IR/PTXParser.h"
#include "ptx/IR/PTXPrinter.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include <gtest/gtest.h>

using namespace mlir;
using namespace gpuopt::ptx;

namespace {

class PTXBuilderTest : public ::testing::Test {
protected:
  void SetUp() override {
    context.loadDialect<PTXDialect>();
    module = ModuleOp::create(UnknownLoc::get(&context));
    builder.setInsertionPointToEnd(module->getBody());
  }

  /// What the statement parser makes of `text`.
  InstOp parse(llvm::StringRef text) {
    Parser parser(text, &context,
                  [&](const char *) { return UnknownLoc::get(&context); });
    parser.allowEofAsStatementEnd = true;
    InstructionSyntax syntax;
    EXPECT_TRUE(succeeded(parser.parseInstruction(syntax))) << text.str();
    return InstOp::create(builder, UnknownLoc::get(&context), syntax.guard,
                          syntax.guardNegated ? builder.getUnitAttr()
                                              : UnitAttr(),
                          syntax.opcode, syntax.modifiers, syntax.operands);
  }

  static std::string print(InstOp op) {
    std::string text;
    llvm::raw_string_ostream os(text);
    printInstruction(op, os);
    return text;
  }

  /// The built op has the parsed op's attributes and prints as `text`.
  void expectSame(InstOp built, llvm::StringRef text) {
    InstOp parsed = parse(text);
    EXPECT_EQ(built->getAttrDictionary(), parsed->getAttrDictionary())
        << text.str();
    EXPECT_EQ(print(built), text.str());
    EXPECT_EQ(print(parsed), text.str());
    EXPECT_TRUE(succeeded(built.verify()));
  }

  MLIRContext context;
  OwningOpRef<ModuleOp> module;
  OpBuilder builder{&context};
  PTXBuilder pb{builder, UnknownLoc::get(&context)};
};

TEST_F(PTXBuilderTest, VectorLoadAndStore) {
  expectSame(
      pb.inst("ld").mod("global").mod("nc").v(2).f(32).create(
          {pb.vec({pb.reg("%f1"), pb.reg("%f2")}), pb.addr(pb.reg("%rd4"), 8)}),
      "ld.global.nc.v2.f32 {%f1, %f2}, [%rd4+8]");
  expectSame(
      pb.inst("st").mod("shared").v(4).b(32).create(
          {pb.addr(pb.reg("%r1")), pb.vec({pb.reg("%r2"), pb.reg("%r3"),
                                           pb.reg("%r4"), pb.reg("%r5")})}),
      "st.shared.v4.b32 [%r1], {%r2, %r3, %r4, %r5}");
  expectSame(
      pb.inst("ld").mod("param").u(64).create({pb.reg("%rd1"), pb.addr("out")}),
      "ld.param.u64 %rd1, [out]");
  expectSame(pb.inst("st")
                 .mods({"relaxed", "gpu", "global"})
                 .u(32)
                 .create({pb.addr("tickets", 4), 0}),
             "st.relaxed.gpu.global.u32 [tickets+4], 0");
}

TEST_F(PTXBuilderTest, SpecialRegistersAndImmediates) {
  expectSame(pb.inst("mov").u(32).create({pb.reg("%r1"), pb.sreg("%tid.x")}),
             "mov.u32 %r1, %tid.x");
  EXPECT_TRUE(isa<SpecialRegisterAttr>(pb.regOrSreg("%ctaid.y")));
  EXPECT_TRUE(isa<RegisterAttr>(pb.regOrSreg("%r7")));
  expectSame(pb.inst("mov").b(32).create({pb.reg("%f1"), pb.f32(1.0f)}),
             "mov.b32 %f1, 0f3F800000");
  expectSame(pb.inst("mov").u(64).create({pb.reg("%rd1"), pb.imm(16, true)}),
             "mov.u64 %rd1, 0x10");
  expectSame(pb.inst("add").s(32).create({pb.reg("%r1"), pb.reg("%r2"), -4}),
             "add.s32 %r1, %r2, -4");
  expectSame(pb.inst("mad").mod("lo").u(32).create(
                 {pb.reg("%r1"), pb.reg("%r2"), 3, pb.reg("%r4")}),
             "mad.lo.u32 %r1, %r2, 3, %r4");
  expectSame(pb.inst("cvt").mod("rn").f(32).s(32).create(
                 {pb.reg("%f1"), pb.reg("%r1")}),
             "cvt.rn.f32.s32 %f1, %r1");
}

TEST_F(PTXBuilderTest, PredicatesAndBranches) {
  expectSame(pb.inst("setp").mod("ne").mod("and").s(32).create(
                 {pb.pair(pb.reg("%p1"), pb.reg("%p2")), pb.reg("%r1"), 0,
                  pb.negate(pb.reg("%p3"))}),
             "setp.ne.and.s32 %p1|%p2, %r1, 0, !%p3");
  expectSame(pb.inst("bra")
                 .guard(pb.reg("%p1"), /*negated=*/true)
                 .create({pb.labelRef("$L__BB0_2")}),
             "@!%p1 bra $L__BB0_2");
  expectSame(pb.inst("bra")
                 .mod("uni")
                 .guard(pb.reg("%p2"))
                 .create({pb.labelRef("$L__BB0_3")}),
             "@%p2 bra.uni $L__BB0_3");
  expectSame(pb.inst("bar").mod("sync").create({0}), "bar.sync 0");
  expectSame(pb.inst("ret").create(), "ret");
  expectSame(pb.inst("call").mod("uni").create(
                 {pb.list({pb.sym("retval0")}), pb.sym("foo"),
                  pb.list({pb.sym("param0"), pb.sym("param1")})}),
             "call.uni (retval0), foo, (param0, param1)");
}

TEST_F(PTXBuilderTest, AtomicsAndCollectives) {
  expectSame(pb.inst("atom")
                 .mods({"acq_rel", "gpu", "global", "add"})
                 .u(32)
                 .create({pb.reg("%r1"), pb.addr("tickets", 4), 1}),
             "atom.acq_rel.gpu.global.add.u32 %r1, [tickets+4], 1");
  expectSame(pb.inst("shfl")
                 .mods({"sync", "bfly"})
                 .b(32)
                 .create({pb.pair(pb.reg("%r1"), pb.reg("%p1")), pb.reg("%r2"),
                          1, 31, -1}),
             "shfl.sync.bfly.b32 %r1|%p1, %r2, 1, 31, -1");
  expectSame(pb.inst("mbarrier")
                 .mods({"arrive", "shared"})
                 .b(64)
                 .create({pb.sink(), pb.addr(pb.reg("%r1"))}),
             "mbarrier.arrive.shared.b64 _, [%r1]");
}

TEST_F(PTXBuilderTest, DeclarationsAndLabels) {
  RegisterAttr tid = pb.reg(".b32", "%__hf_tid");
  EXPECT_EQ(tid.getName(), "%__hf_tid");
  LabelOp label = pb.label("$__hfuse_exit");
  EXPECT_EQ(label.getName(), "$__hfuse_exit");
  auto decl = cast<RegOp>(label->getPrevNode());
  EXPECT_EQ(decl.getType(), ".b32");
  EXPECT_EQ(decl.getName(), "%__hf_tid");
  EXPECT_FALSE(decl.getCount());
}

TEST_F(PTXBuilderTest, WrongModifiersAreRefused) {
  EXPECT_FALSE(checkInstruction("ld", {"global", "u32"}));
  EXPECT_FALSE(checkInstruction("somefutureop", {"anything"}));
  std::optional<std::string> space = checkInstruction("ld", {"glubal", "u32"});
  ASSERT_TRUE(space);
  EXPECT_NE(space->find("glubal"), std::string::npos);
  EXPECT_TRUE(checkInstruction("add", {"lo", "f32"}));
  EXPECT_TRUE(checkInstruction("mov", {"global", "u32"}));
  EXPECT_TRUE(checkInstruction("ld", {".global"}));

  // tryCreate reports at the builder's location and creates nothing.
  std::string message;
  ScopedDiagnosticHandler handler(&context, [&](Diagnostic &diag) {
    message = diag.str();
    return success();
  });
  size_t before = module->getBody()->getOperations().size();
  FailureOr<InstOp> op = pb.inst("setp").mod("lt").mod("u33").tryCreate(
      {pb.reg("%p1"), pb.reg("%r1"), pb.imm(0)});
  EXPECT_TRUE(failed(op));
  EXPECT_NE(message.find("setp.lt.u33"), std::string::npos) << message;
  EXPECT_EQ(module->getBody()->getOperations().size(), before);
}

//===----------------------------------------------------------------------===//
// Namespace
//===----------------------------------------------------------------------===//

const char *const kernelWithScopes = R"mlir(
ptx.module @m version "8.7" target ["sm_90a"] address_size 64 {
  ptx.entry ".visible .entry k(.param .u64 out, .param .u64 __probe_t)" {
    ptx.probe "kernel.entry" buffers ["__probe_t"] {
      ptx.reg ".reg .b64 %__pr_addr"
      ptx.inst "ld.param.u64 %__pr_addr, [__probe_t]"
    }
    ptx.reg ".reg .b32 %r<5>"
    ptx.reg ".reg .pred %p1"
    ptx.var ".local .align 4 .b8 __local_depot0[8]"
    ptx.scope {
      ptx.reg ".reg .pred p"
      ptx.inst "setp.ne.b32 p, %r1, 0"
      ptx.label "$L_inner:"
    }
    ptx.inst "@%p1 bra $L__BB0_2"
    ptx.label "$L__BB0_2:"
    ptx.inst "ret"
  }
}
)mlir";

TEST(PTXNamespaceTest, SeededFromTheWholeFunction) {
  MLIRContext context;
  context.loadDialect<PTXDialect>();
  OwningOpRef<ModuleOp> module =
      parseSourceString<ModuleOp>(kernelWithScopes, &context);
  ASSERT_TRUE(module);
  EntryOp entry;
  module->walk([&](EntryOp op) { entry = op; });
  PTXNamespace names(entry);
  for (llvm::StringRef used :
       {"%r0", "%r4", "%p1", "p", "$L_inner", "$L__BB0_2", "%__pr_addr",
        "__probe_t", "out", "__local_depot0", "k"})
    EXPECT_TRUE(names.contains(used)) << used.str();
  for (llvm::StringRef unused : {"%r5", "%p2", "%__hf_tid", "%r04x"})
    EXPECT_FALSE(names.contains(unused)) << unused.str();

  // A free stem is kept as it is; taken ones get the smallest free suffix.
  EXPECT_EQ(names.newName("%__hf_tid"), "%__hf_tid");
  EXPECT_EQ(names.newName("%__hf_tid"), "%__hf_tid_1");
  EXPECT_EQ(names.newName("%__hf_tid"), "%__hf_tid_2");
  EXPECT_EQ(names.newName("%__pr_addr"), "%__pr_addr_1");
  EXPECT_EQ(names.newName("out", "_hf"), "out_hf1");
  names.add("$L__BB0_2_1");
  EXPECT_EQ(names.newName("$L__BB0_2"), "$L__BB0_2_2");
  // `%r<5>` takes %r0..%r4, so `%r` with suffix "" skips them.
  EXPECT_EQ(names.newName("%r4", ""), "%r41");
}

TEST(PTXNamespaceTest, NeverReturnsANameInUse) {
  PTXNamespace names;
  names.addRange("%x_", 3);
  names.add("%x");
  llvm::StringSet<> handedOut;
  for (int i = 0; i < 200; ++i) {
    llvm::StringRef stem = (i % 3 == 0) ? "%x" : (i % 3 == 1) ? "%x_1" : "%y";
    EXPECT_FALSE(names.contains("%y_" + std::to_string(200)));
    std::string name = names.newName(stem).str();
    EXPECT_TRUE(handedOut.insert(name).second) << name;
    EXPECT_NE(name, "%x_0");
    EXPECT_NE(name, "%x_2");
    EXPECT_TRUE(names.contains(name));
  }
  // A copy is independent: names given by one stay free in the other.
  PTXNamespace copy = names;
  EXPECT_EQ(copy.newName("%z"), "%z");
  EXPECT_EQ(names.newName("%z"), "%z");
}

TEST(PTXNamespaceTest, ContainsPrefix) {
  PTXNamespace names;
  names.add("%__pr_part");
  names.addRange("%rd", 3);
  names.addRange("%q", 0);
  EXPECT_TRUE(names.containsPrefix("%__pr_"));
  EXPECT_TRUE(names.containsPrefix("%__pr_part"));
  EXPECT_FALSE(names.containsPrefix("%__pr1_"));
  EXPECT_FALSE(names.containsPrefix("__pr_"));
  // `%rd<3>` names %rd0, %rd1 and %rd2; `%q<0>` names none.
  EXPECT_TRUE(names.containsPrefix("%r"));
  EXPECT_TRUE(names.containsPrefix("%rd1"));
  EXPECT_FALSE(names.containsPrefix("%rd_"));
  EXPECT_FALSE(names.containsPrefix("%q"));
}

//===----------------------------------------------------------------------===//
// Opcode table roles
//===----------------------------------------------------------------------===//

static std::optional<unsigned>
defined(llvm::StringRef opcode, llvm::ArrayRef<llvm::StringRef> modifiers,
        unsigned numOperands = 3) {
  return getDefinedOperand(
      lookupOpcode(opcode), numOperands,
      [&](llvm::StringRef m) { return llvm::is_contained(modifiers, m); });
}

TEST(PTXOpcodeRolesTest, WrittenOperands) {
  EXPECT_EQ(defined("add", {"u32"}), 0u);
  EXPECT_EQ(defined("ld", {"global", "v4", "f32"}), 0u);
  EXPECT_EQ(defined("atom", {"global", "add", "u32"}), 0u);
  EXPECT_EQ(defined("setp", {"lt", "u32"}), 0u);
  EXPECT_EQ(defined("st", {"global", "u32"}), std::nullopt);
  EXPECT_EQ(defined("red", {"global", "add", "u32"}), std::nullopt);
  EXPECT_EQ(defined("bra", {}), std::nullopt);
  EXPECT_EQ(defined("nanosleep", {"u32"}), std::nullopt);
  EXPECT_EQ(defined("bar", {"sync"}), std::nullopt);
  EXPECT_EQ(defined("bar", {"red", "popc", "u32"}), 0u);
  EXPECT_EQ(defined("call", {"uni"}), 0u);
  EXPECT_EQ(defined("ret", {}, 0), std::nullopt);
  // Outside the table: assumed to write its first operand.
  EXPECT_EQ(defined("somefutureop", {}), 0u);
  EXPECT_EQ(defined("add", {"u32"}, 0), std::nullopt);
}

TEST(PTXOpcodeRolesTest, Kinds) {
  EXPECT_EQ(getOpcodeKind("bar"), OpcodeKind::Barrier);
  EXPECT_EQ(getOpcodeKind("barrier"), OpcodeKind::Barrier);
  EXPECT_EQ(getOpcodeKind("membar"), OpcodeKind::Other);
  EXPECT_EQ(getOpcodeKind("ld"), OpcodeKind::Load);
  EXPECT_EQ(getOpcodeKind("ldu"), OpcodeKind::Load);
  EXPECT_EQ(getOpcodeKind("ldmatrix"), OpcodeKind::Other);
  EXPECT_EQ(getOpcodeKind("st"), OpcodeKind::Store);
  EXPECT_EQ(getOpcodeKind("ret"), OpcodeKind::Return);
  EXPECT_EQ(getOpcodeKind("exit"), OpcodeKind::Exit);
  EXPECT_EQ(getOpcodeKind("trap"), OpcodeKind::Trap);
  EXPECT_EQ(getOpcodeKind("wgmma"), OpcodeKind::TensorCore);
  EXPECT_EQ(getOpcodeKind("somefutureop"), OpcodeKind::Other);
  const OpcodeInfo *st = lookupOpcode("st");
  ASSERT_TRUE(st);
  EXPECT_TRUE(st->hasEffect(MemoryEffect));
  EXPECT_FALSE(st->hasEffect(ControlEffect));
  EXPECT_TRUE(lookupOpcode("bra")->hasEffect(ControlEffect));
}

} // namespace
