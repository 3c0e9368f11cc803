# Packaging: greenctxConfig.cmake (find_package(greenctx) -> greenctx::greenctx), greenctx.pc,
# and the simulated driver installed beside the library for `greenctx --sim`.
include(CMakePackageConfigHelpers)

set(GREENCTX_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/greenctx)

install(EXPORT greenctxTargets
  NAMESPACE greenctx::
  FILE greenctxTargets.cmake
  DESTINATION ${GREENCTX_CMAKE_DIR})

configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/greenctxConfig.cmake.in
  ${PROJECT_BINARY_DIR}/greenctxConfig.cmake
  INSTALL_DESTINATION ${GREENCTX_CMAKE_DIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/greenctxConfigVersion.cmake
  VERSION ${PROJECT_VERSION}
  COMPATIBILITY ${GREENCTX_COMPATIBILITY})
install(FILES ${PROJECT_BINARY_DIR}/greenctxConfig.cmake
              ${PROJECT_BINARY_DIR}/greenctxConfigVersion.cmake
  DESTINATION ${GREENCTX_CMAKE_DIR})

# pkg-config: prefix found from the .pc file's own place (${pcfiledir}), so the file is right
# wherever the tree is installed (cmake --install --prefix) or moved to.
if(IS_ABSOLUTE "${CMAKE_INSTALL_LIBDIR}")
  set(GREENCTX_PC_PREFIX "${CMAKE_INSTALL_PREFIX}")
else()
  file(RELATIVE_PATH GREENCTX_PC_PREFIX_REL /root/${CMAKE_INSTALL_LIBDIR}/pkgconfig /root)
  string(REGEX REPLACE "/$" "" GREENCTX_PC_PREFIX_REL "${GREENCTX_PC_PREFIX_REL}")
  set(GREENCTX_PC_PREFIX "\${pcfiledir}/${GREENCTX_PC_PREFIX_REL}")
endif()
foreach(dir LIBDIR INCLUDEDIR)
  if(IS_ABSOLUTE "${CMAKE_INSTALL_${dir}}")
    set(GREENCTX_PC_${dir} "${CMAKE_INSTALL_${dir}}")
  else()
    set(GREENCTX_PC_${dir} "\${prefix}/${CMAKE_INSTALL_${dir}}")
  endif()
endforeach()
configure_file(${PROJECT_SOURCE_DIR}/greenctx.pc.in ${PROJECT_BINARY_DIR}/greenctx.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/greenctx.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)

# The simulated driver: not a library anyone links, so it lives in a subdirectory of libdir
# where `greenctx --sim` looks for it (<bindir>/../<libdir>/greenctx/libgreenctx_sim.so).
if(TARGET greenctx_sim)
  install(TARGETS greenctx_sim
    LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}/greenctx
    RUNTIME DESTINATION ${CMAKE_INSTALL_LIBDIR}/greenctx)
endif()

# The licence and the API guide the headers point to with the documents
# (<datarootdir>/doc/greenctx), the simulator's header beside
# greenctx.h (for tests that dlsym its gctxsim_* calls), and the header-only C++ wrapper.
install(FILES ${PROJECT_SOURCE_DIR}/LICENSE ${PROJECT_SOURCE_DIR}/NOTICE ${PROJECT_SOURCE_DIR}/docs/api.md
  DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(FILES ${PROJECT_SOURCE_DIR}/sim/greenctx_sim.h ${PROJECT_SOURCE_DIR}/include/greenctx.hpp
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
