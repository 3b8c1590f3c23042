// --probe-plan alone: it lays out each map's records, appends one buffer
// parameter per map (and a capacity parameter per dynamic map) to the kernels
// `kernels=` names, and records its decisions on them (#gpuopt.probe_map,
// #gpuopt.probe_plan); the kernel bodies and the other kernels stay as they
// were.
// RUN: gpu-opt %s --split-input-file -verify-diagnostics --probe-plan="specs=block_sched,gmem_bytes keep-occupancy=false kernels=k" | FileCheck %s
// RUN: gpu-opt %s --split-input-file -verify-diagnostics --probe-plan="specs=dmat keep-occupancy=false" | FileCheck %s --check-prefix=DYN

// Two probes: block_sched's warp records (24 bytes: u64 then three u32,
// 8-aligned), gmem_bytes' thread records (16 bytes, so its buffer is
// 16-aligned for vector stores).
// CHECK-LABEL: ptx.entry ".visible .entry k(.param .u64 .ptr .global .align 8 k_p, .param .u64 .ptr .global .align 8 __probe_block_sched, .param .u64 .ptr .global .align 16 __probe_gmem_bytes)"
// CHECK-SAME: gpuopt.probe_plan = #gpuopt.probe_plan<specs = ["block_sched", "gmem_bytes"], params = 1>
// CHECK-SAME: gpuopt.probes = [#gpuopt.probe_map<name = "block_sched", probe = "block_sched", param = 1, level = warp, capacity = 1, record_bytes = 24, fields = [<name = "gend", type = "u64", offset = 0>, <name = "start", type = "u32", offset = 8>, <name = "end", type = "u32", offset = 12>, <name = "sm", type = "u32", offset = 16>]>, #gpuopt.probe_map<name = "gmem_bytes", probe = "gmem_bytes", param = 2, level = thread, capacity = 1, record_bytes = 16, fields = [<name = "sync", type = "u64", offset = 0>, <name = "async", type = "u64", offset = 8>]>]
// CHECK-NOT: ptx.probe
// CHECK: ptx.inst "@%p1 ret"
// CHECK-NEXT: ptx.inst "@%p1 st.global.u32 [%rd2+4], %r1"
// CHECK-LABEL: ptx.entry ".visible .entry other(.param .u32 n)" {
// CHECK-NEXT: ptx.inst "ret"

// DYN-LABEL: ptx.entry ".visible .entry k(.param .u64 .ptr .global .align 8 k_p, .param .u64 .ptr .global .align 16 __probe_dmat, .param .u32 __probe_dmat_capacity)"
// DYN-SAME: gpuopt.probe_plan = #gpuopt.probe_plan<specs = ["dmat"], params = 1>
// DYN-SAME: level = warp, capacity = 0, record_bytes = 16
// DYN-SAME: capacity_param = 2>]
// DYN-LABEL: ptx.entry ".visible .entry other(.param .u32 n, .param .u64 .ptr .global .align 16 __probe_dmat, .param .u32 __probe_dmat_capacity)"
// DYN-SAME: gpuopt.probe_plan = #gpuopt.probe_plan<specs = ["dmat"], params = 1>
ptx.module @m version "8.7" target ["sm_90a"] address_size 64 {
  ptx.entry ".visible .entry k(.param .u64 .ptr .global .align 8 k_p)" {
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
  ptx.entry ".visible .entry other(.param .u32 n)" {
    ptx.inst "ret"
  }
}

// -----

// A kernel with a parameter named like a probe buffer (`__probe_MAP`, the
// buffers' names under the default prefix) gets the prefix `__pr1_`, and
// buffers named with it; the other kernel of the module keeps `__pr_`.
// DYN-LABEL: ptx.entry ".visible .entry old(.param .u64 __probe_dmat, .param .u64 .ptr .global .align 16 __pr1_probe_dmat, .param .u32 __pr1_probe_dmat_capacity)"
// DYN-SAME: gpuopt.probe_plan = #gpuopt.probe_plan<specs = ["dmat"], params = 1, prefix = "__pr1_">
// DYN-LABEL: ptx.entry ".visible .entry k(.param .u64 x, .param .u64 .ptr .global .align 16 __probe_dmat, .param .u32 __probe_dmat_capacity)"
// DYN-SAME: gpuopt.probe_plan = #gpuopt.probe_plan<specs = ["dmat"], params = 1>
ptx.module @renamed version "8.7" target ["sm_90a"] address_size 64 {
  ptx.entry ".visible .entry old(.param .u64 __probe_dmat)" {
    ptx.inst "ret"
  }
  ptx.entry ".visible .entry k(.param .u64 x)" {
    ptx.inst "ret"
  }
}

// -----

// A kernel that is probed already is refused: every probe goes into one
// --probe-plan, so that all maps share one slot computation.
ptx.module @again version "8.7" target ["sm_90a"] address_size 64 {
  // expected-error @+1 {{kernel 'k' is probed already: give every probe to one --probe (--probe=a,b)}}
  ptx.entry ".visible .entry k(.param .u64 .ptr .global .align 8 __probe_x)" attributes {gpuopt.probes = [#gpuopt.probe_map<name = "x", probe = "x", param = 0, level = thread, capacity = 1, record_bytes = 8, fields = [<name = "v", type = "u64", offset = 0>]>]} {
    ptx.inst "ret"
  }
}

// -----

// A thread split whose second part runs two of its 64-thread blocks per
// fused block (replicas = 2): the records of a fused kernel end with `part`
// and, since a part is replicated, `copy` (block_sched's then 32 bytes, its
// buffer 16-aligned for vector stores).
// CHECK-LABEL: ptx.entry ".visible .entry k(.param .u64 x, .param .u64 .ptr .global .align 16 __probe_block_sched, .param .u64 .ptr .global .align 8 __probe_gmem_bytes)"
// CHECK-SAME: record_bytes = 32, fields = [<name = "gend", type = "u64", offset = 0>, <name = "start", type = "u32", offset = 8>, <name = "end", type = "u32", offset = 12>, <name = "sm", type = "u32", offset = 16>, <name = "part", type = "u32", offset = 20>, <name = "copy", type = "u32", offset = 24>]
// CHECK-SAME: record_bytes = 24, fields = [<name = "sync", type = "u64", offset = 0>, <name = "async", type = "u64", offset = 8>, <name = "part", type = "u32", offset = 16>, <name = "copy", type = "u32", offset = 20>]
// DYN-LABEL: ptx.entry ".visible .entry k(.param .u64 x, .param .u64 .ptr .global .align 8 __probe_dmat, .param .u32 __probe_dmat_capacity)"
// DYN-SAME: record_bytes = 24, fields = [<name = "addr", type = "u64", offset = 0>, <name = "clock", type = "u32", offset = 8>, <name = "info", type = "u32", offset = 12>, <name = "part", type = "u32", offset = 16>, <name = "copy", type = "u32", offset = 20>]
ptx.module @rep version "8.7" target ["sm_90a"] address_size 64 {
  ptx.entry ".visible .entry k(.param .u64 x)" attributes {gpuopt.fusion = #gpuopt.fusion_info<strategy = thread, grid = [64, 1, 1], dynamic_smem = 0, parts = [<kernel = "ka", module = "a", threads = [0, 32], block = [32, 1, 1], grid = [64, 1, 1], dynamic_smem_offset = 0, dynamic_smem = 0, arg_map = [0]>, <kernel = "kb", module = "b", threads = [32, 160], block = [64, 1, 1], grid = [128, 1, 1], dynamic_smem_offset = 0, dynamic_smem = 0, arg_map = [], replicas = 2>]>} {
    ptx.scope {
      ptx.inst "ret"
    }
    ptx.scope {
      ptx.inst "ret"
    }
  }
}
