# What `cmake --install` and `cpack -G DEB` install: the tool with its
# manual pages and bash completion, libtreduce, libtreduce_steady,
# libtreduce_wire_mpi and libtreduce_figures (shared and static), the
# public headers, libtreduce_mpi.so (MPI builds), treduce.pc,
# treduce-steady.pc, treduce-wire-mpi.pc and treduce-figures.pc for
# pkg-config, the CMake package (find_package(treduce): the imported
# targets treduce::treduce, treduce::treduce_steady,
# treduce::treduce_wire_mpi, treduce::treduce_figures and, with MPI,
# treduce::treduce_mpi), and the README, LICENSE, CHANGELOG and CITATION.cff.
# Both files locate the prefix from where they are installed, so a copy
# installed under any --prefix works.  tests/install_test.sh checks all of
# it, tests/package_test.sh the packages.
#
# The Debian packages split treduce as Debian splits a library: one
# runtime package per shared library (lib<name><soversion>: libtreduce0,
# libtreduce-steady0, libtreduce-wire-mpi0, libtreduce-figures0,
# libtreduce-mpi0), libtreduce-dev (headers, static
# libraries, the unversioned links, pkg-config and CMake files) and
# treduce (the tool).  Each is a CPack component; a new library is one
# trd_install_library() call.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(TRD_DEB_VERSION ${PROJECT_VERSION}) # native packages: treduce packages itself
set(TRD_PACKAGE_MAINTAINER "The treduce authors <treduce@example.org>" CACHE STRING
    "Maintainer field of the Debian packages: set it to who distributes them")
set(TRD_DEB_COMPONENTS "")
set(TRD_DEV_DEPENDS "")
set(TRD_DEB_DIR ${PROJECT_BINARY_DIR}/deb) # copyright and changelogs of the packages

# trd_deb_package(COMPONENT PACKAGE SECTION SUMMARY DESCRIPTION [DEPENDS...]):
# COMPONENT is the Debian package PACKAGE: its control fields, and its
# /usr/share/doc/PACKAGE (copyright, changelog.gz).
# DESCRIPTION is the extended description (lines, "." between paragraphs);
# DEPENDS come besides those dpkg-shlibdeps finds.
macro(trd_deb_package component package section summary description)
  string(TOUPPER ${component} _c)
  list(APPEND TRD_DEB_COMPONENTS ${component})
  set(CPACK_DEBIAN_${_c}_PACKAGE_NAME ${package})
  set(CPACK_DEBIAN_${_c}_PACKAGE_SECTION ${section})
  set(CPACK_DEBIAN_${_c}_DESCRIPTION "${summary}\n${description}")
  set(_depends ${ARGN})
  list(JOIN _depends ", " CPACK_DEBIAN_${_c}_PACKAGE_DEPENDS)
  install(FILES ${TRD_DEB_DIR}/copyright ${TRD_DEB_DIR}/changelog.gz
          DESTINATION ${CMAKE_INSTALL_DATAROOTDIR}/doc/${package}
          COMPONENT ${component} EXCLUDE_FROM_ALL)
endmacro()

# trd_install_library(TARGET COMPONENT SUMMARY DESCRIPTION [DEPENDS...]):
# installs the shared library TARGET (exported to the CMake package) in
# COMPONENT, its unversioned link in dev, and makes COMPONENT its runtime
# package, named after its soname as Debian names them, which libtreduce-dev
# depends on.  dpkg's ldconfig trigger replaces the maintainer scripts
# (cmake/deb_triggers.cmake).
macro(trd_install_library target component summary description)
  get_target_property(_name ${target} OUTPUT_NAME)
  get_target_property(_soversion ${target} SOVERSION)
  if(NOT _name)
    set(_name ${target})
  endif()
  string(REPLACE "_" "-" _package "lib${_name}${_soversion}")
  install(TARGETS ${target} EXPORT treduceTargets
          LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT ${component}
          NAMELINK_COMPONENT dev)
  trd_deb_package(${component} ${_package} libs "${summary}" "${description}" ${ARGN})
  set(CPACK_DEBIAN_${_c}_PACKAGE_CONTROL_EXTRA ${PROJECT_SOURCE_DIR}/cmake/deb/triggers)
  list(APPEND TRD_DEV_DEPENDS "${_package} (= ${TRD_DEB_VERSION})")
endmacro()

set(TRD_ABOUT "treduce plans, evaluates and runs reduction collectives (reduce,
allreduce, series of reductions): it builds the best reduction tree for a
transfer time and a combine time, compares it with the classic trees and
with bounds, simulates reductions under random costs, and runs them on real
data over threads or MPI.")
trd_install_library(treduce_shared libtreduce
  "plans, simulates and runs reduction collectives - library"
  "${TRD_ABOUT}\n.\nThis package contains the shared library libtreduce.")
trd_install_library(treduce_figures_shared libtreduce_figures
  "Gantt charts and plots of reduction collectives - library"
  "${TRD_ABOUT}\n.\nThis package contains the shared library libtreduce_figures: Gantt
charts of reduction plans, line plots and heat maps as PNG or SVG files,
drawn with PLplot's cairo driver."
  "libtreduce0 (= ${TRD_DEB_VERSION})" plplot-driver-cairo)
# The two companions call the core's internals (cmake/private_exports.sh):
# they need the libtreduce0 of their own version, exactly.
trd_install_library(treduce_steady_shared libtreduce_steady
  "steady-state series and platform graphs of treduce - library"
  "${TRD_ABOUT}\n.\nThis package contains the shared library libtreduce_steady: platform
graphs (JSON, SimGrid XML, a generator) and the steady-state series of
reduces, scatters and gossips solved exactly (QSopt_ex), and their plans."
  "libtreduce0 (= ${TRD_DEB_VERSION})")
trd_install_library(treduce_wire_mpi_shared libtreduce_wire_mpi
  "treduce's collectives over MPI point-to-point - library"
  "${TRD_ABOUT}\n.\nThis package contains the shared library libtreduce_wire_mpi: treduce's
communicators over MPI point-to-point, with shared-memory rings between
the ranks of one node (treduce/mpi.h)."
  "libtreduce0 (= ${TRD_DEB_VERSION})")
if(TARGET treduce_mpi)
  trd_install_library(treduce_mpi libtreduce_mpi
    "runs MPI_Reduce and MPI_Allreduce with treduce - PMPI layer"
    "${TRD_ABOUT}\n.\nThis package contains libtreduce_mpi.so, a PMPI layer that runs the
MPI_Reduce and MPI_Allreduce calls of unmodified MPI programs with
treduce's algorithms (LD_PRELOAD=libtreduce_mpi.so.0, or linked before the
MPI library) and passes every other call to the MPI library.")
endif()

install(TARGETS treduce_tool RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT tool)
install(FILES ${PROJECT_SOURCE_DIR}/README.md ${PROJECT_SOURCE_DIR}/CITATION.cff
        DESTINATION ${CMAKE_INSTALL_DOCDIR} COMPONENT tool)
if(TRD_HELP_DOCS) # cmake/help_docs.cmake
  install(DIRECTORY ${TRD_MAN_DIR}/ DESTINATION ${CMAKE_INSTALL_MANDIR}/man1 COMPONENT tool
          FILES_MATCHING PATTERN "*.1.gz")
  install(FILES ${TRD_COMPLETION} RENAME treduce COMPONENT tool
          DESTINATION ${CMAKE_INSTALL_DATAROOTDIR}/bash-completion/completions)
endif()
trd_deb_package(tool treduce science
  "plans, simulates and runs reduction collectives - command-line tool"
  "${TRD_ABOUT}\n.\nThis package contains the command-line tool treduce." plplot-driver-cairo)
set(CPACK_DEBIAN_TOOL_PACKAGE_SUGGESTS "openmpi-bin | mpich") # mpirun for --transport mpi
# In a plain install the license and the changes are files of their own;
# each package has them as its copyright file and changelog.
install(FILES ${PROJECT_SOURCE_DIR}/LICENSE ${PROJECT_SOURCE_DIR}/CHANGELOG.md
        DESTINATION ${CMAKE_INSTALL_DOCDIR} COMPONENT notices)

install(TARGETS treduce treduce_steady treduce_wire_mpi treduce_figures
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT dev)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/treduce
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} COMPONENT dev PATTERN "*.in" EXCLUDE)
install(FILES ${PROJECT_BINARY_DIR}/include/treduce/version.h
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/treduce COMPONENT dev) # from version.h.in

set(TRD_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/treduce)
install(EXPORT treduceTargets NAMESPACE treduce:: DESTINATION ${TRD_CMAKE_DIR} COMPONENT dev)
configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/treduceConfig.cmake.in
  ${PROJECT_BINARY_DIR}/treduceConfig.cmake INSTALL_DESTINATION ${TRD_CMAKE_DIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/treduceConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/treduceConfig.cmake
        ${PROJECT_BINARY_DIR}/treduceConfigVersion.cmake DESTINATION ${TRD_CMAKE_DIR}
        COMPONENT dev)

# trd_link_flags(OUT LIB...): LIBs as linker flags for a .pc file: a path
# /dir/libNAME.so or .a is -lNAME, after -L/dir unless the linker searches
# /dir anyway; other items (-pthread, -lm) stay as they are.
function(trd_link_flags out)
  set(flags "")
  foreach(lib IN LISTS ARGN)
    if(lib MATCHES "^(.*)/lib([^/]+)\\.(so|a)(\\.[0-9.]+)?$")
      set(dir ${CMAKE_MATCH_1})
      if(NOT dir IN_LIST CMAKE_C_IMPLICIT_LINK_DIRECTORIES AND NOT "-L${dir}" IN_LIST flags)
        list(APPEND flags "-L${dir}")
      endif()
      list(APPEND flags "-l${CMAKE_MATCH_2}")
    else()
      list(APPEND flags "${lib}")
    endif()
  endforeach()
  list(JOIN flags " " flags)
  set(${out} "${flags}" PARENT_SCOPE)
endfunction()

# treduce.pc: the prefix relative to the file itself (pkg-config's
# ${pcfiledir}); the static library's own dependencies in the .private
# fields (pkg-config --static), as -L and -l flags.
file(RELATIVE_PATH TRD_PC_TO_PREFIX /prefix/${CMAKE_INSTALL_LIBDIR}/pkgconfig /prefix)
trd_link_flags(TRD_PC_LIBS_PRIVATE -lpthread -lm)
trd_link_flags(TRD_PC_STEADY_LIBS_PRIVATE ${QSOPTEX_LIBRARY} ${GMP_LIBRARY})
trd_link_flags(TRD_PC_MPI_LIBS_PRIVATE ${MPI_C_LIBRARIES})
foreach(pc treduce treduce-steady treduce-wire-mpi treduce-figures)
  configure_file(${CMAKE_CURRENT_LIST_DIR}/${pc}.pc.in ${PROJECT_BINARY_DIR}/${pc}.pc @ONLY)
  install(FILES ${PROJECT_BINARY_DIR}/${pc}.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig
          COMPONENT dev)
endforeach()

# libtreduce-dev depends on the runtime packages and on the Debian
# packages of what pkg-config and a static link need (libgsl-dev, ...):
# those that hold the libraries found here.
find_program(TRD_DPKG_QUERY dpkg-query)
foreach(lib IN LISTS GSL_LINK_LIBRARIES JANSSON_LINK_LIBRARIES LIBXML2_LINK_LIBRARIES
        PLPLOT_LINK_LIBRARIES QSOPTEX_LIBRARY GMP_LIBRARY MPI_C_LIBRARIES)
  if(TRD_DPKG_QUERY AND IS_ABSOLUTE "${lib}")
    execute_process(COMMAND ${TRD_DPKG_QUERY} -S ${lib} OUTPUT_VARIABLE owner
                    RESULT_VARIABLE rc ERROR_QUIET)
    if(rc EQUAL 0 AND owner MATCHES "^([^:, ]+)")
      list(APPEND TRD_DEV_DEPENDS ${CMAKE_MATCH_1})
    endif()
  endif()
endforeach()
list(REMOVE_DUPLICATES TRD_DEV_DEPENDS)
trd_deb_package(dev libtreduce-dev libdevel
  "plans, simulates and runs reduction collectives - development files"
  "${TRD_ABOUT}\n.\nThis package contains what programs built against treduce need: the
headers, the static libraries, the pkg-config files (treduce,
treduce-steady, treduce-wire-mpi, treduce-figures) and the CMake package
(find_package(treduce))."
  ${TRD_DEV_DEPENDS})

# The packages' copyright file (DEP-5: the holder and the license's text
# from LICENSE) and changelog (CHANGELOG.md in Debian's format,
# cmake/deb_changelog.pl, gzipped as Debian wants it: -9n, no time stamp).
file(READ ${PROJECT_SOURCE_DIR}/LICENSE TRD_LICENSE)
if(NOT TRD_LICENSE MATCHES "\nCopyright \\(c\\) ([^\n]*[^.\n])\\.?\n")
  message(FATAL_ERROR "LICENSE has no line 'Copyright (c) YEAR HOLDER'")
endif()
set(TRD_COPYRIGHT "${CMAKE_MATCH_1}")
string(REGEX REPLACE "\n$" "" TRD_LICENSE "${TRD_LICENSE}")
string(REGEX REPLACE "\n\n" "\n.\n" TRD_LICENSE "${TRD_LICENSE}")
string(REPLACE "\n" "\n " TRD_LICENSE " ${TRD_LICENSE}")
configure_file(${PROJECT_SOURCE_DIR}/cmake/deb/copyright.in ${TRD_DEB_DIR}/copyright @ONLY)
string(TIMESTAMP TRD_DEB_DATE "%a, %d %b %Y %H:%M:%S +0000" UTC) # SOURCE_DATE_EPOCH
find_program(TRD_PERL perl)
if(TRD_PERL)
  add_custom_command(OUTPUT ${TRD_DEB_DIR}/changelog.gz
    COMMAND ${TRD_PERL} ${PROJECT_SOURCE_DIR}/cmake/deb_changelog.pl
            ${PROJECT_SOURCE_DIR}/CHANGELOG.md ${TRD_PACKAGE_MAINTAINER} ${TRD_DEB_DATE}
            changelog
    COMMAND gzip -9nf changelog
    DEPENDS ${PROJECT_SOURCE_DIR}/CHANGELOG.md ${PROJECT_SOURCE_DIR}/cmake/deb_changelog.pl
    WORKING_DIRECTORY ${TRD_DEB_DIR} VERBATIM)
  add_custom_target(deb_changelog ALL DEPENDS ${TRD_DEB_DIR}/changelog.gz)
endif()

# cpack -G DEB: the packaged components under /usr, in the multiarch
# library folder (a build configured with -DCMAKE_INSTALL_PREFIX=/usr:
# cmake/cpack_project.cmake refuses others).
set(CPACK_PACKAGE_NAME treduce)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "${TRD_PACKAGE_MAINTAINER}")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_COMPONENTS_ALL ${TRD_DEB_COMPONENTS})
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_STRIP_FILES ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SOURCE treduce)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION TRUE)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON) # Depends: from the binaries' own libraries
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS_PRIVATE_DIRS ${PROJECT_BINARY_DIR}) # libtreduce.so.0
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS ON)
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS_POLICY ">=")
if(CMAKE_LIBRARY_ARCHITECTURE
   AND CMAKE_INSTALL_LIBDIR STREQUAL "lib/${CMAKE_LIBRARY_ARCHITECTURE}")
  set(TRD_DEB_MULTIARCH ON)
else()
  set(TRD_DEB_MULTIARCH OFF)
endif()
set(CPACK_TRD_DEB_MULTIARCH ${TRD_DEB_MULTIARCH})
if(TRD_DEB_MULTIARCH) # the packages made and linted (make test-release)
  add_test(NAME packages COMMAND ${PROJECT_SOURCE_DIR}/tests/package_test.sh ${PROJECT_BINARY_DIR})
  set_tests_properties(packages PROPERTIES TIMEOUT 300)
endif()
set(CPACK_TRD_LIBDIR ${CMAKE_INSTALL_LIBDIR})
set(CPACK_PROJECT_CONFIG_FILE ${PROJECT_SOURCE_DIR}/cmake/cpack_project.cmake)
set(CPACK_POST_BUILD_SCRIPTS ${PROJECT_SOURCE_DIR}/cmake/deb_triggers.cmake)
include(CPack)
