//===- Passes.td - gpu-opt's transform passes --------------*- tablegen -*-===//
//
// Horizontal fusion is two passes: `--hfuse-plan` decides (writes a plan
// attribute and explains it with a remark) and `--hfuse-apply` rewrites by
// the plan. `--hfuse` runs both.
//
//===----------------------------------------------------------------------===//

#ifndef GPUOPT_TRANSFORMS_PASSES
#define GPUOPT_TRANSFORMS_PASSES

include "mlir/Pass/PassBase.td"

defvar HFuseOptions = [
    Option<"config", "config", "std::string", /*default=*/"\"\"",
           "YAML fusion configuration (configs/hfuse/*.yaml)">,
    Option<"strategy", "strategy", "std::string", /*default=*/"\"auto\"",
           "thread, interleave, dynamic or auto">,
    ListOption<"kernels", "kernels", "std::string",
               "Kernels to fuse, in order, each by its symbol, its function "
               "name without parameters (demangled) or its base name, "
               "optionally as MODULE::NAME; default: every .entry">,
    ListOption<"blocks", "blocks", "std::string",
               "Block shape of each kernel (256, 16x16); needed without "
               ".reqntid">,
    ListOption<"grids", "grids", "std::string",
               "Grid of each kernel (1024, 64x128)">,
    ListOption<"smem", "smem", "int64_t",
               "Dynamic shared memory bytes of each kernel">,
    ListOption<"threads", "threads", "int64_t",
               "Thread split: each kernel's threads (only resizable kernels "
               "may differ from their block)">,
    ListOption<"resizable", "resizable", "std::string",
               "Each kernel: true if it is correct with any 1-D block size "
               "where the kernel analysis cannot show it (a thread split may "
               "then resize it, with a warning), else false">,
    ListOption<"ratio", "ratio", "int64_t",
               "Interleave/dynamic: each kernel's blocks per period">,
    Option<"maxnreg", "maxnreg", "int64_t", /*default=*/"-1",
           "Register cap of the fused kernel (0: none; -1: choose)">,
    Option<"name", "name", "std::string", /*default=*/"\"\"",
           "Name of the fused .entry and of its ptx.module (default: the "
           "kernels' function names joined by '_', then '_fused')">,
    Option<"profile", "profile", "std::string", /*default=*/"\"\"",
           "gpu-run --json report with each kernel's time alone">,
    Option<"chip", "chip", "std::string", /*default=*/"\"\"",
           "Target chip for ptxas's resource report (default: the modules')">,
    Option<"ptxas", "ptxas", "std::string", /*default=*/"\"\"",
           "ptxas to run for resource reports (default: on PATH, or "
           "the CUDA toolkit's)">,
    Option<"minGain", "min-gain", "double", /*default=*/"0.10",
           "strategy=auto: fuse only when the best candidate is predicted "
           "this fraction faster than the kernels apart">,
    Option<"candidatesOut", "candidates-out", "std::string",
           /*default=*/"\"\"",
           "strategy=auto: write every candidate, ranked, as JSON (the "
           "search tool measures the top ones)">,
  ];

def HFusePlan : Pass<"hfuse-plan", "mlir::ModuleOp"> {
  let summary = "Choose how to fuse kernels horizontally";
  let description = [{
    Reads the kernels to fuse (every `.entry` of the input modules, or those
    named by `config=` or `kernels=`), their launch shapes (`.reqntid`, the
    `blocks=`/`grids=` options or the YAML config), and chooses a strategy
    (thread split, block interleave, dynamic block dispatch), a split or an
    interleave ratio, and a register cap. With `strategy=auto` the choice
    comes from an occupancy and wave model fed by ptxas's resource report of
    each candidate and, when given, a profile of each kernel alone
    (`profile=`, a `gpu-run --json` report). The plan is written as the
    `gpuopt.hfuse` attribute of the builtin module, and a remark explains it.
    When every candidate is predicted to be slower than running the kernels
    apart, the pass fails with that explanation. Without a profile the model
    compares waves instead of times, and warns that its choice is a guess.
    A named strategy skips the model, but ptxas (when there is one) still
    assembles the fused kernel, and a plan it rejects is refused with the
    registers each kernel needs and what the fused block leaves them.

    `kernels=` and the config name kernels by their symbol or by the name
    they were written with (`tile_kernel` for `_Z11tile_kernelPfPKfi`);
    `name=` names the fused kernel (default: those names joined, then
    `_fused`). Errors about an option are located at
    `--hfuse-plan option 'NAME':1:COLUMN`, the column counting into the
    option's value.

    Before:
    ```mlir
    module {
      ptx.module @a version "8.7" target ["sm_90a"] address_size 64 {
        ptx.entry ".visible .entry ka(.param .u64 x) .reqntid 128, 1, 1" {...}
      }
      ptx.module @b version "8.7" target ["sm_90a"] address_size 64 {
        ptx.entry ".visible .entry kb(.param .u64 y) .reqntid 64, 1, 1" {...}
      }
    }
    ```
    After `--hfuse-plan="strategy=thread grids=1024,512"`:
    ```mlir
    module attributes {gpuopt.hfuse = {name = "ka_kb_fused", strategy = "thread",
        parts = [{kernel = "ka", module = "a", block = array<i64: 128, 1, 1>,
                  grid = array<i64: 1024, 1, 1>, ratio = 1 : i64},
                 {kernel = "kb", module = "b", block = array<i64: 64, 1, 1>,
                  grid = array<i64: 512, 1, 1>, ratio = 1 : i64} ]} } {
      ...
    }
    ```
  }];
  let dependentDialects = ["gpuopt::ptx::PTXDialect"];
  let options = HFuseOptions;
  let statistics = [
    Statistic<"numCandidates", "candidates", "Fusion candidates evaluated">,
  ];
}

def HFuseApply : Pass<"hfuse-apply", "mlir::ModuleOp"> {
  let summary = "Fuse kernels horizontally by the plan of --hfuse-plan";
  let description = [{
    Builds one `.entry` that runs every kernel of the `gpuopt.hfuse` plan, in
    a new `ptx.module` that replaces the kernels' modules. Each kernel's body
    goes into its own `{ }` scope, starting with registers that hold its own
    view of `%tid`, `%ntid`, `%ctaid` and `%nctaid`; `ret` and `exit` become
    branches to the end of its part; barriers get the part's named-barrier
    ids and thread counts (thread split) or thread counts (block-level
    strategies when the part's block is smaller); dynamic shared memory is
    offset per part; parameters are concatenated. The fused entry carries a
    `gpuopt.fusion` attribute from which `--manifest` writes `fused_from`.

    Before (plan as above; `ka` uses `bar.sync 0`, `kb` returns early):
    ```
    .entry ka(.param .u64 x) .reqntid 128,1,1 { ... bar.sync 0; ... ret; }
    .entry kb(.param .u64 y) .reqntid 64,1,1 { ... @%p1 ret; ... ret; }
    ```
    After:
    ```
    .entry ka_kb(.param .u64 x, .param .u64 y) .reqntid 192, 1, 1 {
      mov.u32 %__hf_tid, %tid.x; mov.u32 %__hf_cta, %ctaid.x;
      setp.ge.u32 %__hf_skip, %__hf_tid, 128;
      @%__hf_skip bra $__hfuse_end_0;
      { ... bar.sync 0, 128; ... bra $__hfuse_end_0; }
    $__hfuse_end_0:
      setp.lt.u32 %__hf_skip, %__hf_tid, 128;
      setp.ge.or.u32 %__hf_skip, %__hf_cta, 512, %__hf_skip;
      @%__hf_skip bra $__hfuse_end_1;
      { sub.u32 %__hf_local_tid, %tid.x, 128; ... @%p1 bra $__hfuse_end_1; ... }
    $__hfuse_end_1:
      ret;
    }
    ```
  }];
  let dependentDialects = ["gpuopt::ptx::PTXDialect"];
  let statistics = [
    Statistic<"numFused", "fused-kernels", "Kernels fused">,
  ];
}

def HFuse : Pass<"hfuse", "mlir::ModuleOp"> {
  let summary = "Fuse kernels horizontally: --hfuse-plan, then --hfuse-apply";
  let description = [{
    The user's entry point: `gpu-opt --hfuse a.ptx b.ptx -o fused.ptx`
    chooses a strategy (see `--hfuse-plan`, whose options it takes) and
    builds the fused kernel (`--hfuse-apply`).
  }];
  let dependentDialects = ["gpuopt::ptx::PTXDialect"];
  let options = HFuseOptions;
}

def Probe : Pass<"probe", "mlir::ModuleOp"> {
  let summary = "Instrument kernels with probes that record into buffers";
  let description = [{
    `--probe=block_sched` (a built-in, configs/probes/*.yaml) or
    `--probe=my.yaml`, several as `--probe=a,b`: each probe spec names record
    maps (fields, level thread/warp/block, capacity) and PTX snippets at
    `kernel.entry` and `kernel.exit` (before every `ret` and `exit`). Every
    `.entry` gets one buffer parameter per map and the snippets; `save.MAP`
    writes a record into the slot of the thread, warp or block, never past
    its capacity (a full slot counts an overflow instead). Snippets may use
    only the probe's registers, special registers and immediates, and no
    memory, barrier or branch instruction. The code of each point goes into
    a `ptx.probe` op, whose verifier proves that the kernel's registers,
    memory and control flow are left as they were (and which prints inline).
    The entry's `gpuopt.probes` attribute becomes the manifest's `probes`.
    `kernels=` picks the entries to probe (`--probe="specs=block_sched
    kernels=softmax_forward_kernel7"`); the others stay as they were. A
    fused kernel (`gpuopt.fusion`, from `--hfuse` in the same call or
    restored by gpu-opt's `--manifest-in`) gets a `part` field in every
    record; one that only looks fused is refused. docs/probes.md has the
    spec format.

    Before (`--probe=block_sched`):
    ```mlir
    ptx.entry ".visible .entry k(.param .u64 out)" {
      ...
      ptx.inst "@%p1 ret"
      ...
      ptx.inst "ret"
    }
    ```
    After: the exit code in a function that every exit path calls (maps
    written at exits only; others get their exit code inline):
    ```mlir
    ptx.func ".func __pr_exit_k(.param .b64 __probe_block_sched, .param .b32 __pr_in_block_sched_start)" {
      ptx.probe "kernel.exit" {
        ptx.reg ".reg .u32 %__pr_block_sched_start"
        ...
        ptx.inst "ld.param.b32 %__pr_block_sched_start, [__pr_in_block_sched_start]"
        ptx.inst "mov.u32 %__pr_t0, %laneid"        // only lane 0 writes
        ptx.inst "setp.ne.u32 %__pr_ok, %__pr_t0, 0"
        ptx.inst "@%__pr_ok bra $__pr_done_0"
        ptx.inst "mov.u32 %__pr_block_sched_end, %clock"
        ...                                          // the warp's slot
        ptx.inst "st.global.v2.b32 [%__pr_addr_block_sched+8], {%__pr_block_sched_start, %__pr_block_sched_end}"
        ...
        ptx.label "$__pr_done_0:"
      }
      ptx.inst "ret"
    }
    ptx.entry ".visible .entry k(.param .u64 out, .param .u64 .ptr .global .align 8 __probe_block_sched)" {
      ptx.probe "kernel.entry" {
        ptx.reg ".reg .u32 %__pr_block_sched_start"
        ...
        ptx.inst "mov.u32 %__pr_block_sched_start, %clock"
      }
      ...
      ptx.probe "kernel.exit" {
        ptx.scope {
          ptx.var ".param .b64 __pr_buf_block_sched"
          ...
          ptx.inst "@%p1 call __pr_exit_k, (__pr_buf_block_sched, __pr_arg_block_sched_start)"
        }
      }
      ptx.inst "@%p1 ret"
      ...
    }
    ```
  }];
  let dependentDialects = ["gpuopt::ptx::PTXDialect"];
  let options = [
    ListOption<"specs", "specs", "std::string",
               "Probe specs: built-in names or YAML files">,
    ListOption<"kernels", "kernels", "std::string",
               "Probe only these kernels (default: every .entry), named as "
               "--hfuse names them: the mangled symbol, the function name "
               "without its parameters, or MODULE::NAME; the others are "
               "left unchanged">,
    Option<"keepOccupancy", "keep-occupancy", "bool", /*default=*/"true",
           "Ask ptxas for the registers of each kernel before and after; "
           "when the probe would take it into a coarser register "
           "allocation (units of 8 per thread, which set the occupancy for "
           "any block size), cap it with .maxnreg at the original's">,
    Option<"ptxas", "ptxas", "std::string", /*default=*/"\"\"",
           "ptxas for keep-occupancy (default: on PATH, or the CUDA "
           "toolkit's)">,
    Option<"chip", "chip", "std::string", /*default=*/"\"\"",
           "Target chip for ptxas (default: the module's)">,
  ];
  let statistics = [
    Statistic<"numProbed", "probed-kernels", "Kernels instrumented">,
    Statistic<"numCapped", "capped-kernels",
              "Kernels given .maxnreg to keep their occupancy">,
  ];
}

#endif // GPUOPT_TRANSFORMS_PASSES
