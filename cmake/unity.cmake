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
