# Writes OUT (snn_version.h): the project's VERSION and the commit the source tree is at (with
# "-dirty" when it has changes), rewritten only when that changes, so that a build recompiles
# the two files that include it only after a commit. Run at every build (CMakeLists.txt).
execute_process(COMMAND git -C "${SRC}" rev-parse --short=12 HEAD OUTPUT_VARIABLE commit
                RESULT_VARIABLE rc OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
if(NOT rc EQUAL 0 OR commit STREQUAL "")
  set(commit "unknown")
else()
  execute_process(COMMAND git -C "${SRC}" diff --quiet HEAD RESULT_VARIABLE dirty ERROR_QUIET)
  if(NOT dirty EQUAL 0)
    set(commit "${commit}-dirty")
  endif()
endif()
set(text "// Generated at build time by cmake/write_version.cmake.\n#pragma once\n#define SNN_VERSION \"${VERSION}\"\n#define SNN_COMMIT \"${commit}\"\n")
set(old "")
if(EXISTS "${OUT}")
  file(READ "${OUT}" old)
endif()
if(NOT old STREQUAL text)
  file(WRITE "${OUT}" "${text}")
endif()
