# The web dashboard (web/), built with npm into ${CMAKE_BINARY_DIR}/share/gpupool/ui: the
# installed layout relative to bin/, so BUILD/bin/gpupoold serves it at /ui/ with the default
# ui.dir (docs/api.md). Included from the top CMakeLists.txt.
#
# The target `ui` (part of ALL) runs cmake/ui_build.cmake, which does nothing until
# web/package.json exists, runs `npm ci` when web/package-lock.json is newer than what is
# installed, and `npm run build -- --outDir DIR` when a file of web/ changed since the last
# build (see that file for the contract with web/package.json).
#
# Without npm the dashboard is not built: a warning here, and gpupoold answers /ui/ with 404
# "the dashboard is not built: ...". With GP_REQUIRE_UI=ON, or CI=true in the environment, a
# missing npm is an error instead. GP_UI=OFF leaves the dashboard out altogether.
option(GP_UI "Build the web dashboard (web/) with npm when npm is found" ON)
option(GP_REQUIRE_UI "Fail when the web dashboard cannot be built (npm missing)" OFF)

set(GP_UI_OUT ${CMAKE_BINARY_DIR}/share/gpupool/ui)
if("$ENV{CI}" STREQUAL "true")
    set(GP_REQUIRE_UI ON)
endif()

if(GP_UI)
    find_program(GP_NPM npm)
    if(NOT GP_NPM)
        string(CONCAT msg "npm not found: the web dashboard (web/) is not built, and gpupoold "
                          "answers /ui/ with 404 (install Node.js and npm: scripts/deps.sh)")
        if(GP_REQUIRE_UI)
            message(FATAL_ERROR "${msg}")
        endif()
        message(WARNING "${msg}")
    else()
        add_custom_target(ui ALL
            COMMAND ${CMAKE_COMMAND} -DNPM=${GP_NPM} -DSRC=${CMAKE_SOURCE_DIR}/web
                    -DOUT=${GP_UI_OUT} -DREQUIRE=${GP_REQUIRE_UI}
                    -P ${CMAKE_SOURCE_DIR}/cmake/ui_build.cmake
            COMMENT "Web dashboard (web/ -> share/gpupool/ui)"
            VERBATIM)
    endif()
endif()
