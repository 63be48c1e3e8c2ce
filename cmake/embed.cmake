# embed.cmake - write the bytes of file IN as a NUL-terminated C array NAME into header OUT
# (cmake -DIN=... -DOUT=... -DNAME=... -P embed.cmake; CMakeLists.txt runs it for tools/view_page.js)
file(READ ${IN} hex HEX)
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
string(REGEX REPLACE "((0x..,){32})" "\\1\n" bytes "${bytes}")
get_filename_component(src ${IN} NAME)
file(WRITE ${OUT} "// generated from ${src} by cmake/embed.cmake: do not edit\nstatic const char ${NAME}[] = {\n${bytes}0x00};\n")
