//===- PTXDialect.td - The ptx dialect: lossless PTX -------*- tablegen -*-===//
//
// The ptx dialect holds a whole PTX module so that it can be printed back and
// assembled by ptxas into the same machine code. PTX is register based, not
// SSA: a function body is a single block of statement ops (register
// declarations, variables, labels, instructions, `{ }` scopes, debug
// locations). Instructions keep their opcode parsed into a base and modifiers
// and their operands as typed attributes (PTXAttributes.td), so passes match
// them structurally; the ops are in PTXOps.td.
//
// Every statement op prints as the PTX it stands for, quoted, so the IR reads
// like PTX: `ptx.inst "ld.global.nc.f32 %f1, [%rd2+4]"`. The quoted text is
// parsed by the same PTX parser that imports .ptx files; the structured form
// is what the op stores (see `--mlir-print-op-generic`).
//
//===----------------------------------------------------------------------===//

#ifndef GPUOPT_DIALECT_PTX_PTXDIALECT_TD
#define GPUOPT_DIALECT_PTX_PTXDIALECT_TD

include "mlir/IR/DialectBase.td"

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

#endif // GPUOPT_DIALECT_PTX_PTXDIALECT_TD
