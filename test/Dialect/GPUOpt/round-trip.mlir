// Every gpuopt attribute prints in its `key = value` form and parses back to
// the same attribute, under each name the dialect attaches it by; default
// parameters are left out.
// RUN: gpu-opt %s --allow-unregistered-dialect | gpu-opt --allow-unregistered-dialect | FileCheck %s
// RUN: gpu-opt %s --allow-unregistered-dialect --mlir-print-op-generic | gpu-opt --allow-unregistered-dialect | FileCheck %s

// CHECK-LABEL: module attributes {gpuopt.hfuse = #gpuopt.hfuse_plan<name = "ka_kb_fused", strategy = interleave, maxnreg = 64, parts = [<kernel = "ka", module = "a", block = [128, 1, 1], grid = [1024, 1, 1], ratio = 2, dynamic_smem = 0>, <kernel = "kb", block = [16, 4, 1], grid = [64, 64, 1]>]>}
module attributes {gpuopt.hfuse = #gpuopt.hfuse_plan<name = "ka_kb_fused", strategy = interleave, maxnreg = 64, parts = [<kernel = "ka", module = "a", block = [128, 1, 1], grid = [1024, 1, 1], ratio = 2, dynamic_smem = 0>, #gpuopt.hfuse_part<grid = [64, 64, 1], block = [16, 4, 1], kernel = "kb", ratio = 1>]>} {
  // CHECK: ptx.module @f
  ptx.module @f version "8.7" target ["sm_90a"] address_size 64 {
    // CHECK: ptx.entry ".visible .entry ka_kb(.param .u64 x, .param .u64 y)"
    // CHECK-SAME: gpuopt.fusion = #gpuopt.fusion_info<strategy = dynamic, grid = [5120, 1, 1], dynamic_smem = 1024, parts = [<kernel = "ka", module = "a", threads = [0, 128], block = [128, 1, 1], grid = [1024, 1, 1], dynamic_smem_offset = 0, dynamic_smem = 1024, arg_map = [0], ratio = 1>, <kernel = "kb", module = "b", threads = [0, 64], block = [16, 4, 1], grid = [64, 64, 1], dynamic_smem_offset = 0, dynamic_smem = 0, arg_map = [1], ratio = 1>]>
    ptx.entry ".visible .entry ka_kb(.param .u64 x, .param .u64 y)" attributes {gpuopt.fusion = #gpuopt.fusion_info<strategy = dynamic, grid = [5120, 1, 1], dynamic_smem = 1024, parts = [<kernel = "ka", module = "a", threads = [0, 128], block = [128, 1, 1], grid = [1024, 1, 1], dynamic_smem_offset = 0, dynamic_smem = 1024, arg_map = [0], ratio = 1>, <kernel = "kb", module = "b", threads = [0, 64], block = [16, 4, 1], grid = [64, 64, 1], dynamic_smem_offset = 0, dynamic_smem = 0, arg_map = [1], ratio = 1>]>} {
      ptx.scope {
        ptx.inst "ret"
      }
      ptx.scope {
        ptx.inst "ret"
      }
    }
    // A thread split's parts have no ratio.
    // CHECK: ptx.entry ".visible .entry split(.param .u64 x)"
    // CHECK-SAME: gpuopt.fusion = #gpuopt.fusion_info<strategy = thread, grid = [64, 1, 1], dynamic_smem = 0, parts = [<kernel = "ka", module = "a", threads = [0, 32], block = [32, 1, 1], grid = [64, 1, 1], dynamic_smem_offset = 0, dynamic_smem = 0, arg_map = [0]>, <kernel = "kb", module = "b", threads = [32, 96], block = [64, 1, 1], grid = [8, 1, 1], dynamic_smem_offset = 0, dynamic_smem = 0, arg_map = []>]>
    ptx.entry ".visible .entry split(.param .u64 x)" attributes {gpuopt.fusion = #gpuopt.fusion_info<strategy = thread, grid = [64, 1, 1], dynamic_smem = 0, parts = [<kernel = "ka", module = "a", threads = [0, 32], block = [32, 1, 1], grid = [64, 1, 1], dynamic_smem_offset = 0, dynamic_smem = 0, arg_map = [0]>, <kernel = "kb", module = "b", threads = [32, 96], block = [64, 1, 1], grid = [8, 1, 1], dynamic_smem_offset = 0, dynamic_smem = 0, arg_map = []>]>} {
      ptx.inst "ret"
    }
    // CHECK: ptx.entry ".visible .entry probed(.param .u64 out, .param .u64 .ptr .global .align 16 __probe_block_sched, .param .u64 .ptr .global .align 8 __probe_trace, .param .u32 __probe_trace_capacity)"
    // CHECK-SAME: gpuopt.probe_occupancy = #gpuopt.probe_occupancy<block_threads = 256, before = 8, after = 6, registers_before = 32, registers_after = 40, cap_spill_bytes = 24>
    // CHECK-SAME: gpuopt.probes = [#gpuopt.probe_map<name = "block_sched", probe = "block_sched", param = 1, level = warp, capacity = 1, record_bytes = 16, fields = [<name = "start", type = "u64", offset = 0>, <name = "end", type = "u64", offset = 8>]>, #gpuopt.probe_map<name = "trace", probe = "mem", param = 2, level = thread, capacity = 0, record_bytes = 8, fields = [<name = "addr", type = "u64", offset = 0>], capacity_param = 3>]
    ptx.entry ".visible .entry probed(.param .u64 out, .param .u64 .ptr .global .align 16 __probe_block_sched, .param .u64 .ptr .global .align 8 __probe_trace, .param .u32 __probe_trace_capacity)" attributes {gpuopt.probes = [#gpuopt.probe_map<name = "block_sched", probe = "block_sched", param = 1, level = warp, capacity = 1, record_bytes = 16, fields = [<name = "start", type = "u64", offset = 0>, <name = "end", type = "u64", offset = 8>]>, #gpuopt.probe_map<name = "trace", probe = "mem", param = 2, level = thread, capacity = 0, record_bytes = 8, fields = [<name = "addr", type = "u64", offset = 0>], capacity_param = 3>], gpuopt.probe_occupancy = #gpuopt.probe_occupancy<block_threads = 256, before = 8, after = 6, registers_before = 32, registers_after = 40, cap_spill_bytes = 24>} {
      ptx.inst "ret"
    }
  }

  ptx.module @s version "8.7" target ["sm_90a"] address_size 64 {
    // Probe buffers in the kernel's last parameter (buffer=last-param): one
    // parameter for both maps, each at its offset per block.
    // CHECK: ptx.entry ".visible .entry scratch(.param .u64 out, .param .u64 .ptr .global .align 1 profile) .reqntid 128, 1, 1"
    // CHECK-SAME: gpuopt.probe_scratch = #gpuopt.probe_scratch<param = 1, bytes_per_block = 2176, align = 16>
    // CHECK-SAME: gpuopt.probes = [#gpuopt.probe_map<name = "block_sched", probe = "block_sched", param = 1, level = warp, capacity = 1, record_bytes = 24, fields = [<name = "start", type = "u32", offset = 0>], block_offset = 0>, #gpuopt.probe_map<name = "gmem_bytes", probe = "gmem_bytes", param = 1, level = thread, capacity = 1, record_bytes = 16, fields = [<name = "sync", type = "u64", offset = 0>], block_offset = 112>]
    ptx.entry ".visible .entry scratch(.param .u64 out, .param .u64 .ptr .global .align 1 profile) .reqntid 128, 1, 1" attributes {gpuopt.probe_scratch = #gpuopt.probe_scratch<param = 1, bytes_per_block = 2176, align = 16>, gpuopt.probes = [#gpuopt.probe_map<name = "block_sched", probe = "block_sched", param = 1, level = warp, capacity = 1, record_bytes = 24, fields = [<name = "start", type = "u32", offset = 0>], block_offset = 0>, #gpuopt.probe_map<name = "gmem_bytes", probe = "gmem_bytes", param = 1, level = thread, capacity = 1, record_bytes = 16, fields = [<name = "sync", type = "u64", offset = 0>], block_offset = 112>]} {
      ptx.inst "ret"
    }
    // CHECK: ptx.entry ".visible .entry scratch_planned(.param .u64 x)" attributes {gpuopt.probe_plan = #gpuopt.probe_plan<specs = ["block_sched"], params = 1, last_param = true>}
    ptx.entry ".visible .entry scratch_planned(.param .u64 x)" attributes {gpuopt.probe_plan = #gpuopt.probe_plan<specs = ["block_sched"], params = 1, last_param = true>} {
      ptx.inst "ret"
    }
  }

  ptx.module @g version "8.7" target ["sm_90a"] address_size 64 {
    // CHECK: ptx.entry ".visible .entry planned(.param .u64 x)" attributes {gpuopt.probe_plan = #gpuopt.probe_plan<specs = ["block_sched", "probes/mem.yaml"], carry_local = true, inline_exits = true, params = 1, exit_function = "__pr1_exit_planned", prefix = "__pr1_", ptxas_before = <registers = 32, shared_bytes = 1024, local_bytes = 8, spill_stores = 4, spill_loads = 4>>}
    ptx.entry ".visible .entry planned(.param .u64 x)" attributes {gpuopt.probe_plan = #gpuopt.probe_plan<specs = ["block_sched", "probes/mem.yaml"], carry_local = true, inline_exits = true, params = 1, exit_function = "__pr1_exit_planned", prefix = "__pr1_", ptxas_before = <registers = 32, shared_bytes = 1024, local_bytes = 8, spill_stores = 4, spill_loads = 4>>} {
      ptx.inst "ret"
    }
    // A kernel lowered from a gpu.func: a memref<?xf32> (5 parameters), a
    // scalar; a probe buffer after them.
    // CHECK: ptx.entry ".visible .entry captured(.param .u64 a, .param .u64 b, .param .u64 c, .param .u64 d, .param .u64 e, .param .u32 n, .param .u64 buf)" attributes {gpuopt.gpu_kernel = #gpuopt.gpu_kernel<module = "kernels", func = "captured", param_args = [0, 0, 0, 0, 0, 1], param_fields = [0, 1, 2, 3, 4, 0], block = [128, 1, 1], grid = []>}
    ptx.entry ".visible .entry captured(.param .u64 a, .param .u64 b, .param .u64 c, .param .u64 d, .param .u64 e, .param .u32 n, .param .u64 buf)" attributes {gpuopt.gpu_kernel = #gpuopt.gpu_kernel<module = "kernels", func = "captured", param_args = [0, 0, 0, 0, 0, 1], param_fields = [0, 1, 2, 3, 4, 0], block = [128, 1, 1], grid = []>} {
      ptx.inst "ret"
    }
    // Defaults are left out.
    // CHECK: ptx.entry ".visible .entry plain(.param .u64 x)" attributes {gpuopt.probe_plan = #gpuopt.probe_plan<specs = ["block_sched"], params = 1>}
    ptx.entry ".visible .entry plain(.param .u64 x)" attributes {gpuopt.probe_plan = #gpuopt.probe_plan<specs = ["block_sched"], carry_local = false, params = 1, exit_function = "", prefix = "__pr_">} {
      ptx.inst "ret"
    }
  }

  // The enum attributes, and a part alone.
  // CHECK: "test.enums"() {level = #gpuopt.probe_level<block>, part = #gpuopt.hfuse_part<kernel = "k", block = [1, 1, 1], grid = [1, 1, 1]>, strategy = #gpuopt.fusion_strategy<dynamic>}
  "test.enums"() {strategy = #gpuopt.fusion_strategy<dynamic>, level = #gpuopt.probe_level<block>, part = #gpuopt.hfuse_part<kernel = "k", block = [1, 1, 1], grid = [1, 1, 1]>} : () -> ()
}
