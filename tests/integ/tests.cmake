# Integration tests of the gpupool program: bash scripts run the built binary against the small
# synthetic traces in tests/fixtures/sim, each in its own temporary directory. Included from
# tests/CMakeLists.txt; `ctest -L integ` runs them (the ASan build too, so they stay fast).
set(GP_INTEG_FIXTURES ${CMAKE_SOURCE_DIR}/tests/fixtures/sim)
foreach(script cli sim_csv sim_out sim_errors)
    add_test(NAME integ_${script}
             COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/${script}.sh $<TARGET_FILE:gpupool>
                     ${GP_INTEG_FIXTURES})
    set_tests_properties(integ_${script} PROPERTIES LABELS integ TIMEOUT 60)
endforeach()

# Reproduction of published figures on the real trace (shared data beside the repository).
set(GP_TRACE_DATA ${CMAKE_SOURCE_DIR}/../shared/data/alibaba-gpu-v2023)
add_test(NAME integ_sim_reproduce
         COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/sim_reproduce.sh $<TARGET_FILE:gpupool>
                 ${GP_INTEG_FIXTURES} ${GP_TRACE_DATA})
set_tests_properties(integ_sim_reproduce PROPERTIES LABELS integ TIMEOUT 300)

# The controller: a real gpupoold on 127.0.0.1 with SQLite in a temporary directory, driven
# over HTTP by Python scripts (tests/integ/ctl/pool.py starts and stops it).
find_package(Python3 REQUIRED COMPONENTS Interpreter)
foreach(script ctl_auth ctl_badinput ctl_idempotent ctl_quota ctl_gang ctl_preempt
               ctl_runtime ctl_backfill ctl_restart ctl_tls ctl_daemon ctl_volumes
               ctl_longpoll)
    add_test(NAME integ_${script}
             COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/ctl/${script}.py
                     $<TARGET_FILE:gpupoold>)
    set_tests_properties(integ_${script} PROPERTIES LABELS integ TIMEOUT 180
                         SKIP_RETURN_CODE 77)
endforeach()

# The server commands against a real gpupoold (127.0.0.1, a free port, a temp data directory).
add_test(NAME integ_ctl_cli
         COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/ctl_cli.sh $<TARGET_FILE:gpupool>
                 $<TARGET_FILE:gpupoold>)
set_tests_properties(integ_ctl_cli PROPERTIES LABELS integ TIMEOUT 120)

# gpupool-run, the per-replica supervisor: real jobs (sh, sleep) in a temporary directory.
add_test(NAME integ_run_supervise
         COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/run_supervise.sh $<TARGET_FILE:gpupool-run>)
set_tests_properties(integ_run_supervise PROPERTIES LABELS integ TIMEOUT 180)

# A whole pool on this machine: gpupool up, agents over the mock NVML, real supervisors and
# processes (needs gpupoold, gpupool-agent, gpupool-run and the mock library built).
add_test(NAME integ_e2e_agent
         COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/ctl/e2e_agent.py
                 $<TARGET_FILE:gpupool>)
set_tests_properties(integ_e2e_agent PROPERTIES LABELS integ TIMEOUT 300)

# The agent's GPU memory watch: a fractional job whose processes stay above their GPU memory
# limit (the mock's control file) fails with the reason; others are left alone.
add_test(NAME integ_e2e_memwatch
         COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/ctl/e2e_memwatch.py
                 $<TARGET_FILE:gpupool>)
set_tests_properties(integ_e2e_memwatch PROPERTIES LABELS integ TIMEOUT 180)
