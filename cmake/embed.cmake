# Turns a file into a C source defining `const char <NAME>[]` (NUL-terminated) and
# `const unsigned long <NAME>_len`, so a program can serve a document without reading files.
# Usage: cmake -DIN=file -DOUT=file.c -DNAME=symbol -P embed.cmake
file(READ ${IN} hex HEX)
string(LENGTH "${hex}" n)
math(EXPR len "${n} / 2")
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
string(REGEX REPLACE "(0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,)" "\\1\n"
       bytes "${bytes}")
file(WRITE ${OUT} "/* Generated from ${IN} by cmake/embed.cmake; do not edit. */\n"
     "const char ${NAME}[] = {\n${bytes}0x00};\n"
     "const unsigned long ${NAME}_len = ${len};\n")
