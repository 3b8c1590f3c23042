//===- PTXOps.td - ptx ops: modules, functions, statements -*- tablegen -*-===//
//
// The ops of the ptx dialect: the module, `.entry`/`.func`, `{ }` scopes,
// probes, and the statement ops that print as one quoted PTX statement.
//
//===----------------------------------------------------------------------===//

#ifndef GPUOPT_DIALECT_PTX_PTXOPS_TD
#define GPUOPT_DIALECT_PTX_PTXOPS_TD

include "ptx/IR/PTXAttributes.td"
include "mlir/IR/OpBase.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/IR/RegionKindInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

//===----------------------------------------------------------------------===//
// Ops
//===----------------------------------------------------------------------===//

class PTX_Op<string mnemonic, list<Trait> traits = []>
    : Op<PTX_Dialect, mnemonic, traits>;

def PTX_PTXModuleOp : PTX_Op<"module", [
    IsolatedFromAbove, SymbolTable, Symbol, NoTerminator, SingleBlock,
    NoRegionArguments]> {
  let summary = "A PTX module: header directives and top-level statements";
  let description = [{
    One `.ptx` file. Several PTX modules (from different files or compilers)
    can sit side by side in one builtin module, each its own symbol table, so
    clashing symbols stay apart.

    ```mlir
    ptx.module @saxpy version "8.7" target ["sm_90a"] address_size 64 {
      ptx.entry ".visible .entry saxpy(.param .u64 a)" { ... }
    }
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name, StrAttr:$version,
                       StrArrayAttr:$target, OptionalAttr<I32Attr>:$address_size);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    $sym_name `version` $version `target` $target
    (`address_size` $address_size^)? attr-dict-with-keyword $body
  }];
  let skipDefaultBuilders = 1;
  let builders = [OpBuilder<(ins "::llvm::StringRef":$name,
    "::llvm::StringRef":$version, "::mlir::ArrayAttr":$target,
    "::mlir::IntegerAttr":$addressSize)>];
  let hasRegionVerifier = 1;
  let extraClassDeclaration = [{
    ::mlir::Block *getBodyBlock() { return &getBody().front(); }
    /// The SM the module targets, e.g. "sm_90a" (first `.target` entry).
    ::llvm::StringRef getChip();
  }];
}

// Shared by `.entry` and `.func`: the header is kept structured and printed
// as PTX; the body region is empty for a declaration (prototype, `.extern`).
class PTX_FunctionLikeOp<string mnemonic> : PTX_Op<mnemonic, [
    Symbol, NoTerminator, IsolatedFromAbove, NoRegionArguments,
    HasParent<"PTXModuleOp">]> {
  let arguments = (ins
    SymbolNameAttr:$sym_name,
    OptionalAttr<StrAttr>:$linkage,
    TypedArrayAttrBase<PTX_ParamDeclAttr, "parameters">:$params,
    OptionalAttr<TypedArrayAttrBase<PTX_ParamDeclAttr, "return parameters">>:$return_params,
    OptionalAttr<DenseI32ArrayAttr>:$maxntid,
    OptionalAttr<DenseI32ArrayAttr>:$reqntid,
    OptionalAttr<I32Attr>:$minnctapersm,
    OptionalAttr<I32Attr>:$maxnreg,
    OptionalAttr<StrArrayAttr>:$directives);
  let regions = (region MaxSizedRegion<1>:$body);
  let hasCustomAssemblyFormat = 1;
  let hasRegionVerifier = 1;
  let extraClassDeclaration = [{
    /// False for a declaration (`.extern .func f(...);`, prototypes).
    bool hasBody() { return !getBody().empty(); }
    ::mlir::Block *getBodyBlock() { return &getBody().front(); }
    /// Visibility for the Symbol interface: PTX linkage, not MLIR's, decides
    /// what is exported, so every function counts as public.
    ::mlir::SymbolTable::Visibility getVisibility() {
      return ::mlir::SymbolTable::Visibility::Public;
    }
  }];
}

def PTX_EntryOp : PTX_FunctionLikeOp<"entry"> {
  let summary = "A kernel (`.entry`)";
  let description = [{
    ```mlir
    ptx.entry ".visible .entry scale(.param .u64 .ptr .global .align 4 x) .reqntid 128, 1, 1" {
      ptx.reg ".reg .b64 %rd<3>"
      ptx.inst "ld.param.u64 %rd1, [x]"
      ptx.inst "ret"
    }
    ```
  }];
}

def PTX_FuncOp : PTX_FunctionLikeOp<"func"> {
  let summary = "A device function (`.func`), defined or declared";
}

def PTX_ForwardDeclOp : PTX_Op<"declare", [HasParent<"PTXModuleOp">,
    DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "A forward declaration of a function defined later";
  let description = [{
    PTX declares a function before its first call when the definition comes
    later. The definition is the symbol; this op stands where the prototype
    stood and prints the definition's name and parameters with the
    prototype's own linkage and header directives (`.noreturn`, launch
    bounds), which ptxas requires to match the definition's.

    ```mlir
    ptx.declare @__uAtomicAdd
    ptx.declare @_ZN4cuda3std9terminateEv linkage ".weak" directives [".noreturn"]
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$function,
                       OptionalAttr<StrAttr>:$linkage,
                       OptionalAttr<StrArrayAttr>:$directives);
  let assemblyFormat = [{
    $function (`linkage` $linkage^)? (`directives` $directives^)? attr-dict
  }];
}

def PTX_ScopeOp : PTX_Op<"scope", [NoTerminator, SingleBlock,
    NoRegionArguments]> {
  let summary = "A nested `{ }` block with its own declarations";
  let description = [{
    Inline assembly and call sequences open scopes that declare registers and
    `.param` variables visible only inside:

    ```mlir
    ptx.scope {
      ptx.reg ".reg .pred p"
      ptx.inst "setp.ne.b32 p, %r1, 0"
    }
    ```
  }];
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = "attr-dict-with-keyword $body";
  let extraClassDeclaration = [{
    ::mlir::Block *getBodyBlock() { return &getBody().front(); }
  }];
}

// What probe code may touch in memory: its own record buffers (and local
// variables), never the kernel's memory.
def PTX_ProbeBuffer : Resource<"::gpuopt::ptx::ProbeBufferResource">;

def PTX_ProbeOp : PTX_Op<"probe", [NoTerminator, SingleBlock,
    NoRegionArguments,
    MemoryEffects<[MemRead<PTX_ProbeBuffer>, MemWrite<PTX_ProbeBuffer>]>]> {
  let summary = "Instrumentation code that the kernel cannot observe";
  let description = [{
    The statements `--probe` inserts at one probe point (`point`: the kernel
    entry, an exit, or before/after one instruction). They print inline, as
    if the op were not there; the op marks them as the probe's so that the
    verifier can prove that the kernel cannot tell they ran:

    - they write only registers declared inside probe ops (the probe's), and
      the kernel outside probe ops never names those registers, nor the
      probe's `.local` variables or labels;
    - they store to global memory only through an address derived from one
      of the probe's buffers (`buffers`: parameters of the function that the
      kernel itself never reads): every write of the address register loads
      such a parameter or adds an offset to another such address; they also
      store to the probe's `.local` variables and call arguments, and load
      only `.param` and those variables;
    - they hold no barrier, fence, synchronising, warp-collective,
      call, return or `setmaxnreg` instruction, and branch only to labels
      inside the same op, so control enters at the top and leaves at the
      bottom.

    Its memory effects are therefore only reads and writes of the probe
    buffers (`ProbeBuffer`), not the kernel's memory.

    ```mlir
    ptx.probe "kernel.entry" buffers ["__probe_block_sched"] {
      ptx.reg ".reg .b64 %__pr_addr_block_sched"
      ...
    }
    ptx.probe "kernel.exit" {
      ptx.inst "mov.u32 %__pr_block_sched_end, %clock"
      ptx.inst "@%__pr_lead_warp st.global.b32 [%__pr_addr_block_sched+12], %__pr_block_sched_end"
    }
    ```
  }];
  let arguments = (ins StrAttr:$point, OptionalAttr<StrArrayAttr>:$buffers);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    $point (`buffers` $buffers^)? attr-dict-with-keyword $body
  }];
  let hasRegionVerifier = 1;
  let skipDefaultBuilders = 1;
  let builders = [OpBuilder<(ins "::llvm::StringRef":$point,
    CArg<"::mlir::ArrayAttr", "{}">:$buffers)>];
  let extraClassDeclaration = [{
    ::mlir::Block *getBodyBlock() { return &getBody().front(); }
    /// True for opcodes that probe code never contains: they touch memory,
    /// synchronise, act on the warp as a whole or change control flow. A
    /// probe op still holds `st`/`red` to global or local, `ld` of `.param`
    /// or local, and `bra` within itself, which the verifier checks apart.
    static bool isForbiddenOpcode(::llvm::StringRef opcode);
  }];
}

def PTX_ProbeSaveOp : PTX_Op<"probe_save", [HasParent<"ProbeOp">,
    MemoryEffects<[MemWrite<PTX_ProbeBuffer>]>]> {
  let summary = "Save one record of probe registers into a probe map";
  let description = [{
    A probe snippet's `save.MAP v1, v2, ...` between --probe-insert and
    --probe-lower: one record of `map` (a map of the kernel's
    `gpuopt.probes`), one probe register per field in field order, saved
    when `guard` (a register or its negation, `#ptx.not`) holds.
    --probe-lower turns it into stores into the record slot of the thread,
    warp or block, counted when the map's capacity may not hold every save.

    ```mlir
    ptx.probe "kernel.exit" {
      ptx.inst "mov.u32 %__pr_block_sched_end, %clock"
      ptx.probe_save @block_sched [#ptx.reg<"%__pr_block_sched_start">, #ptx.reg<"%__pr_block_sched_end">]
      ptx.probe_save @hits [#ptx.reg<"%__pr_mine_n">] if #ptx.not<#ptx.reg<"%__pr_mine_p">>
    }
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$map,
                       TypedArrayAttrBase<PTX_RegisterAttr,
                                          "probe registers">:$values,
                       OptionalAttr<AnyAttrOf<[PTX_RegisterAttr,
                                               PTX_NotAttr]>>:$guard);
  let assemblyFormat = "$map $values (`if` $guard^)? attr-dict";
  let hasVerifier = 1;
}

// Ops printed as a quoted PTX statement.
class PTX_StatementOp<string mnemonic, list<Trait> traits = []>
    : PTX_Op<mnemonic, traits> {
  let hasCustomAssemblyFormat = 1;
}

def PTX_InstOp : PTX_StatementOp<"inst"> {
  let summary = "A PTX instruction, optionally guarded by a predicate";
  let description = [{
    The opcode is split into its base (`ld`) and modifiers (`global`, `nc`,
    `v4`, `f32`) in source order; helpers classify modifiers (state space,
    vector width, types, rounding, cache operators). Operands are typed
    attributes. The op has unknown memory effects: instructions are never
    merged, moved or erased by generic MLIR transforms.

    ```mlir
    ptx.inst "@!%p1 bra $L__BB0_2"
    ptx.inst "ld.global.nc.v2.f32 {%f1, %f2}, [%rd4+8]"
    ```
  }];
  let arguments = (ins OptionalAttr<PTX_RegisterAttr>:$guard,
                       UnitAttr:$guard_negated,
                       StrAttr:$opcode,
                       StrArrayAttr:$modifiers,
                       ArrayAttr:$ptx_operands);
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// True if `name` (without dot) is one of the modifiers.
    bool hasModifier(::llvm::StringRef name);
    /// The state space modifier (`global`, `shared::cta`, ...), or "".
    ::llvm::StringRef getStateSpace();
    /// The vector width from `.v2`/`.v4`/`.v8`, or 1.
    unsigned getVectorWidth();
    /// The type modifiers (`f32`, `u64`, `bf16x2`, ...) in source order.
    ::llvm::SmallVector<::llvm::StringRef> getTypeModifiers();
    /// The rounding modifier (`rn`, `rzi`, ...), or "".
    ::llvm::StringRef getRoundingMode();
    /// Cache operators and eviction hints (`ca`, `nc`, `L1::evict_last`, ...).
    ::llvm::SmallVector<::llvm::StringRef> getCacheOperators();
    /// The full opcode as written, e.g. "ld.global.nc.f32".
    std::string getFullOpcode();
  }];
}

def PTX_RegOp : PTX_StatementOp<"reg"> {
  let summary = "A register declaration, e.g. `.reg .b32 %r<478>`";
  let description = [{
    `count` is set for a parameterised range: `%r<478>` declares
    `%r0` ... `%r477`. A declaration of several names is split into one op per
    name.
  }];
  let arguments = (ins StrAttr:$type, OptionalAttr<I32Attr>:$vector,
                       StrAttr:$name, OptionalAttr<I64Attr>:$count,
                       OptionalAttr<I32Attr>:$align);
}

// The fields shared by module-level globals and function-local variables.
defvar PTX_VariableArguments = (ins
    OptionalAttr<StrAttr>:$linkage,
    StrAttr:$space,
    OptionalAttr<I32Attr>:$align,
    OptionalAttr<I32Attr>:$vector,
    StrAttr:$type,
    DenseI64ArrayAttr:$dims,
    OptionalAttr<StrAttr>:$initializer,
    OptionalAttr<StrArrayAttr>:$var_attributes);

def PTX_GlobalOp : PTX_StatementOp<"global", [Symbol, HasParent<"PTXModuleOp">]> {
  let summary = "A module-level variable of any state space";
  let description = [{
    `dims` lists array dimensions (0 for `[]`); the initializer is kept as the
    PTX text after `=`.

    ```mlir
    ptx.global ".extern .shared .align 16 .b8 global_smem[]"
    ptx.global ".global .align 4 .b8 table[8] = {1, 0, 0, 0, 2, 0, 0, 0}"
    ```
  }];
  let arguments = !con((ins SymbolNameAttr:$sym_name), PTX_VariableArguments);
  let extraClassDeclaration = [{
    ::mlir::SymbolTable::Visibility getVisibility() {
      return ::mlir::SymbolTable::Visibility::Public;
    }
  }];
}

def PTX_VarOp : PTX_StatementOp<"var"> {
  let summary = "A variable declared inside a function or scope";
  let description = [{
    `.local` depots, function-scoped `.shared` arrays and the `.param`
    variables of call sequences.
  }];
  let arguments = !con((ins StrAttr:$name), PTX_VariableArguments);
}

def PTX_LabelOp : PTX_StatementOp<"label"> {
  let summary = "A label `$L__BB0_2:`";
  let arguments = (ins StrAttr:$name);
}

def PTX_LocOp : PTX_StatementOp<"loc"> {
  let summary = "A `.loc file line column` debug location";
  let description = [{
    `extra` keeps the optional `, function_name ..., inlined_at ...` tail.
  }];
  let arguments = (ins I32Attr:$file, I32Attr:$line, I32Attr:$column,
                       OptionalAttr<StrAttr>:$extra);
}

def PTX_FileOp : PTX_StatementOp<"file"> {
  let summary = "A `.file index \"path\"` debug directive";
  let arguments = (ins I32Attr:$index, StrAttr:$path,
                       OptionalAttr<StrAttr>:$extra);
}

def PTX_SectionOp : PTX_StatementOp<"section", [HasParent<"PTXModuleOp">]> {
  let summary = "A `.section` of debug data, kept verbatim";
  let arguments = (ins StrAttr:$name, StrAttr:$contents);
}

def PTX_PragmaOp : PTX_StatementOp<"pragma"> {
  let summary = "A `.pragma \"...\"` statement";
  let arguments = (ins StrArrayAttr:$values);
}

def PTX_DirectiveOp : PTX_StatementOp<"directive"> {
  let summary = "A rarely used directive kept as text";
  let description = [{
    `.callprototype` and `.branchtargets`/`.calltargets` tables (with their
    label), `.alias`, `.maxnctapersm` outside a header and similar statements
    that no pass rewrites are kept as their PTX text, without the final `;`.
  }];
  let arguments = (ins StrAttr:$text);
}

#endif // GPUOPT_DIALECT_PTX_PTXOPS_TD
