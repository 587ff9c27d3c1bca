# layers.cmake: the layers of src/, one object library each, and what each
# may use (docs/ARCHITECTURE.md draws the same graph; tests/layers_test.sh
# checks both against each other and against the objects' symbols).
#
# trd_layer(NAME [DEPS LAYER...] [LIBS TARGET...]) compiles src/NAME/*.c
# into the object library trd_NAME.  Its files see the headers of NAME and
# of the layers DEPS names, transitively, and no others: a shim folder
# build/layers/NAME/ holds a link to each of those src/ folders and is the
# only source folder on its include path, so an #include of a layer not
# below it does not compile.  Calls are checked at link level by the test
# (an undefined symbol of a layer's objects must be defined by the layer
# itself or one below it), since the public headers (include/treduce/)
# declare every layer's API.
set(TRD_LAYERS "")

function(trd_layer name)
  cmake_parse_arguments(L "" "" "DEPS;LIBS" ${ARGN})
  set(closure ${name})
  foreach(d ${L_DEPS})
    if(NOT DEFINED TRD_LAYER_CLOSURE_${d})
      message(FATAL_ERROR "layer ${name}: ${d} is not a layer declared before it")
    endif()
    list(APPEND closure ${TRD_LAYER_CLOSURE_${d}})
  endforeach()
  list(REMOVE_DUPLICATES closure)
  set(TRD_LAYER_CLOSURE_${name} ${closure} PARENT_SCOPE)
  set(TRD_LAYER_DEPS_${name} ${L_DEPS} PARENT_SCOPE)
  set(TRD_LAYERS ${TRD_LAYERS} ${name} PARENT_SCOPE)

  # the links are made once and kept (a new link would make every object
  # depending on a header through it out of date): only what changed moves
  set(shim ${PROJECT_BINARY_DIR}/layers/${name})
  file(MAKE_DIRECTORY ${shim})
  file(GLOB present RELATIVE ${shim} ${shim}/*)
  foreach(d ${present})
    if(NOT d IN_LIST closure)
      file(REMOVE ${shim}/${d})
    endif()
  endforeach()
  foreach(d ${closure})
    if(NOT EXISTS ${shim}/${d})
      file(CREATE_LINK ${PROJECT_SOURCE_DIR}/src/${d} ${shim}/${d} SYMBOLIC)
    endif()
  endforeach()
  file(GLOB srcs CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/src/${name}/*.c)
  add_library(trd_${name} OBJECT ${srcs})
  set_target_properties(trd_${name} PROPERTIES POSITION_INDEPENDENT_CODE ON)
  # no semantic interposition: calls inside a library stay direct and
  # inlinable, as in an executable; a call without a declaration (of a
  # layer not below) is an error in every build
  target_compile_options(trd_${name} PRIVATE -fno-semantic-interposition
                         -Werror=implicit-function-declaration)
  target_include_directories(trd_${name} PRIVATE ${TRD_INCLUDE_DIRS} ${shim})
  if(L_LIBS)
    target_link_libraries(trd_${name} PRIVATE ${L_LIBS})
  endif()
endfunction()

# The layer graph as the build declares it, for tests/layers_test.sh: one
# line per layer, "NAME: DEPS" (direct), then the objects of each.
function(trd_write_layer_graph file)
  set(text "")
  foreach(l ${TRD_LAYERS})
    string(REPLACE ";" " " deps "${TRD_LAYER_DEPS_${l}}")
    string(APPEND text "${l}: ${deps}\n")
  endforeach()
  file(GENERATE OUTPUT ${file} CONTENT "${text}")
  set(objs "")
  foreach(l ${TRD_LAYERS})
    string(APPEND objs "${l} $<JOIN:$<TARGET_OBJECTS:trd_${l}>, >\n")
  endforeach()
  file(GENERATE OUTPUT ${file}.objects CONTENT "${objs}")
endfunction()

# The check of tests/layers_test.sh on every build that changes an object:
# a layer that includes or calls above itself does not build.
function(trd_check_layers graph)
  set(objs "")
  foreach(l ${TRD_LAYERS})
    list(APPEND objs $<TARGET_OBJECTS:trd_${l}>)
  endforeach()
  add_custom_command(OUTPUT ${graph}.ok
    COMMAND ${PROJECT_SOURCE_DIR}/tests/layers_test.sh ${graph}
    COMMAND ${CMAKE_COMMAND} -E touch ${graph}.ok
    DEPENDS ${PROJECT_SOURCE_DIR}/tests/layers_test.sh ${objs}
    COMMENT "Checking the layers of src/ (tests/layers_test.sh)" VERBATIM)
  add_custom_target(trd_layers_check ALL DEPENDS ${graph}.ok)
  foreach(l ${TRD_LAYERS})
    add_dependencies(trd_layers_check trd_${l})
  endforeach()
endfunction()
