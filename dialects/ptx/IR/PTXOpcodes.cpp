//===- PTXOpcodes.cpp - What gpu-opt knows about PTX opcodes --------------===//
//
// The opcode table and the checks the statement parser runs with it. The
// modifier lists follow the syntax sections of the PTX ISA 9.0; order does not
// matter to ptxas (`add.f32.rn` is `add.rn.f32`), so a modifier is checked as
// a member of its opcode's set. The parser caches opcodes per file, so each
// distinct opcode string is checked once.
//
//===----------------------------------------------------------------------===//

#include "ptx/IR/PTXOpcodes.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/ErrorHandling.h"

using namespace gpuopt::ptx;
using llvm::StringRef;

//===----------------------------------------------------------------------===//
// The table
//===----------------------------------------------------------------------===//

// Modifier groups several opcodes share.
#define RND " rn rz rm rp"
#define SEM " weak relaxed acquire release acq_rel volatile mmio sc"
#define SCOPE " cta cluster gpu sys"
#define CACHE                                                                  \
  " L1::evict_normal L1::evict_unchanged L1::evict_first L1::evict_last"       \
  " L1::no_allocate L2::evict_normal L2::evict_first L2::evict_last"           \
  " L2::evict_unchanged L2::cache_hint L2::64B L2::128B L2::256B"
#define VEC " v2 v4 v8"
#define CMP " eq ne lt le gt ge lo ls hi hs equ neu ltu leu gtu geu num nan"
#define REDOP " and or xor add inc dec min max"

static constexpr uint8_t MemorySpaces = GlobalSpace | SharedSpace |
                                        ClusterSpace | LocalSpace | ConstSpace |
                                        ParamSpace;
static constexpr uint8_t GlobalOrSharedSpaces =
    GlobalSpace | SharedSpace | ClusterSpace;
static constexpr uint8_t Mem = MemoryEffect, Sync = SyncEffect,
                         Ctl = ControlEffect, State = StateEffect;

// Sorted by name. A null modifier list marks a family checked against the
// vocabulary of all modifiers (see isVocabularyModifier).
static const OpcodeInfo opcodeTable[] = {
    {"abs", NoSpace, NoEffect, "ftz relu"},
    {"activemask", NoSpace, Sync, ""},
    {"add", NoSpace, NoEffect, RND " ftz sat cc"},
    {"addc", NoSpace, State, "cc"},
    {"alloca", LocalSpace, Mem, ""},
    {"and", NoSpace, NoEffect, ""},
    {"applypriority", GlobalSpace, Mem, "L2::evict_normal", DefRole::None},
    {"atom", GlobalOrSharedSpaces, Mem | Sync,
     SEM SCOPE REDOP " cas exch noftz L2::cache_hint" VEC, DefRole::First,
     OpcodeKind::Atomic},
    {"bar", NoSpace, Sync, "sync arrive red popc and or cta aligned warp",
     DefRole::FirstIfRed, OpcodeKind::Barrier},
    {"barrier", NoSpace, Sync,
     "sync arrive red popc and or cta aligned cluster wait relaxed release "
     "acquire",
     DefRole::FirstIfRed, OpcodeKind::Barrier},
    {"bfe", NoSpace, NoEffect, ""},
    {"bfi", NoSpace, NoEffect, ""},
    {"bfind", NoSpace, NoEffect, "shiftamt"},
    {"bmsk", NoSpace, NoEffect, "clamp wrap"},
    {"bra", NoSpace, Ctl, "uni", DefRole::None, OpcodeKind::Branch},
    {"brev", NoSpace, NoEffect, ""},
    {"brkpt", NoSpace, Ctl, "", DefRole::None},
    {"brx", NoSpace, Ctl, "idx uni", DefRole::None, OpcodeKind::Branch},
    {"call", NoSpace, Ctl, "uni", DefRole::CallResults, OpcodeKind::Call},
    {"clusterlaunchcontrol", SharedSpace | ClusterSpace, Mem | Sync, nullptr},
    {"clz", NoSpace, NoEffect, ""},
    {"cnot", NoSpace, NoEffect, ""},
    {"copysign", NoSpace, NoEffect, ""},
    {"cos", NoSpace, NoEffect, "approx ftz"},
    {"cp", GlobalOrSharedSpaces, Mem | Sync, nullptr, DefRole::None,
     OpcodeKind::AsyncCopy},
    {"createpolicy", GlobalSpace, State, "range fractional cvt L2" CACHE},
    {"cvt", NoSpace, NoEffect,
     RND " rni rzi rmi rpi rna rs ftz sat satfinite relu pack"},
    {"cvta", MemorySpaces, NoEffect, "to"},
    {"discard", GlobalSpace, Mem, "L2", DefRole::None},
    {"div", NoSpace, NoEffect, RND " approx full ftz"},
    {"dp2a", NoSpace, NoEffect, "lo hi"},
    {"dp4a", NoSpace, NoEffect, ""},
    {"elect", NoSpace, Sync, "sync", DefRole::First,
     OpcodeKind::WarpCollective},
    {"ex2", NoSpace, NoEffect, "approx ftz"},
    {"exit", NoSpace, Ctl, "", DefRole::None, OpcodeKind::Exit},
    {"fence", GlobalOrSharedSpaces, Sync,
     "sc acq_rel acquire release relaxed" SCOPE
     " proxy alias async async::generic tensormap::generic mbarrier_init"
     " sync_restrict::shared::cta sync_restrict::shared::cluster",
     DefRole::None},
    {"fma", NoSpace, NoEffect, RND " ftz sat relu oob"},
    {"fns", NoSpace, NoEffect, ""},
    {"getctarank", ClusterSpace, NoEffect, ""},
    {"griddepcontrol", NoSpace, Sync, "launch_dependents wait", DefRole::None},
    {"isspacep", MemorySpaces, NoEffect, ""},
    {"istypep", NoSpace, State, "texref samplerref surfref"},
    {"ld", MemorySpaces, Mem, SEM SCOPE " ca cg cs lu cv nc" CACHE VEC,
     DefRole::First, OpcodeKind::Load},
    {"ldmatrix", SharedSpace, Mem | Sync,
     "sync aligned m8n8 m16n16 m8n16 x1 x2 x4 trans b8x16 b6x16_p32 "
     "b4x16_p64"},
    {"ldu", GlobalSpace, Mem, VEC, DefRole::First, OpcodeKind::Load},
    {"lg2", NoSpace, NoEffect, "approx ftz"},
    {"lop3", NoSpace, NoEffect, "and or"},
    {"mad", NoSpace, NoEffect, RND " lo hi wide sat cc ftz"},
    {"mad24", NoSpace, NoEffect, "lo hi sat"},
    {"madc", NoSpace, State, "lo hi cc"},
    {"mapa", ClusterSpace, NoEffect, ""},
    {"match", NoSpace, Sync, "any all sync", DefRole::First,
     OpcodeKind::WarpCollective},
    {"max", NoSpace, NoEffect, "ftz NaN xorsign abs relu"},
    {"mbarrier", SharedSpace | ClusterSpace, Mem | Sync,
     "init inval arrive arrive_drop expect_tx complete_tx test_wait try_wait "
     "parity pending_count noComplete release relaxed acquire cta cluster",
     DefRole::First, OpcodeKind::Mbarrier},
    {"membar", NoSpace, Sync, "cta gl sys proxy alias async", DefRole::None},
    {"min", NoSpace, NoEffect, "ftz NaN xorsign abs relu"},
    {"mma", NoSpace, Sync, nullptr, DefRole::First, OpcodeKind::TensorCore},
    {"mov", NoSpace, NoEffect, ""},
    {"movmatrix", NoSpace, Sync, "sync aligned m8n8 trans"},
    {"mul", NoSpace, NoEffect, RND " lo hi wide ftz sat"},
    {"mul24", NoSpace, NoEffect, "lo hi"},
    {"multimem", GlobalOrSharedSpaces, Mem | Sync, nullptr},
    {"nanosleep", NoSpace, State, "", DefRole::None},
    {"neg", NoSpace, NoEffect, "ftz"},
    {"not", NoSpace, NoEffect, ""},
    {"or", NoSpace, NoEffect, ""},
    {"pmevent", NoSpace, State, "mask", DefRole::None},
    {"popc", NoSpace, NoEffect, ""},
    {"prefetch", GlobalSpace | LocalSpace | ConstSpace | ParamSpace, Mem,
     "L1 L2 L2::evict_last L2::evict_normal tensormap", DefRole::None},
    {"prefetchu", NoSpace, Mem, "L1", DefRole::None},
    {"prmt", NoSpace, NoEffect, "f4e b4e rc8 ecl ecr rc16"},
    {"rcp", NoSpace, NoEffect, RND " approx ftz"},
    {"red", GlobalOrSharedSpaces, Mem | Sync,
     SEM SCOPE REDOP
     " noftz L2::cache_hint async mbarrier::complete_tx::bytes" VEC,
     DefRole::None, OpcodeKind::Reduction},
    {"redux", NoSpace, Sync, "sync and or xor add min max abs NaN",
     DefRole::First, OpcodeKind::WarpCollective},
    {"rem", NoSpace, NoEffect, ""},
    {"ret", NoSpace, Ctl, "uni", DefRole::None, OpcodeKind::Return},
    {"rsqrt", NoSpace, NoEffect, "approx ftz"},
    {"sad", NoSpace, NoEffect, ""},
    {"selp", NoSpace, NoEffect, ""},
    {"set", NoSpace, NoEffect, CMP " and or xor ftz"},
    {"setmaxnreg", NoSpace, Sync, "inc dec sync aligned", DefRole::None},
    {"setp", NoSpace, NoEffect, CMP " and or xor ftz"},
    {"shf", NoSpace, NoEffect, "l r clamp wrap"},
    {"shfl", NoSpace, Sync, "up down bfly idx sync", DefRole::First,
     OpcodeKind::WarpCollective},
    {"shl", NoSpace, NoEffect, ""},
    {"shr", NoSpace, NoEffect, ""},
    {"sin", NoSpace, NoEffect, "approx ftz"},
    {"slct", NoSpace, NoEffect, "ftz"},
    {"sqrt", NoSpace, NoEffect, RND " approx ftz"},
    {"st", MemorySpaces & ~ConstSpace, Mem,
     SEM SCOPE " wb cg cs wt async bulk mbarrier::complete_tx::bytes" CACHE VEC,
     DefRole::None, OpcodeKind::Store},
    {"stackrestore", NoSpace, State, "", DefRole::None},
    {"stacksave", NoSpace, State, ""},
    {"stmatrix", SharedSpace, Mem | Sync,
     "sync aligned m8n8 m16n8 x1 x2 x4 trans", DefRole::None},
    {"sub", NoSpace, NoEffect, RND " ftz sat cc"},
    {"subc", NoSpace, State, "cc"},
    {"suld", NoSpace, Mem, nullptr},
    {"suq", NoSpace, State, nullptr},
    {"sured", NoSpace, Mem, nullptr, DefRole::None},
    {"sust", NoSpace, Mem, nullptr, DefRole::None},
    {"szext", NoSpace, NoEffect, "clamp wrap"},
    {"tanh", NoSpace, NoEffect, "approx"},
    {"tcgen05", SharedSpace | ClusterSpace, Mem | Sync, nullptr},
    {"tensormap", GlobalSpace | SharedSpace, Mem | Sync, nullptr},
    {"testp", NoSpace, NoEffect,
     "finite infinite number notanumber normal subnormal"},
    {"tex", NoSpace, Mem, nullptr},
    {"tld4", NoSpace, Mem, nullptr},
    {"trap", NoSpace, Ctl, "", DefRole::None, OpcodeKind::Trap},
    {"txq", NoSpace, State, nullptr},
    {"vabsdiff", NoSpace, NoEffect, nullptr},
    {"vabsdiff2", NoSpace, NoEffect, nullptr},
    {"vabsdiff4", NoSpace, NoEffect, nullptr},
    {"vadd", NoSpace, NoEffect, nullptr},
    {"vadd2", NoSpace, NoEffect, nullptr},
    {"vadd4", NoSpace, NoEffect, nullptr},
    {"vavrg2", NoSpace, NoEffect, nullptr},
    {"vavrg4", NoSpace, NoEffect, nullptr},
    {"vmad", NoSpace, NoEffect, nullptr},
    {"vmax", NoSpace, NoEffect, nullptr},
    {"vmax2", NoSpace, NoEffect, nullptr},
    {"vmax4", NoSpace, NoEffect, nullptr},
    {"vmin", NoSpace, NoEffect, nullptr},
    {"vmin2", NoSpace, NoEffect, nullptr},
    {"vmin4", NoSpace, NoEffect, nullptr},
    {"vote", NoSpace, Sync, "all any uni ballot sync", DefRole::First,
     OpcodeKind::WarpCollective},
    {"vset", NoSpace, NoEffect, nullptr},
    {"vset2", NoSpace, NoEffect, nullptr},
    {"vset4", NoSpace, NoEffect, nullptr},
    {"vshl", NoSpace, NoEffect, nullptr},
    {"vshr", NoSpace, NoEffect, nullptr},
    {"vsub", NoSpace, NoEffect, nullptr},
    {"vsub2", NoSpace, NoEffect, nullptr},
    {"vsub4", NoSpace, NoEffect, nullptr},
    {"wgmma", NoSpace, Mem | Sync, nullptr, DefRole::First,
     OpcodeKind::TensorCore},
    {"wmma", GlobalSpace | SharedSpace, Mem | Sync, nullptr, DefRole::First,
     OpcodeKind::TensorCore},
    {"xor", NoSpace, NoEffect, ""},
};

// Modifiers of the families without a list (and of every list above).
static const char *const vocabularyExtras =
    // mma, wmma, wgmma
    "sync aligned row col satfinite sp sp::ordered_metadata and xor popc load "
    "store mma a b c d fence commit_group wait_group mma_async block_scale "
    "scale_vec::1X scale_vec::2X scale_vec::4X "
    // tcgen05
    "alloc dealloc relinquish_alloc_permit ld st wait cp shift commit ws "
    "ashift down pack::16b unpack::16b wait::ld wait::st "
    "fence::before_thread_sync fence::after_thread_sync "
    "mbarrier::arrive::one multicast::cluster red min max abs NaN "
    // tensormap
    "replace tile global_address rank box_dim global_dim global_stride "
    "element_stride elemtype interleave_layout swizzle_mode swizzle_atomicity "
    "fill_mode b1024 cp_fenceproxy tensormap::generic release gpu "
    // multimem
    "ld_reduce acc::f32 acc::f16 weak relaxed acquire cta cluster sys add or "
    // clusterlaunchcontrol
    "try_cancel query_cancel async is_canceled get_first_ctaid "
    "get_first_ctaid::x get_first_ctaid::y get_first_ctaid::z "
    "mbarrier::complete_tx::bytes multicast::cluster::all "
    // textures and surfaces
    "a1d a2d cube acube 2dms a2dms base level grad p trap clamp zero r g "
    "width height depth channel_data_type channel_order normalized_coords "
    "filter_mode addr_mode_0 addr_mode_1 addr_mode_2 num_mipmap_levels "
    "num_samples force_unnormalized_coords array_size memory_layout "
    // video instructions
    "sat wrap po "
    // cp: async copies, bulk copies and TMA
    "ca cg bulk tensor reduce prefetch wait_all read mbarrier arrive noinc L2 "
    "bulk_group cta_group::1 cta_group::2 tile::gather4 tile::scatter4 im2col "
    "im2col::w im2col::w::128 im2col_no_offs cp_mask noftz ignore_oob";

// The first `::` component of modifiers that the ISA builds into families
// (`kind::f8f6f4`, `collector::a::fill`); in vocabulary-checked families any
// modifier in such a namespace is accepted.
static bool isVocabularyNamespace(StringRef name) {
  return llvm::StringSwitch<bool>(name)
      .Cases({"L1", "L2", "kind", "scale_vec", "collector", "cta_group"}, true)
      .Cases({"mbarrier", "multicast", "tile", "im2col", "sync_restrict"}, true)
      .Cases({"tensormap", "async", "acc", "pack", "unpack", "wait"}, true)
      .Cases({"fence", "get_first_ctaid", "sp"}, true)
      .Default(false);
}

/// Shapes, counts and dimensions: `m16n8k16`, `x4`, `2d`, `32x32b`,
/// `b8x16`, `b6x16_p32`, `64x128b::warpx2::02_13`.
static bool isShapeModifier(StringRef name) {
  name = name.take_until([](char c) { return c == ':'; });
  auto digits = [](StringRef &s) {
    size_t n = s.find_if_not(llvm::isDigit);
    if (s.empty() || n == 0)
      return false;
    s = s.drop_front(std::min(n, s.size()));
    return true;
  };
  StringRef s = name;
  // 1d..5d, x1..x128
  if (digits(s) && s == "d")
    return true;
  s = name;
  if (s.consume_front("x") && digits(s) && s.empty())
    return true;
  // m16n8k16, m8n8
  s = name;
  if (s.consume_front("m") && digits(s) && s.consume_front("n") && digits(s) &&
      (s.empty() || (s.consume_front("k") && digits(s) && s.empty())))
    return true;
  // 32x32b, 16x32bx2
  s = name;
  if (digits(s) && s.consume_front("x") && digits(s) && s.consume_front("b") &&
      (s.empty() || (s.consume_front("x") && digits(s) && s.empty())))
    return true;
  // b8x16, b6x16_p32
  s = name;
  if (s.consume_front("b") && digits(s) && s.consume_front("x") && digits(s) &&
      (s.empty() || (s.consume_front("_p") && digits(s) && s.empty())))
    return true;
  return false;
}

const OpcodeInfo *gpuopt::ptx::lookupOpcode(StringRef base) {
#ifndef NDEBUG
  static const bool sorted = llvm::is_sorted(
      opcodeTable,
      [](const OpcodeInfo &a, const OpcodeInfo &b) { return a.name < b.name; });
  assert(sorted && "the opcode table must be sorted by name");
#endif
  const OpcodeInfo *it = llvm::lower_bound(
      opcodeTable, base,
      [](const OpcodeInfo &info, StringRef name) { return info.name < name; });
  if (it == std::end(opcodeTable) || it->name != base)
    return nullptr;
  return it;
}

OpcodeKind gpuopt::ptx::getOpcodeKind(StringRef base) {
  const OpcodeInfo *info = lookupOpcode(base);
  return info ? info->kind : OpcodeKind::Other;
}

std::optional<unsigned> gpuopt::ptx::getDefinedOperand(
    const OpcodeInfo *info, unsigned numOperands,
    llvm::function_ref<bool(StringRef)> hasModifier) {
  if (numOperands == 0)
    return std::nullopt;
  switch (info ? info->defs : DefRole::First) {
  case DefRole::First:
  case DefRole::CallResults:
    return 0;
  case DefRole::FirstIfRed:
    if (hasModifier("red"))
      return 0;
    return std::nullopt;
  case DefRole::None:
    return std::nullopt;
  }
  llvm_unreachable("unknown DefRole");
}

static void addWords(llvm::StringSet<> &set, StringRef words) {
  llvm::SmallVector<StringRef, 32> split;
  words.split(split, ' ', -1, /*KeepEmpty=*/false);
  for (StringRef word : split)
    set.insert(word);
}

/// The modifiers of one table entry, split once.
static const llvm::StringSet<> &getModifierSet(const OpcodeInfo &info) {
  static const std::vector<llvm::StringSet<>> sets = [] {
    std::vector<llvm::StringSet<>> result(std::size(opcodeTable));
    for (auto [info, set] : llvm::zip(opcodeTable, result))
      if (info.modifiers)
        addWords(set, info.modifiers);
    return result;
  }();
  return sets[&info - opcodeTable];
}

static bool isVocabularyModifier(StringRef name) {
  static const llvm::StringSet<> vocabulary = [] {
    llvm::StringSet<> result;
    for (const OpcodeInfo &info : opcodeTable)
      if (info.modifiers)
        addWords(result, info.modifiers);
    addWords(result, vocabularyExtras);
    return result;
  }();
  if (vocabulary.contains(name) || isShapeModifier(name))
    return true;
  size_t colons = name.find("::");
  return colons != StringRef::npos &&
         isVocabularyNamespace(name.take_front(colons));
}

//===----------------------------------------------------------------------===//
// Types and state spaces
//===----------------------------------------------------------------------===//

/// Types a declaration may have (.reg, .param, .global, ...), then the
/// types only instructions name. One list: the checks and the suggestions
/// for a misspelt type read it.
static constexpr StringRef fundamentalTypeNames[] = {
    "b8", "b16", "b32", "b64", "b128", "u8",    "u16", "u32", "u64",
    "s8", "s16", "s32", "s64", "f16",  "f16x2", "f32", "f64"};
static constexpr StringRef instructionOnlyTypeNames[] = {
    "pred",  "b1",     "s2",     "u2",     "s4",      "u4",
    "u16x2", "s16x2",  "f32x2",  "bf16",   "bf16x2",  "tf32",
    "e4m3",  "e5m2",   "e4m3x2", "e5m2x2", "e4m3x4",  "e5m2x4",
    "e2m3",  "e3m2",   "e2m3x2", "e3m2x2", "e2m3x4",  "e3m2x4",
    "e2m1",  "e2m1x2", "e2m1x4", "ue8m0",  "ue8m0x2", "ue4m3"};
static const auto allTypeNames = llvm::concat<const StringRef>(
    fundamentalTypeNames, instructionOnlyTypeNames);

static bool isFundamentalType(StringRef name) {
  return llvm::is_contained(fundamentalTypeNames, name);
}

bool gpuopt::ptx::isInstructionType(StringRef name) {
  return isFundamentalType(name) ||
         llvm::is_contained(instructionOnlyTypeNames, name);
}

/// Whether `name` is spelled like a type (`b33`, `f8`, `e4m3x8`), so that a
/// wrong one is reported as an unknown type rather than a modifier.
static bool looksLikeType(StringRef name) {
  for (StringRef prefix : {"bf", "tf", "ue", "b", "s", "u", "f", "e"})
    if (name.consume_front(prefix))
      return !name.empty() && llvm::isDigit(name[0]) &&
             llvm::all_of(name, [](char c) {
               return llvm::isDigit(c) || c == 'x' || c == 'm';
             });
  return false;
}

static constexpr StringRef stateSpaceNames[] = {
    "global", "shared", "shared::cta",  "shared::cluster", "local",
    "const",  "param",  "param::entry", "param::func"};

uint8_t gpuopt::ptx::getStateSpaceBit(StringRef name) {
  return llvm::StringSwitch<uint8_t>(name)
      .Case("global", GlobalSpace)
      .Cases({"shared", "shared::cta"}, SharedSpace)
      .Case("shared::cluster", ClusterSpace)
      .Case("local", LocalSpace)
      .Case("const", ConstSpace)
      .Cases({"param", "param::entry", "param::func"}, ParamSpace)
      .Default(NoSpace);
}

static std::string listSpaces(uint8_t spaces) {
  std::string result;
  for (StringRef name : stateSpaceNames)
    if (getStateSpaceBit(name) & spaces)
      result += (result.empty() ? "." : ", .") + name.str();
  return result;
}

/// The closest of `candidates` to `name`, when it is close enough to be a
/// misspelling of it.
template <typename Range>
static StringRef closest(StringRef name, const Range &candidates) {
  StringRef best;
  unsigned bestDistance = name.size() <= 3 ? 1 : 2;
  for (StringRef candidate : candidates) {
    unsigned distance = name.edit_distance(candidate, true, bestDistance);
    if (distance <= bestDistance && (best.empty() || distance < bestDistance)) {
      best = candidate;
      bestDistance = distance;
    }
  }
  return best;
}

static std::string didYouMean(StringRef suggestion) {
  return suggestion.empty() ? std::string()
                            : ("; did you mean '." + suggestion + "'?").str();
}

//===----------------------------------------------------------------------===//
// Checks
//===----------------------------------------------------------------------===//

static bool isFloatType(StringRef type) {
  return type.starts_with("f") || type.starts_with("bf") ||
         type.starts_with("tf") || type.starts_with("e");
}

std::optional<ModifierError>
gpuopt::ptx::checkModifiers(const OpcodeInfo &info,
                            llvm::ArrayRef<StringRef> modifiers) {
  const llvm::StringSet<> &own = getModifierSet(info);
  bool listed = info.modifiers != nullptr;
  bool hasSpace = llvm::any_of(
      modifiers, [](StringRef m) { return getStateSpaceBit(m) != NoSpace; });
  for (auto [index, modifier] : llvm::enumerate(modifiers)) {
    auto error = [&, index = index](const llvm::Twine &message) {
      return ModifierError{unsigned(index), message.str()};
    };
    if (listed ? own.contains(modifier) : isVocabularyModifier(modifier))
      continue;
    if (isInstructionType(modifier))
      continue;
    if (uint8_t bit = getStateSpaceBit(modifier)) {
      if (bit & info.spaces)
        continue;
      if (!info.spaces)
        return error("'" + info.name + "' takes no state space; remove '." +
                     modifier + "'");
      return error("'" + info.name + "' does not take state space '." +
                   modifier + "'; it takes " + listSpaces(info.spaces));
    }
    if (looksLikeType(modifier))
      return error("unknown type '." + modifier + "' in '" + info.name + "'" +
                   didYouMean(closest(modifier, allTypeNames)));
    StringRef space = closest(modifier, stateSpaceNames);
    if (info.spaces && !hasSpace &&
        (!space.empty() || modifier.starts_with("shared::") ||
         modifier.starts_with("param::")))
      return error("unknown state space '." + modifier + "' in '" + info.name +
                   "'" + didYouMean(space));
    return error(
        "unknown modifier '." + modifier + "' in '" + info.name + "'" +
        didYouMean(listed ? closest(modifier, own.keys()) : StringRef()));
  }

  // ptxas refuses rounding on integer arithmetic and `.lo`/`.hi`/`.wide` on
  // floating point; the sets above cannot say so.
  if (!llvm::is_contained({"add", "sub", "mul", "mad", "div"}, info.name))
    return std::nullopt;
  std::optional<bool> isFloat;
  for (StringRef modifier : modifiers)
    if (isInstructionType(modifier))
      isFloat = isFloatType(modifier);
  if (!isFloat)
    return std::nullopt;
  for (auto [index, modifier] : llvm::enumerate(modifiers)) {
    bool floatOnly = llvm::is_contained(
        {"rn", "rz", "rm", "rp", "ftz", "approx", "full"}, modifier);
    bool intOnly = llvm::is_contained({"lo", "hi", "wide", "cc"}, modifier);
    if (floatOnly && !*isFloat)
      return ModifierError{unsigned(index),
                           ("'." + modifier + "' in '" + info.name +
                            "' needs a floating-point type; remove it for "
                            "integer arithmetic")
                               .str()};
    if (intOnly && *isFloat)
      return ModifierError{unsigned(index),
                           ("'." + modifier + "' in '" + info.name +
                            "' needs an integer type; remove it for "
                            "floating-point arithmetic")
                               .str()};
  }
  return std::nullopt;
}

std::optional<std::string> gpuopt::ptx::checkDeclarationType(StringRef type,
                                                             StringRef space) {
  StringRef name = type.drop_front();
  if (isFundamentalType(name))
    return std::nullopt;
  if (name == "pred") {
    if (space == ".reg")
      return std::nullopt;
    return ("a '.pred' variable must be in the .reg state space, not '" +
            space + "'")
        .str();
  }
  if (name == "texref" || name == "samplerref" || name == "surfref") {
    if (space == ".global" || space == ".param" || space == ".tex")
      return std::nullopt;
    return ("'" + type +
            "' is declared in .global or as a kernel .param, not '" + space +
            "'")
        .str();
  }
  if (isInstructionType(name)) {
    // ptxas stores these in bit-sized registers and variables.
    StringRef bits =
        llvm::StringSwitch<StringRef>(name)
            .Cases({"bf16", "e4m3x2", "e5m2x2", "e2m3x2", "e3m2x2", "ue8m0x2"},
                   ".b16")
            .Cases({"bf16x2", "tf32", "u16x2", "s16x2"}, ".b32")
            .Case("f32x2", ".b64")
            .Default(".b8");
    return ("type '" + type +
            "' may only be used as an instruction type; declare it as '" +
            bits + "'")
        .str();
  }
  return ("unknown type '" + type + "'" +
          didYouMean(closest(name, allTypeNames)))
      .str();
}

std::optional<std::string> gpuopt::ptx::checkPointerSpace(StringRef space) {
  StringRef name = space.drop_front();
  if (llvm::is_contained({"global", "shared", "const", "local"}, name))
    return std::nullopt;
  return ("unknown state space '" + space +
          "' after '.ptr'; it takes .global, .shared, .const or .local" +
          didYouMean(
              closest(name, llvm::ArrayRef<StringRef>{"global", "shared",
                                                      "const", "local"})))
      .str();
}
