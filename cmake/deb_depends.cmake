# Included by cpack (CPACK_PROJECT_CONFIG_FILE, written by cmake/packaging.cmake with the built
# programs' paths in CT_DEB_PROGRAMS and CT_DEB_MODULE): the Debian package's Depends and
# Recommends, found by dpkg-shlibdeps (dpkg-dev) from the libraries each file loads.
#  - Depends: what ct and ct-serve load (libc6, libstdc++6, libsimdjson14 (SQLite, nettle and RE2
#    are linked in from their archives: CMakeLists.txt, CT_STATIC_LIBS),
#    libmicrohttpd12 …).
#  - Recommends: what only the PostgreSQL module libct_postgres.so loads besides those (libpq5).
#    ct loads the module only for a store on a PostgreSQL server; without libpq5, such a store
#    answers E_FILE_ERROR naming the package to install, and SQLite projects work as before.
if(NOT CPACK_GENERATOR STREQUAL "DEB")
  return()
endif()
find_program(CT_DPKG_SHLIBDEPS dpkg-shlibdeps)
if(NOT CT_DPKG_SHLIBDEPS)
  message(FATAL_ERROR "cpack -G DEB needs dpkg-shlibdeps to find the package's dependencies: "
                      "apt-get install dpkg-dev")
endif()

# dpkg-shlibdeps runs in a source package's directory: an empty debian/control is enough.
set(ct_shlibdeps_dir "${CPACK_PACKAGE_DIRECTORY}/_CPack_Packages/shlibdeps")
file(MAKE_DIRECTORY "${ct_shlibdeps_dir}/debian")
file(WRITE "${ct_shlibdeps_dir}/debian/control" "")

# The packages `files` need, as "name (>= version)" items.
function(ct_shlibdeps out)
  execute_process(COMMAND ${CT_DPKG_SHLIBDEPS} -O ${ARGN}
                  WORKING_DIRECTORY "${ct_shlibdeps_dir}"
                  OUTPUT_VARIABLE substvars ERROR_VARIABLE warnings RESULT_VARIABLE status)
  if(NOT status EQUAL 0)
    message(FATAL_ERROR "dpkg-shlibdeps ${ARGN} failed:\n${warnings}")
  endif()
  if(NOT substvars MATCHES "shlibs:Depends=([^\n]*)")
    message(FATAL_ERROR "dpkg-shlibdeps ${ARGN} named no dependencies:\n${substvars}${warnings}")
  endif()
  string(REPLACE ", " ";" items "${CMAKE_MATCH_1}")
  set(${out} "${items}" PARENT_SCOPE)
endfunction()

ct_shlibdeps(ct_depends ${CT_DEB_PROGRAMS})
# The module's undefined symbols are the programs' own (they export them): it is checked for the
# libraries it needs, not for those symbols.
ct_shlibdeps(ct_module_depends --ignore-missing-info ${CT_DEB_MODULE})
set(ct_depend_names)
foreach(item IN LISTS ct_depends)
  string(REGEX MATCH "^[^ ]+" name "${item}")
  list(APPEND ct_depend_names "${name}")
endforeach()
set(ct_recommends)
foreach(item IN LISTS ct_module_depends)
  string(REGEX MATCH "^[^ ]+" name "${item}")
  list(FIND ct_depend_names "${name}" found)  # (IN_LIST needs a policy cpack's scripts do not set)
  if(found EQUAL -1)
    list(APPEND ct_recommends "${item}")
  endif()
endforeach()
list(JOIN ct_depends ", " CPACK_DEBIAN_PACKAGE_DEPENDS)
list(JOIN ct_recommends ", " CPACK_DEBIAN_PACKAGE_RECOMMENDS)
message(STATUS "Depends: ${CPACK_DEBIAN_PACKAGE_DEPENDS}")
message(STATUS "Recommends: ${CPACK_DEBIAN_PACKAGE_RECOMMENDS}")
