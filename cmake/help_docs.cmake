# The tool's manual pages (treduce.1, treduce-COMMAND.1) and its bash
# completion, made by cmake/help_docs.pl from what the built tool prints
# for --help, so they follow its help texts: build/man/*.1 (and .1.gz, as
# installed), build/treduce.bash-completion.  Needs perl (Debian's
# perl-base) and a tool that runs here (not when cross-compiling).
find_program(TRD_PERL perl)
if(TRD_PERL AND NOT CMAKE_CROSSCOMPILING)
  set(TRD_HELP_DOCS ON)
else()
  set(TRD_HELP_DOCS OFF)
  message(STATUS "treduce: no manual pages or bash completion (needs perl and a native build)")
endif()
if(TRD_HELP_DOCS)
  string(TIMESTAMP TRD_DOCS_DATE "%Y-%m-%d" UTC) # SOURCE_DATE_EPOCH when set
  set(TRD_MAN_DIR ${PROJECT_BINARY_DIR}/man)
  set(TRD_COMPLETION ${PROJECT_BINARY_DIR}/treduce.bash-completion)
  add_custom_command(OUTPUT ${PROJECT_BINARY_DIR}/help_docs.stamp
    COMMAND ${CMAKE_COMMAND} -E rm -rf ${TRD_MAN_DIR}
    COMMAND ${CMAKE_COMMAND} -E make_directory ${TRD_MAN_DIR}
    # the tool exits at once: LeakSanitizer (TRD_SANITIZE) has nothing to say
    COMMAND ${CMAKE_COMMAND} -E env ASAN_OPTIONS=detect_leaks=0
            ${TRD_PERL} ${PROJECT_SOURCE_DIR}/cmake/help_docs.pl --man ${TRD_MAN_DIR}
            --version ${PROJECT_VERSION} --date ${TRD_DOCS_DATE}
            --completion ${TRD_COMPLETION} $<TARGET_FILE:treduce_tool>
    COMMAND sh -c "gzip -9nkf '${TRD_MAN_DIR}'/*.1" # -n: no name or time stamp inside
    COMMAND ${CMAKE_COMMAND} -E touch ${PROJECT_BINARY_DIR}/help_docs.stamp
    DEPENDS treduce_tool ${PROJECT_SOURCE_DIR}/cmake/help_docs.pl
    COMMENT "Manual pages and bash completion from treduce --help"
    VERBATIM)
  add_custom_target(help_docs ALL DEPENDS ${PROJECT_BINARY_DIR}/help_docs.stamp)
endif()
