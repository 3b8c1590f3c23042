//===- YamlSchema.cpp - Checking YAML files against a schema --------------===//
//
// What the YAML readers (fusion configs, probe specs) share: keys checked
// against the known ones with a suggestion for a typo, typed scalars, and
// every error at the node that holds it (`file.yaml:LINE:COL: error:`).
//
//===----------------------------------------------------------------------===//

#include "YamlSchema.h"

#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace gpuopt;

StringRef gpuopt::describeKind(const YAML::Node &node) {
  switch (node.Type()) {
  case YAML::NodeType::Null:
  case YAML::NodeType::Undefined:
    return "nothing";
  case YAML::NodeType::Scalar:
    return "a scalar";
  case YAML::NodeType::Sequence:
    return "a list";
  case YAML::NodeType::Map:
    return "a map";
  }
  return "something else";
}

bool gpuopt::isPlainScalar(const YAML::Node &node) {
  return node.IsScalar() && node.Tag() != "!";
}

bool gpuopt::isPTXIdentifier(StringRef name) {
  auto isFollow = [](char c) {
    return llvm::isAlnum(c) || c == '_' || c == '$';
  };
  if (name.empty() || !llvm::all_of(name.drop_front(), isFollow))
    return false;
  if (llvm::isAlpha(name.front()))
    return true;
  return (name.front() == '_' || name.front() == '$' || name.front() == '%') &&
         name.size() > 1;
}

LogicalResult
YamlSchemaReader::forEachField(const YAML::Node &map, ArrayRef<StringRef> known,
                               StringRef where,
                               function_ref<LogicalResult(const Field &)> fn) {
  llvm::StringSet<> seen;
  for (const auto &entry : map) {
    const YAML::Node &keyNode = entry.first;
    if (!keyNode.IsScalar())
      return emitError(getLoc(keyNode))
                 << "keys " << where << " must be names, not "
                 << describeKind(keyNode),
             failure();
    StringRef key = keyNode.Scalar();
    if (!llvm::is_contained(known, key)) {
      InFlightDiagnostic diag = emitError(getLoc(keyNode))
                                << "unknown key '" << key << "' " << where;
      // Suggest the closest known key for a typo.
      StringRef best;
      unsigned bestDistance = 3;
      for (StringRef candidate : known) {
        unsigned distance = key.edit_distance(candidate);
        if (distance < bestDistance) {
          best = candidate;
          bestDistance = distance;
        }
      }
      if (!best.empty())
        diag << "; did you mean '" << best << "'?";
      diag << " (known keys: " << llvm::join(known, ", ") << ")";
      return failure();
    }
    if (!seen.insert(key).second)
      return emitError(getLoc(keyNode)) << "duplicate key '" << key << "' "
                                        << where << ": write each key once",
             failure();
    if (failed(fn(Field{key, keyNode, entry.second})))
      return failure();
  }
  return success();
}

FailureOr<std::string> YamlSchemaReader::parseString(const Field &field) {
  if (!field.value.IsScalar() || field.value.Scalar().empty())
    return emitError(getLoc(field))
               << "'" << field.key << "' must be a name, not "
               << (field.value.IsScalar() ? StringRef("an empty string")
                                          : describeKind(field.value)),
           failure();
  return field.value.Scalar();
}

FailureOr<int64_t> YamlSchemaReader::parseInt(const Field &field,
                                              const YAML::Node &node,
                                              int64_t min, int64_t max) {
  int64_t value;
  if (!isPlainScalar(node) ||
      StringRef(node.Scalar()).trim().getAsInteger(10, value)) {
    InFlightDiagnostic diag =
        emitError(node.is(field.value) ? getLoc(field) : getLoc(node))
        << "'" << field.key << "' must be an integer, not ";
    if (node.IsScalar())
      diag << "'" << node.Scalar() << "'";
    else
      diag << describeKind(node);
    return failure();
  }
  if (value < min || value > max) {
    InFlightDiagnostic diag = emitError(getLoc(node))
                              << "'" << field.key << "' must be ";
    if (min == 1 && value < min)
      diag << "positive";
    else if (max == std::numeric_limits<int64_t>::max())
      diag << "at least " << min;
    else
      diag << "between " << min << " and " << max;
    diag << ", not " << value;
    return failure();
  }
  return value;
}

FailureOr<bool> YamlSchemaReader::parseBool(const Field &field) {
  if (isPlainScalar(field.value)) {
    StringRef text = field.value.Scalar();
    if (text == "true" || text == "True" || text == "TRUE")
      return true;
    if (text == "false" || text == "False" || text == "FALSE")
      return false;
  }
  return emitError(getLoc(field))
             << "'" << field.key << "' must be true or false",
         failure();
}

FailureOr<double> YamlSchemaReader::parsePositiveDouble(const Field &field) {
  double value;
  if (!isPlainScalar(field.value) ||
      StringRef(field.value.Scalar()).trim().getAsDouble(value) ||
      !std::isfinite(value))
    return emitError(getLoc(field))
               << "'" << field.key << "' must be a number (milliseconds)",
           failure();
  if (value <= 0)
    return emitError(getLoc(field))
               << "'" << field.key << "' must be positive, not "
               << field.value.Scalar(),
           failure();
  return value;
}
