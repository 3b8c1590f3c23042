// --probe-lower alone, on what --probe-insert leaves: slots, record stores,
// counted stores with the overflow counter and slot counts, the exit code
// inline or in an exit function, and the placeholders' values.
// RUN: gpu-opt %s --split-input-file --probe-lower | FileCheck %s --enable-var-scope

// Maps written at exits only, from registers: the exit code goes into an
// exit function that computes the warp's slot itself, only lane 0 going on;
// each exit calls it under the exit's guard. The plan and the saves are gone.
// CHECK-LABEL: ptx.func ".func __pr_exit_k(.param .b64 __probe_block_sched, .param .b32 __pr_in_block_sched_start)" {
// CHECK-NEXT:    ptx.probe "kernel.exit" buffers ["__probe_block_sched"] {
// CHECK:           ptx.inst "ld.param.b32 %__pr_block_sched_start, [__pr_in_block_sched_start]"
// CHECK-NEXT:      ptx.inst "mov.u32 %__pr_t0, %laneid"
// CHECK-NEXT:      ptx.inst "setp.ne.u32 %__pr_ok, %__pr_t0, 0"
// CHECK-NEXT:      ptx.inst "@%__pr_ok bra [[DONE:\$__pr_done_[0-9]+]]"
// CHECK-NEXT:      ptx.inst "mov.u32 %__pr_block_sched_end, %clock"
// CHECK:           ptx.inst "mad.lo.u64 %__pr_addr_block_sched, %__pr_slot, 24, %__pr_addr_block_sched"
// CHECK-NEXT:      ptx.inst "st.global.b64 [%__pr_addr_block_sched+0], %__pr_block_sched_gend"
// CHECK-NEXT:      ptx.inst "st.global.v2.b32 [%__pr_addr_block_sched+8], {%__pr_block_sched_start, %__pr_block_sched_end}"
// CHECK-NEXT:      ptx.inst "st.global.b32 [%__pr_addr_block_sched+16], %__pr_block_sched_sm"
// CHECK-NEXT:      ptx.label "[[DONE]]:"
// CHECK-NEXT:    }
// CHECK-NEXT:    ptx.inst "ret"
// CHECK-LABEL: ptx.entry ".visible .entry k(.param .u64 .ptr .global .align 8 __probe_block_sched)" {
// CHECK-NEXT:    ptx.probe "kernel.entry" buffers ["__probe_block_sched"] {
// CHECK:           ptx.reg ".reg .b64 %__pr_addr_block_sched"
// CHECK-NOT:       ptx.inst "mov.u32 %__pr_t0, %tid.x"
// CHECK:           ptx.inst "mov.u32 %__pr_block_sched_start, %clock"
// CHECK-NEXT:    }
// CHECK:         ptx.probe "kernel.exit" {
// CHECK-NEXT:      ptx.scope {
// CHECK:             ptx.inst "@%p1 call __pr_exit_k, (__pr_buf_block_sched, __pr_arg_block_sched_start)"
// CHECK:         ptx.inst "@%p1 ret"
// CHECK-NEXT:    ptx.probe "kernel.exit" {
// CHECK-NEXT:      ptx.scope {
// CHECK:             ptx.inst "call __pr_exit_k, (__pr_buf_block_sched, __pr_arg_block_sched_start)"
// CHECK:         ptx.inst "ret"
// CHECK-NOT:     ptx.probe_save
// CHECK-NOT:     gpuopt.probe_plan

// Inline exits (the plan's second placement): the guarded exit's code is
// branched around when its guard fails; labels are numbered as they come.
// CHECK-LABEL: ptx.entry ".visible .entry k(
// CHECK-NOT:     ptx.func
// CHECK:         ptx.probe "kernel.exit" {
// CHECK-NEXT:      ptx.inst "@!%p1 bra [[SKIP:\$__pr_skip_[0-9]+]]"
// CHECK-NEXT:      ptx.inst "mov.u32 %__pr_t0, %laneid"
// CHECK-NEXT:      ptx.inst "setp.ne.u32 %__pr_ok, %__pr_t0, 0"
// CHECK-NEXT:      ptx.inst "@%__pr_ok bra [[DONE1:\$__pr_done_[0-9]+]]"
// CHECK:           ptx.inst "st.global.b32 [%__pr_addr_block_sched+16], %__pr_block_sched_sm"
// CHECK-NEXT:      ptx.label "[[DONE1]]:"
// CHECK-NEXT:      ptx.label "[[SKIP]]:"
// CHECK-NEXT:    }
// CHECK-NEXT:    ptx.inst "@%p1 ret"
// CHECK-NEXT:    ptx.probe "kernel.exit" {
// CHECK-NEXT:      ptx.inst "mov.u32 %__pr_t0, %laneid"
// CHECK-NEXT:      ptx.inst "setp.ne.u32 %__pr_ok, %__pr_t0, 0"
// CHECK-NEXT:      ptx.inst "@%__pr_ok bra [[DONE2:\$__pr_done_[0-9]+]]"
// CHECK:           ptx.label "[[DONE2]]:"
// CHECK-NEXT:    }
// CHECK-NEXT:    ptx.inst "ret"

// {bytes} of each instruction (4 for a u32, 8 for a v2.u32); the label
// around a guarded instruction's snippet is numbered with the lowering's.
// The counter passed to the exit function is the one instructions write;
// the constant one is set by the function itself.
// CHECK-LABEL: ptx.func ".func __pr_exit_k(.param .b64 __probe_gmem_bytes, .param .b64 __pr_in_gmem_bytes_sync)" {
// CHECK:           ptx.inst "ld.param.b64 %__pr_gmem_bytes_sync, [__pr_in_gmem_bytes_sync]"
// CHECK-NEXT:      ptx.inst "mov.u64 %__pr_gmem_bytes_async, 0"
// CHECK:           ptx.inst "st.global.v2.b64 [%__pr_addr_gmem_bytes+0], {%__pr_gmem_bytes_sync, %__pr_gmem_bytes_async}"
// CHECK-LABEL: ptx.entry ".visible .entry k(
// CHECK:         ptx.probe "before st.global.u32" {
// CHECK-NEXT:      ptx.inst "@!%p1 bra [[ISKIP:\$__pr_skip_[0-9]+]]"
// CHECK-NEXT:      ptx.inst "add.u64 %__pr_gmem_bytes_sync, %__pr_gmem_bytes_sync, 4"
// CHECK-NEXT:      ptx.label "[[ISKIP]]:"
// CHECK-NEXT:    }
// CHECK-NEXT:    ptx.inst "@%p1 st.global.u32 [%rd1+4], %r1"
// CHECK-NEXT:    ptx.probe "before ld.global.v2.u32" {
// CHECK-NEXT:      ptx.inst "add.u64 %__pr_gmem_bytes_sync, %__pr_gmem_bytes_sync, 8"
// CHECK-NEXT:    }

// A dynamic map: the slot, slot-count and overflow addresses from the
// capacity parameter; each save counted and kept while the slot has room;
// {addr} copied before the instruction; the count stored at the exit.
// CHECK-LABEL: ptx.entry ".visible .entry k(.param .u64 .ptr .global .align 16 __probe_dmat, .param .u32 __probe_dmat_capacity)" {
// CHECK:           ptx.inst "ld.param.u32 %__pr_cap_dmat, [__probe_dmat_capacity]"
// CHECK-NEXT:      ptx.inst "mul.wide.u32 %__pr_x, %__pr_cap_dmat, 16"
// CHECK:           ptx.inst "add.u64 %__pr_overflow_dmat, %__pr_addr_dmat, %__pr_off"
// CHECK:           ptx.inst "mov.u32 %__pr_count_dmat, 0"
// CHECK-NEXT:    }
// CHECK:         ptx.probe "before st.global.u64" {
// CHECK-NEXT:      ptx.inst "add.s64 %__pr_a, %rd1, 16"
// CHECK-NEXT:      ptx.inst "mov.u32 %__pr_dmat_clk, %clock"
// CHECK-NEXT:      ptx.inst "mov.u64 %__pr_dmat_addr, %__pr_a"
// CHECK-NEXT:      ptx.inst "mov.u32 %__pr_dmat_info, 8"
// CHECK-NEXT:      ptx.inst "or.b32 %__pr_dmat_info, %__pr_dmat_info, 0x80000000"
// CHECK-NEXT:      ptx.inst "setp.lt.and.u32 %__pr_ok, %__pr_count_dmat, %__pr_cap_dmat, %__pr_lead_warp"
// CHECK-NEXT:      ptx.inst "setp.ge.and.u32 %__pr_over, %__pr_count_dmat, %__pr_cap_dmat, %__pr_lead_warp"
// CHECK-NEXT:      ptx.inst "@%__pr_ok st.global.b64 [%__pr_addr_dmat+0], %__pr_dmat_addr"
// CHECK-NEXT:      ptx.inst "@%__pr_ok st.global.v2.b32 [%__pr_addr_dmat+8], {%__pr_dmat_clk, %__pr_dmat_info}"
// CHECK-NEXT:      ptx.inst "@%__pr_ok add.u64 %__pr_addr_dmat, %__pr_addr_dmat, 16"
// CHECK-NEXT:      ptx.inst "add.u32 %__pr_count_dmat, %__pr_count_dmat, 1"
// CHECK-NEXT:      ptx.inst "@%__pr_over red.global.add.u64 [%__pr_overflow_dmat], 1"
// CHECK-NEXT:    }
// CHECK-NEXT:    ptx.inst "st.global.u64 [%rd1+16], %rd1"
// CHECK-NEXT:    ptx.probe "kernel.exit" {
// CHECK-NEXT:      ptx.inst "@%__pr_lead_warp st.global.u32 [%__pr_counts_dmat], %__pr_count_dmat"
// CHECK-NEXT:    }
// CHECK-NEXT:    ptx.inst "ret"

ptx.module @m version "8.7" target ["sm_90a"] address_size 64 {
  ptx.entry ".visible .entry k(.param .u64 .ptr .global .align 8 __probe_block_sched)" attributes {gpuopt.probe_plan = #gpuopt.probe_plan<specs = ["block_sched"], params = 0>} {
    ptx.probe "kernel.entry" buffers ["__probe_block_sched"] {
      ptx.reg ".reg .u32 %__pr_block_sched_start"
      ptx.reg ".reg .u32 %__pr_block_sched_end"
      ptx.reg ".reg .u64 %__pr_block_sched_gend"
      ptx.reg ".reg .u32 %__pr_block_sched_sm"
      ptx.inst "mov.u32 %__pr_block_sched_start, %clock"
    }
    ptx.reg ".reg .pred %p<2>"
    ptx.reg ".reg .b32 %r<2>"
    ptx.inst "mov.u32 %r1, %tid.x"
    ptx.inst "setp.eq.u32 %p1, %r1, 0"
    ptx.probe "kernel.exit" {
      ptx.inst "mov.u32 %__pr_block_sched_end, %clock"
      ptx.inst "mov.u64 %__pr_block_sched_gend, %globaltimer"
      ptx.inst "mov.u32 %__pr_block_sched_sm, %smid"
      ptx.probe_save @block_sched [#ptx.reg<"%__pr_block_sched_gend">, #ptx.reg<"%__pr_block_sched_start">, #ptx.reg<"%__pr_block_sched_end">, #ptx.reg<"%__pr_block_sched_sm">]
    }
    ptx.inst "@%p1 ret"
    ptx.probe "kernel.exit" {
      ptx.inst "mov.u32 %__pr_block_sched_end, %clock"
      ptx.inst "mov.u64 %__pr_block_sched_gend, %globaltimer"
      ptx.inst "mov.u32 %__pr_block_sched_sm, %smid"
      ptx.probe_save @block_sched [#ptx.reg<"%__pr_block_sched_gend">, #ptx.reg<"%__pr_block_sched_start">, #ptx.reg<"%__pr_block_sched_end">, #ptx.reg<"%__pr_block_sched_sm">]
    }
    ptx.inst "ret"
  }
}

// -----

ptx.module @m version "8.7" target ["sm_90a"] address_size 64 {
  ptx.entry ".visible .entry k(.param .u64 .ptr .global .align 8 __probe_block_sched)" attributes {gpuopt.probe_plan = #gpuopt.probe_plan<specs = ["block_sched"], inline_exits = true, params = 0>} {
    ptx.probe "kernel.entry" buffers ["__probe_block_sched"] {
      ptx.reg ".reg .u32 %__pr_block_sched_start"
      ptx.reg ".reg .u32 %__pr_block_sched_end"
      ptx.reg ".reg .u64 %__pr_block_sched_gend"
      ptx.reg ".reg .u32 %__pr_block_sched_sm"
      ptx.inst "mov.u32 %__pr_block_sched_start, %clock"
    }
    ptx.reg ".reg .pred %p<2>"
    ptx.reg ".reg .b32 %r<2>"
    ptx.inst "mov.u32 %r1, %tid.x"
    ptx.inst "setp.eq.u32 %p1, %r1, 0"
    ptx.probe "kernel.exit" {
      ptx.inst "mov.u32 %__pr_block_sched_end, %clock"
      ptx.inst "mov.u64 %__pr_block_sched_gend, %globaltimer"
      ptx.inst "mov.u32 %__pr_block_sched_sm, %smid"
      ptx.probe_save @block_sched [#ptx.reg<"%__pr_block_sched_gend">, #ptx.reg<"%__pr_block_sched_start">, #ptx.reg<"%__pr_block_sched_end">, #ptx.reg<"%__pr_block_sched_sm">]
    }
    ptx.inst "@%p1 ret"
    ptx.probe "kernel.exit" {
      ptx.inst "mov.u32 %__pr_block_sched_end, %clock"
      ptx.inst "mov.u64 %__pr_block_sched_gend, %globaltimer"
      ptx.inst "mov.u32 %__pr_block_sched_sm, %smid"
      ptx.probe_save @block_sched [#ptx.reg<"%__pr_block_sched_gend">, #ptx.reg<"%__pr_block_sched_start">, #ptx.reg<"%__pr_block_sched_end">, #ptx.reg<"%__pr_block_sched_sm">]
    }
    ptx.inst "ret"
  }
}

// -----

ptx.module @m version "8.7" target ["sm_90a"] address_size 64 {
  ptx.entry ".visible .entry k(.param .u64 .ptr .global .align 8 k_p, .param .u64 .ptr .global .align 16 __probe_gmem_bytes)" attributes {gpuopt.probe_plan = #gpuopt.probe_plan<specs = ["gmem_bytes"], params = 1>} {
    ptx.probe "kernel.entry" buffers ["__probe_gmem_bytes"] {
      ptx.reg ".reg .u64 %__pr_gmem_bytes_sync"
      ptx.reg ".reg .u64 %__pr_gmem_bytes_async"
      ptx.inst "mov.u64 %__pr_gmem_bytes_sync, 0"
      ptx.inst "mov.u64 %__pr_gmem_bytes_async, 0"
    }
    ptx.reg ".reg .pred %p<2>"
    ptx.reg ".reg .b32 %r<4>"
    ptx.reg ".reg .b64 %rd<3>"
    ptx.inst "ld.param.u64 %rd1, [k_p]"
    ptx.inst "setp.eq.u32 %p1, %r1, 0"
    ptx.probe "before st.global.u32" {
      ptx.inst "@!%p1 bra $__pr_skip_0"
      ptx.inst "add.u64 %__pr_gmem_bytes_sync, %__pr_gmem_bytes_sync, {bytes}"
      ptx.label "$__pr_skip_0:"
    }
    ptx.inst "@%p1 st.global.u32 [%rd1+4], %r1"
    ptx.probe "before ld.global.v2.u32" {
      ptx.inst "add.u64 %__pr_gmem_bytes_sync, %__pr_gmem_bytes_sync, {bytes}"
    }
    ptx.inst "ld.global.v2.u32 {%r2, %r3}, [%rd1+8]"
    ptx.probe "kernel.exit" {
      ptx.probe_save @gmem_bytes [#ptx.reg<"%__pr_gmem_bytes_sync">, #ptx.reg<"%__pr_gmem_bytes_async">]
    }
    ptx.inst "ret"
  }
}

// -----

ptx.module @m version "8.7" target ["sm_90a"] address_size 64 {
  ptx.entry ".visible .entry k(.param .u64 .ptr .global .align 16 __probe_dmat, .param .u32 __probe_dmat_capacity)" attributes {gpuopt.probe_plan = #gpuopt.probe_plan<specs = ["dmat"], params = 0>} {
    ptx.probe "kernel.entry" buffers ["__probe_dmat"] {
      ptx.reg ".reg .u64 %__pr_dmat_addr"
      ptx.reg ".reg .u32 %__pr_dmat_clk"
      ptx.reg ".reg .u32 %__pr_dmat_info"
    }
    ptx.reg ".reg .b64 %rd<2>"
    ptx.inst "mov.u64 %rd1, 0"
    ptx.probe "before st.global.u64" {
      ptx.inst "mov.u32 %__pr_dmat_clk, %clock"
      ptx.inst "mov.u64 %__pr_dmat_addr, {addr}"
      ptx.inst "mov.u32 %__pr_dmat_info, {bytes}"
      ptx.inst "or.b32 %__pr_dmat_info, %__pr_dmat_info, 0x80000000"
      ptx.probe_save @dmat [#ptx.reg<"%__pr_dmat_addr">, #ptx.reg<"%__pr_dmat_clk">, #ptx.reg<"%__pr_dmat_info">]
    }
    ptx.inst "st.global.u64 [%rd1+16], %rd1"
    ptx.probe "kernel.exit" {
    }
    ptx.inst "ret"
  }
}
