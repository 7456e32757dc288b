# The web dashboard's tests, included from tests/CMakeLists.txt.
#
# web_unit (ctest -L unit): what the pages compute from the API's documents, with Node's test
# runner (web/test/).
# e2e_ui (ctest -L e2e): the dashboard in headless Chromium against a real `gpupool up` pool,
# served by its gpupoold at /ui/ from BUILD/share/gpupool/ui (the `ui` target builds it there);
# it saves a screenshot of every page in docs/screenshots/. Both are skipped (77) when Node.js,
# web/node_modules, the built dashboard or chromium is missing, except with CI=true, where
# they fail.
find_program(GP_NODE node)
if(GP_NODE)
    add_test(NAME web_unit COMMAND ${GP_NODE} --test ${CMAKE_SOURCE_DIR}/web/test/)
    add_test(NAME e2e_ui
             COMMAND ${GP_NODE} ${CMAKE_CURRENT_LIST_DIR}/ui_e2e.mjs
                     --gpupool $<TARGET_FILE:gpupool>
                     --screenshots ${PROJECT_SOURCE_DIR}/docs/screenshots)
else()
    foreach(name web_unit e2e_ui)
        add_test(NAME ${name}
                 COMMAND sh -c "echo 'node (Node.js) is missing'; [ \"$CI\" != true ] && exit 77; exit 1")
    endforeach()
endif()
set_tests_properties(web_unit PROPERTIES LABELS unit TIMEOUT 60 SKIP_RETURN_CODE 77)
set_tests_properties(e2e_ui PROPERTIES LABELS e2e TIMEOUT 300 SKIP_RETURN_CODE 77)
