# Run by cpack after it made the packages (CPACK_POST_BUILD_SCRIPTS).  For
# a package with shared libraries, CPack's DEB generator writes a postinst
# and a postrm that call ldconfig; treduce's library packages have dpkg's
# ldconfig trigger instead (cmake/deb/triggers), which makes these scripts
# redundant (lintian: maintscript-calls-ldconfig).  Such a package is
# unpacked, the two scripts dropped, and it is packed again.
find_program(TRD_DPKG_DEB dpkg-deb REQUIRED)
foreach(deb IN LISTS CPACK_PACKAGE_FILES)
  if(NOT deb MATCHES "\\.deb$")
    continue()
  endif()
  set(dir ${CPACK_TOPLEVEL_DIRECTORY}/trd-unpacked)
  file(REMOVE_RECURSE ${dir})
  execute_process(COMMAND ${TRD_DPKG_DEB} --raw-extract ${deb} ${dir}
                  RESULT_VARIABLE rc ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "dpkg-deb cannot unpack ${deb}: ${err}")
  endif()
  if(EXISTS ${dir}/DEBIAN/triggers)
    file(REMOVE ${dir}/DEBIAN/postinst ${dir}/DEBIAN/postrm)
    execute_process(COMMAND ${TRD_DPKG_DEB} --root-owner-group -Zxz --build ${dir} ${deb}
                    RESULT_VARIABLE rc OUTPUT_QUIET ERROR_VARIABLE err)
    if(NOT rc EQUAL 0)
      message(FATAL_ERROR "dpkg-deb cannot pack ${deb} again: ${err}")
    endif()
  endif()
  file(REMOVE_RECURSE ${dir})
endforeach()
