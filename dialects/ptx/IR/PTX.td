//===- PTX.td - The ptx dialect: lossless PTX in MLIR ------*- tablegen -*-===//
//
// The ptx dialect holds a whole PTX module so that it can be printed back and
// assembled by ptxas into the same machine code. PTX is register based, not
// SSA: a function body is a single block of statement ops (register
// declarations, variables, labels, instructions, `{ }` scopes, debug
// locations). Instructions keep their opcode parsed into a base and modifiers
// and their operands as typed attributes, so passes match them structurally.
//
// Every statement op prints as the PTX it stands for, quoted, so the IR reads
// like PTX: `ptx.inst "ld.global.nc.f32 %f1, [%rd2+4]"`. The quoted text is
// parsed by the same PTX parser that imports .ptx files; the structured form
// is what the op stores (see `--mlir-print-op-generic`).
//
//===----------------------------------------------------------------------===//

#ifndef GPUOPT_DIALECT_PTX_PTX_TD
#define GPUOPT_DIALECT_PTX_PTX_TD

include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/BuiltinAttributeInterfaces.td"
include "mlir/IR/OpBase.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/IR/RegionKindInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

//===----------------------------------------------------------------------===//
// Dialect
//===----------------------------------------------------------------------===//

def PTX_Dialect : Dialect {
  let name = "ptx";
  let cppNamespace = "::gpuopt::ptx";
  let summary = "A lossless representation of NVIDIA PTX modules";
  let description = [{
    The `ptx` dialect represents any PTX module that ptxas accepts: the module
    header, globals of every state space, `.entry` and `.func` definitions and
    declarations with their parameters and performance directives, register
    declarations, labels, predicated instructions with parsed opcodes and
    typed operands, nested scopes, and debug data (`.file`, `.loc`,
    `.section`). Exporting an imported module gives PTX that ptxas compiles to
    the same code.
  }];
  let useDefaultAttributePrinterParser = 1;
  let extraClassDeclaration = [{
    void registerAttributes();
  }];
}

//===----------------------------------------------------------------------===//
// Operand attributes
//===----------------------------------------------------------------------===//

class PTX_Attr<string name, string attrMnemonic, list<Trait> traits = []>
    : AttrDef<PTX_Dialect, name, traits> {
  let mnemonic = attrMnemonic;
}

def PTX_RegisterAttr : PTX_Attr<"Register", "reg"> {
  let summary = "A register operand, e.g. `%r12`, `%fd3`, `p` or `%v1.x`";
  let parameters = (ins StringRefParameter<"register name">:$name);
  let assemblyFormat = "`<` $name `>`";
  let extraClassDeclaration = [{
    /// The declared register this operand names: the name without a vector
    /// component suffix such as `.x`.
    ::llvm::StringRef getBaseName() const;
  }];
}

def PTX_SpecialRegisterAttr : PTX_Attr<"SpecialRegister", "sreg"> {
  let summary = "A special register, e.g. `%tid.x`, `%clock64`, `%laneid`";
  let parameters = (ins StringRefParameter<"special register name">:$name);
  let assemblyFormat = "`<` $name `>`";
}

def PTX_IntImmAttr : PTX_Attr<"IntImm", "int"> {
  let summary = "An integer immediate";
  let description = [{
    Holds the 64-bit value; `hex` remembers that the source spelled it in
    hexadecimal so the printer writes it the same way.
  }];
  let parameters = (ins "int64_t":$value,
                        DefaultValuedParameter<"bool", "false">:$hex);
  let assemblyFormat = "`<` $value (`,` `hex` `=` $hex^)? `>`";
}

def PTX_FloatImmAttr : PTX_Attr<"FloatImm", "float"> {
  let summary = "A floating-point immediate as its IEEE bit pattern";
  let description = [{
    `0f3F800000` is `#ptx.float<1065353216, 32>`; `0d...` and decimal literals
    (which PTX reads as double) have width 64.
  }];
  let parameters = (ins "uint64_t":$bits, "unsigned":$width);
  let assemblyFormat = "`<` $bits `,` $width `>`";
  let genVerifyDecl = 1;
}

def PTX_AddressAttr : PTX_Attr<"Address", "addr"> {
  let summary = "An address operand `[base+offset]` or `[base, {...}]`";
  let description = [{
    The base is a register, symbol or integer. The offset is kept as written,
    term by term: `[%rd1+0]`, `[%SP+4+4]` and `[%rd5+-12]` stay as they are,
    because ptxas's debug information (`-g`) depends on the spelling. Term `i`
    is `terms[i]`, added, or subtracted when bit `i` of `minus` is set (`[a-4]`
    is `terms = [4], minus = 1`). `getOffset()` gives the effective offset.
    Texture, surface and tensor instructions add a second element
    (`[tex, {%f1, %f2} ]`), kept in `indices`.
  }];
  let parameters = (ins "::mlir::Attribute":$base,
                        OptionalArrayRefParameter<"int64_t">:$terms,
                        DefaultValuedParameter<"uint64_t", "0">:$minus,
                        OptionalParameter<"::mlir::Attribute">:$indices);
  let assemblyFormat = [{
    `<` $base (`terms` `=` `[` $terms^ `]`)? (`minus` `=` $minus^)?
    (`indices` `=` $indices^)? `>`
  }];
  let builders = [
    AttrBuilder<(ins "::mlir::Attribute":$base, "int64_t":$offset,
                     CArg<"::mlir::Attribute", "{}">:$indices), [{
      // An address built by a pass: one `+offset` term, none for 0.
      ::llvm::SmallVector<int64_t, 1> terms;
      if (offset != 0)
        terms.push_back(offset);
      return $_get($_ctxt, base, terms, 0, indices);
    }]>
  ];
  let extraClassDeclaration = [{
    /// The most terms an address keeps (one bit of `minus` each).
    static constexpr unsigned kMaxTerms = 64;
    /// Whether term `i` is subtracted (`[a-4]`).
    bool isSubtracted(unsigned i) const { return (getMinus() >> i) & 1; }
    /// The effective byte offset: the terms summed with two's complement
    /// wrap-around, as ptxas computes it.
    int64_t getOffset() const;
  }];
  let genVerifyDecl = 1;
}

def PTX_VectorAttr : PTX_Attr<"Vector", "vec"> {
  let summary = "A vector operand `{%f1, %f2, _, %f4}`";
  let parameters = (ins "::mlir::ArrayAttr":$elements);
  let assemblyFormat = "`<` $elements `>`";
}

def PTX_ListAttr : PTX_Attr<"List", "list"> {
  let summary = "A parenthesised operand list, as in `call (r), f, (a, b)`";
  let parameters = (ins "::mlir::ArrayAttr":$elements);
  let assemblyFormat = "`<` $elements `>`";
}

def PTX_LabelRefAttr : PTX_Attr<"LabelRef", "label"> {
  let summary = "A reference to a label of the enclosing function";
  let parameters = (ins StringRefParameter<"label name">:$name);
  let assemblyFormat = "`<` $name `>`";
}

def PTX_SinkAttr : PTX_Attr<"Sink", "sink"> {
  let summary = "The sink operand `_`";
}

def PTX_NotAttr : PTX_Attr<"Not", "not"> {
  let summary = "A negated predicate operand `!%p1`";
  let parameters = (ins "::mlir::Attribute":$operand);
  let assemblyFormat = "`<` $operand `>`";
}

def PTX_PairAttr : PTX_Attr<"Pair", "pair"> {
  let summary = "Two destinations `%p|%q` (setp, mma with predicate output)";
  let parameters = (ins "::mlir::Attribute":$first, "::mlir::Attribute":$second);
  let assemblyFormat = "`<` $first `,` $second `>`";
}

def PTX_ParamDeclAttr : PTX_Attr<"ParamDecl", "param"> {
  let summary = "A parameter of an `.entry` or `.func`";
  let description = [{
    `.param .u64 .ptr .global .align 16 k_param_0` is
    `#ptx.param<space = ".param", type = ".u64", name = "k_param_0",
    ptr_space = ".global", ptr_align = 16>`. `array_size` is -1 for a scalar
    and 0 for an unsized array `[]`.
  }];
  let parameters = (ins
    StringRefParameter<"state space: .param or .reg">:$space,
    StringRefParameter<"element type, e.g. .u64 or .b8">:$type,
    StringRefParameter<"parameter name (may be empty in prototypes)">:$name,
    DefaultValuedParameter<"int64_t", "0">:$align,
    StringRefParameter<"pointee state space", [{""}]>:$ptr_space,
    DefaultValuedParameter<"int64_t", "0">:$ptr_align,
    DefaultValuedParameter<"int64_t", "-1">:$array_size,
    DefaultValuedParameter<"bool", "false">:$is_ptr);
  let assemblyFormat = "`<` struct(params) `>`";
}

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

#endif // GPUOPT_DIALECT_PTX_PTX_TD
