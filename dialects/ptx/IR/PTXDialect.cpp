//===- PTXDialect.cpp - ptx dialect registration and attributes -----------===//

#include "ptx/IR/PTX.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace gpuopt::ptx;

#include "ptx/IR/PTXDialect.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "ptx/IR/PTXAttrs.cpp.inc"

void PTXDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "ptx/IR/PTXOps.cpp.inc"
      >();
  registerAttributes();
}

void PTXDialect::registerAttributes() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "ptx/IR/PTXAttrs.cpp.inc"
      >();
}

llvm::StringRef RegisterAttr::getBaseName() const {
  llvm::StringRef name = getName();
  return name.take_until([](char c) { return c == '.'; });
}

LogicalResult AddressAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                  Attribute base, ArrayRef<int64_t> terms,
                                  uint64_t minus, Attribute indices) {
  if (!base)
    return emitError() << "address needs a base";
  if (terms.size() > kMaxTerms)
    return emitError() << "address has more than " << kMaxTerms
                       << " offset terms";
  if (terms.size() < kMaxTerms && (minus >> terms.size()) != 0)
    return emitError() << "address 'minus' marks a term it does not have";
  return success();
}

int64_t AddressAttr::getOffset() const {
  uint64_t offset = 0;
  for (auto [i, term] : llvm::enumerate(getTerms()))
    offset =
        isSubtracted(i) ? offset - uint64_t(term) : offset + uint64_t(term);
  return int64_t(offset);
}

LogicalResult FloatImmAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                   uint64_t bits, unsigned width) {
  if (width != 32 && width != 64)
    return emitError() << "float immediate width must be 32 or 64, got "
                       << width;
  if (width == 32 && bits > 0xFFFFFFFFull)
    return emitError() << "32-bit float immediate has more than 32 bits";
  return success();
}
