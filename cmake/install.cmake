# What `cmake --install` and `cpack -G DEB` install: the tool, libtreduce
# and libtreduce_figures (shared and static), the public headers,
# libtreduce_mpi.so (MPI builds), treduce.pc and treduce-figures.pc for
# pkg-config and the CMake package (find_package(treduce): the imported
# targets treduce::treduce, treduce::treduce_figures and, with MPI,
# treduce::treduce_mpi).
# Both files locate the prefix from where they are installed, so a copy
# installed under any --prefix works.  tests/install_test.sh checks all of it.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

install(TARGETS treduce_tool RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(TARGETS treduce treduce_figures ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
set(TRD_EXPORTED treduce_shared treduce_figures_shared)
if(TARGET treduce_mpi)
  list(APPEND TRD_EXPORTED treduce_mpi)
endif()
install(TARGETS ${TRD_EXPORTED} EXPORT treduceTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/treduce
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} PATTERN "*.in" EXCLUDE)
install(FILES ${PROJECT_BINARY_DIR}/include/treduce/version.h
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/treduce) # generated from version.h.in

set(TRD_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/treduce)
install(EXPORT treduceTargets NAMESPACE treduce:: DESTINATION ${TRD_CMAKE_DIR})
configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/treduceConfig.cmake.in
  ${PROJECT_BINARY_DIR}/treduceConfig.cmake INSTALL_DESTINATION ${TRD_CMAKE_DIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/treduceConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/treduceConfig.cmake
        ${PROJECT_BINARY_DIR}/treduceConfigVersion.cmake DESTINATION ${TRD_CMAKE_DIR})

# treduce.pc: the prefix relative to the file itself (pkg-config's
# ${pcfiledir}); the static library's own dependencies in the .private
# fields (pkg-config --static).
file(RELATIVE_PATH TRD_PC_TO_PREFIX /prefix/${CMAKE_INSTALL_LIBDIR}/pkgconfig /prefix)
set(TRD_PC_LIBS_PRIVATE "")
foreach(lib ${QSOPTEX_LIBRARY} ${GMP_LIBRARY} ${MPI_C_LIBRARIES})
  string(APPEND TRD_PC_LIBS_PRIVATE " ${lib}")
endforeach()
string(APPEND TRD_PC_LIBS_PRIVATE " -lpthread -lm")
configure_file(${CMAKE_CURRENT_LIST_DIR}/treduce.pc.in ${PROJECT_BINARY_DIR}/treduce.pc @ONLY)
configure_file(${CMAKE_CURRENT_LIST_DIR}/treduce-figures.pc.in
               ${PROJECT_BINARY_DIR}/treduce-figures.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/treduce.pc ${PROJECT_BINARY_DIR}/treduce-figures.pc
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)

# cpack -G DEB: the same files under /usr.
set(CPACK_PACKAGE_NAME treduce)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "plans, simulates and runs reduction collectives (library, tool, MPI layer)")
set(CPACK_PACKAGE_CONTACT "treduce developers <treduce@localhost>")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
find_program(TRD_DPKG_SHLIBDEPS dpkg-shlibdeps)
if(TRD_DPKG_SHLIBDEPS)
  set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON) # Depends: from the libraries' own
endif()
include(CPack)
