# Read by cpack before each generator (CPACK_PROJECT_CONFIG_FILE).  The
# Debian packages put the libraries, pkg-config files and CMake package in
# the multiarch folder (/usr/lib/<triplet>), which GNUInstallDirs picks for
# a build configured with the prefix /usr only: others are refused, since
# their packages would put them elsewhere.
if(CPACK_GENERATOR STREQUAL "DEB" AND NOT CPACK_TRD_DEB_MULTIARCH)
  message(FATAL_ERROR "treduce: the .deb packages need a build configured with "
          "-DCMAKE_INSTALL_PREFIX=/usr (libraries in lib/<multiarch triplet>, not "
          "${CPACK_TRD_LIBDIR})")
endif()
