# Writes the built-in probe specs (configs/probes/*.yaml) as C++ initialisers
# {"name", R"(text)"}, included by ProbeSpec.cpp. Run by cmake -P with
# PROBES (files separated by |) and OUT.
string(REPLACE "|" ";" PROBES "${PROBES}")
set(content "")
foreach(file ${PROBES})
  get_filename_component(name ${file} NAME_WE)
  file(READ ${file} text)
  string(APPEND content "{\"${name}\", R\"gpuopt_probe(${text})gpuopt_probe\"},\n")
endforeach()
file(WRITE ${OUT}.tmp "${content}")
execute_process(COMMAND ${CMAKE_COMMAND} -E copy_if_different ${OUT}.tmp ${OUT})
