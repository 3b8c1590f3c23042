//===- Passes.td - gpu-opt's transform passes --------------*- tablegen -*-===//
//
// Horizontal fusion is two passes: `--hfuse-plan` decides (writes a plan
// attribute and explains it with a remark) and `--hfuse-apply` rewrites by
// the plan. The `--hfuse` pipeline (lib/Transforms/HFuse/HFusePipeline.cpp)
// runs both with the options of `--hfuse-plan`.
//
//===----------------------------------------------------------------------===//

#ifndef GPUOPT_TRANSFORMS_PASSES
#define GPUOPT_TRANSFORMS_PASSES

include "mlir/Pass/PassBase.td"

def HFusePlan : Pass<"hfuse-plan", "mlir::ModuleOp"> {
  let summary = "Choose how to fuse kernels horizontally";
  let description = [{
    Reads the kernels to fuse (every `.entry` of the input modules, or those
    named by `config=` or `kernels=`), their launch shapes (`.reqntid`, the
    `blocks=`/`grids=` options or the YAML config), and chooses a strategy
    (thread split, block interleave, dynamic or SM-aware block dispatch), a
    split or an interleave ratio, and a register cap. With `strategy=auto` the choice
    comes from an occupancy and wave model fed by ptxas's resource report of
    each candidate and, when given, a profile of each kernel alone
    (`profile=`, a `gpu-run --json` report). The plan is written as the
    `gpuopt.hfuse` attribute of the builtin module (a `#gpuopt.hfuse_plan`),
    and a remark explains it.
    When no candidate is predicted to be `min-gain` faster than running the
    kernels apart (or none can be built), the pass declines: it sets no plan,
    so `--hfuse-apply` leaves the kernels apart and later passes run on them
    as they are, and a remark says why and gives the options that fuse by
    the best candidate anyway; with `require=true` a decline is an error
    instead. Without a profile the model compares waves instead of times, and
    warns that its choice is a guess.
    With `measure=` (a gpu-run run spec of the kernels), or `measure-args=`
    (each kernel's gpu-run `--arg` specs, the launch shapes being the
    plan's), and a GPU, the top candidates by the model's rank (whether or
    not it predicts a gain) are built, checked bit for bit against the
    kernels apart and
    timed with them in process, the fastest checked one wins if it beats the
    kernels apart by 1% (else the pass declines, as above), and the decision
    is cached (`cache=`); without a GPU
    the remark says that the model's choice is unmeasured, and why.
    A named strategy skips the model, but ptxas (when there is one) still
    assembles the fused kernel, and a plan it rejects is refused with the
    registers each kernel needs and what the fused block leaves them.

    `kernels=` and the config name kernels by their symbol or by the name
    they were written with (`tile_kernel` for `_Z11tile_kernelPfPKfi`);
    `name=` names the fused kernel (default: those names joined, then
    `_fused`). Errors about an option are located at
    `--hfuse-plan option 'NAME':1:COLUMN` (`--hfuse option ...` in the
    `--hfuse` pipeline), the column counting into the option's value.

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
    module attributes {gpuopt.hfuse = #gpuopt.hfuse_plan<name = "ka_kb_fused",
        strategy = thread, parts = [
          <kernel = "ka", module = "a", block = [128, 1, 1], grid = [1024, 1, 1]>,
          <kernel = "kb", module = "b", block = [64, 1, 1], grid = [512, 1, 1]>]>} {
      ...
    }
    ```
  }];
  let dependentDialects = ["gpuopt::GPUOptDialect",
                           "gpuopt::ptx::PTXDialect"];
  let options = [
    Option<"config", "config", "std::string", /*default=*/"\"\"",
           "YAML fusion configuration (configs/hfuse/*.yaml)">,
    Option<"strategy", "strategy", "std::string", /*default=*/"\"auto\"",
           "thread, interleave, dynamic, sm_aware or auto">,
    ListOption<"kernels", "kernels", "std::string",
               "Kernels to fuse, in order, each by its symbol, its function "
               "name without parameters (demangled) or its base name, "
               "optionally as MODULE::NAME; default: every .entry">,
    ListOption<"blocks", "blocks", "std::string",
               "Block shape of each kernel (256, 16x16); needed without "
               ".reqntid">,
    ListOption<"grids", "grids", "std::string",
               "Grid of each kernel (1024, 64x128); with runtime-shapes only "
               "a default (and the model's)">,
    Option<"runtimeShapes", "runtime-shapes", "bool", /*default=*/"false",
           "Launch-agnostic: the fused kernel takes each kernel's grid (and "
           "its dynamic shared memory where the strategy allows) as "
           "parameters at launch">,
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
               "Interleave/dynamic/sm_aware: each kernel's blocks per period">,
    ListOption<"replicas", "replicas", "int64_t",
               "Thread split: how many blocks of each kernel one fused block "
               "runs side by side (default 1)">,
    ListOption<"setmaxnreg", "setmaxnreg", "int64_t",
               "Thread split on sm_90a: each kernel's registers per thread, "
               "taken with setmaxnreg (0: none; multiples of 8 in 24..256)">,
    Option<"units", "units", "int64_t", /*default=*/"1",
           "Dynamic/sm_aware: work units (blocks of the kernels) a fused "
           "block takes per ticket and runs one after another">,
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
    Option<"minGain", "min-gain", "double", /*default=*/"-1",
           "strategy=auto without measure=: accept the model's estimate and "
           "fuse when the best candidate is predicted this fraction faster "
           "than the kernels apart (e.g. 0.10); unset (negative, the "
           "default), the unmeasured model only ranks and does not fuse">,
    Option<"require", "require", "bool", /*default=*/"false",
           "strategy=auto: fail (an error) when no candidate is predicted or "
           "measured to pay, instead of leaving the kernels apart with a "
           "remark">,
    Option<"candidatesOut", "candidates-out", "std::string",
           /*default=*/"\"\"",
           "strategy=auto: write every candidate, ranked, as JSON (the "
           "search tool measures the top ones)">,
    Option<"measure", "measure", "std::string", /*default=*/"\"\"",
           "strategy=auto: a gpu-run run spec of the kernels (launch shapes "
           "and arguments, in order); with a GPU, the top candidates are "
           "timed and checked against the kernels apart, and the fastest "
           "wins">,
    ListOption<"measureArgs", "measure-args", "std::string",
               "strategy=auto: instead of measure=, each kernel's arguments "
               "as gpu-run --arg specs separated by spaces, one value per "
               "kernel, in braces ({buf:f32:1024:random:1 "
               "scalar:u32:1024},{...}); the launch shapes are the plan's">,
    Option<"measureTop", "measure-top", "int64_t", /*default=*/"3",
           "strategy=auto with measure=: how many of the model's best "
           "candidates to measure">,
    Option<"cache", "cache", "std::string", /*default=*/"\"\"",
           "strategy=auto with measure=: folder of measured decisions "
           "(default: $XDG_CACHE_HOME/gpu-opt/hfuse, else "
           "~/.cache/gpu-opt/hfuse; none: no cache)">,
  ];
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
    `gpuopt.fusion` attribute (a `#gpuopt.fusion_info`) from which
    `--manifest` writes `fused_from`.

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
  let dependentDialects = ["gpuopt::GPUOptDialect",
                           "gpuopt::ptx::PTXDialect"];
  let statistics = [
    Statistic<"numFused", "fused-kernels", "Kernels fused">,
  ];
}

// The probe passes; `--probe` is their pipeline (ProbePipeline.cpp):
// --probe-plan, --probe-insert, --probe-lower, then, with keep-occupancy,
// --probe-keep-occupancy. docs/probes.md has the spec format.

def ProbePlan : Pass<"probe-plan", "mlir::ModuleOp"> {
  let summary = "Check probe specs, choose kernels, lay out probe records";
  let description = [{
    `--probe-plan=block_sched` (a built-in, configs/probes/*.yaml) or
    `--probe-plan=my.yaml`, several as `a,b`: reads and checks each probe
    spec (its snippets parsed as PTX, errors at the spec's line; snippets
    may use only the probe's registers, special registers and immediates,
    and no memory, barrier or branch instruction), chooses the kernels
    (`kernels=`, else every `.entry` with a body), and decides for each:
    one `.param .u64 .ptr .global` buffer per map after the kernel's
    parameters (`buffer=new-params`, the default) or, with
    `buffer=last-param`, no new parameter: every map in the kernel's last
    `.u64` parameter (Triton's profile scratch, which its launcher
    allocates per block of the grid), map i from the grid's blocks
    (`%nctaid.x * %nctaid.y * %nctaid.z`) times its `block_offset` on
    (`gpuopt.probe_scratch`: the parameter, the bytes per block and the
    alignment; the manifest's `probe_scratch`; refused for maps of dynamic
    capacity, thread- or warp-level maps of a kernel without `.reqntid` or
    `.maxntid`, a last parameter that is not a `.u64` and fused kernels),
    the records' layout (`gpuopt.probes`, the manifest's `probes`) and
    the plan the later passes follow (`gpuopt.probe_plan`:
    the specs, the prefix of every name the probes add, `__pr_` unless a
    name of the kernel or its module starts with it (then `__pr1_`,
    `__pr2_`, ...), and, with keep-occupancy, ptxas's report of the kernel
    before probing, which only this pass sees). A fused kernel
    (`gpuopt.fusion`, from `--hfuse` in the same call or restored by
    gpu-opt's `--manifest-in`) gets a `part` field in every record; one
    that only looks fused is refused. Instruction points of a spec file
    that match nothing are warnings.

    Before (`--probe-plan=block_sched`):
    ```mlir
    ptx.entry ".visible .entry k(.param .u64 out)" { ... }
    ```
    After:
    ```mlir
    ptx.entry ".visible .entry k(.param .u64 out, .param .u64 .ptr .global .align 8 __probe_block_sched)"
        attributes {gpuopt.probe_plan = {params = 1 : i64, specs = ["block_sched"]},
                    gpuopt.probes = [#gpuopt.probe_map<name = "block_sched", probe = "block_sched",
                                     param = 1, level = warp, capacity = 1, ...>]} { ... }
    ```
    With `buffer=last-param` on a kernel ending as Triton's,
    `k(.param .u64 out, .param .u64 .ptr .global .align 1 scratch) .reqntid 128`:
    the parameters stay as they are, and
    ```mlir
    gpuopt.probe_scratch = #gpuopt.probe_scratch<param = 1, bytes_per_block = 104, align = 8>,
    gpuopt.probes = [#gpuopt.probe_map<name = "block_sched", ..., param = 1, ..., block_offset = 0>]
    ```
  }];
  let dependentDialects = ["gpuopt::GPUOptDialect",
                           "gpuopt::ptx::PTXDialect"];
  let options = [
    ListOption<"specs", "specs", "std::string",
               "Probe specs: built-in names or YAML files">,
    ListOption<"kernels", "kernels", "std::string",
               "Probe only these kernels (default: every .entry), named as "
               "--hfuse names them: the mangled symbol, the function name "
               "without its parameters, or MODULE::NAME; the others are "
               "left unchanged">,
    Option<"keepOccupancy", "keep-occupancy", "bool", /*default=*/"true",
           "Ask ptxas for the registers of each kernel before probing, for "
           "--probe-keep-occupancy">,
    Option<"ptxas", "ptxas", "std::string", /*default=*/"\"\"",
           "ptxas for keep-occupancy (default: on PATH, or the CUDA "
           "toolkit's)">,
    Option<"chip", "chip", "std::string", /*default=*/"\"\"",
           "Target chip for ptxas (default: the module's)">,
    Option<"buffer", "buffer", "::gpuopt::probe::BufferPlace",
           /*default=*/"::gpuopt::probe::BufferPlace::NewParams",
           "Where the probe buffers lie: new-params (one new parameter per "
           "map) or last-param (the kernel's last .u64 parameter, Triton's "
           "profile scratch)",
           "GPUOPT_PROBE_BUFFER_VALUES">,
  ];
  let statistics = [
    Statistic<"numProbed", "probed-kernels", "Kernels instrumented">,
  ];
}

def ProbeInsert : Pass<"probe-insert", "mlir::ModuleOp"> {
  let summary = "Put probe snippets at their points, in ptx.probe ops";
  let description = [{
    For every kernel --probe-plan planned, the code of each point in a
    `ptx.probe` op: the entry snippets at `kernel.entry`; the snippets of
    instruction points before or after each matching instruction (a
    guarded instruction's branched around), with the placeholder operands
    `{bytes}`, `{addr}` and `{site}`; the exit snippets before every `ret`
    and `exit` of the kernel body and at the end of a body that falls off
    it; in a fused kernel, each part's scope names its part. `save.MAP`
    becomes `ptx.probe_save`; slots, record stores and the placeholders'
    values are --probe-lower's. The `ptx.probe` verifier proves that the
    kernel's registers, memory and control flow are left as they were.
    Anchored on the module: labels are numbered across all kernels, as
    outputs name them.

    Before: a planned kernel (see --probe-plan).
    After:
    ```mlir
    ptx.entry "... k(...)" attributes {gpuopt.probe_plan = ..., gpuopt.probes = ...} {
      ptx.probe "kernel.entry" buffers ["__probe_block_sched"] {
        ptx.inst "mov.u32 %__pr_block_sched_start, %clock"
      }
      ...
      ptx.probe "kernel.exit" {
        ptx.inst "mov.u32 %__pr_block_sched_end, %clock"
        ptx.probe_save @block_sched(%__pr_block_sched_gend, ...)
      }
      ptx.inst "ret"
    }
    ```
  }];
  let dependentDialects = ["gpuopt::GPUOptDialect",
                           "gpuopt::ptx::PTXDialect"];
}

def ProbeLower : Pass<"probe-lower", "mlir::ModuleOp"> {
  let summary = "Lower probe saves and placeholders to slot code and stores";
  let description = [{
    Turns the probe ops --probe-insert left into the code that runs: the
    probe's registers; the slot of each thread, warp or block (with the
    runtime's rounding), at entry or, for a map saved only at exits, at the
    exit by the threads that write; each `ptx.probe_save` as stores into a
    fixed record (when the saves a thread can make fit the capacity) or as
    counted stores with an overflow counter after the records; dynamic
    maps' slot counts at every exit; the placeholders' values at each
    instruction (`{addr}` and a register `{bytes}` copied into probe
    registers before it). When every map is written at exits only, from
    registers, the exit code is outlined into `.func __pr_exit_<kernel>`,
    called on every path to an exit so that ptxas keeps the kernel's
    registers; maps whose records stay zero store nothing. Anchored on the
    module: labels are numbered across all kernels, and exit functions are
    added beside the kernels.

    Before (--probe-insert's output):
    ```mlir
    ptx.probe "kernel.exit" {
      ptx.inst "mov.u32 %__pr_block_sched_end, %clock"
      ptx.probe_save @block_sched(...)
    }
    ptx.inst "ret"
    ```
    After:
    ```mlir
    ptx.func ".func __pr_exit_k(.param .b64 __probe_block_sched, .param .b32 __pr_in_block_sched_start)" {
      ptx.probe "kernel.exit" buffers ["__probe_block_sched"] {
        ptx.inst "ld.param.b32 %__pr_block_sched_start, [__pr_in_block_sched_start]"
        ptx.inst "mov.u32 %__pr_t0, %laneid"        // only lane 0 writes
        ptx.inst "setp.ne.u32 %__pr_ok, %__pr_t0, 0"
        ptx.inst "@%__pr_ok bra $__pr_done_0"
        ptx.inst "mov.u32 %__pr_block_sched_end, %clock"
        ...                                          // the warp's slot
        ptx.inst "st.global.v2.b32 [%__pr_addr_block_sched+8], {%__pr_block_sched_start, %__pr_block_sched_end}"
        ptx.label "$__pr_done_0:"
      }
      ptx.inst "ret"
    }
    ...
      ptx.probe "kernel.exit" {
        ptx.scope {
          ptx.var ".param .b64 __pr_buf_block_sched"
          ...
          ptx.inst "call __pr_exit_k, (__pr_buf_block_sched, __pr_arg_block_sched_start)"
        }
      }
      ptx.inst "ret"
    ```
  }];
  let dependentDialects = ["gpuopt::GPUOptDialect",
                           "gpuopt::ptx::PTXDialect"];
}

def ProbeKeepOccupancy : Pass<"probe-keep-occupancy", "mlir::ModuleOp"> {
  let summary = "Keep probed kernels' occupancy, placing probes again if "
                "they cost registers";
  let description = [{
    A pass of its own, last: what probing costs a kernel is known only from
    ptxas's report of the lowered kernel. For each kernel --probe-plan
    asked ptxas about: where the first placement costs spills or more than
    4 registers, probes it again another way (the exit code inline; for a
    `setmaxnreg` kernel also the probes' state in local memory) and keeps
    the better. Then caps each kernel whose probes would lower its blocks
    per SM with `.maxnreg` at the most registers that keep them, unless
    ptxas then spills more than the original did: the kernel keeps its
    registers, with a warning and `gpuopt.probe_occupancy` (the manifest's
    `probe_occupancy`). A `setmaxnreg` kernel is never capped.

    Before: `ptx.entry "... k(...)"` probed, using 40 registers where the
    original used 32 (256-thread blocks: 8 blocks per SM before, 6 after).
    After: `ptx.entry "... .maxnreg 32 k(...)"`, and a remark.
  }];
  let dependentDialects = ["gpuopt::GPUOptDialect",
                           "gpuopt::ptx::PTXDialect"];
  let options = [
    Option<"ptxas", "ptxas", "std::string", /*default=*/"\"\"",
           "ptxas (default: on PATH, or the CUDA toolkit's)">,
    Option<"chip", "chip", "std::string", /*default=*/"\"\"",
           "Target chip for ptxas (default: the module's)">,
  ];
  let statistics = [
    Statistic<"numCapped", "capped-kernels",
              "Kernels given .maxnreg to keep their occupancy">,
  ];
}

#endif // GPUOPT_TRANSFORMS_PASSES
