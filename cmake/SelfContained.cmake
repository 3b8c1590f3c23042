#===- SelfContained.cmake - gpu-opt that needs no LLVM at run time -*- cmake -*-===#
#
# GPUOPT_SELF_CONTAINED=ON adds, beside the developer build (which it leaves
# as it is), the gpu-opt that the Python wheel ships (utils/build-wheel.sh):
#
#   self-contained/lib/libgpuopt.so   the in-process API (gpuopt/API/Compiler.h)
#                                     with every gpu-opt library, MLIR, LLVM
#                                     (NVPTX target only), yaml-cpp and zstd
#                                     linked in from static archives
#   self-contained/bin/gpu-opt        the tools: small executables that call
#   self-contained/bin/gpu-translate  libgpuopt.so (RUNPATH $ORIGIN/../lib)
#   self-contained/bin/gpu-run        gpu-run as built (it links only libc)
#
# The objects are the developer build's; only the link differs. libgpuopt.so
# exports gpuopt::api and nothing else (a version script; the archives'
# symbols are local), so that MLIR and LLVM inside it never meet another
# LLVM in the same process (Triton's libtriton.so, PyTorch's). At run time
# it needs libc, libm, libstdc++, libgcc_s and libz: `self-contained-check`
# fails the build otherwise.
#
#===----------------------------------------------------------------------===#

set(GPUOPT_SELF_CONTAINED_DIR ${CMAKE_BINARY_DIR}/self-contained)

# gpu-opt's own libraries, as archives: their targets would bring the shared
# libMLIR and libLLVM along.
get_property(gpuopt_libs GLOBAL PROPERTY GPUOPT_EXPORTS)
list(REMOVE_ITEM gpuopt_libs GPUOptAPI)
set(gpuopt_archives)
foreach(lib ${gpuopt_libs})
  list(APPEND gpuopt_archives $<TARGET_FILE:${lib}>)
endforeach()

# MLIR's and LLVM's static archives, as the packages list them: every MLIR
# library but the test, C API and runner ones, and every LLVM library but
# the targets other than NVPTX. The linker takes from them only what gpu-opt
# reaches.
get_property(mlir_libs GLOBAL PROPERTY MLIR_ALL_LIBS)
set(llvm_other_targets ${LLVM_TARGETS_TO_BUILD})
list(REMOVE_ITEM llvm_other_targets NVPTX)
list(JOIN llvm_other_targets "|" llvm_other_targets)
set(mlir_llvm_archives)
foreach(lib ${mlir_libs} ${LLVM_AVAILABLE_LIBS})
  set(archive ${LLVM_LIBRARY_DIR}/lib${lib}.a)
  if(NOT EXISTS ${archive} OR
     lib MATCHES "Test|CAPI|Runner|runner|^mlir_|ExecutionEngine(Shared)?$" OR
     lib MATCHES "^LLVM(${llvm_other_targets})[A-Z]" OR
     lib MATCHES "^LLVM(BOLT|Exegesis|Orc|JITLink|MCJIT|Interpreter|LineEditor|WindowsManifest)")
    continue()
  endif()
  list(APPEND mlir_llvm_archives ${archive})
endforeach()
list(REMOVE_DUPLICATES mlir_llvm_archives)

# What the archives need from outside them: zstd and yaml-cpp linked in
# (their static archives), libz shared. GPUOPT_YAML_CPP_STATIC must be
# position-independent, which Debian's libyaml-cpp.a is not:
# utils/build-wheel.sh builds one from the installed version's source.
find_library(GPUOPT_ZSTD_STATIC libzstd.a REQUIRED)
find_library(GPUOPT_YAML_CPP_STATIC libyaml-cpp.a REQUIRED)
find_package(ZLIB REQUIRED)
find_package(Threads REQUIRED)
find_package(Python3 REQUIRED COMPONENTS Interpreter)

add_library(gpuopt SHARED
  ${PROJECT_SOURCE_DIR}/lib/API/Compiler.cpp
  ${PROJECT_SOURCE_DIR}/lib/API/Tools.cpp)
add_dependencies(gpuopt ${gpuopt_libs})
target_include_directories(gpuopt PRIVATE
  $<TARGET_PROPERTY:GPUOptAPI,INCLUDE_DIRECTORIES>)
target_compile_definitions(gpuopt PRIVATE GPUOPT_VERSION="${PROJECT_VERSION}")
target_compile_options(gpuopt PRIVATE -fexceptions)
set(gpuopt_exports ${CMAKE_CURRENT_LIST_DIR}/libgpuopt.exports)
target_link_options(gpuopt PRIVATE
  -Wl,--version-script=${gpuopt_exports}
  -Wl,--exclude-libs,ALL
  -Wl,--gc-sections
  -Wl,--as-needed
  -Wl,--no-undefined
  # What ships is stripped (the archives carry no debug information anyway).
  -Wl,--strip-all)
target_link_libraries(gpuopt PRIVATE
  -Wl,--start-group ${gpuopt_archives} ${mlir_llvm_archives}
  ${GPUOPT_YAML_CPP_STATIC} ${GPUOPT_ZSTD_STATIC} -Wl,--end-group
  ZLIB::ZLIB Threads::Threads ${CMAKE_DL_LIBS} rt m)
set_target_properties(gpuopt PROPERTIES
  LIBRARY_OUTPUT_DIRECTORY ${GPUOPT_SELF_CONTAINED_DIR}/lib
  LINK_DEPENDS ${gpuopt_exports}
  # The tools and the Python extension find it beside them.
  BUILD_RPATH "" INSTALL_RPATH "" SKIP_BUILD_RPATH ON)

foreach(tool gpu-opt gpu-translate)
  add_executable(${tool}-self-contained
    ${PROJECT_SOURCE_DIR}/tools/${tool}/${tool}.cpp)
  target_include_directories(${tool}-self-contained PRIVATE
    ${PROJECT_SOURCE_DIR}/include)
  target_link_libraries(${tool}-self-contained PRIVATE gpuopt)
  set_target_properties(${tool}-self-contained PROPERTIES
    OUTPUT_NAME ${tool}
    RUNTIME_OUTPUT_DIRECTORY ${GPUOPT_SELF_CONTAINED_DIR}/bin
    BUILD_WITH_INSTALL_RPATH ON
    INSTALL_RPATH "\$ORIGIN/../lib")
endforeach()

add_custom_command(OUTPUT ${GPUOPT_SELF_CONTAINED_DIR}/bin/gpu-run
  COMMAND ${CMAKE_COMMAND} -E copy $<TARGET_FILE:gpu-run>
          ${GPUOPT_SELF_CONTAINED_DIR}/bin/gpu-run
  DEPENDS gpu-run)

# Fails unless every ELF file needs only what a Python wheel may rely on.
add_custom_target(self-contained ALL
  COMMAND ${Python3_EXECUTABLE} ${PROJECT_SOURCE_DIR}/utils/check-needed.py
          ${GPUOPT_SELF_CONTAINED_DIR}
  DEPENDS gpuopt gpu-opt-self-contained gpu-translate-self-contained
          ${GPUOPT_SELF_CONTAINED_DIR}/bin/gpu-run
  COMMENT "Checking what the self-contained gpu-opt needs at run time"
  VERBATIM)
