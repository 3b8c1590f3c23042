//===- PTXProbeSave.cpp - Probe saves and snippet placeholders ------------===//
//
// The seam between --probe-insert and --probe-lower: `ptx.probe_save` and
// `#ptx.placeholder`, which only probe code holds before it is lowered.
//
//===----------------------------------------------------------------------===//

#include "ptx/IR/PTX.h"

#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/STLExtras.h"

using namespace mlir;
using namespace gpuopt::ptx;

static constexpr StringLiteral kPlaceholderNames[] = {"bytes", "addr", "site"};

LogicalResult
PlaceholderAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                        StringRef name) {
  if (!llvm::is_contained(kPlaceholderNames, name))
    return emitError() << "unknown placeholder '" << name
                       << "': probe snippets name {bytes}, {addr} and {site}";
  return success();
}

Attribute PlaceholderAttr::parse(AsmParser &parser, Type) {
  SMLoc loc = parser.getCurrentLocation();
  StringRef name;
  if (parser.parseLess() || parser.parseKeyword(&name) || parser.parseGreater())
    return {};
  return PlaceholderAttr::getChecked([&] { return parser.emitError(loc); },
                                     parser.getContext(), name);
}

void PlaceholderAttr::print(AsmPrinter &printer) const {
  printer << '<' << getName() << '>';
}

LogicalResult ProbeSaveOp::verify() {
  if (getValues().empty())
    return emitOpError("saves no value: a record has at least one field");
  if (Attribute guard = getGuardAttr()) {
    auto negated = dyn_cast<NotAttr>(guard);
    if (negated && !isa<RegisterAttr>(negated.getOperand()))
      return emitOpError("guard must be a predicate register or its "
                         "negation, not ")
             << guard;
  }
  return success();
}
