# A `ct` write is durable when its reply is printed, with one durable sync in the common case
# (issue 56; engines/store/sqlite/sqlite_store_impl.h, StoreOptions::short_lived). Counted with
# strace on the real binary:
#  - every `ct add` calls fdatasync on the WAL before it writes its reply (durable when acknowledged);
#  - no `ct add` makes more than three syncs (the WAL's header when it starts again, the commit, and
#    the checkpoint that comes once the WAL is long), and most make exactly one;
#  - no directory is synced once the WAL exists, and no -wal/-shm file is deleted;
#  - a read (`ct show`, `ct list`) makes no sync at all;
#  - the WAL never grows far past the frames a process leaves (kShortLivedWalFrames), and a write
#    that checkpoints leaves it empty;
#  - every task written is there, read by the next process and by the sqlite3 CLI.
# cmake -DCT=<ct> [-DWORK=<scratch dir>] -P durable_syncs.cmake
cmake_minimum_required(VERSION 3.25)
if(NOT DEFINED CT)
  message(FATAL_ERROR "CT is not set")
endif()
include(${CMAKE_CURRENT_LIST_DIR}/../scratch_dir.cmake)
ct_scratch_dir(durable-syncs)
find_program(STRACE strace REQUIRED)
find_program(SQLITE3 sqlite3 REQUIRED)
# strace is installed by scripts/setup.sh (a missing one fails above); a machine whose container
# forbids ptrace cannot count syscalls at all: said and skipped, not failed.
execute_process(COMMAND ${STRACE} -qq -o /dev/null true RESULT_VARIABLE traced_rc ERROR_VARIABLE traced_err)
if(NOT traced_rc EQUAL 0)
  message("SKIP: strace cannot trace here (${traced_err}): a CLI write's syncs are not counted")
  return()
endif()

file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK}/project)
set(ENV{HOME} ${WORK})
set(ENV{CLEO_DATABASE_URL} "")
set(ENV{CLEO_TEST_MODE} "")
execute_process(COMMAND ${CT} init WORKING_DIRECTORY ${WORK}/project OUTPUT_QUIET COMMAND_ERROR_IS_FATAL ANY)
set(wal ${WORK}/project/.cleo/tasks.db-wal)

# Runs ct under strace; sets `syncs` (fsync/fdatasync/sync_file_range calls), `dir_syncs` (syncs
# of a directory's descriptor), `unlinks` (of -wal/-shm), `synced_before_reply` and `out`.
function(traced)
  set(log ${WORK}/strace.log)
  execute_process(COMMAND ${STRACE} -f -qq -o ${log} -e trace=openat,fsync,fdatasync,sync_file_range,unlink,unlinkat,write
                          ${CT} ${ARGN}
                  WORKING_DIRECTORY ${WORK}/project OUTPUT_VARIABLE stdout RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "ct ${ARGN} failed (exit ${rc}):\n${stdout}")
  endif()
  file(STRINGS ${log} lines)
  set(count 0)
  set(dirs 0)
  set(removed 0)
  set(before_reply 0)
  set(replied 0)
  set(dir_fds "")
  foreach(line IN LISTS lines)
    if(line MATCHES "openat\\(AT_FDCWD, \"[^\"]*\", O_RDONLY[^)]*O_DIRECTORY[^)]*\\) = ([0-9]+)"
       OR line MATCHES "openat\\(AT_FDCWD, \"${WORK}/project/.cleo\", [^)]*\\) = ([0-9]+)")
      list(APPEND dir_fds ${CMAKE_MATCH_1})
    elseif(line MATCHES "(fsync|fdatasync|sync_file_range)\\(([0-9]+)")
      math(EXPR count "${count} + 1")
      if(CMAKE_MATCH_2 IN_LIST dir_fds)
        math(EXPR dirs "${dirs} + 1")
      endif()
      if(NOT replied)
        set(before_reply 1)
      endif()
    elseif(line MATCHES "unlink(at)?\\(.*-(wal|shm)\"")
      math(EXPR removed "${removed} + 1")
    elseif(line MATCHES "write\\(1,")
      set(replied 1)
    endif()
  endforeach()
  set(syncs ${count} PARENT_SCOPE)
  set(dir_syncs ${dirs} PARENT_SCOPE)
  set(unlinks ${removed} PARENT_SCOPE)
  set(synced_before_reply ${before_reply} PARENT_SCOPE)
  set(out "${stdout}" PARENT_SCOPE)
endfunction()

# The first write may create the WAL (and sync its directory once).
traced(add "Task zero" --json)
set(writes 60)
set(one 0)
set(max_wal 0)
set(emptied 0)
foreach(i RANGE 1 ${writes})
  traced(add "Task number ${i} about durable syncs" --json)
  if(NOT out MATCHES "\"success\":true")
    message(FATAL_ERROR "ct add ${i} did not succeed:\n${out}")
  endif()
  if(NOT synced_before_reply)
    message(FATAL_ERROR "ct add ${i}: no fdatasync before its reply: an acknowledged write could be lost")
  endif()
  if(syncs GREATER 3 OR NOT dir_syncs EQUAL 0 OR NOT unlinks EQUAL 0)
    message(FATAL_ERROR "ct add ${i}: ${syncs} syncs (${dir_syncs} of a directory), ${unlinks} -wal/-shm removed")
  endif()
  if(syncs EQUAL 1)
    math(EXPR one "${one} + 1")
  endif()
  file(SIZE ${wal} size)
  if(size GREATER max_wal)
    set(max_wal ${size})
  endif()
  if(size EQUAL 0)
    math(EXPR emptied "${emptied} + 1")
  endif()
  traced(show T001 --json)
  if(NOT syncs EQUAL 0 OR NOT unlinks EQUAL 0)
    message(FATAL_ERROR "ct show after write ${i}: ${syncs} syncs, ${unlinks} -wal/-shm removed")
  endif()
endforeach()
math(EXPR most "${writes} * 3 / 4")
if(one LESS most)
  message(FATAL_ERROR "only ${one} of ${writes} writes made exactly one sync (expected at least ${most})")
endif()
# 128 frames of 4 KiB + 24 bytes, plus what one write adds (a few dozen frames at most).
if(max_wal GREATER 800000)
  message(FATAL_ERROR "the WAL grew to ${max_wal} bytes: closing writers do not checkpoint it")
endif()
if(emptied EQUAL 0)
  message(FATAL_ERROR "no write checkpointed the WAL in ${writes} writes (the WAL reached ${max_wal} bytes)")
endif()
traced(list --json)
if(NOT syncs EQUAL 0)
  message(FATAL_ERROR "ct list made ${syncs} syncs")
endif()
execute_process(COMMAND ${SQLITE3} ${WORK}/project/.cleo/tasks.db "SELECT count(*) FROM tasks"
                OUTPUT_VARIABLE count OUTPUT_STRIP_TRAILING_WHITESPACE COMMAND_ERROR_IS_FATAL ANY)
math(EXPR expected "${writes} + 1")
if(NOT count EQUAL expected)
  message(FATAL_ERROR "sqlite3 reads ${count} tasks, expected ${expected}")
endif()
file(REMOVE_RECURSE ${WORK})
message(STATUS "${one} of ${writes} writes made one sync (the rest at most three); reads none; the WAL peaked at "
               "${max_wal} bytes and was emptied ${emptied} times")
