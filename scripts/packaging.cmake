# CPack: `cmake --build build --target package` writes a Debian package and a tarball named with
# the version of docs/install.md#versions, from the install rules of CMakeLists.txt:
#   gpuattr_<version>_<arch>.deb        installs under /usr (dpkg -i, apt install ./...)
#   gpuattr-<version>-linux-<arch>.tar.gz  holds usr/local/...: sudo tar -C / -xzf ...
# Both are stripped (the RelWithDebInfo binary is ~120 MB with its debug info, ~10 MB without).
# The Debian package takes its dependencies from the binary's libraries (dpkg-shlibdeps) and
# carries the Debian files (copyright, changelog, lintian overrides: config/debian/) instead of
# LICENSE; the tarball carries LICENSE. Which component goes where: scripts/cpack-options.cmake.
set(GPUATTR_MAINTAINER "gpuattr maintainers <maintainers@users.noreply.a-seed-7e3cb341.example>"
    CACHE STRING "Maintainer field of the Debian package and its changelog")
string(TIMESTAMP GPUATTR_PACKAGE_DATE "%a, %d %b %Y %H:%M:%S +0000" UTC)

# The Debian files, written when configuring (the version and date go in).
set(GPUATTR_DEBIAN_DIR ${CMAKE_BINARY_DIR}/debian)
# A native package (built upstream, no Debian revision): its changelog is changelog.gz.
configure_file(${CMAKE_SOURCE_DIR}/config/debian/changelog.in ${GPUATTR_DEBIAN_DIR}/changelog @ONLY)
execute_process(COMMAND gzip -9nf ${GPUATTR_DEBIAN_DIR}/changelog)
install(FILES ${CMAKE_SOURCE_DIR}/config/debian/copyright ${GPUATTR_DEBIAN_DIR}/changelog.gz
        DESTINATION ${CMAKE_INSTALL_DOCDIR} COMPONENT debian EXCLUDE_FROM_ALL)
install(FILES ${CMAKE_SOURCE_DIR}/config/debian/lintian-overrides DESTINATION
        ${CMAKE_INSTALL_DATADIR}/lintian/overrides RENAME gpuattr COMPONENT debian EXCLUDE_FROM_ALL)

set(CPACK_PACKAGE_NAME gpuattr)
set(CPACK_PACKAGE_VENDOR gpuattr)
set(CPACK_PACKAGE_VERSION ${GPUATTR_PACKAGE_VERSION})
set(CPACK_PACKAGE_CONTACT ${GPUATTR_MAINTAINER})
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "GPU attribution for Kubernetes, from your workstation")
set(CPACK_PACKAGE_HOMEPAGE_URL "https://github.com/gpuattr/gpuattr")
set(CPACK_RESOURCE_FILE_LICENSE ${CMAKE_SOURCE_DIR}/LICENSE)
set(CPACK_GENERATOR "DEB;TGZ")
set(CPACK_STRIP_FILES ON)
# DESTDIR staging: the install code writes the package's own paths (/usr/bin/gpuattr) into the
# systemd unit and the Grafana provider, not the staging folder's.
set(CPACK_SET_DESTDIR ON)
# One package of the chosen components each (scripts/cpack-options.cmake chooses them).
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_ARCHIVE_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_GROUPING ALL_COMPONENTS_IN_ONE)
set(CPACK_PROJECT_CONFIG_FILE ${CMAKE_SOURCE_DIR}/scripts/cpack-options.cmake)
execute_process(COMMAND dpkg --print-architecture OUTPUT_VARIABLE GPUATTR_DEB_ARCH
                OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
if(NOT GPUATTR_DEB_ARCH)
  set(GPUATTR_DEB_ARCH ${CMAKE_SYSTEM_PROCESSOR})
endif()
string(TOLOWER "${CMAKE_SYSTEM_NAME}" GPUATTR_SYSTEM)
set(CPACK_PACKAGE_FILE_NAME gpuattr-${GPUATTR_PACKAGE_VERSION}-${GPUATTR_SYSTEM}-${GPUATTR_DEB_ARCH})

set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)  # gpuattr_<version>_<arch>.deb
set(CPACK_DEBIAN_PACKAGE_ARCHITECTURE ${GPUATTR_DEB_ARCH})
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "ca-certificates")
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "prometheus, grafana, kubectl")
set(CPACK_DEBIAN_PACKAGE_SECTION admin)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
# The synopsis is CPACK_PACKAGE_DESCRIPTION_SUMMARY; this is the extended description.
set(CPACK_DEBIAN_PACKAGE_DESCRIPTION
    "gpuattr runs on your workstation with your kubeconfig and answers whose GPUs
these are and whether anyone uses them. Every interval it reads the GPU
exporters that already run in the cluster (dcgm-exporter, per-process
exporters, vLLM and SGLang) through the kube-apiserver pod proxy, joins them
with pods, nodes and DRA claims, and serves per-device, per-pod and
per-namespace series on a local /metrics, with a status page, Grafana
dashboards and Prometheus alert rules. Nothing is installed in the cluster.")
include(CPack)
