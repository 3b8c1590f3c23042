// --probe-keep-occupancy alone, on a lowered kernel whose plan carries
// ptxas's report from before probing (here a kernel that had 255
// registers, so probing cannot cost it blocks per SM): ptxas's report of the
// probed kernel is within the original's, so the kernel keeps its placement
// (the exit function) and gets no .maxnreg; the plan is gone afterwards.
// REQUIRES: ptxas
// RUN: gpu-opt %s --probe-keep-occupancy | FileCheck %s

// CHECK-LABEL: ptx.func ".func __pr_exit_k(.param .b64 __probe_block_sched, .param .b32 __pr_in_block_sched_start)" {
// CHECK-LABEL: ptx.entry ".visible .entry k(.param .u64 .ptr .global .align 8 __probe_block_sched)" {
// CHECK:         ptx.inst "@%p1 call __pr_exit_k, (__pr_buf_block_sched, __pr_arg_block_sched_start)"
// CHECK-NOT:     gpuopt.probe_plan
// CHECK-NOT:     .maxnreg
ptx.module @m version "8.7" target ["sm_90a"] address_size 64 {
  ptx.func ".func __pr_exit_k(.param .b64 __probe_block_sched, .param .b32 __pr_in_block_sched_start)" {
    ptx.probe "kernel.exit" buffers ["__probe_block_sched"] {
      ptx.reg ".reg .u32 %__pr_block_sched_start"
      ptx.reg ".reg .u32 %__pr_block_sched_end"
      ptx.reg ".reg .u64 %__pr_block_sched_gend"
      ptx.reg ".reg .u32 %__pr_block_sched_sm"
      ptx.reg ".reg .b32 %__pr_t0"
      ptx.reg ".reg .b32 %__pr_t1"
      ptx.reg ".reg .b32 %__pr_t2"
      ptx.reg ".reg .b32 %__pr_n0"
      ptx.reg ".reg .b32 %__pr_n1"
      ptx.reg ".reg .b32 %__pr_n2"
      ptx.reg ".reg .b32 %__pr_lin"
      ptx.reg ".reg .b32 %__pr_units"
      ptx.reg ".reg .b64 %__pr_blk"
      ptx.reg ".reg .b64 %__pr_nblk"
      ptx.reg ".reg .b64 %__pr_w"
      ptx.reg ".reg .b32 %__pr_w32"
      ptx.reg ".reg .b64 %__pr_a"
      ptx.reg ".reg .b64 %__pr_x"
      ptx.reg ".reg .b64 %__pr_slot"
      ptx.reg ".reg .b64 %__pr_off"
      ptx.reg ".reg .pred %__pr_lead_warp"
      ptx.reg ".reg .pred %__pr_lead_block"
      ptx.reg ".reg .pred %__pr_ok"
      ptx.reg ".reg .pred %__pr_over"
      ptx.reg ".reg .b64 %__pr_addr_block_sched"
      ptx.reg ".reg .b64 %__pr_overflow_block_sched"
      ptx.reg ".reg .b32 %__pr_count_block_sched"
      ptx.inst "ld.param.b32 %__pr_block_sched_start, [__pr_in_block_sched_start]"
      ptx.inst "mov.u32 %__pr_t0, %laneid"
      ptx.inst "setp.ne.u32 %__pr_ok, %__pr_t0, 0"
      ptx.inst "@%__pr_ok bra $__pr_done_0"
      ptx.inst "mov.u32 %__pr_block_sched_end, %clock"
      ptx.inst "mov.u64 %__pr_block_sched_gend, %globaltimer"
      ptx.inst "mov.u32 %__pr_block_sched_sm, %smid"
      ptx.inst "mov.u32 %__pr_t0, %tid.x"
      ptx.inst "mov.u32 %__pr_t1, %tid.y"
      ptx.inst "mov.u32 %__pr_t2, %tid.z"
      ptx.inst "mov.u32 %__pr_n0, %ntid.x"
      ptx.inst "mov.u32 %__pr_n1, %ntid.y"
      ptx.inst "mov.u32 %__pr_n2, %ntid.z"
      ptx.inst "mad.lo.u32 %__pr_lin, %__pr_t2, %__pr_n1, %__pr_t1"
      ptx.inst "mad.lo.u32 %__pr_lin, %__pr_lin, %__pr_n0, %__pr_t0"
      ptx.inst "mul.lo.u32 %__pr_n1, %__pr_n1, %__pr_n0"
      ptx.inst "mul.lo.u32 %__pr_n2, %__pr_n2, %__pr_n1"
      ptx.inst "and.b32 %__pr_t0, %__pr_lin, 31"
      ptx.inst "setp.eq.u32 %__pr_lead_warp, %__pr_t0, 0"
      ptx.inst "setp.eq.u32 %__pr_lead_block, %__pr_lin, 0"
      ptx.inst "mov.u32 %__pr_t0, %ctaid.x"
      ptx.inst "mov.u32 %__pr_t1, %ctaid.y"
      ptx.inst "mov.u32 %__pr_t2, %ctaid.z"
      ptx.inst "mov.u32 %__pr_n0, %nctaid.y"
      ptx.inst "mov.u32 %__pr_n1, %nctaid.x"
      ptx.inst "mad.lo.u32 %__pr_t2, %__pr_t2, %__pr_n0, %__pr_t1"
      ptx.inst "cvt.u64.u32 %__pr_w, %__pr_t0"
      ptx.inst "mad.wide.u32 %__pr_blk, %__pr_t2, %__pr_n1, %__pr_w"
      ptx.inst "add.u32 %__pr_units, %__pr_n2, 31"
      ptx.inst "shr.u32 %__pr_units, %__pr_units, 5"
      ptx.inst "shr.u32 %__pr_t1, %__pr_lin, 5"
      ptx.inst "ld.param.u64 %__pr_addr_block_sched, [__probe_block_sched]"
      ptx.inst "cvta.to.global.u64 %__pr_addr_block_sched, %__pr_addr_block_sched"
      ptx.inst "cvt.u64.u32 %__pr_w, %__pr_units"
      ptx.inst "cvt.u64.u32 %__pr_slot, %__pr_t1"
      ptx.inst "mad.lo.u64 %__pr_slot, %__pr_blk, %__pr_w, %__pr_slot"
      ptx.inst "mad.lo.u64 %__pr_addr_block_sched, %__pr_slot, 24, %__pr_addr_block_sched"
      ptx.inst "st.global.b64 [%__pr_addr_block_sched+0], %__pr_block_sched_gend"
      ptx.inst "st.global.v2.b32 [%__pr_addr_block_sched+8], {%__pr_block_sched_start, %__pr_block_sched_end}"
      ptx.inst "st.global.b32 [%__pr_addr_block_sched+16], %__pr_block_sched_sm"
      ptx.label "$__pr_done_0:"
    }
    ptx.inst "ret"
  }
  ptx.entry ".visible .entry k(.param .u64 .ptr .global .align 8 __probe_block_sched)" attributes {gpuopt.probe_plan = #gpuopt.probe_plan<specs = ["block_sched"], params = 0, exit_function = "__pr_exit_k", ptxas_before = <registers = 255, shared_bytes = 0, local_bytes = 0, spill_stores = 0, spill_loads = 0>>} {
    ptx.probe "kernel.entry" buffers ["__probe_block_sched"] {
      ptx.reg ".reg .u32 %__pr_block_sched_start"
      ptx.reg ".reg .u32 %__pr_block_sched_end"
      ptx.reg ".reg .u64 %__pr_block_sched_gend"
      ptx.reg ".reg .u32 %__pr_block_sched_sm"
      ptx.reg ".reg .b32 %__pr_t0"
      ptx.reg ".reg .b32 %__pr_t1"
      ptx.reg ".reg .b32 %__pr_t2"
      ptx.reg ".reg .b32 %__pr_n0"
      ptx.reg ".reg .b32 %__pr_n1"
      ptx.reg ".reg .b32 %__pr_n2"
      ptx.reg ".reg .b32 %__pr_lin"
      ptx.reg ".reg .b32 %__pr_units"
      ptx.reg ".reg .b64 %__pr_blk"
      ptx.reg ".reg .b64 %__pr_nblk"
      ptx.reg ".reg .b64 %__pr_w"
      ptx.reg ".reg .b32 %__pr_w32"
      ptx.reg ".reg .b64 %__pr_a"
      ptx.reg ".reg .b64 %__pr_x"
      ptx.reg ".reg .b64 %__pr_slot"
      ptx.reg ".reg .b64 %__pr_off"
      ptx.reg ".reg .pred %__pr_lead_warp"
      ptx.reg ".reg .pred %__pr_lead_block"
      ptx.reg ".reg .pred %__pr_ok"
      ptx.reg ".reg .pred %__pr_over"
      ptx.reg ".reg .b64 %__pr_addr_block_sched"
      ptx.reg ".reg .b64 %__pr_overflow_block_sched"
      ptx.reg ".reg .b32 %__pr_count_block_sched"
      ptx.inst "mov.u32 %__pr_block_sched_start, %clock"
    }
    ptx.reg ".reg .pred %p<2>"
    ptx.reg ".reg .b32 %r<2>"
    ptx.inst "mov.u32 %r1, %tid.x"
    ptx.inst "setp.eq.u32 %p1, %r1, 0"
    ptx.probe "kernel.exit" {
      ptx.scope {
        ptx.var ".param .b64 __pr_buf_block_sched"
        ptx.inst "ld.param.u64 %__pr_addr_block_sched, [__probe_block_sched]"
        ptx.inst "st.param.b64 [__pr_buf_block_sched], %__pr_addr_block_sched"
        ptx.var ".param .b32 __pr_arg_block_sched_start"
        ptx.inst "st.param.b32 [__pr_arg_block_sched_start], %__pr_block_sched_start"
        ptx.inst "@%p1 call __pr_exit_k, (__pr_buf_block_sched, __pr_arg_block_sched_start)"
      }
    }
    ptx.inst "@%p1 ret"
    ptx.probe "kernel.exit" {
      ptx.scope {
        ptx.var ".param .b64 __pr_buf_block_sched"
        ptx.inst "ld.param.u64 %__pr_addr_block_sched, [__probe_block_sched]"
        ptx.inst "st.param.b64 [__pr_buf_block_sched], %__pr_addr_block_sched"
        ptx.var ".param .b32 __pr_arg_block_sched_start"
        ptx.inst "st.param.b32 [__pr_arg_block_sched_start], %__pr_block_sched_start"
        ptx.inst "call __pr_exit_k, (__pr_buf_block_sched, __pr_arg_block_sched_start)"
      }
    }
    ptx.inst "ret"
  }
}
