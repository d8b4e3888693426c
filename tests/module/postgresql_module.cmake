# The PostgreSQL backend is a module ct loads only for a store on a server (CMakeLists.txt,
# engines/store/open/open_store.cpp). Checks, without a PostgreSQL server:
#  - ct and ct-serve do not need libpq (their ELF NEEDED entries), so a SQLite project never loads it;
#  - with the module beside ct, a PostgreSQL URL reaches libpq (an unreachable server answers
#    E_STORE_UNAVAILABLE, which only the loaded backend can say);
#  - a ct without the module answers E_FILE_ERROR naming the module and how to fix it.
# cmake -DCT=<ct> -DCT_SERVE=<ct-serve> [-DWORK=<scratch dir>] -P postgresql_module.cmake
# The scratch directory is a new one under $TMPDIR (or /tmp) unless WORK names one
# (tests/scratch_dir.cmake).
foreach(var CT CT_SERVE)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "${var} is not set")
  endif()
endforeach()
include(${CMAKE_CURRENT_LIST_DIR}/../scratch_dir.cmake)
ct_scratch_dir(postgresql-module)
find_program(READELF readelf REQUIRED)

foreach(program ${CT} ${CT_SERVE})
  execute_process(COMMAND ${READELF} -d ${program} OUTPUT_VARIABLE dynamic COMMAND_ERROR_IS_FATAL ANY)
  if(dynamic MATCHES "libpq")
    message(FATAL_ERROR "${program} links libpq: a SQLite project would load it")
  endif()
endforeach()

file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK}/project ${WORK}/alone)
set(ENV{HOME} ${WORK})
set(ENV{CLEO_DATABASE_URL} "")
execute_process(COMMAND ${CT} init WORKING_DIRECTORY ${WORK}/project OUTPUT_QUIET COMMAND_ERROR_IS_FATAL ANY)

# Port 1 refuses at once: the loaded backend's libpq says so.
set(ENV{CLEO_DATABASE_URL} "postgresql://127.0.0.1:1/none")
execute_process(COMMAND ${CT} list --json WORKING_DIRECTORY ${WORK}/project OUTPUT_VARIABLE out RESULT_VARIABLE rc)
if(NOT out MATCHES "\"code\":\"E_STORE_UNAVAILABLE\"" OR NOT out MATCHES "Connection refused")
  message(FATAL_ERROR "with the module, expected E_STORE_UNAVAILABLE from libpq (exit ${rc}):\n${out}")
endif()

# The same program copied where no module is.
file(COPY ${CT} DESTINATION ${WORK}/alone)
get_filename_component(name ${CT} NAME)
execute_process(COMMAND ${WORK}/alone/${name} list --json WORKING_DIRECTORY ${WORK}/project OUTPUT_VARIABLE out
                RESULT_VARIABLE rc)
if(NOT rc EQUAL 3 OR NOT out MATCHES "\"code\":\"E_FILE_ERROR\"" OR NOT out MATCHES "libct_postgres.so is not beside"
   OR NOT out MATCHES "libpq5")
  message(FATAL_ERROR "without the module, expected E_FILE_ERROR (exit 3) naming it (exit ${rc}):\n${out}")
endif()
file(REMOVE_RECURSE ${WORK})
message(STATUS "the PostgreSQL module loads only when a store names a server, and its absence is explained")
