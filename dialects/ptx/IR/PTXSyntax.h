//===- PTXSyntax.h - PTX text: lexer, parser, printer -----------*- C++ -*-===//
//
// The PTX surface syntax in one include: tokens and lexer (PTXLexer.h), the
// statement parser (PTXParser.h) and the printer (PTXPrinter.h). Code that
// needs only one of them includes that header.
//
//===----------------------------------------------------------------------===//

#ifndef GPUOPT_DIALECT_PTX_IR_PTXSYNTAX_H
#define GPUOPT_DIALECT_PTX_IR_PTXSYNTAX_H

#include "ptx/IR/PTXLexer.h"
#include "ptx/IR/PTXParser.h"
#include "ptx/IR/PTXPrinter.h"

#endif // GPUOPT_DIALECT_PTX_IR_PTXSYNTAX_H
