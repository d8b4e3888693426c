# Included by the tests that are CMake scripts (cmake -P): sets WORK, unless the caller named one, to
# a new directory under $TMPDIR (or /tmp) named ct-<name>-<random>. Never inside the build tree, where
# a CLEO project around the source tree (a developer's own .cleo/) would make `ct init` refuse to
# nest a project in it.
macro(ct_scratch_dir name)
  if(NOT DEFINED WORK)
    set(tmp "$ENV{TMPDIR}")
    if(tmp STREQUAL "")
      set(tmp /tmp)
    endif()
    string(RANDOM LENGTH 10 suffix)
    set(WORK "${tmp}/ct-${name}-${suffix}")
  endif()
endmacro()
