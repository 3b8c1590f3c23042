//===- PTXAttributes.td - ptx operand attributes -----------*- tablegen -*-===//
//
// The operands of PTX instructions and the parameters of PTX functions, as
// typed attributes: registers, immediates, addresses, vectors, labels.
//
//===----------------------------------------------------------------------===//

#ifndef GPUOPT_DIALECT_PTX_PTXATTRIBUTES_TD
#define GPUOPT_DIALECT_PTX_PTXATTRIBUTES_TD

include "ptx/IR/PTXDialect.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/BuiltinAttributeInterfaces.td"

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

def PTX_PlaceholderAttr : PTX_Attr<"Placeholder", "placeholder"> {
  let summary = "A named operand of a probe snippet: {bytes}, {addr}, {site}";
  let description = [{
    What an instruction snippet of a probe names by `{bytes}`, `{addr}` or
    `{site}` (docs/probes.md), between --probe-insert, which puts the
    snippet at each matching instruction, and --probe-lower, which replaces
    it by its value there: the bytes the instruction moves, its effective
    address (in a probe register), its position among the kernel's
    instructions. Only probe code holds one, and no exported PTX.

    ```mlir
    ptx.inst "add.u64 %__pr_gmem_bytes_sync, %__pr_gmem_bytes_sync, {bytes}"
    #ptx.placeholder<bytes>
    ```
  }];
  let parameters = (ins StringRefParameter<"bytes, addr or site">:$name);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
}

#endif // GPUOPT_DIALECT_PTX_PTXATTRIBUTES_TD
