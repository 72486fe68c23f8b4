# Debian packages (`cpack -G DEB` in the build directory): snn-master, snn-agent and snnctl,
# installed under /usr with their units in /lib/systemd/system and their configuration in
# /etc/snn as conffiles. Dependencies come from the linked libraries (dpkg-shlibdeps).
include(GNUInstallDirs)

set(SNN_PKG ${CMAKE_SOURCE_DIR}/packaging)

install(TARGETS snn-master RUNTIME DESTINATION bin COMPONENT master)
install(FILES ${CMAKE_SOURCE_DIR}/etc/systemd/snn-master.service
        DESTINATION /lib/systemd/system COMPONENT master)
install(FILES ${CMAKE_SOURCE_DIR}/etc/snn-master.flags ${CMAKE_SOURCE_DIR}/etc/policy.yaml
        DESTINATION /etc/snn COMPONENT master)
install(FILES ${CMAKE_SOURCE_DIR}/etc/grafana/snn-dashboard.json
        DESTINATION share/snn-master COMPONENT master)

install(TARGETS snn-agent snn-shepherd RUNTIME DESTINATION bin COMPONENT agent)
# Board drivers (docs/drivers.md), and the emulated Ethernet board the reference driver runs on.
install(TARGETS snn-driver-sim snn-driver-ether snn-board-emu RUNTIME DESTINATION bin
        COMPONENT agent)
# The example tasks the packaged example jobs run (etc/examples/relay.yaml, nir-*.yaml).
install(TARGETS snn-example-relay snn-example-nir RUNTIME DESTINATION bin COMPONENT agent)
install(FILES ${CMAKE_SOURCE_DIR}/etc/systemd/snn-agent.service
        DESTINATION /lib/systemd/system COMPONENT agent)
install(FILES ${CMAKE_SOURCE_DIR}/etc/snn-agent.flags ${CMAKE_SOURCE_DIR}/etc/boards.yaml
        DESTINATION /etc/snn COMPONENT agent)

install(TARGETS snnctl snn-nir-import snn-ca RUNTIME DESTINATION bin COMPONENT cli)
install(FILES ${SNN_PKG}/snnctl/snnctl.bash-completion DESTINATION share/bash-completion/completions
        RENAME snnctl COMPONENT cli)
install(DIRECTORY ${CMAKE_BINARY_DIR}/man/ DESTINATION share/man/man1 COMPONENT cli
        FILES_MATCHING PATTERN "*.1")
install(FILES ${CMAKE_SOURCE_DIR}/README.md DESTINATION share/doc/snnctl COMPONENT cli)
install(DIRECTORY ${CMAKE_SOURCE_DIR}/docs DESTINATION share/doc/snnctl COMPONENT cli)
install(DIRECTORY ${CMAKE_SOURCE_DIR}/etc/examples DESTINATION share/doc/snnctl COMPONENT cli)
# The models the example jobs name (../models/ from the examples).
install(DIRECTORY ${CMAKE_SOURCE_DIR}/etc/models DESTINATION share/doc/snnctl COMPONENT cli)
# The Python client of the HTTP API (standard library only): import snn.
install(DIRECTORY ${CMAKE_SOURCE_DIR}/python/snn DESTINATION lib/python3/dist-packages
        COMPONENT python FILES_MATCHING PATTERN "*.py")

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME snn)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "SNN resource manager team <snn@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "Cluster resource manager for neuromorphic hardware")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_GROUPING IGNORE)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_SECTION admin)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
# Debug symbols stay in the build; the packages carry stripped binaries.
set(CPACK_STRIP_FILES ON)

set(CPACK_DEBIAN_MASTER_PACKAGE_NAME snn-master)
set(CPACK_DEBIAN_MASTER_DESCRIPTION
    "SNN cluster master daemon\n The master keeps the cluster's jobs and allocations in RocksDB and schedules\n them onto neuromorphic boards.")
set(CPACK_DEBIAN_MASTER_PACKAGE_DEPENDS "adduser, munge, snnctl (= ${CPACK_PACKAGE_VERSION})")
set(CPACK_DEBIAN_MASTER_PACKAGE_CONTROL_EXTRA
    "${SNN_PKG}/snn-master/conffiles;${SNN_PKG}/snn-master/postinst;${SNN_PKG}/snn-master/prerm;${SNN_PKG}/snn-master/postrm")

set(CPACK_DEBIAN_AGENT_PACKAGE_NAME snn-agent)
set(CPACK_DEBIAN_AGENT_DESCRIPTION
    "SNN cluster node agent\n The agent drives a host's neuromorphic boards and runs the tasks the master\n places on them.")
set(CPACK_DEBIAN_AGENT_PACKAGE_CONTROL_EXTRA
    "${SNN_PKG}/snn-agent/conffiles;${SNN_PKG}/snn-agent/postinst;${SNN_PKG}/snn-agent/prerm;${SNN_PKG}/snn-agent/postrm")

set(CPACK_DEBIAN_CLI_PACKAGE_NAME snnctl)
set(CPACK_DEBIAN_CLI_DESCRIPTION
    "SNN cluster command line\n snnctl submits and watches jobs and administers the cluster; snn-ca makes its\n certificates.")
set(CPACK_DEBIAN_CLI_PACKAGE_DEPENDS "munge")

set(CPACK_DEBIAN_PYTHON_PACKAGE_NAME python3-snn)
set(CPACK_DEBIAN_PYTHON_PACKAGE_ARCHITECTURE all)
set(CPACK_DEBIAN_PYTHON_PACKAGE_SECTION python)
set(CPACK_DEBIAN_PYTHON_PACKAGE_SHLIBDEPS OFF)
set(CPACK_DEBIAN_PYTHON_PACKAGE_DEPENDS "python3")
set(CPACK_DEBIAN_PYTHON_PACKAGE_CONTROL_EXTRA "${SNN_PKG}/python3-snn/prerm")
set(CPACK_DEBIAN_PYTHON_DESCRIPTION
    "SNN cluster Python client\n A client of the SNN master's HTTP API for notebooks and scripts: submit, wait,\n watch, logs, cancel, the pool, and an Executor of many jobs. Standard library only.")

include(CPack)
