# Every `#include "gpuattr/<room>/..."` in a room's files (src/<room>/, include/gpuattr/<room>/)
# must name the room itself or a room it is declared to depend on (gpuattr_room in
# CMakeLists.txt; dependencies of dependencies count). Included by CMakeLists.txt (checked at
# configure time) and run as a script at build time, when a room's file changed:
#
#   cmake -DCONFIG=<build>/room-includes/<room>.cmake -P scripts/check-room-includes.cmake
#
# CONFIG sets ROOM, ALLOWED (the rooms it may include), FILES, STAMP (touched when all is well)
# and GPUATTR_SOURCE_ROOT (file names are shown relative to it).

# Sets `out` to one line per include of `files` that `room` may not make ("" when none).
function(gpuattr_room_include_violations out room allowed files)
  set(found "")
  foreach(file IN LISTS files)
    file(STRINGS "${file}" lines REGEX "^[ \t]*#[ \t]*include[ \t]*\"gpuattr/[a-z_0-9]+/")
    foreach(line IN LISTS lines)
      string(REGEX MATCH "\"gpuattr/([a-z_0-9]+)/[^\"]*\"" include "${line}")
      set(target "${CMAKE_MATCH_1}")
      if(target STREQUAL room)
        continue()
      endif()
      list(FIND allowed "${target}" at)
      if(at EQUAL -1)
        string(REPLACE "${GPUATTR_SOURCE_ROOT}/" "" shown "${file}")
        list(APPEND found "  ${shown}: #include ${include}")
      endif()
    endforeach()
  endforeach()
  set(${out} "${found}" PARENT_SCOPE)
endfunction()

# Fails (FATAL_ERROR) with every include of `files` that `room` may not make.
function(gpuattr_check_room_includes room allowed files)
  gpuattr_room_include_violations(found "${room}" "${allowed}" "${files}")
  if(found)
    string(REPLACE ";" "\n" found "${found}")
    if(allowed)
      string(REPLACE ";" ", " may "${allowed}")
    else()
      set(may "no other room")
    endif()
    message(FATAL_ERROR
      "room '${room}' includes a room it does not depend on (it may include ${may}; add the "
      "dependency to its gpuattr_room line in CMakeLists.txt if the data flows that way):\n"
      "${found}")
  endif()
endfunction()

if(NOT GPUATTR_SOURCE_ROOT)
  set(GPUATTR_SOURCE_ROOT "${CMAKE_SOURCE_DIR}")
endif()

if(CMAKE_SCRIPT_MODE_FILE AND CONFIG)
  include("${CONFIG}")
  gpuattr_check_room_includes("${ROOM}" "${ALLOWED}" "${FILES}")
  file(TOUCH "${STAMP}")
endif()
