//===- PTXNamespace.h - Fresh register, label and variable names -*- C++
//-*-===//
//
// Code a pass adds to a function declares registers, labels and variables
// next to the function's own. A PTXNamespace (as CIRCT's
// circt/Support/Namespace.h) knows every name in use in a function, a scope
// or a module, and hands out fresh ones from a stem the pass picks:
//
//   PTXNamespace names(function);                 // every name it uses
//   StringRef tid = names.newName("%__hf_tid");   // "%__hf_tid", unless taken
//
// A stem is returned as it is while it is free, so generated code reads as
// the pass wrote it; on a clash it gets the smallest free suffix
// `<separator>N`, N from 1. Prefixes such as `%__hf_` only make clashes
// unlikely; the namespace makes them impossible. (The probes choose a
// prefix no name starts with: containsPrefix.)
//
//===----------------------------------------------------------------------===//

#ifndef GPUOPT_DIALECT_PTX_IR_PTXNAMESPACE_H
#define GPUOPT_DIALECT_PTX_IR_PTXNAMESPACE_H

#include "mlir/IR/Operation.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/ADT/Twine.h"

namespace gpuopt::ptx {

class PTXNamespace {
public:
  PTXNamespace() = default;
  /// The names `root` and everything nested in it use (see add).
  explicit PTXNamespace(mlir::Operation *root) { add(root); }

  /// Adds every name used in `root` and the ops nested in it (scopes, probe
  /// ops): declared registers (a range `%r<N>` takes `%r0` ... `%r{N-1}`),
  /// labels, variables and globals, functions' parameters, and every
  /// register, label and symbol an instruction names.
  void add(mlir::Operation *root);
  /// Marks `name` as in use.
  void add(llvm::StringRef name) { names.insert(name); }
  /// Marks the range `prefix<count>` (`%r<12>`) as in use.
  void addRange(llvm::StringRef prefix, int64_t count);

  /// Whether `name` is in use.
  bool contains(llvm::StringRef name) const;
  /// Whether a name in use starts with `prefix` (for a register range
  /// `%r<N>`, whether `%r` does, or `prefix` is `%r` and digits).
  bool containsPrefix(llvm::StringRef prefix) const;

  /// A name not in use, marked as in use now: `stem` when free, else
  /// `stem<separator>N` with the smallest free N >= 1.
  llvm::StringRef newName(const llvm::Twine &stem,
                          llvm::StringRef separator = "_");

private:
  llvm::StringSet<> names;
  /// Register ranges: prefix -> count.
  llvm::StringMap<int64_t> ranges;
  /// Per stem and separator, the next suffix to try.
  llvm::StringMap<unsigned> nextSuffix;
};

/// Makes every use of a renamed symbol in `root` and the ops nested in it
/// (instruction operands, `.func` forward declarations) use its new name:
/// `renames` maps old names to new ones.
void renameSymbolUses(mlir::Operation *root,
                      const llvm::StringMap<std::string> &renames);

} // namespace gpuopt::ptx

#endif // GPUOPT_DIALECT_PTX_IR_PTXNAMESPACE_H
