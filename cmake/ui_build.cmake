# Builds the web dashboard (run by the `ui` target of cmake/ui.cmake):
#   cmake -DNPM=npm -DSRC=web -DOUT=BUILD/share/gpupool/ui -DREQUIRE=ON|OFF -P ui_build.cmake
#
# The contract with web/package.json:
#   - `npm ci --no-audit --no-fund` (in web/) installs the dependencies from
#     web/package-lock.json; it runs when node_modules/.package-lock.json is missing or older
#     than web/package-lock.json;
#   - `npm run build -- --outDir DIR` (in web/, DIR absolute and empty; also given as the
#     environment variable GP_UI_OUT_DIR) writes the built dashboard to DIR: DIR/index.html and
#     every file it loads, which it references under /ui/ (Vite: base "/ui/" or "./");
#   - the build runs when a file of web/ (outside node_modules/ and dist/) is newer than the
#     last build, or nothing was built yet. It goes to OUT.new, which replaces OUT once
#     index.html is there, so a running gpupoold never serves half a build.
# Until web/package.json exists there is nothing to build and nothing happens.
#
# A failure (npm ci, the build, no index.html) is an error with REQUIRE (GP_REQUIRE_UI, CI=true);
# otherwise a warning, and the last good build, if any, stays in OUT: the C code still builds on
# a machine where npm cannot reach its registry.

if(NOT EXISTS ${SRC}/package.json)
    message(STATUS "web/package.json not found: no dashboard to build")
    return()
endif()

# Macros, so that return() ends the script.
macro(give_up why)
    file(REMOVE_RECURSE ${OUT}.new)
    if(REQUIRE)
        message(FATAL_ERROR "web/: ${why}")
    endif()
    message(WARNING "web/: ${why}: the dashboard is not built (the last build, if any, stays)")
    return()
endmacro()

macro(npm_run what)
    execute_process(COMMAND ${ARGN} WORKING_DIRECTORY ${SRC} RESULT_VARIABLE rc)
    if(NOT rc EQUAL 0)
        give_up("${what} failed (${rc})")
    endif()
endmacro()

# Dependencies.
set(lock ${SRC}/package-lock.json)
set(installed ${SRC}/node_modules/.package-lock.json)
set(fresh_deps OFF)
if(EXISTS ${lock})
    file(READ ${lock} lock_text)
    string(FIND "${lock_text}" "\"node_modules/" first_dep)
    if(first_dep EQUAL -1)
        # No dependencies: npm ci would install nothing (and write no .package-lock.json).
    elseif(NOT EXISTS ${installed} OR ${lock} IS_NEWER_THAN ${installed})
        message(STATUS "web/: npm ci")
        npm_run("npm ci" ${NPM} ci --no-audit --no-fund)
        set(fresh_deps ON)
    endif()
elseif(REQUIRE)
    give_up("package-lock.json is missing (run `npm install` in web/ and keep the lock file)")
elseif(NOT EXISTS ${SRC}/node_modules)
    message(STATUS "web/: no package-lock.json; npm install")
    npm_run("npm install" ${NPM} install --no-audit --no-fund)
    set(fresh_deps ON)
endif()

# Anything to build?
set(stamp ${OUT}.stamp)
set(stale ${fresh_deps})
if(NOT EXISTS ${OUT}/index.html OR NOT EXISTS ${stamp})
    set(stale ON)
endif()
if(NOT stale)
    file(GLOB top RELATIVE ${SRC} ${SRC}/* ${SRC}/.*)
    foreach(entry ${top})
        if(entry MATCHES "^(node_modules|dist|\\.|\\.\\.)$")
            continue()
        endif()
        if(IS_DIRECTORY ${SRC}/${entry})
            file(GLOB_RECURSE files ${SRC}/${entry}/*)
        else()
            set(files ${SRC}/${entry})
        endif()
        foreach(f ${files})
            if(${f} IS_NEWER_THAN ${stamp})
                set(stale ON)
                break()
            endif()
        endforeach()
        if(stale)
            break()
        endif()
    endforeach()
endif()
if(NOT stale)
    return()
endif()

# The build, into OUT.new, then in place of OUT.
set(next ${OUT}.new)
file(REMOVE_RECURSE ${next})
file(MAKE_DIRECTORY ${next})
message(STATUS "web/: npm run build -- --outDir ${next}")
npm_run("npm run build" ${CMAKE_COMMAND} -E env GP_UI_OUT_DIR=${next}
        ${NPM} run build -- --outDir ${next})
if(NOT EXISTS ${next}/index.html)
    give_up("`npm run build -- --outDir ${next}` wrote no index.html there")
endif()
file(REMOVE_RECURSE ${OUT})
file(RENAME ${next} ${OUT})
file(TOUCH ${stamp})
