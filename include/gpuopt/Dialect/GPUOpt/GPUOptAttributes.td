//===- GPUOptAttributes.td - The gpuopt attributes ---------*- tablegen -*-===//
//
// Fusion plans, fused kernels' parts and probe record maps as typed
// attributes, each printed as `key = value` pairs and verified on creation.
//
//===----------------------------------------------------------------------===//

#ifndef GPUOPT_DIALECT_GPUOPT_GPUOPTATTRIBUTES_TD
#define GPUOPT_DIALECT_GPUOPT_GPUOPTATTRIBUTES_TD

include "gpuopt/Dialect/GPUOpt/GPUOptDialect.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"

//===----------------------------------------------------------------------===//
// Enums
//===----------------------------------------------------------------------===//

def GPUOpt_FusionStrategyEnum : I32EnumAttr<"FusionStrategy",
    "How a fused kernel runs its parts", [
      // One block of T1 + ... + Tn threads; part i runs on a warp-aligned
      // range.
      I32EnumAttrCase<"Thread", 0, "thread">,
      // Each block runs one part whole; blocks interleaved by a fixed ratio.
      I32EnumAttrCase<"Interleave", 1, "interleave">,
      // Each block takes a ticket from a global counter and runs the part the
      // ticket maps to (same ratio), so blocks start in ticket order.
      I32EnumAttrCase<"Dynamic", 2, "dynamic">,
      // Each block's thread 0 counts it on its SM's counter, which picks the
      // part that SM is short of (same ratio, per SM); the part's block
      // index comes from the part's counter (POD-Attention's dispatch).
      I32EnumAttrCase<"SMAware", 3, "sm_aware">,
    ]> {
  let cppNamespace = "::gpuopt";
  let genSpecializedAttr = 0;
}

def GPUOpt_ProbeLevelEnum : I32EnumAttr<"ProbeLevel",
    "Who owns a probe record slot", [
      I32EnumAttrCase<"Thread", 0, "thread">,
      // Lane 0 of each warp writes.
      I32EnumAttrCase<"Warp", 1, "warp">,
      I32EnumAttrCase<"Block", 2, "block">,
    ]> {
  let cppNamespace = "::gpuopt";
  let genSpecializedAttr = 0;
}

class GPUOpt_Attr<string name, string attrMnemonic, list<Trait> traits = []>
    : AttrDef<GPUOpt_Dialect, name, traits> {
  let mnemonic = attrMnemonic;
}

def GPUOpt_FusionStrategyAttr
    : EnumAttr<GPUOpt_Dialect, GPUOpt_FusionStrategyEnum, "fusion_strategy"> {
  let assemblyFormat = "`<` $value `>`";
}

def GPUOpt_ProbeLevelAttr
    : EnumAttr<GPUOpt_Dialect, GPUOpt_ProbeLevelEnum, "probe_level"> {
  let assemblyFormat = "`<` $value `>`";
}

//===----------------------------------------------------------------------===//
// Parameters
//===----------------------------------------------------------------------===//

// A list of integers in square brackets: `[128, 1, 1]`.
def GPUOpt_IntList : ArrayRefParameter<"int64_t", "a list of integers"> {
  let parser = "::gpuopt::detail::parseIntList($_parser)";
  let printer = "::gpuopt::detail::printIntList($_printer, $_self)";
}

// As GPUOpt_IntList, left out of the printed attribute when empty.
def GPUOpt_OptionalIntList
    : OptionalArrayRefParameter<"int64_t", "a list of integers"> {
  let parser = "::gpuopt::detail::parseIntList($_parser)";
  let printer = "::gpuopt::detail::printIntList($_printer, $_self)";
}

// A list of the dialect's attributes in square brackets, each without its
// `#gpuopt.mnemonic` prefix: `[<kernel = "a", ...>, <kernel = "b", ...>]`.
class GPUOpt_AttrList<string attr>
    : ArrayRefParameter<"::gpuopt::" # attr, "a list of " # attr # "s"> {
  let parser = "::gpuopt::detail::parseAttrList<::gpuopt::" # attr #
               ">($_parser)";
  let printer = "::gpuopt::detail::printAttrList($_printer, $_self)";
}

// A list of strings in square brackets: `["a", "b"]`.
def GPUOpt_StringList
    : ArrayRefParameter<"::mlir::StringAttr", "a list of strings"> {
  let parser = "::gpuopt::detail::parseStringList($_parser)";
  let printer = "::gpuopt::detail::printStringList($_printer, $_self)";
}

// `true` or `false`.
class GPUOpt_Bool<string desc>
    : DefaultValuedParameter<"bool", "false", desc> {
  let parser = "::gpuopt::detail::parseBool($_parser)";
  let printer = "$_printer << ($_self ? \"true\" : \"false\")";
}

//===----------------------------------------------------------------------===//
// Fusion
//===----------------------------------------------------------------------===//

def GPUOpt_HFusePartAttr : GPUOpt_Attr<"HFusePart", "hfuse_part"> {
  let summary = "One kernel of a fusion plan";
  let description = [{
    The kernel (its `.entry` symbol, in the `ptx.module` named `module`, or
    in any module when `module` is empty), the block shape and grid it is
    launched with, its blocks per dispatch period (`ratio`, for the
    interleave and dynamic strategies) and the dynamic shared memory it is
    launched with (absent: unknown). Under the thread split, `replicas`
    (1 if absent) is how many of its blocks one fused block runs side by
    side, and `setmaxnreg` (0 if absent: none) the registers per thread its
    warps take with `setmaxnreg` on entry.

    ```mlir
    <kernel = "ka", module = "a", block = [128, 1, 1], grid = [1024, 1, 1],
     ratio = 2, dynamic_smem = 0>
    <kernel = "kb", module = "b", block = [128, 1, 1], grid = [4096, 1, 1],
     replicas = 3, setmaxnreg = 72>
    ```
  }];
  let parameters = (ins
    StringRefParameter<"the kernel's symbol">:$kernel,
    StringRefParameter<"its ptx.module (empty: any)", "\"\"">:$module,
    GPUOpt_IntList:$block,
    GPUOpt_IntList:$grid,
    DefaultValuedParameter<"int64_t", "1", "blocks per period">:$ratio,
    OptionalParameter<"std::optional<int64_t>",
                      "bytes of dynamic shared memory">:$dynamic_smem,
    DefaultValuedParameter<"int64_t", "1",
                           "copies of its block in a fused block">:$replicas,
    DefaultValuedParameter<"int64_t", "0",
                           "its register budget (setmaxnreg)">:$setmaxnreg
  );
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

def GPUOpt_HFusePlanAttr : GPUOpt_Attr<"HFusePlan", "hfuse_plan"> {
  let summary = "Which kernels become one, and how";
  let description = [{
    Written by `--hfuse-plan` on the builtin module as `gpuopt.hfuse`, read
    by `--hfuse-apply`: the fused kernel's name, the strategy, its register
    cap (`.maxnreg`; 0 or absent for none) and its parts, in order. With
    `runtime_shapes = true` the fused kernel takes each part's grid (and,
    where the strategy allows, its dynamic shared memory) as parameters at
    launch; a part's `grid` is then only a default, and may be `[]`.
    `units` (dynamic and sm_aware dispatch; 1 if absent) is how many work
    units (blocks of the parts) a fused block takes per ticket and runs one
    after another.

    ```mlir
    module attributes {gpuopt.hfuse = #gpuopt.hfuse_plan<name = "ka_kb_fused",
        strategy = thread, parts = [
          <kernel = "ka", module = "a", block = [128, 1, 1], grid = [1024, 1, 1]>,
          <kernel = "kb", module = "b", block = [64, 1, 1], grid = [512, 1, 1]>]>}
    ```
  }];
  let parameters = (ins
    StringRefParameter<"the fused kernel's name">:$name,
    EnumParameter<GPUOpt_FusionStrategyEnum>:$strategy,
    DefaultValuedParameter<"int64_t", "0", "register cap">:$maxnreg,
    GPUOpt_AttrList<"HFusePartAttr">:$parts,
    GPUOpt_Bool<"the parts' grids are given at launch">:$runtime_shapes,
    DefaultValuedParameter<"int64_t", "1",
                           "work units a block takes per ticket">:$units
  );
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

def GPUOpt_FusionPartAttr : GPUOpt_Attr<"FusionPart", "fusion_part"> {
  let summary = "One part of a fused kernel";
  let description = [{
    The kernel a part was (`kernel` in `module`), the range of the fused
    block's threads that run it (`threads`, [first, end); the whole block
    for block-level strategies), its own block shape and grid, where its
    dynamic shared memory starts in the fused kernel's and how much it has,
    which of the fused kernel's parameters are its own (`arg_map`, in its
    order) and, for block-level strategies, its blocks per period. A thread
    split part with `replicas` = r > 1 runs r of its blocks per fused block,
    copy c on threads [first + c * T, first + (c + 1) * T) as its block
    `fused block * r + c`; `setmaxnreg` (0: none) is the register budget its
    warps take on entry.

    ```mlir
    <kernel = "kb", module = "b", threads = [128, 192], block = [64, 1, 1],
     grid = [512, 1, 1], dynamic_smem_offset = 0, dynamic_smem = 0,
     arg_map = [1]>
    ```
  }];
  let parameters = (ins
    StringRefParameter<"the kernel's symbol">:$kernel,
    StringRefParameter<"its ptx.module">:$module,
    GPUOpt_IntList:$threads,
    GPUOpt_IntList:$block,
    GPUOpt_IntList:$grid,
    "int64_t":$dynamic_smem_offset,
    "int64_t":$dynamic_smem,
    GPUOpt_IntList:$arg_map,
    OptionalParameter<"std::optional<int64_t>", "blocks per period">:$ratio,
    DefaultValuedParameter<"int64_t", "1",
                           "copies of its block in a fused block">:$replicas,
    DefaultValuedParameter<"int64_t", "0",
                           "its register budget (setmaxnreg)">:$setmaxnreg
  );
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

def GPUOpt_FusionInfoAttr : GPUOpt_Attr<"FusionInfo", "fusion_info"> {
  let summary = "What a fused kernel is made of, and how it is launched";
  let description = [{
    Set by `--hfuse-apply` on the fused `ptx.entry` as `gpuopt.fusion` (or
    restored from a launch manifest's `fused_from`): the strategy, the grid
    and dynamic shared memory the fused kernel is launched with, and its
    parts in the order of its top-level scopes. The manifest's `fused_from`
    and the probes' `part` field are written from it. A launch-agnostic
    fused kernel (`runtime_shapes`) has `shape_params`: four per part, the
    indices of the `.u32` parameters that receive its grid's x, y and z and
    its dynamic shared memory in bytes (-1: fixed at compile time); its
    `grid` and its parts' are then defaults (`[]`: none), and `dynamic_smem`
    is the fixed parts' share.

    ```mlir
    ptx.entry ".visible .entry ka_kb(...)" attributes {gpuopt.fusion =
        #gpuopt.fusion_info<strategy = thread, grid = [1024, 1, 1],
                            dynamic_smem = 0, parts = [<...>, <...>]>} {...}
    ```
  }];
  let parameters = (ins
    EnumParameter<GPUOpt_FusionStrategyEnum>:$strategy,
    GPUOpt_IntList:$grid,
    "int64_t":$dynamic_smem,
    GPUOpt_AttrList<"FusionPartAttr">:$parts,
    GPUOpt_OptionalIntList:$shape_params
  );
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

//===----------------------------------------------------------------------===//
// Probes
//===----------------------------------------------------------------------===//

def GPUOpt_ProbeFieldAttr : GPUOpt_Attr<"ProbeField", "probe_field"> {
  let summary = "One field of a probe record";
  let description = [{
    Its name, its PTX type without the dot, and its byte offset in the
    record.

    ```mlir
    <name = "start", type = "u64", offset = 0>
    ```
  }];
  let parameters = (ins
    StringRefParameter<"the field's name">:$name,
    StringRefParameter<"its PTX type, e.g. u64">:$type,
    "int64_t":$offset
  );
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

def GPUOpt_ProbeMapAttr : GPUOpt_Attr<"ProbeMap", "probe_map"> {
  let summary = "A probe record buffer of a probed kernel";
  let description = [{
    One element of a probed `ptx.entry`'s `gpuopt.probes` array, and one
    entry of the manifest's `probes`: the map's name, the probe that
    declares it, the index of the kernel parameter that passes its buffer,
    who owns a slot (`level`), the records per slot (`capacity`; 0 when the
    runtime chooses it, with `capacity_param` the parameter that passes it),
    the record size and its fields. When the buffer lies in the kernel's
    last parameter (`--probe-plan` with `buffer=last-param`, see
    `#gpuopt.probe_scratch`), `block_offset` is the bytes per block of the
    maps before it: the map's buffer starts at the parameter's address plus
    the grid's blocks times `block_offset`.

    ```mlir
    #gpuopt.probe_map<name = "block_sched", probe = "block_sched", param = 1,
        level = warp, capacity = 1, record_bytes = 16,
        fields = [<name = "start", type = "u64", offset = 0>,
                  <name = "end", type = "u64", offset = 8>]>
    ```
  }];
  let parameters = (ins
    StringRefParameter<"the map's name">:$name,
    StringRefParameter<"the probe that declares it">:$probe,
    "int64_t":$param,
    EnumParameter<GPUOpt_ProbeLevelEnum>:$level,
    "int64_t":$capacity,
    "int64_t":$record_bytes,
    GPUOpt_AttrList<"ProbeFieldAttr">:$fields,
    OptionalParameter<"std::optional<int64_t>",
                      "the parameter that passes a dynamic capacity">:
        $capacity_param,
    OptionalParameter<"std::optional<int64_t>",
                      "bytes per block of the maps before it in the "
                      "kernel's last parameter">:$block_offset
  );
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

def GPUOpt_ProbeScratchAttr : GPUOpt_Attr<"ProbeScratch", "probe_scratch"> {
  let summary = "Probe buffers in a kernel's existing last parameter";
  let description = [{
    Set by `--probe-plan` with `buffer=last-param` on each kernel it probes
    as `gpuopt.probe_scratch`, and the manifest's `probe_scratch`: the
    parameter (the kernel's last, a `.u64` whose buffer the launcher
    allocates, as Triton's profile scratch) that holds every map's buffer,
    the bytes it needs per block of the grid, and the alignment its address
    needs. The launcher passes `bytes_per_block` times the grid's blocks;
    map i's buffer starts at the grid's blocks times its `block_offset`.

    ```mlir
    #gpuopt.probe_scratch<param = 5, bytes_per_block = 528, align = 16>
    ```
  }];
  let parameters = (ins
    "int64_t":$param,
    "int64_t":$bytes_per_block,
    "int64_t":$align
  );
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

def GPUOpt_ProbeOccupancyAttr
    : GPUOpt_Attr<"ProbeOccupancy", "probe_occupancy"> {
  let summary = "The occupancy a probed kernel lost to keep its registers";
  let description = [{
    Set by `--probe` on a kernel whose register cap (keep-occupancy) would
    make ptxas spill, so that it keeps its registers instead: the block size
    where it loses most, its blocks per SM there before and after, its
    registers per thread before and after, and the bytes the cap would have
    spilled. The manifest's `probe_occupancy`.

    ```mlir
    #gpuopt.probe_occupancy<block_threads = 256, before = 8, after = 6,
        registers_before = 32, registers_after = 40, cap_spill_bytes = 24>
    ```
  }];
  let parameters = (ins
    "int64_t":$block_threads,
    "int64_t":$before,
    "int64_t":$after,
    "int64_t":$registers_before,
    "int64_t":$registers_after,
    "int64_t":$cap_spill_bytes
  );
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

def GPUOpt_PtxasResourcesAttr
    : GPUOpt_Attr<"PtxasResources", "ptxas_resources"> {
  let summary = "What ptxas reported for a kernel";
  let description = [{
    Registers per thread, static shared memory, local memory, and spill
    stores and loads (bytes), from ptxas's resource report.

    ```mlir
    <registers = 32, shared_bytes = 0, local_bytes = 0, spill_stores = 0,
     spill_loads = 0>
    ```
  }];
  let parameters = (ins
    "int64_t":$registers,
    "int64_t":$shared_bytes,
    "int64_t":$local_bytes,
    "int64_t":$spill_stores,
    "int64_t":$spill_loads
  );
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

def GPUOpt_ProbePlanAttr : GPUOpt_Attr<"ProbePlan", "probe_plan"> {
  let summary = "What --probe-plan decided for one kernel";
  let description = [{
    Written by `--probe-plan` on each kernel it probes as
    `gpuopt.probe_plan`, read by the later probe passes and removed by the
    last of them: the probe specs (built-in names or YAML paths), whether
    every probe's state waits in local memory (`carry_local`), whether exit
    code stays inline at every exit (`inline_exits`), the kernel's parameter
    count before the probe buffers, the exit function `--probe-lower`
    built, the prefix of every name the probes add to the kernel and its
    module (`prefix`: `__pr_`, or `__pr1_`, `__pr2_`, ... when a name of
    the kernel or its module starts with it), whether the buffers lie in
    the kernel's last parameter (`last_param`, `buffer=last-param`) and,
    with keep-occupancy, ptxas's report of the kernel before probing.

    ```mlir
    #gpuopt.probe_plan<specs = ["block_sched"], params = 1,
        ptxas_before = <registers = 32, shared_bytes = 0, local_bytes = 0,
                        spill_stores = 0, spill_loads = 0>>
    ```
  }];
  let parameters = (ins
    GPUOpt_StringList:$specs,
    GPUOpt_Bool<"state in local memory">:$carry_local,
    GPUOpt_Bool<"exit code inline">:$inline_exits,
    "int64_t":$params,
    StringRefParameter<"the exit function", "\"\"">:$exit_function,
    StringRefParameter<"the prefix of the probes' names",
                       "\"__pr_\"">:$prefix,
    GPUOpt_Bool<"buffers in the last parameter">:$last_param,
    OptionalParameter<"::gpuopt::PtxasResourcesAttr",
                      "ptxas's report before probing">:$ptxas_before
  );
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

//===----------------------------------------------------------------------===//
// Kernels captured from the gpu dialect
//===----------------------------------------------------------------------===//

def GPUOpt_GPUKernelAttr : GPUOpt_Attr<"GPUKernel", "gpu_kernel"> {
  let summary = "The gpu.func a kernel was lowered from";
  let description = [{
    Set by `--gpu-to-ptx` on each `ptx.entry` it lowers from a `gpu.func`
    as `gpuopt.gpu_kernel`: the `gpu.module` and `gpu.func` it came from,
    and, for each PTX parameter in order, the function argument it passes
    (`param_args`) and which field of it (`param_fields`): 0 for a scalar;
    for a memref of rank r (lowered as MLIR's memref descriptor) 0 is the
    allocated pointer, 1 the aligned pointer, 2 the offset, 3 to 2+r the
    sizes and 3+r to 2+2r the strides. `block` and `grid` are the
    function's `known_block_size` and `known_grid_size` (empty when it
    states none); `--hfuse-plan` launches the kernel with that grid unless
    told another.

    ```mlir
    #gpuopt.gpu_kernel<module = "kernels", func = "saxpy",
        param_args = [0, 1, 1, 1, 1, 1, 2], param_fields = [0, 0, 1, 2, 3, 4, 0],
        block = [128, 1, 1], grid = [64, 1, 1]>
    ```
  }];
  let parameters = (ins
    StringRefParameter<"the gpu.module">:$module,
    StringRefParameter<"the gpu.func">:$func,
    GPUOpt_IntList:$param_args,
    GPUOpt_IntList:$param_fields,
    GPUOpt_IntList:$block,
    GPUOpt_IntList:$grid
  );
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// The number of PTX parameters the gpu.func's arguments became.
    size_t getNumParams() const { return getParamArgs().size(); }
  }];
}

#endif // GPUOPT_DIALECT_GPUOPT_GPUOPTATTRIBUTES_TD
