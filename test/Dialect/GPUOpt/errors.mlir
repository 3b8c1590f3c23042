// Every refusal of the gpuopt attributes' verifiers, and of the dialect's
// check that each of its attribute names holds its attribute on its op.
// RUN: gpu-opt %s --allow-unregistered-dialect -split-input-file -verify-diagnostics

// expected-error @+1 {{'kernel' must not be empty}}
"test.op"() {a = #gpuopt.hfuse_part<kernel = "", block = [32, 1, 1], grid = [8, 1, 1]>} : () -> ()

// -----

// expected-error @+1 {{'block' must be 3 positive dimensions, got [32, 1]}}
"test.op"() {a = #gpuopt.hfuse_part<kernel = "k", block = [32, 1], grid = [8, 1, 1]>} : () -> ()

// -----

// expected-error @+1 {{'block' must be 3 positive dimensions, got [0, 1, 1]}}
"test.op"() {a = #gpuopt.hfuse_part<kernel = "k", block = [0, 1, 1], grid = [8, 1, 1]>} : () -> ()

// -----

// expected-error @+1 {{'grid' must be 3 positive dimensions, got [8, -1, 1]}}
"test.op"() {a = #gpuopt.hfuse_part<kernel = "k", block = [32, 1, 1], grid = [8, -1, 1]>} : () -> ()

// -----

// expected-error @+1 {{'ratio' must be at least 1, got 0}}
"test.op"() {a = #gpuopt.hfuse_part<kernel = "k", block = [32, 1, 1], grid = [8, 1, 1], ratio = 0>} : () -> ()

// -----

// expected-error @+1 {{'dynamic_smem' must be at least 0, got -1}}
"test.op"() {a = #gpuopt.hfuse_part<kernel = "k", block = [32, 1, 1], grid = [8, 1, 1], dynamic_smem = -1>} : () -> ()

// -----

// expected-error @+1 {{'name' must not be empty}}
"test.op"() {a = #gpuopt.hfuse_plan<name = "", strategy = thread, parts = [<kernel = "k", block = [32, 1, 1], grid = [8, 1, 1]>, <kernel = "k", block = [32, 1, 1], grid = [8, 1, 1]>]>} : () -> ()

// -----

// expected-error @+1 {{a fusion plan needs at least two parts, got 1}}
"test.op"() {a = #gpuopt.hfuse_plan<name = "f", strategy = thread, parts = [<kernel = "k", block = [32, 1, 1], grid = [8, 1, 1]>]>} : () -> ()

// -----

// expected-error @+1 {{'maxnreg' must be 0 (no cap) or within 16..255, got 8}}
"test.op"() {a = #gpuopt.hfuse_plan<name = "f", strategy = thread, maxnreg = 8, parts = [<kernel = "k", block = [32, 1, 1], grid = [8, 1, 1]>, <kernel = "k", block = [32, 1, 1], grid = [8, 1, 1]>]>} : () -> ()

// -----

// expected-error @+2 {{expected ::gpuopt::FusionStrategy to be one of: thread, interleave, dynamic}}
// expected-error @+1 {{failed to parse GPUOpt_HFusePlanAttr parameter 'strategy'}}
"test.op"() {a = #gpuopt.hfuse_plan<name = "f", strategy = warp, parts = [<kernel = "k", block = [32, 1, 1], grid = [8, 1, 1]>, <kernel = "k", block = [32, 1, 1], grid = [8, 1, 1]>]>} : () -> ()

// -----

// expected-error @+1 {{'kernel' must not be empty}}
"test.op"() {a = #gpuopt.fusion_part<kernel = "", module = "m", threads = [0, 32], block = [32, 1, 1], grid = [8, 1, 1], dynamic_smem_offset = 0, dynamic_smem = 0, arg_map = [0]>} : () -> ()

// -----

// expected-error @+1 {{'module' must not be empty}}
"test.op"() {a = #gpuopt.fusion_part<kernel = "k", module = "", threads = [0, 32], block = [32, 1, 1], grid = [8, 1, 1], dynamic_smem_offset = 0, dynamic_smem = 0, arg_map = [0]>} : () -> ()

// -----

// expected-error @+1 {{'threads' must be a range [first, end) of the fused block's threads, got [64, 32]}}
"test.op"() {a = #gpuopt.fusion_part<kernel = "k", module = "m", threads = [64, 32], block = [32, 1, 1], grid = [8, 1, 1], dynamic_smem_offset = 0, dynamic_smem = 0, arg_map = [0]>} : () -> ()

// -----

// expected-error @+1 {{'threads' must be a range [first, end) of the fused block's threads, got [0, 32, 64]}}
"test.op"() {a = #gpuopt.fusion_part<kernel = "k", module = "m", threads = [0, 32, 64], block = [32, 1, 1], grid = [8, 1, 1], dynamic_smem_offset = 0, dynamic_smem = 0, arg_map = [0]>} : () -> ()

// -----

// expected-error @+1 {{'block' must be 3 positive dimensions, got [32, 0, 1]}}
"test.op"() {a = #gpuopt.fusion_part<kernel = "k", module = "m", threads = [0, 32], block = [32, 0, 1], grid = [8, 1, 1], dynamic_smem_offset = 0, dynamic_smem = 0, arg_map = [0]>} : () -> ()

// -----

// expected-error @+1 {{'grid' must be 3 positive dimensions, got [8]}}
"test.op"() {a = #gpuopt.fusion_part<kernel = "k", module = "m", threads = [0, 32], block = [32, 1, 1], grid = [8], dynamic_smem_offset = 0, dynamic_smem = 0, arg_map = [0]>} : () -> ()

// -----

// expected-error @+1 {{'dynamic_smem_offset' must be at least 0, got -1024}}
"test.op"() {a = #gpuopt.fusion_part<kernel = "k", module = "m", threads = [0, 32], block = [32, 1, 1], grid = [8, 1, 1], dynamic_smem_offset = -1024, dynamic_smem = 0, arg_map = [0]>} : () -> ()

// -----

// expected-error @+1 {{'dynamic_smem' must be at least 0, got -4}}
"test.op"() {a = #gpuopt.fusion_part<kernel = "k", module = "m", threads = [0, 32], block = [32, 1, 1], grid = [8, 1, 1], dynamic_smem_offset = 0, dynamic_smem = -4, arg_map = [0]>} : () -> ()

// -----

// expected-error @+1 {{'arg_map' holds parameter indices, got -1}}
"test.op"() {a = #gpuopt.fusion_part<kernel = "k", module = "m", threads = [0, 32], block = [32, 1, 1], grid = [8, 1, 1], dynamic_smem_offset = 0, dynamic_smem = 0, arg_map = [0, -1]>} : () -> ()

// -----

// expected-error @+1 {{'ratio' must be at least 1, got 0}}
"test.op"() {a = #gpuopt.fusion_part<kernel = "k", module = "m", threads = [0, 32], block = [32, 1, 1], grid = [8, 1, 1], dynamic_smem_offset = 0, dynamic_smem = 0, arg_map = [0], ratio = 0>} : () -> ()

// -----

// expected-error @+1 {{'grid' must be 3 positive dimensions, got [0, 1, 1]}}
"test.op"() {a = #gpuopt.fusion_info<strategy = thread, grid = [0, 1, 1], dynamic_smem = 0, parts = [<kernel = "k", module = "m", threads = [0, 32], block = [32, 1, 1], grid = [8, 1, 1], dynamic_smem_offset = 0, dynamic_smem = 0, arg_map = [0]>]>} : () -> ()

// -----

// expected-error @+1 {{'dynamic_smem' must be at least 0, got -1}}
"test.op"() {a = #gpuopt.fusion_info<strategy = thread, grid = [8, 1, 1], dynamic_smem = -1, parts = [<kernel = "k", module = "m", threads = [0, 32], block = [32, 1, 1], grid = [8, 1, 1], dynamic_smem_offset = 0, dynamic_smem = 0, arg_map = [0]>]>} : () -> ()

// -----

// expected-error @+1 {{a fused kernel needs at least one part}}
"test.op"() {a = #gpuopt.fusion_info<strategy = thread, grid = [8, 1, 1], dynamic_smem = 0, parts = []>} : () -> ()

// -----

// expected-error @+1 {{'name' must not be empty}}
"test.op"() {a = #gpuopt.probe_field<name = "", type = "u64", offset = 0>} : () -> ()

// -----

// expected-error @+1 {{'type' must not be empty}}
"test.op"() {a = #gpuopt.probe_field<name = "start", type = "", offset = 0>} : () -> ()

// -----

// expected-error @+1 {{'offset' must be at least 0, got -8}}
"test.op"() {a = #gpuopt.probe_field<name = "start", type = "u64", offset = -8>} : () -> ()

// -----

// expected-error @+1 {{'name' must not be empty}}
"test.op"() {a = #gpuopt.probe_map<name = "", probe = "p", param = 1, level = thread, capacity = 1, record_bytes = 8, fields = [<name = "start", type = "u64", offset = 0>]>} : () -> ()

// -----

// expected-error @+1 {{'probe' must not be empty}}
"test.op"() {a = #gpuopt.probe_map<name = "m", probe = "", param = 1, level = thread, capacity = 1, record_bytes = 8, fields = [<name = "start", type = "u64", offset = 0>]>} : () -> ()

// -----

// expected-error @+1 {{'param' must be at least 0, got -1}}
"test.op"() {a = #gpuopt.probe_map<name = "m", probe = "p", param = -1, level = thread, capacity = 1, record_bytes = 8, fields = [<name = "start", type = "u64", offset = 0>]>} : () -> ()

// -----

// expected-error @+1 {{'record_bytes' must be at least 1, got 0}}
"test.op"() {a = #gpuopt.probe_map<name = "m", probe = "p", param = 1, level = thread, capacity = 1, record_bytes = 0, fields = [<name = "start", type = "u64", offset = 0>]>} : () -> ()

// -----

// expected-error @+1 {{'capacity' must be at least 1, got 0}}
"test.op"() {a = #gpuopt.probe_map<name = "m", probe = "p", param = 1, level = thread, capacity = 0, record_bytes = 8, fields = [<name = "start", type = "u64", offset = 0>]>} : () -> ()

// -----

// expected-error @+1 {{'capacity_param' must be at least 0, got -2}}
"test.op"() {a = #gpuopt.probe_map<name = "m", probe = "p", param = 1, level = thread, capacity = 0, record_bytes = 8, fields = [<name = "start", type = "u64", offset = 0>], capacity_param = -2>} : () -> ()

// -----

// expected-error @+1 {{a map with a 'capacity_param' has capacity 0 (the runtime chooses it), got 4}}
"test.op"() {a = #gpuopt.probe_map<name = "m", probe = "p", param = 1, level = thread, capacity = 4, record_bytes = 8, fields = [<name = "start", type = "u64", offset = 0>], capacity_param = 2>} : () -> ()

// -----

// expected-error @+1 {{'block_offset' must be at least 0, got -16}}
"test.op"() {a = #gpuopt.probe_map<name = "m", probe = "p", param = 1, level = thread, capacity = 1, record_bytes = 8, fields = [<name = "start", type = "u64", offset = 0>], block_offset = -16>} : () -> ()

// -----

// expected-error @+1 {{a map with a 'block_offset' (its buffer in the kernel's last parameter) cannot have a 'capacity_param'}}
"test.op"() {a = #gpuopt.probe_map<name = "m", probe = "p", param = 1, level = thread, capacity = 0, record_bytes = 8, fields = [<name = "start", type = "u64", offset = 0>], capacity_param = 2, block_offset = 0>} : () -> ()

// -----

// expected-error @+1 {{'bytes_per_block' must be at least 1, got 0}}
"test.op"() {a = #gpuopt.probe_scratch<param = 1, bytes_per_block = 0, align = 8>} : () -> ()

// -----

// expected-error @+1 {{'align' must be a power of two, got 24}}
"test.op"() {a = #gpuopt.probe_scratch<param = 1, bytes_per_block = 48, align = 24>} : () -> ()

// -----

// expected-error @+1 {{'bytes_per_block' (40) must be a multiple of 'align' (16), so that every block's buffers stay aligned}}
"test.op"() {a = #gpuopt.probe_scratch<param = 1, bytes_per_block = 40, align = 16>} : () -> ()

// -----

// expected-error @+1 {{a record needs at least one field}}
"test.op"() {a = #gpuopt.probe_map<name = "m", probe = "p", param = 1, level = thread, capacity = 1, record_bytes = 8, fields = []>} : () -> ()

// -----

// expected-error @+1 {{field 'end' at offset 8 is outside the record of 8 bytes}}
"test.op"() {a = #gpuopt.probe_map<name = "m", probe = "p", param = 1, level = thread, capacity = 1, record_bytes = 8, fields = [<name = "start", type = "u64", offset = 0>, <name = "end", type = "u64", offset = 8>]>} : () -> ()

// -----

// expected-error @+2 {{expected ::gpuopt::ProbeLevel to be one of: thread, warp, block}}
// expected-error @+1 {{failed to parse GPUOpt_ProbeMapAttr parameter 'level'}}
"test.op"() {a = #gpuopt.probe_map<name = "m", probe = "p", param = 1, level = grid, capacity = 1, record_bytes = 8, fields = [<name = "start", type = "u64", offset = 0>]>} : () -> ()

// -----

// expected-error @+1 {{'block_threads' must be within 1..1024, got 0}}
"test.op"() {a = #gpuopt.probe_occupancy<block_threads = 0, before = 8, after = 6, registers_before = 32, registers_after = 40, cap_spill_bytes = 24>} : () -> ()

// -----

// expected-error @+1 {{'block_threads' must be within 1..1024, got 2048}}
"test.op"() {a = #gpuopt.probe_occupancy<block_threads = 2048, before = 8, after = 6, registers_before = 32, registers_after = 40, cap_spill_bytes = 24>} : () -> ()

// -----

// expected-error @+1 {{'after' must be at least 0, got -1}}
"test.op"() {a = #gpuopt.probe_occupancy<block_threads = 256, before = 8, after = -1, registers_before = 32, registers_after = 40, cap_spill_bytes = 24>} : () -> ()

// -----

// expected-error @+1 {{'before' must be more blocks per SM than 'after' (6), got 6}}
"test.op"() {a = #gpuopt.probe_occupancy<block_threads = 256, before = 6, after = 6, registers_before = 32, registers_after = 40, cap_spill_bytes = 24>} : () -> ()

// -----

// expected-error @+1 {{'registers_before' must be at least 0, got -32}}
"test.op"() {a = #gpuopt.probe_occupancy<block_threads = 256, before = 8, after = 6, registers_before = -32, registers_after = 40, cap_spill_bytes = 24>} : () -> ()

// -----

// expected-error @+1 {{'registers_after' must be at least 0, got -40}}
"test.op"() {a = #gpuopt.probe_occupancy<block_threads = 256, before = 8, after = 6, registers_before = 32, registers_after = -40, cap_spill_bytes = 24>} : () -> ()

// -----

// expected-error @+1 {{'cap_spill_bytes' must be at least 0, got -24}}
"test.op"() {a = #gpuopt.probe_occupancy<block_threads = 256, before = 8, after = 6, registers_before = 32, registers_after = 40, cap_spill_bytes = -24>} : () -> ()

// -----

// The old dictionary form of a plan.
// expected-error @+1 {{'builtin.module' op 'gpuopt.hfuse' must be a #gpuopt.hfuse_plan, not {name = "f", parts = [], strategy = "thread"}}}
module attributes {gpuopt.hfuse = {name = "f", strategy = "thread", parts = []}} {
}

// -----

ptx.module @m version "8.7" target ["sm_90a"] address_size 64 {
  // expected-error @+1 {{'ptx.entry' op 'gpuopt.hfuse' belongs on a 'builtin.module'}}
  ptx.entry ".visible .entry k(.param .u64 x)" attributes {gpuopt.hfuse = #gpuopt.hfuse_plan<name = "f", strategy = thread, parts = [<kernel = "k", block = [32, 1, 1], grid = [8, 1, 1]>, <kernel = "k", block = [32, 1, 1], grid = [8, 1, 1]>]>} {
    ptx.inst "ret"
  }
}

// -----

// expected-error @+1 {{'builtin.module' op 'gpuopt.fusion' belongs on a 'ptx.entry'}}
module attributes {gpuopt.fusion = #gpuopt.fusion_info<strategy = thread, grid = [8, 1, 1], dynamic_smem = 0, parts = [<kernel = "k", module = "m", threads = [0, 32], block = [32, 1, 1], grid = [8, 1, 1], dynamic_smem_offset = 0, dynamic_smem = 0, arg_map = [0]>]>} {
}

// -----

ptx.module @m version "8.7" target ["sm_90a"] address_size 64 {
  // expected-error @+1 {{'ptx.entry' op 'gpuopt.fusion' must be a #gpuopt.fusion_info, not "thread"}}
  ptx.entry ".visible .entry k(.param .u64 x)" attributes {gpuopt.fusion = "thread"} {
    ptx.inst "ret"
  }
}

// -----

ptx.module @m version "8.7" target ["sm_90a"] address_size 64 {
  // expected-error @+1 {{'ptx.entry' op 'gpuopt.fusion' an argument of part 'k' is parameter 0, but the kernel has 0 parameters}}
  ptx.entry ".visible .entry k()" attributes {gpuopt.fusion = #gpuopt.fusion_info<strategy = thread, grid = [8, 1, 1], dynamic_smem = 0, parts = [<kernel = "k", module = "m", threads = [0, 32], block = [32, 1, 1], grid = [8, 1, 1], dynamic_smem_offset = 0, dynamic_smem = 0, arg_map = [0]>]>} {
    ptx.inst "ret"
  }
}

// -----

ptx.module @m version "8.7" target ["sm_90a"] address_size 64 {
  // expected-error @+1 {{'ptx.entry' op 'gpuopt.probes' must be an array of #gpuopt.probe_map, not 1 : i64}}
  ptx.entry ".visible .entry k(.param .u64 x)" attributes {gpuopt.probes = 1} {
    ptx.inst "ret"
  }
}

// -----

ptx.module @m version "8.7" target ["sm_90a"] address_size 64 {
  // expected-error @+1 {{'ptx.entry' op 'gpuopt.probes' must be an array of #gpuopt.probe_map, not ["m"]}}
  ptx.entry ".visible .entry k(.param .u64 x)" attributes {gpuopt.probes = ["m"]} {
    ptx.inst "ret"
  }
}

// -----

ptx.module @m version "8.7" target ["sm_90a"] address_size 64 {
  // expected-error @+1 {{'ptx.entry' op 'gpuopt.probes' the buffer of map 'm' is parameter 1, but the kernel has 1 parameters}}
  ptx.entry ".visible .entry k(.param .u64 x)" attributes {gpuopt.probes = [#gpuopt.probe_map<name = "m", probe = "p", param = 1, level = thread, capacity = 1, record_bytes = 8, fields = [<name = "start", type = "u64", offset = 0>]>]} {
    ptx.inst "ret"
  }
}

// -----

ptx.module @m version "8.7" target ["sm_90a"] address_size 64 {
  // expected-error @+1 {{'ptx.entry' op 'gpuopt.probes' the capacity of map 'm' is parameter 2, but the kernel has 2 parameters}}
  ptx.entry ".visible .entry k(.param .u64 x, .param .u64 buf)" attributes {gpuopt.probes = [#gpuopt.probe_map<name = "m", probe = "p", param = 1, level = thread, capacity = 0, record_bytes = 8, fields = [<name = "start", type = "u64", offset = 0>], capacity_param = 2>]} {
    ptx.inst "ret"
  }
}

// -----

ptx.module @m version "8.7" target ["sm_90a"] address_size 64 {
  // expected-error @+1 {{'ptx.entry' op 'gpuopt.probe_scratch' the probes' scratch is parameter 2, but the kernel has 2 parameters}}
  ptx.entry ".visible .entry k(.param .u64 x, .param .u64 s)" attributes {gpuopt.probe_scratch = #gpuopt.probe_scratch<param = 2, bytes_per_block = 32, align = 8>} {
    ptx.inst "ret"
  }
}

// -----

ptx.module @m version "8.7" target ["sm_90a"] address_size 64 {
  // expected-error @+1 {{'ptx.entry' op 'gpuopt.probes' map 'm' has a 'block_offset', so its buffer is the parameter of 'gpuopt.probe_scratch', but the kernel has none}}
  ptx.entry ".visible .entry k(.param .u64 x, .param .u64 s)" attributes {gpuopt.probes = [#gpuopt.probe_map<name = "m", probe = "p", param = 1, level = block, capacity = 1, record_bytes = 8, fields = [<name = "start", type = "u64", offset = 0>], block_offset = 0>]} {
    ptx.inst "ret"
  }
}

// -----

ptx.module @m version "8.7" target ["sm_90a"] address_size 64 {
  // expected-error @+1 {{'ptx.entry' op 'gpuopt.probes' map 'm' has a 'block_offset', so its buffer is the parameter of 'gpuopt.probe_scratch', but the kernel has it in parameter 1}}
  ptx.entry ".visible .entry k(.param .u64 x, .param .u64 s)" attributes {gpuopt.probe_scratch = #gpuopt.probe_scratch<param = 1, bytes_per_block = 32, align = 8>, gpuopt.probes = [#gpuopt.probe_map<name = "m", probe = "p", param = 0, level = block, capacity = 1, record_bytes = 8, fields = [<name = "start", type = "u64", offset = 0>], block_offset = 0>]} {
    ptx.inst "ret"
  }
}

// -----

ptx.module @m version "8.7" target ["sm_90a"] address_size 64 {
  // expected-error @+1 {{'ptx.entry' op 'gpuopt.probes' map 'm' starts at byte 32 of a block's scratch, past its 32 bytes per block}}
  ptx.entry ".visible .entry k(.param .u64 x, .param .u64 s)" attributes {gpuopt.probe_scratch = #gpuopt.probe_scratch<param = 1, bytes_per_block = 32, align = 8>, gpuopt.probes = [#gpuopt.probe_map<name = "m", probe = "p", param = 1, level = block, capacity = 1, record_bytes = 8, fields = [<name = "start", type = "u64", offset = 0>], block_offset = 32>]} {
    ptx.inst "ret"
  }
}

// -----

ptx.module @m version "8.7" target ["sm_90a"] address_size 64 {
  // expected-error @+1 {{'ptx.entry' op 'gpuopt.probe_occupancy' must be a #gpuopt.probe_occupancy, not 3 : i64}}
  ptx.entry ".visible .entry k(.param .u64 x)" attributes {gpuopt.probe_occupancy = 3} {
    ptx.inst "ret"
  }
}

// -----

// expected-error @+1 {{'builtin.module' op 'gpuopt.probe_occupancy' belongs on a 'ptx.entry'}}
module attributes {gpuopt.probe_occupancy = #gpuopt.probe_occupancy<block_threads = 256, before = 8, after = 6, registers_before = 32, registers_after = 40, cap_spill_bytes = 24>} {
}

// -----

// A name the dialect does not have.
// expected-error @+1 {{'builtin.module' op 'gpuopt.fusion_plan' is not an attribute of the gpuopt dialect (gpuopt.hfuse, gpuopt.fusion, gpuopt.probes, gpuopt.probe_scratch, gpuopt.probe_occupancy, gpuopt.probe_plan, gpuopt.gpu_kernel)}}
module attributes {gpuopt.fusion_plan = 1} {
}

// -----

// expected-error @+1 {{a probe plan needs at least one probe spec}}
"test.op"() {a = #gpuopt.probe_plan<specs = [], params = 0>} : () -> ()

// -----

// expected-error @+1 {{a probe spec must not be empty}}
"test.op"() {a = #gpuopt.probe_plan<specs = ["block_sched", ""], params = 0>} : () -> ()

// -----

// expected-error @+1 {{'params' must be at least 0, got -1}}
"test.op"() {a = #gpuopt.probe_plan<specs = ["block_sched"], params = -1>} : () -> ()

// -----

// The probes' names are the prefix and a stem, bare or after `%` or `$`.
// expected-error @+1 {{'prefix' must start a PTX identifier (a letter or '_', then letters, digits, '_' or '$'), got ''}}
"test.op"() {a = #gpuopt.probe_plan<specs = ["block_sched"], params = 0, prefix = "">} : () -> ()

// -----

// expected-error @+1 {{'prefix' must start a PTX identifier (a letter or '_', then letters, digits, '_' or '$'), got '1pr_'}}
"test.op"() {a = #gpuopt.probe_plan<specs = ["block_sched"], params = 0, prefix = "1pr_">} : () -> ()

// -----

// expected-error @+1 {{'prefix' must start a PTX identifier (a letter or '_', then letters, digits, '_' or '$'), got '__pr.'}}
"test.op"() {a = #gpuopt.probe_plan<specs = ["block_sched"], params = 0, prefix = "__pr.">} : () -> ()

// -----

// expected-error @+2 {{expected true or false}}
// expected-error @+1 {{failed to parse GPUOpt_ProbePlanAttr parameter 'carry_local'}}
"test.op"() {a = #gpuopt.probe_plan<specs = ["block_sched"], carry_local = 1, params = 0>} : () -> ()

// -----

// expected-error @+1 {{'spill_loads' must be at least 0, got -4}}
"test.op"() {a = #gpuopt.ptxas_resources<registers = 32, shared_bytes = 0, local_bytes = 0, spill_stores = 0, spill_loads = -4>} : () -> ()

// -----

// expected-error @+1 {{'registers' must be at least 0, got -1}}
"test.op"() {a = #gpuopt.ptxas_resources<registers = -1, shared_bytes = 0, local_bytes = 0, spill_stores = 0, spill_loads = 0>} : () -> ()

// -----

// expected-error @+1 {{'shared_bytes' must be at least 0, got -1}}
"test.op"() {a = #gpuopt.ptxas_resources<registers = 1, shared_bytes = -1, local_bytes = 0, spill_stores = 0, spill_loads = 0>} : () -> ()

// -----

// expected-error @+1 {{'local_bytes' must be at least 0, got -1}}
"test.op"() {a = #gpuopt.ptxas_resources<registers = 1, shared_bytes = 0, local_bytes = -1, spill_stores = 0, spill_loads = 0>} : () -> ()

// -----

// expected-error @+1 {{'spill_stores' must be at least 0, got -1}}
"test.op"() {a = #gpuopt.ptxas_resources<registers = 1, shared_bytes = 0, local_bytes = 0, spill_stores = -1, spill_loads = 0>} : () -> ()

// -----

ptx.module @m version "8.7" target ["sm_90a"] address_size 64 {
  // expected-error @+1 {{'ptx.entry' op 'gpuopt.probe_plan' counts 2 parameters before the probe buffers, but the kernel has 1}}
  ptx.entry ".visible .entry k(.param .u64 x)" attributes {gpuopt.probe_plan = #gpuopt.probe_plan<specs = ["block_sched"], params = 2>} {
    ptx.inst "ret"
  }
}

// -----

// expected-error @+1 {{'builtin.module' op 'gpuopt.probe_plan' belongs on a 'ptx.entry'}}
module attributes {gpuopt.probe_plan = #gpuopt.probe_plan<specs = ["block_sched"], params = 0>} {
}

// -----

ptx.module @m version "8.7" target ["sm_90a"] address_size 64 {
  // expected-error @+1 {{'ptx.entry' op 'gpuopt.probe_plan' must be a #gpuopt.probe_plan, not ["block_sched"]}}
  ptx.entry ".visible .entry k(.param .u64 x)" attributes {gpuopt.probe_plan = ["block_sched"]} {
    ptx.inst "ret"
  }
}

// -----

// The dictionary forms of earlier versions.
ptx.module @m version "8.7" target ["sm_90a"] address_size 64 {
  // expected-error @+1 {{'ptx.entry' op 'gpuopt.probes' must be an array of #gpuopt.probe_map}}
  ptx.entry ".visible .entry k(.param .u64 x, .param .u64 buf)" attributes {gpuopt.probes = [{capacity = 1 : i64, fields = [{name = "start", offset = 0 : i64, type = "u64"}], level = "warp", name = "m", param = 1 : i64, probe = "p", record_bytes = 8 : i64}]} {
    ptx.inst "ret"
  }
}

// -----

ptx.module @m version "8.7" target ["sm_90a"] address_size 64 {
  // expected-error @+1 {{'ptx.entry' op 'gpuopt.probe_occupancy' must be a #gpuopt.probe_occupancy}}
  ptx.entry ".visible .entry k(.param .u64 x)" attributes {gpuopt.probe_occupancy = {after = 6 : i64, before = 8 : i64, block_threads = 256 : i64, cap_spill_bytes = 24 : i64, registers_after = 40 : i64, registers_before = 32 : i64}} {
    ptx.inst "ret"
  }
}

// -----

ptx.module @m version "8.7" target ["sm_90a"] address_size 64 {
  // expected-error @+1 {{'ptx.entry' op 'gpuopt.probe_plan' must be a #gpuopt.probe_plan, not {params = 1 : i64, specs = ["block_sched"]}}}
  ptx.entry ".visible .entry k(.param .u64 x)" attributes {gpuopt.probe_plan = {params = 1 : i64, specs = ["block_sched"]}} {
    ptx.inst "ret"
  }
}

// -----

// expected-error @+1 {{'param_args' and 'param_fields' must have one element per parameter, got 2 and 1}}
"test.op"() {a = #gpuopt.gpu_kernel<module = "m", func = "k", param_args = [0, 0], param_fields = [0], block = [], grid = []>} : () -> ()

// -----

// expected-error @+1 {{'param_args' must list the arguments in order, got 0 then 2}}
"test.op"() {a = #gpuopt.gpu_kernel<module = "m", func = "k", param_args = [0, 2], param_fields = [0, 0], block = [], grid = []>} : () -> ()

// -----

// expected-error @+1 {{'grid' must be 3 positive dimensions, got [4]}}
"test.op"() {a = #gpuopt.gpu_kernel<module = "m", func = "k", param_args = [], param_fields = [], block = [], grid = [4]>} : () -> ()

// -----

ptx.module @m version "8.0" target ["sm_90a"] address_size 64 {
  // expected-error @+1 {{'ptx.entry' op 'gpuopt.gpu_kernel' maps 2 parameters to the gpu.func's arguments, but the kernel has 1}}
  ptx.entry ".visible .entry k(.param .u64 x)" attributes {gpuopt.gpu_kernel = #gpuopt.gpu_kernel<module = "m", func = "k", param_args = [0, 1], param_fields = [0, 0], block = [], grid = []>} {
    ptx.inst "ret"
  }
}
