# CMake generated Testfile for 
# Source directory: /work/wt-place/bench
# Build directory: /work/wt-place/build-rel/bench
# 
# This file includes the relevant testing commands required for 
# testing this directory and lists subdirectories to be tested as well.
add_test([=[bench_placement_smoke]=] "/work/wt-place/build-rel/bin/placement_bench" "--nodes" "200" "--steady" "500" "--policy" "ours")
set_tests_properties([=[bench_placement_smoke]=] PROPERTIES  LABELS "integ" PASS_REGULAR_EXPRESSION "phase=steady policy=ours nodes=200 gpus=8" TIMEOUT "60" _BACKTRACE_TRIPLES "/work/wt-place/bench/CMakeLists.txt;7;add_test;/work/wt-place/bench/CMakeLists.txt;0;")
add_test([=[bench_ctl_smoke]=] "/work/wt-place/build-rel/bin/ctl_bench" "--gpupoold" "/work/wt-place/build-rel/bin/gpupoold" "--nodes" "20" "--jobs" "200" "--clients" "4")
set_tests_properties([=[bench_ctl_smoke]=] PROPERTIES  LABELS "integ" PASS_REGULAR_EXPRESSION "ctl_schedule store=sqlite pending_left=0" TIMEOUT "120" _BACKTRACE_TRIPLES "/work/wt-place/bench/CMakeLists.txt;16;add_test;/work/wt-place/bench/CMakeLists.txt;0;")
add_test([=[bench_sched_smoke]=] "/work/wt-place/build-rel/bin/sched_bench" "--nodes" "200" "--fill" "800" "--pending" "2000")
set_tests_properties([=[bench_sched_smoke]=] PROPERTIES  LABELS "integ" PASS_REGULAR_EXPRESSION "sched_cycle phase=cycle mix=trace nodes=200 gpus=8" TIMEOUT "60" _BACKTRACE_TRIPLES "/work/wt-place/bench/CMakeLists.txt;23;add_test;/work/wt-place/bench/CMakeLists.txt;0;")
add_test([=[bench_containers_smoke]=] "/work/wt-place/bench/containers.sh" "--quick" "--out" "/work/wt-place/build-rel/bench-containers/containers.md" "--raw" "/work/wt-place/build-rel/bench-containers")
set_tests_properties([=[bench_containers_smoke]=] PROPERTIES  ENVIRONMENT "BUILD=/work/wt-place/build-rel" LABELS "integ" PASS_REGULAR_EXPRESSION "containers: wrote" SKIP_RETURN_CODE "77" TIMEOUT "300" _BACKTRACE_TRIPLES "/work/wt-place/bench/CMakeLists.txt;33;add_test;/work/wt-place/bench/CMakeLists.txt;0;")
add_test([=[bench_store_smoke]=] "sh" "-c" "rm -f store-bench.db* && /work/wt-place/build-rel/bin/store_bench --url sqlite:store-bench.db --jobs 300 --place 100")
set_tests_properties([=[bench_store_smoke]=] PROPERTIES  LABELS "integ" PASS_REGULAR_EXPRESSION "store_bench backend=sqlite op=walk n=300" TIMEOUT "60" WORKING_DIRECTORY "/work/wt-place/build-rel" _BACKTRACE_TRIPLES "/work/wt-place/bench/CMakeLists.txt;45;add_test;/work/wt-place/bench/CMakeLists.txt;0;")
