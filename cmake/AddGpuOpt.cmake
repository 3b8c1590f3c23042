#===- AddGpuOpt.cmake - Defining gpu-opt's libraries ----------*- cmake -*-===#
#
# add_gpuopt_library(name [SHARED] source...
#                    [DEPENDS target...]
#                    [LINK_LIBS [PUBLIC|PRIVATE] lib...])
#
# Defines one of gpu-opt's libraries, as add_circt_library does for CIRCT:
# the target (static unless SHARED), position-independent so that the plugin
# (lib/Plugin) and other shared objects can link it; the include directories
# its users need, in the build tree and in an installed package; its
# installation into the GpuOptTargets export set; and its name on the global
# property GPUOPT_EXPORTS, from which the package configuration
# (cmake/CMakeLists.txt) and the plugin take the list of libraries.
#
# DEPENDS: targets to build first (tablegen targets). LINK_LIBS: the
# arguments of target_link_libraries, PUBLIC unless after PRIVATE. A library
# that links libMLIR (`MLIR`, in GPUOPT_MLIR_LIBS) also gives its users
# MLIR's and LLVM's include directories.
#
#===----------------------------------------------------------------------===#

include(GNUInstallDirs)

function(add_gpuopt_library name)
  cmake_parse_arguments(ARG "SHARED" "" "DEPENDS;LINK_LIBS" ${ARGN})
  if(ARG_SHARED)
    add_library(${name} SHARED ${ARG_UNPARSED_ARGUMENTS})
  else()
    add_library(${name} STATIC ${ARG_UNPARSED_ARGUMENTS})
  endif()
  set_target_properties(${name} PROPERTIES POSITION_INDEPENDENT_CODE ON)
  if(ARG_DEPENDS)
    add_dependencies(${name} ${ARG_DEPENDS})
  endif()
  if(ARG_LINK_LIBS)
    target_link_libraries(${name} PUBLIC ${ARG_LINK_LIBS})
  endif()

  # Headers: include/ (gpuopt/...) and dialects/ (ptx/IR/...) with their
  # generated .h.inc in the build tree; one include/ once installed.
  target_include_directories(${name} PUBLIC
    $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include>
    $<BUILD_INTERFACE:${PROJECT_BINARY_DIR}/include>
    $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/dialects>
    $<BUILD_INTERFACE:${PROJECT_BINARY_DIR}/dialects>
    $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
  if("MLIR" IN_LIST ARG_LINK_LIBS)
    set(mlir_include_dirs ${LLVM_INCLUDE_DIRS} ${MLIR_INCLUDE_DIRS})
    list(REMOVE_DUPLICATES mlir_include_dirs)
    target_include_directories(${name} SYSTEM PUBLIC
      "$<INSTALL_INTERFACE:${mlir_include_dirs}>")
  endif()

  install(TARGETS ${name} EXPORT GpuOptTargets
    ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
    LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
    RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
  set_property(GLOBAL APPEND PROPERTY GPUOPT_EXPORTS ${name})
endfunction()
