# Writes a C++ source holding text files as raw string literals, so the installed `ct` never reads
# the source tree. Run at build time:
#   cmake -DROOT=<dir> -DOUTPUT=<file.cpp> -DFILES=<a.md|b.md> [-DNAMESPACE=ct::disclosure]
#         [-DHEADER=disclosure/templates.h] [-DTYPE=EmbeddedTemplate] [-DFUNCTION=embedded_templates]
#         -P cmake/embed_files.cmake
# HEADER declares TYPE (a struct of two string_views: the path under ROOT, the text) and
# `std::span<const TYPE> FUNCTION()` in NAMESPACE; the defaults are the disclosure templates'.
# Used for templates/ (ct_disclosure), templates/skills/ (ct_engines: engines/rules/skills.h) and the
# dashboard's page, gateway/dashboard/ (ct_gateway_http: gateway/dashboard.h).
foreach(param NAMESPACE HEADER TYPE FUNCTION)
  if(NOT DEFINED ${param})
    set(default_NAMESPACE "ct::disclosure")
    set(default_HEADER "disclosure/templates.h")
    set(default_TYPE "EmbeddedTemplate")
    set(default_FUNCTION "embedded_templates")
    set(${param} "${default_${param}}")
  endif()
endforeach()
set(delimiter "CLEO_TEMPLATE")
set(out "// Generated from ${ROOT} by cmake/embed_files.cmake at build time. Do not edit.\n")
string(APPEND out "#include \"${HEADER}\"\n\nnamespace ${NAMESPACE} {\nnamespace {\n\n")
string(APPEND out "const ${TYPE} kEmbedded[] = {\n")
string(REPLACE "|" ";" FILES "${FILES}")
list(SORT FILES)
foreach(file IN LISTS FILES)
  file(RELATIVE_PATH name "${ROOT}" "${file}")
  file(READ "${file}" content)
  string(FIND "${content}" ")${delimiter}\"" clash)
  if(NOT clash EQUAL -1)
    message(FATAL_ERROR "${file} contains the raw-string delimiter )${delimiter}\"")
  endif()
  string(APPEND out "    {\"${name}\", R\"${delimiter}(${content})${delimiter}\"},\n")
endforeach()
string(APPEND out "};\n\n}  // namespace\n\n")
string(APPEND out "std::span<const ${TYPE}> ${FUNCTION}() { return kEmbedded; }\n\n")
string(APPEND out "}  // namespace ${NAMESPACE}\n")
file(WRITE "${OUTPUT}.tmp" "${out}")
file(COPY_FILE "${OUTPUT}.tmp" "${OUTPUT}" ONLY_IF_DIFFERENT)
file(REMOVE "${OUTPUT}.tmp")
