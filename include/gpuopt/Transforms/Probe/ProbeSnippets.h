//===- ProbeSnippets.h - Checked probe specs and their snippets -*- C++ -*-===//
//
// A probe spec as the probe passes use it: its snippets parsed (with the PTX
// parser: they are the user's input) and checked, its registers renamed to
// the kernel-unique names the passes declare, the names the passes give
// what they add to a kernel, and the seam between --probe-insert and
// --probe-lower: `ptx.probe_save` and the placeholder operands `{bytes}`,
// `{addr}` and `{site}`.
//
//===----------------------------------------------------------------------===//

#ifndef GPUOPT_TRANSFORMS_PROBE_PROBESNIPPETS_H
#define GPUOPT_TRANSFORMS_PROBE_PROBESNIPPETS_H

#include "gpuopt/Transforms/Probe/ProbeSpec.h"
#include "ptx/IR/PTX.h"
#include "ptx/IR/PTXParser.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/StringMap.h"

#include <optional>
#include <tuple>

namespace gpuopt::probe {

/// The prefix of the probes' names in a kernel none of whose names start
/// with it (`#gpuopt.probe_plan`'s `prefix`, which --probe-plan chooses).
constexpr llvm::StringLiteral kDefaultProbePrefix = "__pr_";

/// The names the probe passes give the registers, labels, variables,
/// parameters and exit function they add to a kernel: its probe prefix and
/// a stem, so that none is a name of the kernel or its module.
class ProbeNames {
public:
  explicit ProbeNames(llvm::StringRef prefix = kDefaultProbePrefix)
      : prefix(prefix) {}

  /// `PREFIXstem`: a variable, parameter or function.
  std::string name(const llvm::Twine &stem) const {
    return (llvm::Twine(prefix) + stem).str();
  }
  /// `%PREFIXstem`.
  std::string reg(const llvm::Twine &stem) const {
    return (llvm::Twine('%') + prefix + stem).str();
  }
  /// `$PREFIXstem`.
  std::string label(const llvm::Twine &stem) const {
    return (llvm::Twine('$') + prefix + stem).str();
  }
  /// The buffer parameter of map `map`: `__probe_MAP` under the default
  /// prefix (which --probe-plan takes only when no name starts with
  /// `__probe_` either), else `PREFIXprobe_MAP`.
  std::string buffer(const llvm::Twine &map) const {
    if (prefix == kDefaultProbePrefix)
      return ("__probe_" + map).str();
    return name("probe_" + map);
  }

private:
  std::string prefix;
};

/// One instruction of a snippet, parsed once and built at every point.
struct SnippetInst {
  ptx::InstructionSyntax syntax;
  mlir::Location loc;
};

/// The named operands of instruction snippets: `{bytes}` (what the
/// instruction moves), `{addr}` (its effective address) and `{site}` (its
/// position among the kernel's instructions).
enum NamedOperand : unsigned { kBytes = 1, kAddr = 2, kSite = 4 };

/// A parsed and checked probe spec.
struct CheckedProbe {
  ProbeSpec spec;
  /// Probe register -> (renamed register, type).
  llvm::StringMap<std::pair<std::string, std::string>> registers;
  std::vector<llvm::SmallVector<SnippetInst>> points;
  /// Which named operands each point's snippet uses (NamedOperand bits).
  std::vector<unsigned> uses;
  /// Probe registers set at entry and read at exit, carried in local
  /// memory: (register, local variable, type).
  llvm::SmallVector<std::tuple<std::string, std::string, std::string>> carried;

  /// `operand` with the probe's registers renamed.
  mlir::Attribute rename(mlir::Attribute operand) const;
};

/// Parses each snippet line by line into instructions, with the location of
/// each in the spec file, and checks what it may touch. Named operands
/// become placeholder operands; registers get `names`.
mlir::FailureOr<CheckedProbe>
checkProbe(ProbeSpec spec, const ProbeNames &names, mlir::MLIRContext *ctx);

/// Reads and checks the probes `specs` names (built-ins or YAML files);
/// with `carryLocal`, every probe keeps its state in local memory.
mlir::FailureOr<std::vector<CheckedProbe>>
loadProbes(llvm::ArrayRef<std::string> specs, bool carryLocal,
           const ProbeNames &names, mlir::MLIRContext *ctx);

/// The named operand `operand` stands for, if it is a placeholder.
std::optional<NamedOperand> getPlaceholderKind(mlir::Attribute operand);

/// A `save.MAP` of a snippet as --probe-insert leaves it for --probe-lower.
struct SaveView {
  mlir::Operation *op;
  llvm::StringRef map;
  llvm::ArrayRef<mlir::Attribute> values;
  ptx::RegisterAttr guard;
  bool guardNegated;
};
/// Builds a save of `values` (registers, in field order) into `map`.
void createSave(mlir::OpBuilder &builder, mlir::Location loc,
                llvm::StringRef map, llvm::ArrayRef<mlir::Attribute> values,
                ptx::RegisterAttr guard, bool guardNegated);
std::optional<SaveView> getSave(mlir::Operation *op);

/// Builds into a new ptx.probe at the builder's insertion point; when it
/// goes out of scope, the builder goes on after the op.
class ProbeOpInsertion {
public:
  ProbeOpInsertion(mlir::OpBuilder &builder, mlir::Location loc,
                   llvm::StringRef point, mlir::ArrayAttr buffers = {})
      : builder(builder),
        op(ptx::ProbeOp::create(builder, loc, point, buffers)) {
    builder.setInsertionPointToEnd(op.getBodyBlock());
  }
  ProbeOpInsertion(const ProbeOpInsertion &) = delete;
  ProbeOpInsertion &operator=(const ProbeOpInsertion &) = delete;
  ~ProbeOpInsertion() { builder.setInsertionPointAfter(op); }
  ptx::ProbeOp getOp() { return op; }

private:
  mlir::OpBuilder &builder;
  ptx::ProbeOp op;
};

/// The point names of probe ops.
constexpr llvm::StringLiteral kEntryPoint = "kernel.entry";
constexpr llvm::StringLiteral kExitPoint = "kernel.exit";
constexpr llvm::StringLiteral kBeforePrefix = "before ";
constexpr llvm::StringLiteral kAfterPrefix = "after ";

} // namespace gpuopt::probe

#endif // GPUOPT_TRANSFORMS_PROBE_PROBESNIPPETS_H
