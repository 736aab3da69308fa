# Read by cpack for each generator (CPACK_PROJECT_CONFIG_FILE, scripts/packaging.cmake): the
# Debian package installs under /usr with Debian's own files; the tarball under /usr/local with
# LICENSE (extract with `sudo tar -C / -xzf`).
if(CPACK_GENERATOR STREQUAL "DEB")
  set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
  set(CPACK_INSTALL_PREFIX /usr)  # what the install code sees with CPACK_SET_DESTDIR
  set(CPACK_COMPONENTS_ALL Unspecified debian)
else()
  set(CPACK_INSTALL_PREFIX /usr/local)  # with CPACK_SET_DESTDIR the archive holds usr/local/...
  set(CPACK_COMPONENTS_ALL Unspecified license)
endif()
