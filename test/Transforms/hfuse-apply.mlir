// --hfuse-apply alone: it builds the fused kernel that a hand-written
// #gpuopt.hfuse_plan asks for, erases the kernels' modules and the plan, and
// records on the fused entry what it is made of (#gpuopt.fusion_info).
// RUN: gpu-opt %s --hfuse-apply --split-input-file | FileCheck %s --enable-var-scope

// Thread split: one block of 128 + 64 threads; `ka` keeps its barrier with
// its own thread count, `kb`'s early return leaves its part only.
// CHECK-LABEL: ptx.module @ka_kb version "8.7" target ["sm_90a"] address_size 64 {
// CHECK-NEXT: ptx.entry ".visible .entry ka_kb(.param .u64 x, .param .u64 y) .reqntid 192, 1, 1" attributes {gpuopt.fusion = #gpuopt.fusion_info<strategy = thread, grid = [1024, 1, 1], dynamic_smem = 0, parts = [<kernel = "ka", module = "a", threads = [0, 128], block = [128, 1, 1], grid = [1024, 1, 1], dynamic_smem_offset = 0, dynamic_smem = 0, arg_map = [0]>, <kernel = "kb", module = "b", threads = [128, 192], block = [64, 1, 1], grid = [512, 1, 1], dynamic_smem_offset = 0, dynamic_smem = 0, arg_map = [1]>]>} {
// CHECK: ptx.inst "mov.u32 [[TID:%[_a-z]+]], %tid.x"
// CHECK: ptx.inst "setp.ge.u32 [[SKIP:%[_a-z]+]], [[TID]], 128"
// CHECK-NEXT: ptx.inst "@[[SKIP]] bra [[END0:\$[_a-z0-9]+]]"
// CHECK-NEXT: ptx.scope {
// CHECK: ptx.inst "bar.sync 0, 128"
// CHECK-NEXT: ptx.inst "bra [[END0]]"
// CHECK-NEXT: }
// CHECK-NEXT: ptx.label "[[END0]]:"
// CHECK-NEXT: ptx.inst "setp.lt.u32 [[SKIP]], [[TID]], 128"
// CHECK-NEXT: ptx.inst "setp.ge.or.u32 [[SKIP]], {{%[_a-z]+}}, 512, [[SKIP]]"
// CHECK-NEXT: ptx.inst "@[[SKIP]] bra [[END1:\$[_a-z0-9]+]]"
// CHECK-NEXT: ptx.scope {
// CHECK: ptx.inst "@%p1 bra [[END1]]"
// CHECK-NEXT: ptx.inst "bra [[END1]]"
// CHECK-NEXT: }
// CHECK-NEXT: ptx.label "[[END1]]:"
// CHECK-NEXT: ptx.inst "ret"
// CHECK-NEXT: }
// CHECK-NEXT: }
// CHECK-NOT: ptx.module
// CHECK-NOT: gpuopt.hfuse
module attributes {gpuopt.hfuse = #gpuopt.hfuse_plan<name = "ka_kb", strategy = thread, parts = [<kernel = "ka", module = "a", block = [128, 1, 1], grid = [1024, 1, 1]>, <kernel = "kb", module = "b", block = [64, 1, 1], grid = [512, 1, 1]>]>} {
  ptx.module @a version "8.7" target ["sm_90a"] address_size 64 {
    ptx.entry ".visible .entry ka(.param .u64 x) .reqntid 128, 1, 1" {
      ptx.reg ".reg .b32 %r<4>"
      ptx.inst "mov.u32 %r1, %tid.x"
      ptx.inst "bar.sync 0"
      ptx.inst "ret"
    }
  }
  ptx.module @b version "8.7" target ["sm_90a"] address_size 64 {
    ptx.entry ".visible .entry kb(.param .u64 y) .reqntid 64, 1, 1" {
      ptx.reg ".reg .pred %p<2>"
      ptx.reg ".reg .b32 %r<4>"
      ptx.inst "mov.u32 %r1, %ctaid.x"
      ptx.inst "setp.eq.u32 %p1, %r1, 0"
      ptx.inst "@%p1 ret"
      ptx.inst "ret"
    }
  }
}

// -----

// Dynamic dispatch, 2:1, with `ka`'s dynamic shared memory: one block of the
// larger part's 128 threads per ticket, 1024 + 512 blocks, parts with their
// ratios; `ka`'s `.extern .shared` array becomes the fused kernel's.
// CHECK-LABEL: ptx.module @dyn version "8.7" target ["sm_90a"] address_size 64 {
// CHECK-NEXT: ptx.global ".extern .shared .align 1024 .b8 [[SMEM:[_a-z]+]][]"
// CHECK: ptx.entry ".visible .entry dyn(.param .u64 x, .param .u64 y) .reqntid 128, 1, 1" attributes {gpuopt.fusion = #gpuopt.fusion_info<strategy = dynamic, grid = [1536, 1, 1], dynamic_smem = 4096, parts = [<kernel = "ka", module = "a", threads = [0, 128], block = [128, 1, 1], grid = [1024, 1, 1], dynamic_smem_offset = 0, dynamic_smem = 4096, arg_map = [0], ratio = 2>, <kernel = "kb", module = "b", threads = [0, 64], block = [64, 1, 1], grid = [512, 1, 1], dynamic_smem_offset = 0, dynamic_smem = 0, arg_map = [1], ratio = 1>]>} {
// CHECK: ptx.inst "atom.global.add.u32
// CHECK: ptx.scope {
// CHECK: ptx.inst "mov.u32 %r1, [[SMEM]]"
// CHECK: ptx.scope {
// CHECK-NOT: ptx.module @a
// CHECK-NOT: gpuopt.hfuse
module attributes {gpuopt.hfuse = #gpuopt.hfuse_plan<name = "dyn", strategy = dynamic, parts = [<kernel = "ka", module = "a", block = [128, 1, 1], grid = [1024, 1, 1], ratio = 2, dynamic_smem = 4096>, <kernel = "kb", module = "b", block = [64, 1, 1], grid = [512, 1, 1]>]>} {
  ptx.module @a version "8.7" target ["sm_90a"] address_size 64 {
    ptx.global ".extern .shared .align 16 .b8 smem[]"
    ptx.entry ".visible .entry ka(.param .u64 x) .reqntid 128, 1, 1" {
      ptx.reg ".reg .b32 %r<4>"
      ptx.inst "mov.u32 %r1, smem"
      ptx.inst "bar.sync 0"
      ptx.inst "ret"
    }
  }
  ptx.module @b version "8.7" target ["sm_90a"] address_size 64 {
    ptx.entry ".visible .entry kb(.param .u64 y) .reqntid 64, 1, 1" {
      ptx.reg ".reg .b32 %r<4>"
      ptx.inst "mov.u32 %r1, %ctaid.x"
      ptx.inst "ret"
    }
  }
}

// -----

// Without a plan the pass changes nothing.
// CHECK-LABEL: ptx.module @alone version "8.7" target ["sm_90a"] address_size 64 {
// CHECK-NEXT: ptx.entry ".visible .entry ka(.param .u64 x)" {
// CHECK-NEXT: ptx.inst "ret"
// CHECK-NEXT: }
// CHECK-NEXT: }
// CHECK-NOT: gpuopt.fusion
module {
  ptx.module @alone version "8.7" target ["sm_90a"] address_size 64 {
    ptx.entry ".visible .entry ka(.param .u64 x)" {
      ptx.inst "ret"
    }
  }
}

// -----

// The register cap: a fused block of 512 + 256 threads may have 80
// registers per thread (65536 over 24 warps, in units of 256 per warp), and
// the fused entry says so (.maxnreg 80), so that ptxas allocates up to that
// many instead of choosing fewer and spilling.
// CHECK-LABEL: ptx.module @wide version
// CHECK-NEXT: ptx.entry ".visible .entry wide(.param .u64 x, .param .u64 y) .reqntid 768, 1, 1 .maxnreg 80" attributes
module attributes {gpuopt.hfuse = #gpuopt.hfuse_plan<name = "wide", strategy = thread, parts = [<kernel = "ka", module = "a", block = [512, 1, 1], grid = [64, 1, 1]>, <kernel = "kb", module = "b", block = [256, 1, 1], grid = [64, 1, 1]>]>} {
  ptx.module @a version "8.7" target ["sm_90a"] address_size 64 {
    ptx.entry ".visible .entry ka(.param .u64 x) .reqntid 512, 1, 1" {
      ptx.inst "ret"
    }
  }
  ptx.module @b version "8.7" target ["sm_90a"] address_size 64 {
    ptx.entry ".visible .entry kb(.param .u64 y) .reqntid 256, 1, 1" {
      ptx.inst "ret"
    }
  }
}

// -----

// A smaller cap asked for (the plan's maxnreg) stays; a larger one than the
// block allows is lowered to what it allows.
// CHECK-LABEL: ptx.module @capped version
// CHECK-NEXT: ptx.entry ".visible .entry capped(.param .u64 x, .param .u64 y) .reqntid 768, 1, 1 .maxnreg 64" attributes
// CHECK-LABEL: ptx.module @over version
// CHECK-NEXT: ptx.entry ".visible .entry over(.param .u64 x, .param .u64 y) .reqntid 768, 1, 1 .maxnreg 80" attributes
module attributes {gpuopt.hfuse = #gpuopt.hfuse_plan<name = "capped", strategy = thread, maxnreg = 64, parts = [<kernel = "ka", module = "a", block = [512, 1, 1], grid = [64, 1, 1]>, <kernel = "kb", module = "b", block = [256, 1, 1], grid = [64, 1, 1]>]>} {
  ptx.module @a version "8.7" target ["sm_90a"] address_size 64 {
    ptx.entry ".visible .entry ka(.param .u64 x) .reqntid 512, 1, 1" {
      ptx.inst "ret"
    }
  }
  ptx.module @b version "8.7" target ["sm_90a"] address_size 64 {
    ptx.entry ".visible .entry kb(.param .u64 y) .reqntid 256, 1, 1" {
      ptx.inst "ret"
    }
  }
}

// -----

module attributes {gpuopt.hfuse = #gpuopt.hfuse_plan<name = "over", strategy = thread, maxnreg = 128, parts = [<kernel = "ka", module = "a", block = [512, 1, 1], grid = [64, 1, 1]>, <kernel = "kb", module = "b", block = [256, 1, 1], grid = [64, 1, 1]>]>} {
  ptx.module @a version "8.7" target ["sm_90a"] address_size 64 {
    ptx.entry ".visible .entry ka(.param .u64 x) .reqntid 512, 1, 1" {
      ptx.inst "ret"
    }
  }
  ptx.module @b version "8.7" target ["sm_90a"] address_size 64 {
    ptx.entry ".visible .entry kb(.param .u64 y) .reqntid 256, 1, 1" {
      ptx.inst "ret"
    }
  }
}

// -----

// A block-level fused block is the largest part's: 512 threads, 128 each.
// A block no larger than 256 threads allows ptxas's own 255: no cap.
// CHECK-LABEL: ptx.module @level version
// CHECK-NEXT: ptx.entry ".visible .entry level(.param .u64 x, .param .u64 y) .reqntid 512, 1, 1 .maxnreg 128" attributes
// CHECK-LABEL: ptx.module @small version
// CHECK-NEXT: ptx.entry ".visible .entry small(.param .u64 x, .param .u64 y) .reqntid 256, 1, 1" attributes
module attributes {gpuopt.hfuse = #gpuopt.hfuse_plan<name = "level", strategy = interleave, parts = [<kernel = "ka", module = "a", block = [512, 1, 1], grid = [64, 1, 1]>, <kernel = "kb", module = "b", block = [256, 1, 1], grid = [64, 1, 1]>]>} {
  ptx.module @a version "8.7" target ["sm_90a"] address_size 64 {
    ptx.entry ".visible .entry ka(.param .u64 x) .reqntid 512, 1, 1" {
      ptx.inst "ret"
    }
  }
  ptx.module @b version "8.7" target ["sm_90a"] address_size 64 {
    ptx.entry ".visible .entry kb(.param .u64 y) .reqntid 256, 1, 1" {
      ptx.inst "ret"
    }
  }
}

// -----

module attributes {gpuopt.hfuse = #gpuopt.hfuse_plan<name = "small", strategy = thread, parts = [<kernel = "ka", module = "a", block = [128, 1, 1], grid = [64, 1, 1]>, <kernel = "kb", module = "b", block = [128, 1, 1], grid = [64, 1, 1]>]>} {
  ptx.module @a version "8.7" target ["sm_90a"] address_size 64 {
    ptx.entry ".visible .entry ka(.param .u64 x) .reqntid 128, 1, 1" {
      ptx.inst "ret"
    }
  }
  ptx.module @b version "8.7" target ["sm_90a"] address_size 64 {
    ptx.entry ".visible .entry kb(.param .u64 y) .reqntid 128, 1, 1" {
      ptx.inst "ret"
    }
  }
}
