// --probe-insert alone, on kernels --probe-plan planned: each point's
// snippets in a ptx.probe op, `save.MAP` as ptx.probe_save, {bytes} and
// {addr} as placeholders; slots and stores are left for --probe-lower. A
// kernel without a plan stays as it was.
// RUN: gpu-opt %s --probe-insert | FileCheck %s --enable-var-scope

// Entry: the probes' registers and the entry snippets. A guarded exit gets
// the exit snippets before it (its guard is --probe-lower's), a guarded
// instruction its snippet behind a branch on its guard.
// CHECK-LABEL: ptx.entry ".visible .entry k(
// CHECK-SAME:    gpuopt.probe_plan = #gpuopt.probe_plan<specs = ["block_sched", "gmem_bytes"], params = 1>
// CHECK-NEXT:    ptx.probe "kernel.entry" buffers ["__probe_block_sched", "__probe_gmem_bytes"] {
// CHECK-NEXT:      ptx.reg ".reg .u32 %__pr_block_sched_start"
// CHECK:           ptx.reg ".reg .u64 %__pr_gmem_bytes_async"
// CHECK-NEXT:      ptx.inst "mov.u32 %__pr_block_sched_start, %clock"
// CHECK-NEXT:      ptx.inst "mov.u64 %__pr_gmem_bytes_sync, 0"
// CHECK-NEXT:      ptx.inst "mov.u64 %__pr_gmem_bytes_async, 0"
// CHECK-NEXT:    }
// CHECK:         ptx.inst "setp.eq.u32 %p1, %r1, 0"
// CHECK-NEXT:    ptx.probe "kernel.exit" {
// CHECK-NEXT:      ptx.inst "mov.u32 %__pr_block_sched_end, %clock"
// CHECK-NEXT:      ptx.inst "mov.u64 %__pr_block_sched_gend, %globaltimer"
// CHECK-NEXT:      ptx.inst "mov.u32 %__pr_block_sched_sm, %smid"
// CHECK-NEXT:      ptx.probe_save @block_sched [#ptx.reg<"%__pr_block_sched_gend">, #ptx.reg<"%__pr_block_sched_start">, #ptx.reg<"%__pr_block_sched_end">, #ptx.reg<"%__pr_block_sched_sm">]
// CHECK-NEXT:      ptx.probe_save @gmem_bytes [#ptx.reg<"%__pr_gmem_bytes_sync">, #ptx.reg<"%__pr_gmem_bytes_async">]
// CHECK-NEXT:    }
// CHECK-NEXT:    ptx.inst "@%p1 ret"
// CHECK-NEXT:    ptx.probe "before st.global.u32" {
// CHECK-NEXT:      ptx.inst "@!%p1 bra [[SKIP:\$__pr_skip_[0-9]+]]"
// CHECK-NEXT:      ptx.inst "add.u64 %__pr_gmem_bytes_sync, %__pr_gmem_bytes_sync, {bytes}"
// CHECK-NEXT:      ptx.label "[[SKIP]]:"
// CHECK-NEXT:    }
// CHECK-NEXT:    ptx.inst "@%p1 st.global.u32 [%rd2+4], %r1"
// CHECK-NEXT:    ptx.probe "before ld.global.v2.u32" {
// CHECK-NEXT:      ptx.inst "add.u64 %__pr_gmem_bytes_sync, %__pr_gmem_bytes_sync, {bytes}"
// CHECK-NEXT:    }
// CHECK-NEXT:    ptx.inst "ld.global.v2.u32 {%r2, %r3}, [%rd2+8]"
// CHECK-NEXT:    ptx.probe "kernel.exit" {
// CHECK:           ptx.probe_save @gmem_bytes
// CHECK-NEXT:    }
// CHECK-NEXT:    ptx.inst "ret"
// CHECK-NEXT:  }

// A body that falls off its end: its exit code goes at the end (here only
// the dynamic map's slot count, which --probe-lower adds). dmat's saves at
// instructions take {addr} and {bytes}.
// CHECK-LABEL: ptx.entry ".visible .entry falls(
// CHECK-NEXT:    ptx.probe "kernel.entry" buffers ["__probe_dmat"] {
// CHECK:         ptx.inst "mov.u64 %rd1, 0"
// CHECK-NEXT:    ptx.probe "before st.global.u64" {
// CHECK-NEXT:      ptx.inst "mov.u32 %__pr_dmat_clk, %clock"
// CHECK-NEXT:      ptx.inst "mov.u64 %__pr_dmat_addr, {addr}"
// CHECK-NEXT:      ptx.inst "mov.u32 %__pr_dmat_info, {bytes}"
// CHECK-NEXT:      ptx.inst "or.b32 %__pr_dmat_info, %__pr_dmat_info, 0x80000000"
// CHECK-NEXT:      ptx.probe_save @dmat [#ptx.reg<"%__pr_dmat_addr">, #ptx.reg<"%__pr_dmat_clk">, #ptx.reg<"%__pr_dmat_info">]
// CHECK-NEXT:    }
// CHECK-NEXT:    ptx.inst "st.global.u64 [%rd1+16], %rd1"
// CHECK-NEXT:    ptx.probe "kernel.exit" {
// CHECK-NEXT:    }
// CHECK-NEXT:  }

// CHECK-LABEL: ptx.entry ".visible .entry unplanned(.param .u32 n)" {
// CHECK-NEXT:    ptx.inst "ret"
// CHECK-NEXT:  }

// A fused kernel (a thread split) with a replicated part: no part and no
// copy until a thread enters a part's scope; there each part sets its index
// and the copy of its block the thread runs: 0 for part 0, of one block;
// (%tid.x - 32) / 64 for the two 64-thread copies of part 1 on threads
// [32, 160), as --hfuse-apply computes it.
// CHECK-LABEL: ptx.entry ".visible .entry rep(
// CHECK-NEXT:    ptx.probe "kernel.entry" buffers ["__probe_block_sched"] {
// CHECK:           ptx.reg ".reg .b32 %__pr_part"
// CHECK-NEXT:      ptx.reg ".reg .b32 %__pr_copy"
// CHECK-NEXT:      ptx.inst "mov.u32 %__pr_part, -1"
// CHECK-NEXT:      ptx.inst "mov.u32 %__pr_copy, -1"
// CHECK:         ptx.scope {
// CHECK-NEXT:      ptx.probe "part 0" {
// CHECK-NEXT:        ptx.inst "mov.u32 %__pr_part, 0"
// CHECK-NEXT:        ptx.inst "mov.u32 %__pr_copy, 0"
// CHECK-NEXT:      }
// CHECK:         ptx.scope {
// CHECK-NEXT:      ptx.probe "part 1" {
// CHECK-NEXT:        ptx.inst "mov.u32 %__pr_part, 1"
// CHECK-NEXT:        ptx.inst "mov.u32 %__pr_copy, %tid.x"
// CHECK-NEXT:        ptx.inst "sub.u32 %__pr_copy, %__pr_copy, 32"
// CHECK-NEXT:        ptx.inst "div.u32 %__pr_copy, %__pr_copy, 64"
// CHECK-NEXT:      }

ptx.module @m version "8.7" target ["sm_90a"] address_size 64 {
  ptx.entry ".visible .entry k(.param .u64 .ptr .global .align 8 k_p, .param .u64 .ptr .global .align 8 __probe_block_sched, .param .u64 .ptr .global .align 16 __probe_gmem_bytes)" attributes {gpuopt.probe_plan = #gpuopt.probe_plan<specs = ["block_sched", "gmem_bytes"], params = 1>} {
    ptx.reg ".reg .pred %p<2>"
    ptx.reg ".reg .b32 %r<4>"
    ptx.reg ".reg .b64 %rd<3>"
    ptx.inst "ld.param.u64 %rd1, [k_p]"
    ptx.inst "cvta.to.global.u64 %rd2, %rd1"
    ptx.inst "mov.u32 %r1, %tid.x"
    ptx.inst "setp.eq.u32 %p1, %r1, 0"
    ptx.inst "@%p1 ret"
    ptx.inst "@%p1 st.global.u32 [%rd2+4], %r1"
    ptx.inst "ld.global.v2.u32 {%r2, %r3}, [%rd2+8]"
    ptx.inst "ret"
  }
  ptx.entry ".visible .entry falls(.param .u64 .ptr .global .align 8 __probe_dmat, .param .u32 __probe_dmat_capacity)" attributes {gpuopt.probe_plan = #gpuopt.probe_plan<specs = ["dmat"], params = 0>} {
    ptx.reg ".reg .b64 %rd<2>"
    ptx.inst "mov.u64 %rd1, 0"
    ptx.inst "st.global.u64 [%rd1+16], %rd1"
  }
  ptx.entry ".visible .entry unplanned(.param .u32 n)" {
    ptx.inst "ret"
  }
}
ptx.module @rep version "8.7" target ["sm_90a"] address_size 64 {
  ptx.entry ".visible .entry rep(.param .u64 x, .param .u64 .ptr .global .align 16 __probe_block_sched)" attributes {gpuopt.fusion = #gpuopt.fusion_info<strategy = thread, grid = [64, 1, 1], dynamic_smem = 0, parts = [<kernel = "ka", module = "a", threads = [0, 32], block = [32, 1, 1], grid = [64, 1, 1], dynamic_smem_offset = 0, dynamic_smem = 0, arg_map = [0]>, <kernel = "kb", module = "b", threads = [32, 160], block = [64, 1, 1], grid = [128, 1, 1], dynamic_smem_offset = 0, dynamic_smem = 0, arg_map = [], replicas = 2>]>, gpuopt.probe_plan = #gpuopt.probe_plan<specs = ["block_sched"], params = 1>} {
    ptx.scope {
      ptx.inst "ret"
    }
    ptx.scope {
      ptx.inst "ret"
    }
  }
}
