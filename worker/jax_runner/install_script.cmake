# Copies the runner script to OUT with #!PYTHON as its first line, executable.
file(READ ${IN} _text)
string(REGEX REPLACE "^#![^\n]*\n" "#!${PYTHON}\n" _text "${_text}")
file(WRITE ${OUT}.tmp "${_text}")
file(CHMOD ${OUT}.tmp PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ
     GROUP_EXECUTE WORLD_READ WORLD_EXECUTE)
file(RENAME ${OUT}.tmp ${OUT})
