// Every ptx op prints as quoted PTX and parses back to the same op, in the
// custom and in the generic form.
// RUN: gpu-opt %s | gpu-opt | FileCheck %s
// RUN: gpu-opt %s --mlir-print-op-generic | gpu-opt | FileCheck %s

// CHECK-LABEL: ptx.module @round_trip version "8.7" target ["sm_90a"] address_size 64 {
ptx.module @round_trip version "8.7" target ["sm_90a"] address_size 64 {
  // CHECK-NEXT: ptx.file ".file 1 \22a.cu\22"
  ptx.file ".file 1 \22a.cu\22"
  // CHECK-NEXT: ptx.global ".extern .shared .align 16 .b8 smem[]"
  ptx.global ".extern .shared .align 16 .b8 smem[]"
  // CHECK-NEXT: ptx.global ".const .align 4 .b8 kdata[8] = {1, 2, 3, 4, 5, 6, 7, 8}"
  ptx.global ".const .align 4 .b8 kdata[8] = {1, 2, 3, 4, 5, 6, 7, 8}"
  // CHECK-NEXT: ptx.declare @f linkage ".weak"
  ptx.declare @f linkage ".weak"
  // CHECK-NEXT: ptx.entry ".visible .entry k(.param .u64 .ptr .global .align 16 a, .param .align 4 .b8 b[8]) .maxntid 256, 1, 1" {
  ptx.entry ".visible .entry k(.param .u64 .ptr .global .align 16 a, .param .align 4 .b8 b[8]) .maxntid 256, 1, 1" {
    // CHECK-NEXT: ptx.reg ".reg .pred %p<2>"
    ptx.reg ".reg .pred %p<2>"
    // CHECK-NEXT: ptx.reg ".reg .b32 %r<4>"
    ptx.reg ".reg .b32 %r<4>"
    // CHECK-NEXT: ptx.reg ".reg .f32 %f<4>"
    ptx.reg ".reg .f32 %f<4>"
    // CHECK-NEXT: ptx.reg ".reg .b64 %rd<3>"
    ptx.reg ".reg .b64 %rd<3>"
    // CHECK-NEXT: ptx.var ".local .align 8 .b8 depot[16]"
    ptx.var ".local .align 8 .b8 depot[16]"
    // CHECK-NEXT: ptx.loc ".loc 1 3 7"
    ptx.loc ".loc 1 3 7"
    // CHECK-NEXT: ptx.inst "ld.param.u64 %rd1, [a]"
    ptx.inst "ld.param.u64 %rd1, [a]"
    // CHECK-NEXT: ptx.inst "mov.u32 %r1, %tid.x"
    ptx.inst "mov.u32 %r1, %tid.x"
    // CHECK-NEXT: ptx.inst "setp.gt.u32 %p1, %r1, 0x1f"
    ptx.inst "setp.gt.u32 %p1, %r1, 0x1F"
    // CHECK-NEXT: ptx.inst "@%p1 bra $L__BB0_2"
    ptx.inst "@%p1 bra $L__BB0_2"
    // CHECK-NEXT: ptx.inst "ld.global.v2.f32 {%f1, %f2}, [%rd1+8]"
    ptx.inst "ld.global.v2.f32 {%f1, %f2}, [%rd1+8]"
    // Decimal float literals are doubles; they print as their bit pattern.
    // CHECK-NEXT: ptx.inst "add.f32 %f3, %f1, 0d3FF8000000000000"
    ptx.inst "add.f32 %f3, %f1, 1.5"
    // CHECK-NEXT: ptx.scope {
    ptx.scope {
      // CHECK-NEXT: ptx.reg ".reg .pred q"
      ptx.reg ".reg .pred q"
      // CHECK-NEXT: ptx.inst "setp.ne.b32 q, %r1, 0"
      ptx.inst "setp.ne.b32 q, %r1, 0"
    // CHECK-NEXT: }
    }
    // CHECK-NEXT: ptx.pragma ".pragma \22nounroll\22"
    ptx.pragma ".pragma \22nounroll\22"
    // CHECK-NEXT: ptx.label "$L__BB0_2:"
    ptx.label "$L__BB0_2:"
    // CHECK-NEXT: ptx.inst "ret"
    ptx.inst "ret"
  }
  // CHECK: ptx.func ".weak .func (.param .b32 r) f(.param .b32 x)" {
  ptx.func ".weak .func (.param .b32 r) f(.param .b32 x)" {
    ptx.inst "ret"
  }
  // An empty body is a definition, not a declaration.
  // CHECK: ptx.entry ".entry empty()" {
  // CHECK-NEXT: }
  ptx.entry ".entry empty()" {
  }
  // CHECK: ptx.section ".section .debug_str\0A{\0A.b8 0\0A}"
  ptx.section ".section .debug_str\0A{\0A.b8 0\0A}"
}
