# The layers depend one way (docs/architecture.md; each folder's README says what it may use). Every
# #include "<folder>/…" in a layer's sources must name a layer it may depend on; this script fails
# naming each file and line that reaches up.
#   cmake -DROOT=<repository> -P tests/layering.cmake
#
# A layer is a folder; engines/ is five layers of its own (engines/README.md), and the store's two
# backends and its opener are layers below engines/store/. A file belongs to the deepest layer
# whose folder holds it (domains/tasks/… is domains).
set(layers
  core
  engines/adapters engines/project engines/store engines/store/sqlite engines/store/postgres
  engines/store/open engines/rules
  domains capability disclosure gateway cli programs)
set(allowed_core core)
set(allowed_engines/adapters core engines/adapters)
set(allowed_engines/project core engines/adapters engines/project)
set(allowed_engines/store core engines/adapters engines/project engines/store)
set(allowed_engines/store/sqlite core engines/adapters engines/project engines/store engines/store/sqlite)
# PostgreSQL backups are SQLite files, but written and read through the seam's BackupFiles
# (engines/store/store_dump.h) that the opener hands it: the two backends do not know each other.
set(allowed_engines/store/postgres core engines/adapters engines/project engines/store engines/store/postgres)
set(allowed_engines/store/open core engines/adapters engines/project engines/store engines/store/sqlite
    engines/store/postgres engines/store/open)
set(allowed_engines/rules core engines/adapters engines/project engines/store engines/rules)
# Above engines/, nothing names a backend's own folder: the store is reached through
# engines/store/store_backend.h (the seam) and engines/store/open/open_store.h (the opener).
set(engines_above core engines/adapters engines/project engines/store engines/store/open engines/rules)
set(allowed_domains ${engines_above} domains)
set(allowed_capability ${engines_above} domains capability)
set(allowed_disclosure ${engines_above} domains disclosure)
set(allowed_gateway ${engines_above} domains capability disclosure gateway)
set(allowed_cli ${engines_above} domains capability disclosure gateway cli)
set(allowed_programs ${engines_above} domains capability disclosure gateway cli programs)

# The layer of a folder path ("engines/store/sqlite", "domains/tasks"): the longest layer that is
# the folder or holds it; "" for a folder outside every layer (tests/, third-party headers).
function(layer_of folder out)
  set(best "")
  foreach(layer IN LISTS layers)
    if(folder STREQUAL layer OR folder MATCHES "^${layer}/")
      string(LENGTH "${layer}" n)
      string(LENGTH "${best}" m)
      if(n GREATER m)
        set(best "${layer}")
      endif()
    endif()
  endforeach()
  set(${out} "${best}" PARENT_SCOPE)
endfunction()

set(violations 0)
set(folders core engines domains capability disclosure gateway cli programs)
foreach(top IN LISTS folders)
  file(GLOB_RECURSE sources "${ROOT}/${top}/*.h" "${ROOT}/${top}/*.cpp")
  foreach(source IN LISTS sources)
    file(RELATIVE_PATH relative "${ROOT}" "${source}")
    get_filename_component(folder "${relative}" DIRECTORY)
    layer_of("${folder}" layer)
    if(layer STREQUAL "")
      message(SEND_ERROR "${relative}: in no layer (add its folder to tests/layering.cmake)")
      math(EXPR violations "${violations} + 1")
      continue()
    endif()
    file(STRINGS "${source}" lines REGEX "^[ \t]*#[ \t]*include[ \t]*\"")
    foreach(line IN LISTS lines)
      if(NOT line MATCHES "\"([a-z_/]+)/[A-Za-z0-9_.]+\"")
        continue()
      endif()
      layer_of("${CMAKE_MATCH_1}" target)
      if(target STREQUAL "")
        continue()
      endif()
      list(FIND allowed_${layer} "${target}" ok)
      if(ok EQUAL -1)
        message(SEND_ERROR "${relative}: ${layer}/ may not include from ${target}/: ${line}")
        math(EXPR violations "${violations} + 1")
      endif()
    endforeach()
  endforeach()
endforeach()
if(violations GREATER 0)
  message(FATAL_ERROR "${violations} include(s) reach a layer above their own")
endif()
message(STATUS "layering: every include points down")
