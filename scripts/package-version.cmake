# gpuattr_package_version(OUT PROJECT_VERSION DESCRIBE): the version packages and tarballs carry
# (docs/install.md#versions), from the project version and `git describe --tags --always --dirty`:
#   v0.2.0                     -> 0.2.0                 (a release tag)
#   v0.2.0-3-g0123456789ab     -> 0.2.0+3.g0123456789ab (3 commits after it: sorts above 0.2.0)
#   0123456789ab (no tag yet)  -> 0.1.0~g0123456789ab   (before PROJECT_VERSION: sorts below it)
#   "" (no git)                -> 0.1.0
# A -dirty tree adds ".dirty". Only [0-9A-Za-z.+~] appear, so Debian and file names take it.
# Run by `cmake -P` too (tests/unit/package_version_test.cc).
function(gpuattr_package_version out project_version describe)
  set(version ${project_version})
  set(dirty "")
  if(describe MATCHES "-dirty$")
    set(dirty ".dirty")
    string(REGEX REPLACE "-dirty$" "" describe "${describe}")
  endif()
  if(describe MATCHES "^v([0-9]+\\.[0-9]+\\.[0-9]+)$")
    set(version ${CMAKE_MATCH_1})
  elseif(describe MATCHES "^v([0-9]+\\.[0-9]+\\.[0-9]+)-([0-9]+)-(g[0-9a-f]+)$")
    set(version "${CMAKE_MATCH_1}+${CMAKE_MATCH_2}.${CMAKE_MATCH_3}")
  elseif(describe MATCHES "^[0-9a-f]+$")
    set(version "${project_version}~g${describe}")
  endif()
  set(${out} "${version}${dirty}" PARENT_SCOPE)
endfunction()

if(CMAKE_SCRIPT_MODE_FILE AND DEFINED DESCRIBE)  # cmake -DDESCRIBE=... -DPROJECT=... -P this
  gpuattr_package_version(v "${PROJECT}" "${DESCRIBE}")
  message("${v}")
endif()
