# Install rules: headers, libraries, the spoor tool, a CMake package
# (find_package(spoor) -> spoor::core) and a pkg-config file (spoor.pc).
set(_spoor_targets spoor_core)
if(TARGET spoor_port_linux)
  list(APPEND _spoor_targets spoor_port_linux)
  set(SPOOR_INSTALL_NEEDS_THREADS 1)
  set(SPOOR_PC_EXTRA_LIBS "-lspoor-port-linux -lpthread")
else()
  set(SPOOR_INSTALL_NEEDS_THREADS 0)
  set(SPOOR_PC_EXTRA_LIBS "")
endif()
if(TARGET spoor_compress)
  list(APPEND _spoor_targets spoor_compress)
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/core/compress/include/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
endif()
if(TARGET spoor_host)
  list(APPEND _spoor_targets spoor_host)
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/core/host/include/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
endif()
if(TARGET spoor_reader)
  list(APPEND _spoor_targets spoor_reader)
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/core/reader/include/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
endif()

install(TARGETS ${_spoor_targets} EXPORT spoorTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/core/include/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(EXPORT spoorTargets NAMESPACE spoor:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/spoor)

configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/spoorConfig.cmake.in
  ${PROJECT_BINARY_DIR}/spoorConfig.cmake INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/spoor)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/spoorConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/spoorConfig.cmake ${PROJECT_BINARY_DIR}/spoorConfigVersion.cmake
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/spoor)

configure_file(${PROJECT_SOURCE_DIR}/cmake/spoor.pc.in ${PROJECT_BINARY_DIR}/spoor.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/spoor.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
