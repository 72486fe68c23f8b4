# Unity builds (on unless -DCMAKE_UNITY_BUILD=OFF; see CMakeLists.txt): each file below
# defines a file-local name that another file of its target defines too, so it is compiled on
# its own rather than in a batch.
set(SNN_UNITY_ALONE
  snn_base common/base/cron_schedule.cc
  snn_nir common/model/nir_operators.cc
  snn_cli_lib cli/results_command.cc
  snn_sched master/sched/window_limits.cc
  snn_master_lib master/jobs/job_lifecycle_sessions.cc
  snn_master_lib master/jobs/scheduling_driver.cc
  snn_agent_lib nodeagent/tasks/task_sandbox.cc
  common_test tests/common/board_constraint_test.cc
  master_test tests/master/node_registry_test.cc
  master_test tests/master/queue_order_test.cc
  master_test tests/master/reservation_scheduler_test.cc
  master_test tests/master/usage_report_test.cc
  master_test tests/master/quota_tree_test.cc
  nodeagent_test tests/nodeagent/board_relay_test.cc
  nodeagent_test tests/nodeagent/nir_network_test.cc
  integration_test tests/integration/topology_test.cc
)
# Integration tests that each define their own kPolicy: all but the first kept apart.
foreach(name account_tree core_hour_limits experiment_service http_api http_wall http_writes
             model_upload notebook
             isolation licenses python_client usage_limits web_page)
  list(APPEND SNN_UNITY_ALONE integration_test tests/integration/${name}_test.cc)
endforeach()
list(LENGTH SNN_UNITY_ALONE n)
math(EXPR last "${n} - 1")
foreach(i RANGE 0 ${last} 2)
  math(EXPR j "${i} + 1")
  list(GET SNN_UNITY_ALONE ${i} target)
  list(GET SNN_UNITY_ALONE ${j} file)
  if(TARGET ${target})
    set_property(SOURCE ${CMAKE_SOURCE_DIR}/${file} TARGET_DIRECTORY ${target}
                 PROPERTY SKIP_UNITY_BUILD_INCLUSION ON)
  endif()
endforeach()

# Our own batches, relocatable: each target's C++ files (but those kept apart above, generated
# ones, and those with flags of their own) are compiled as batch files of SNN_UNITY_BATCH files,
# written into the build tree (build/unity/TARGET_N.cc), each including its files by their path
# relative to it ("../../master/jobs/x.cc"). The same batch is the same text in every clone, so
# ccache serves a fresh clone what another compiled (CMake 3.25's own batches name the files by
# their absolute path: a miss in every other folder). A batch is rewritten only when its list
# changes. The batches are CMake's own (sources in order, 16 at a time, the same files apart), so
# what cmake/unity.cmake keeps apart stays right for both. Off: -DSNN_UNITY=OFF.
set(SNN_UNITY_BATCH ${CMAKE_UNITY_BUILD_BATCH_SIZE})

function(snn_unity_targets dir out)
  get_property(targets DIRECTORY ${dir} PROPERTY BUILDSYSTEM_TARGETS)
  get_property(subdirs DIRECTORY ${dir} PROPERTY SUBDIRECTORIES)
  foreach(sub ${subdirs})
    snn_unity_targets(${sub} more)
    list(APPEND targets ${more})
  endforeach()
  set(${out} ${targets} PARENT_SCOPE)
endfunction()

function(snn_unity target)
  get_target_property(type ${target} TYPE)
  get_target_property(wanted ${target} UNITY_BUILD)
  if(NOT wanted OR NOT type MATCHES "^(STATIC_LIBRARY|EXECUTABLE|OBJECT_LIBRARY)$")
    return()
  endif()
  set_property(TARGET ${target} PROPERTY UNITY_BUILD OFF)  # ours, not CMake's
  get_target_property(dir ${target} SOURCE_DIR)
  get_target_property(sources ${target} SOURCES)
  set(kept "")
  set(batched "")
  foreach(src ${sources})
    if(src MATCHES "^\\$<")  # a generator expression: left as it is
      list(APPEND kept ${src})
      continue()
    endif()
    get_filename_component(path ${src} ABSOLUTE BASE_DIR ${dir})
    get_source_file_property(apart ${path} TARGET_DIRECTORY ${target} SKIP_UNITY_BUILD_INCLUSION)
    get_source_file_property(generated ${path} TARGET_DIRECTORY ${target} GENERATED)
    get_source_file_property(options ${path} TARGET_DIRECTORY ${target} COMPILE_OPTIONS)
    get_source_file_property(defines ${path} TARGET_DIRECTORY ${target} COMPILE_DEFINITIONS)
    if(NOT path MATCHES "\\.cc$" OR apart OR generated OR options OR defines)
      list(APPEND kept ${src})
    else()
      list(APPEND batched ${path})
    endif()
  endforeach()
  list(LENGTH batched n)
  if(n LESS 2)
    return()
  endif()
  set(batches "")
  set(text "")
  set(count 0)
  set(index 0)
  foreach(path ${batched})
    file(RELATIVE_PATH relative ${CMAKE_BINARY_DIR}/unity ${path})
    string(APPEND text "#include \"${relative}\"\n")
    math(EXPR count "${count} + 1")
    if(count EQUAL SNN_UNITY_BATCH)
      set(batch ${CMAKE_BINARY_DIR}/unity/${target}_${index}.cc)
      file(CONFIGURE OUTPUT ${batch} CONTENT "// A batch of ${target}'s files (cmake/unity.cmake).\n${text}")
      list(APPEND batches ${batch})
      math(EXPR index "${index} + 1")
      set(text "")
      set(count 0)
    endif()
  endforeach()
  if(count GREATER 0)
    set(batch ${CMAKE_BINARY_DIR}/unity/${target}_${index}.cc)
    file(CONFIGURE OUTPUT ${batch} CONTENT "// A batch of ${target}'s files (cmake/unity.cmake).\n${text}")
    list(APPEND batches ${batch})
  endif()
  set_property(TARGET ${target} PROPERTY SOURCES ${kept} ${batches})
endfunction()

if(SNN_UNITY)
  snn_unity_targets(${CMAKE_SOURCE_DIR} all_targets)
  foreach(target ${all_targets})
    snn_unity(${target})
  endforeach()
endif()
