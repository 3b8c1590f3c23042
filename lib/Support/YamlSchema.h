//===- YamlSchema.h - Checking YAML files against a schema ------*- C++ -*-===//
//
// A base for the readers of gpu-opt's YAML files (fusion configs, probe
// specs): yaml-cpp nodes to typed values, with every error emitted through
// the MLIR context at the YAML line and column. Private to lib/Support.
//
//===----------------------------------------------------------------------===//

#ifndef GPUOPT_LIB_SUPPORT_YAMLSCHEMA_H
#define GPUOPT_LIB_SUPPORT_YAMLSCHEMA_H

#include "mlir/IR/Location.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Support/LLVM.h"
#include "llvm/ADT/StringRef.h"

#include <yaml-cpp/yaml.h>

#include <string>

namespace gpuopt {

/// One `key: value` entry of a YAML map.
struct Field {
  llvm::StringRef key;
  YAML::Node keyNode, value;
};

/// "a list", "a map", ... for messages about a node of the wrong kind.
llvm::StringRef describeKind(const YAML::Node &node);
/// A plain (unquoted) scalar: quoted text is a string even when it looks like
/// a number.
bool isPlainScalar(const YAML::Node &node);
/// PTX's identifier syntax: [a-zA-Z][a-zA-Z0-9_$]* or [_$%][a-zA-Z0-9_$]+.
bool isPTXIdentifier(llvm::StringRef name);

class YamlSchemaReader {
public:
  YamlSchemaReader(mlir::MLIRContext *ctx, llvm::StringRef file)
      : ctx(ctx), file(file) {}

protected:
  mlir::Location getLoc(const YAML::Mark &mark) const {
    if (mark.is_null())
      return mlir::FileLineColLoc::get(ctx, file, 1, 1);
    // yaml-cpp counts lines and columns from 0.
    return mlir::FileLineColLoc::get(ctx, file, mark.line + 1,
                                     mark.column + 1);
  }
  mlir::Location getLoc(const YAML::Node &node) const {
    return getLoc(node.Mark());
  }
  /// A missing value (`key:`) has the next token's mark: point at the key.
  mlir::Location getLoc(const Field &field) const {
    return field.value.IsNull() ? getLoc(field.keyNode) : getLoc(field.value);
  }

  /// Calls `fn` on each entry of `map`; an unknown key (with the closest
  /// known one suggested) or a repeated key is an error.
  mlir::LogicalResult
  forEachField(const YAML::Node &map, llvm::ArrayRef<llvm::StringRef> known,
               llvm::StringRef where,
               llvm::function_ref<mlir::LogicalResult(const Field &)> fn);

  mlir::FailureOr<std::string> parseString(const Field &field);
  mlir::FailureOr<int64_t> parseInt(const Field &field, const YAML::Node &node,
                                    int64_t min, int64_t max);
  mlir::FailureOr<int64_t> parseInt(const Field &field, int64_t min,
                                    int64_t max) {
    return parseInt(field, field.value, min, max);
  }
  mlir::FailureOr<bool> parseBool(const Field &field);
  mlir::FailureOr<double> parsePositiveDouble(const Field &field);

  mlir::MLIRContext *ctx;
  llvm::StringRef file;
};

} // namespace gpuopt

#endif // GPUOPT_LIB_SUPPORT_YAMLSCHEMA_H
